#!/bin/sh
# xz (Debian's, its liblzma stripped) beside perf: the same top self
# functions with shares within 3 points, stripped code summed per FDE.
. tests/integration/lib.sh
. tests/integration/perf_compare.sh
need_root
plain_suite_only "shares beside perf"
command -v xz >/dev/null || fail "xz missing (xz-utils)"

# 8 s of xz at 999 Hz: the top function holds 78% of about 8 000 samples
# each side (within 1 point of perf in 6 runs); with half the input, the shares of one
# run differed by 1.1 points on average and by over 3 in 2 runs of 17 (74%)
seq 1 300000 | awk '{ print $1, $1 * 7919 % 1000003, "line of text for xz to chew on" }' \
	>"$TMP/input"
compare_with_perf xz 999 xz -6 -c "$TMP/input"
echo ok
