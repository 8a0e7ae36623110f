#!/bin/sh
# -a --call-graph cfi: a process whose images have tables already (a
# program run again, as a build runs its compilers) is walked in BPF from
# its first sample: the program finds its mappings in the kernel's VMAs
# itself (bpf/unwind_learn.bpf.h), before user space has written the
# process's table, instead of copying its stacks for user space.  Debian's
# xz, run once to get its tables, then five times more: the summary counts
# the mappings found so (at least one per later run), and each later run's
# stacks are at least 90% complete.  With COLLECTOR_UNWIND_NO_LEARN=1 the
# same runs find none (the count is the program's, not a constant).
. tests/integration/lib.sh
need_root
# under ASan the tables of the first run take seconds to come
plain_suite_only "tables take seconds under ASan"
command -v xz >/dev/null || fail "xz missing (xz-utils)"

seq 1 40000 | awk '{ print $1, $1 * 7919 % 1000003, "line of text for xz to chew on" }' \
	>"$TMP/input"

# learned SUMMARY: the count of mappings found in the VMAs
learned() {
	sed -n "s/.*; \([0-9]*\) mappings found in the kernel's VMAs.*/\1/p" "$1"
}

# complete_of PID: the complete share of that xz process's stacks and its
# samples, from the Callgrind file of its image that runs xz
complete_of() {
	f=$(grep -l "^cmd: [^ ]*xz\( \|\$\)" "$TMP/$2/callgrind.out.$1" "$TMP/$2/callgrind.out.$1".* \
		2>/dev/null | head -n 1)
	[ -n "$f" ] || { echo "0 0"; return; }
	awk '/^desc: TruncatedStacks:/ { t = $3; n = $5 }
		END { if (n) printf "%.1f %d\n", 100 * (n - t) / n, n; else print "0 0" }' "$f"
}

# run OUT [ENV...]: collector -a around one xz run, a pause for its tables,
# then five more; the pids of the five in $TMP/OUT.pids
run() {
	out=$1
	shift
	env "$@" "$COLLECTOR" -a -v -F 499 -d 8 -o "$TMP/$out" >/dev/null 2>"$TMP/$out.sum" &
	cpid=$!
	sleep 1
	xz -6 -c "$TMP/input" >/dev/null
	sleep 1.5
	: >"$TMP/$out.pids"
	for i in 1 2 3 4 5; do
		xz -6 -c "$TMP/input" >/dev/null &
		echo $! >>"$TMP/$out.pids"
		wait $!
	done
	wait $cpid || { cat "$TMP/$out.sum"; fail "$out: collector exited $?"; }
	grep -A3 "truncated" "$TMP/$out.sum"
}

run learn
n=$(learned "$TMP/learn.sum")
[ -n "$n" ] || { cat "$TMP/learn.sum"; fail "no count of mappings found in the VMAs"; }
[ "$n" -ge 5 ] || fail "$n mappings found in the VMAs, expected >= 5 (one per later xz run)"
total=0
while read -r pid; do
	set -- $(complete_of "$pid" learn)
	echo "xz $pid: $1% complete of $2 samples"
	total=$((total + $2))
	[ "$2" -eq 0 ] || within "$1" 90 100 || fail "xz $pid: $1% of its stacks complete, expected >= 90%"
done <"$TMP/learn.pids"
[ "$total" -ge 100 ] || skip "the machine is too busy to measure: the five xz runs got $total samples"

run nolearn COLLECTOR_UNWIND_NO_LEARN=1
n=$(learned "$TMP/nolearn.sum")
[ "${n:-x}" = 0 ] || fail "COLLECTOR_UNWIND_NO_LEARN=1: $n mappings found in the VMAs, expected 0"
echo ok
