#!/bin/sh
# xz (Debian's, its liblzma stripped) beside perf: the same top self
# functions with shares within 3 points, stripped code summed per FDE.
. tests/integration/lib.sh
. tests/integration/perf_compare.sh
need_root
command -v xz >/dev/null || fail "xz missing (xz-utils)"

seq 1 150000 | awk '{ print $1, $1 * 7919 % 1000003, "line of text for xz to chew on" }' \
	>"$TMP/input"
compare_with_perf xz 999 xz -6 -c "$TMP/input"
echo ok
