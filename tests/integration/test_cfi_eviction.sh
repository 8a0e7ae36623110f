#!/bin/sh
# --call-graph cfi with little table space (COLLECTOR_CFI_TABLE_ROWS): a
# shell runs python3, then, once python3 has exited, the 16-deep chain
# (built without frame pointers).  The space is made to hold what the
# shell and python3 need (measured by a first run) and a few rows more:
# the chain's table fits only once python3's images, which no live
# process maps any more, are evicted.  Its stacks are whole, and the
# summary (-v) counts the evicted images.
. tests/integration/lib.sh
. tests/integration/cfi_compare.sh
need_root

py='import time
t = time.time()
while time.time() - t < 0.5: sum(range(1000))'
export PY="$py" DEEP="$WL/deep"

# rows R: the first part alone (the shell, python3), with room to spare
"$COLLECTOR" -v --call-graph cfi -o "$TMP/first" -- sh -c '/usr/bin/python3 -c "$PY"' \
	>/dev/null 2>"$TMP/first.sum" || { cat "$TMP/first.sum"; fail "first run failed"; }
rows=$(sed -n 's/.*unwind tables: [0-9]* images, \([0-9]*\) rows.*/\1/p' "$TMP/first.sum")
[ -n "$rows" ] && [ "$rows" -gt 1000 ] || { cat "$TMP/first.sum"; fail "no table figures"; }

# the whole run, in R + 16 rows: the chain's own table (over 30 rows) does
# not fit beside python3's
COLLECTOR_CFI_TABLE_ROWS=$((rows + 16)) "$COLLECTOR" -v --call-graph cfi -o "$TMP/small" -- \
	sh -c '/usr/bin/python3 -c "$PY"; "$DEEP" 1' >/dev/null 2>"$TMP/small.sum" ||
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
