# Folded stacks of real runs: the counts add up to the samples, the process
# name is the root frame, kernel frames end in _[k], the leaf counts are the
# summary's, and collector dump reads the file back.
. tests/integration/lib.sh
need_root

# self_of FOLDED FUNCTION: samples of the lines whose leaf is FUNCTION
self_of() {
	awk -v fn="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		if (f[k] == fn) t += n } END { print t + 0 }' "$1"
}

"$COLLECTOR" -f folded -o "$TMP/split" -- "$WL/split" 1 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "split: collector exited $?"; }
f="$TMP/split/collector.folded"
[ -s "$f" ] || fail "no collector.folded"
head -n 5 "$f"
samples=$(summary_value "$TMP/summary" samples)
sum=$(awk '{ t += $NF } END { print t + 0 }' "$f")
[ "$sum" = "$samples" ] || fail "the folded counts add up to $sum, the run has $samples samples"
awk -F';' '$1 != "split" { print "root frame " $1; bad = 1 } END { exit bad }' "$f" ||
	fail "a line's root frame is not the process name"
lines=$(sed 's/ [0-9]*$//' "$f" | sort | uniq -d | wc -l)
[ "$lines" -eq 0 ] || fail "$lines stacks are on more than one line"
for fn in hot_function cold_function; do
	want=$(awk -v fn="$fn" '/^Top functions by self/ { on = 1; next } /^Top functions by total/ { on = 0 }
		on && $3 == fn { print $2; exit }' "$TMP/summary")
	got=$(self_of "$f" "$fn")
	[ "$got" = "$want" ] || fail "$fn ends $got folded stacks' samples, the summary says $want"
done
grep -Eq "split;(_start;__libc_start_main;)?__libc_start_call_main;main;run;chain_a;chain_b;chain_c;hot_function [0-9]" "$f" ||
	fail "no line with the whole chain to hot_function, root first"
"$COLLECTOR" dump "$f" >"$TMP/dump" || fail "collector dump rejects $f"
grep -qx "samples $samples" "$TMP/dump" || fail "collector dump does not count $samples samples"

# calls under uprobes spends much of its time in the kernel: every kernel
# function of the summary is marked _[k] in the folded stacks
"$COLLECTOR" -f folded -o "$TMP/calls" --trace "$WL/calls:traced_*" -- "$WL/calls" \
	>"$TMP/stdout" 2>"$TMP/summary" || { cat "$TMP/summary"; fail "calls: collector exited $?"; }
f="$TMP/calls/collector.folded"
kernel=$(awk '/^Top functions by/ { on = 1; next } on && $NF == "[kernel.kallsyms]" { print $3 }' "$TMP/summary" | sort -u)
[ -n "$kernel" ] || fail "calls under uprobes has no kernel function in the summary"
for fn in $kernel; do
	grep -q ";${fn}_\[k\]" "$f" || fail "kernel function $fn is not marked _[k]"
	tr ';' '\n' <"$f" | sed 's/ [0-9]*$//' | grep -qx "$fn" && fail "kernel function $fn unmarked"
done
"$COLLECTOR" dump --check "$f" >/dev/null || fail "collector dump --check rejects $f"
echo ok
