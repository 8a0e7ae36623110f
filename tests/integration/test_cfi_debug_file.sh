#!/bin/sh
# --call-graph cfi on a program whose CFI is only in its separate debug
# file: the 16-deep chain built without unwind tables
# (-fno-asynchronous-unwind-tables: .debug_frame, no .eh_frame of its
# own), its debug info split off (objcopy --only-keep-debug,
# --strip-debug, --add-gnu-debuglink).  The tables' thread finds the debug
# file beside the program: at least 95% of stacks complete, the whole
# chain on at least 90% of the samples.  Without the debug file the same
# program's stacks stop at the leaf (the test can tell the two apart).
. tests/integration/lib.sh
. tests/integration/cfi_compare.sh
need_root
command -v objcopy >/dev/null || fail "objcopy missing (binutils)"

gcc -g -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-o "$TMP/full" tests/workloads/deep.c || fail "gcc failed"
readelf -S "$TMP/full" | grep -q '\.debug_frame' || fail "gcc wrote no .debug_frame"
objcopy --only-keep-debug "$TMP/full" "$TMP/deep.debug"
objcopy --strip-debug --add-gnu-debuglink="$TMP/deep.debug" "$TMP/full" "$TMP/deep"
readelf -S "$TMP/deep" | grep -q '\.debug_frame' && fail "the stripped program kept .debug_frame"

chain=";_start;__libc_start_main;__libc_start_call_main;main;d1;d2;d3;d4;d5;d6;d7;d8;d9;d10;d11;d12;d13;d14;d15;d16"

# run NAME: the collector with cfi on $TMP/deep, -v for the tables' figures
run() {
	"$COLLECTOR" -v --call-graph cfi -o "$TMP/$1" -- "$TMP/deep" 1 >/dev/null \
		2>"$TMP/$1.sum" || { cat "$TMP/$1.sum"; fail "$1: collector exited $?"; }
	folded_stacks "$TMP/$1/collector.folded" "$TMP/$1.st"
	echo "== $1"
	head -n 2 "$TMP/$1.st"
}

# chain_share NAME: the share of samples (percent) with the whole chain
chain_share() {
	awk -F '\t' -v s="$chain" '{ n += $1 } substr($2, length($2) - length(s) + 1) == s { m += $1 }
		END { if (n) printf "%.1f", 100 * m / n; else print 0 }' "$TMP/$1.st"
}

run split
grep "unwind tables" "$TMP/split.sum"
c=$(complete_percent "$TMP/split.sum")
s=$(chain_share split)
echo "split: $c% complete, the whole chain on $s%"
within "$c" 95 100 || fail "split: $c% of the stacks complete, expected >= 95%"
within "$s" 90 100 || fail "split: the whole chain on $s% of the samples, expected >= 90%"

# the same program without its debug file: no CFI for its code
mv "$TMP/deep.debug" "$TMP/moved.debug"
run alone
s=$(chain_share alone)
echo "without the debug file: the whole chain on $s%"
within "$s" 0 50 || fail "without its debug file, the chain still on $s% of the samples"
echo ok
