#!/bin/sh
# --call-graph cfi with little table space (COLLECTOR_CFI_TABLE_ROWS): a
# shell runs xz, then, once xz has exited, the 16-deep chain
# (built without frame pointers).  The space is made to hold what the
# shell and xz need (measured by a first run) and a few rows more:
# the chain's table fits only once xz's images, which no live
# process maps any more, are evicted.  Its stacks are whole, and the
# summary (-v) counts the evicted images.  xz runs about a second, long
# enough for its tables to be built (under ASan too); the chain 3 s, so
# that its first samples, walked while its table is built, are a small
# share.  Only the shell and xz run before the chain (no short-lived
# helper whose tables may or may not be built): the first run's rows are
# the second's.
. tests/integration/lib.sh
. tests/integration/cfi_compare.sh
need_root

command -v xz >/dev/null || fail "xz missing (xz-utils)"
# an input xz -9 works on for about a second
awk 'BEGIN { for (i = 1; i <= 40000; i++) print i, (i * 7919) % 1000003, "line of text for xz" }' \
	>"$TMP/input"
export DEEP="$WL/deep" INPUT="$TMP/input"

# rows R: the first part alone (the shell, xz), with room to spare
"$COLLECTOR" -v --call-graph cfi -o "$TMP/first" -- sh -c 'xz -9 -c "$INPUT" >/dev/null' \
	>/dev/null 2>"$TMP/first.sum" || { cat "$TMP/first.sum"; fail "first run failed"; }
# (the cap counts the rows and their page indexes: the space they share)
rows=$(sed -n 's/.*unwind tables: [0-9]* images, \([0-9]*\) rows and \([0-9]*\) page index.*/\1 \2/p' \
	"$TMP/first.sum" | awk '{ print $1 + $2 }')
[ -n "$rows" ] && [ "$rows" -gt 1000 ] || { cat "$TMP/first.sum"; fail "no table figures"; }
# R counts xz's tables only if they were built while it ran
pc=$(complete_percent "$TMP/first.sum")
within "$pc" 50 100 || skip "the machine is too busy: xz's stacks $pc% whole in the first run"

# the whole run, in R + 16 rows: the chain's own table (over 30 rows) does
# not fit beside xz's
COLLECTOR_CFI_TABLE_ROWS=$((rows + 16)) "$COLLECTOR" -v --call-graph cfi -o "$TMP/small" -- \
	sh -c 'xz -9 -c "$INPUT" >/dev/null; "$DEEP" 3' >/dev/null 2>"$TMP/small.sum" ||
	{ cat "$TMP/small.sum"; fail "small run failed"; }
grep "unwind tables" "$TMP/small.sum"
evicted=$(sed -n 's/.*unwind tables evicted: \([0-9]*\) images.*/\1/p' "$TMP/small.sum")
[ "${evicted:-0}" -ge 1 ] || { cat "$TMP/small.sum"; fail "nothing evicted in $((rows + 16)) rows"; }

folded_stacks "$TMP/small/collector.folded" "$TMP/deep.st" deep
chain=";main;d1;d2;d3;d4;d5;d6;d7;d8;d9;d10;d11;d12;d13;d14;d15;d16"
s=$(awk -F '\t' -v s="$chain" '{ n += $1 } substr($2, length($2) - length(s) + 1) == s { m += $1 }
	END { if (n) printf "%.1f", 100 * m / n; else print 0 }' "$TMP/deep.st")
echo "rows $rows + 16: $evicted images evicted; the chain whole on $s% of deep's samples"
within "$s" 90 100 || { head -n 5 "$TMP/deep.st"; fail "deep: the whole chain on $s% only"; }
echo ok
