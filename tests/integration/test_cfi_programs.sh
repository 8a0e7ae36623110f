#!/bin/sh
# Debian's xz (stripped, its time in liblzma) and python3, with no options:
# the unwinder in BPF gives at least 95% complete stacks, the same stacks
# as --call-graph dwarf on at least 95% of the samples (a stack dwarf's run
# found too: python3 has many rare stacks, whose shares differ between two
# runs by chance), and the same most common stack as `perf record
# --call-graph dwarf` (near-ties either way).  Native stacks are compared:
# python3's Python frames (which the cfi walk adds and dwarf's stack
# copies do not have) are left out with COLLECTOR_NO_PYTHON_WALK;
# test_python*.sh check them.
. tests/integration/lib.sh
. tests/integration/cfi_compare.sh
need_root
plain_suite_only "stacks beside --call-graph dwarf and perf"
command -v xz >/dev/null || fail "xz missing (xz-utils)"
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 missing (python3)"
command -v perf >/dev/null || fail "perf missing (linux-perf)"

seq 1 150000 | awk '{ print $1, $1 * 7919 % 1000003, "line of text for xz to chew on" }' \
	>"$TMP/input"

# compare NAME COMM COMMAND...
compare() {
	name=$1 comm=$2
	shift 2
	"$COLLECTOR" -o "$TMP/$name" -- "$@" >/dev/null 2>"$TMP/$name.sum" ||
		{ cat "$TMP/$name.sum"; fail "$name: collector exited $?"; }
	grep -q "call graph: cfi" "$TMP/$name.sum" || fail "$name: cfi is not the default"
	"$COLLECTOR" --call-graph dwarf -o "$TMP/$name-dwarf" -- "$@" >/dev/null \
		2>"$TMP/$name-dwarf.sum" || { cat "$TMP/$name-dwarf.sum"; fail "$name: dwarf run failed"; }
	perf record -q -F 999 --call-graph dwarf -o "$TMP/$name.perf" -- "$@" >/dev/null 2>&1 ||
		fail "$name: perf record failed"
	folded_stacks "$TMP/$name/collector.folded" "$TMP/$name.st" "$comm"
	folded_stacks "$TMP/$name-dwarf/collector.folded" "$TMP/$name-dwarf.st" "$comm"
	perf_stacks "$TMP/$name.perf" "$TMP/$name-perf.st"
	echo "== $name"
	grep -A2 "truncated" "$TMP/$name.sum"
	c=$(complete_percent "$TMP/$name.sum")
	within "$c" 95 100 || fail "$name: $c% of the stacks complete, expected >= 95%"
	o=$(stacks_found_in "$TMP/$name.st" "$TMP/$name-dwarf.st")
	echo "$name: $c% complete, the same stacks as dwarf on $o% of the samples"
	within "$o" 95 100 || fail "$name: the same stacks as dwarf on $o% of the samples only"
	same_top_stack "$TMP/$name.st" "$TMP/$name-perf.st" 3 ||
		fail "$name: the most common stack is not perf's"
}

compare xz xz xz -6 -c "$TMP/input"
export COLLECTOR_NO_PYTHON_WALK=1
compare python python3 /usr/bin/python3 "$TOP/tests/workloads/pyloop.py"
echo ok
