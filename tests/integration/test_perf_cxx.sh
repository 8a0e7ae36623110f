#!/bin/sh
# A C++ program with namespaces and templates beside perf: the same top
# self functions, demangled as `perf report -v` prints them, with shares
# within 3 points.  6 s of samples at 999 Hz: with 3 s (3 000 samples a
# profiler), a share's standard error is 0.85 points, the two profilers'
# difference 1.2, and 3 points failed 2 runs of 25 here; with 6 s, the
# largest difference in 12 runs was 1.9.
. tests/integration/lib.sh
. tests/integration/perf_compare.sh
need_root
plain_suite_only "shares beside perf"

compare_with_perf cxx 999 "$WL/cxx_shapes" 6
grep -q "shapes::Polygon<double>::perimeter(int) const" "$TMP/cxx.cshares" ||
	fail "no demangled shapes::Polygon<double>::perimeter(int) const"
# --no-demangle: the symbols as they are
"$COLLECTOR" --no-demangle -f folded -o "$TMP/raw" -- "$WL/cxx_shapes" 0.5 >/dev/null \
	2>"$TMP/raw.summary" || { cat "$TMP/raw.summary"; fail "--no-demangle run failed"; }
grep -q "_ZNK6shapes7PolygonIdE9perimeterEi" "$TMP/raw.summary" ||
	{ cat "$TMP/raw.summary"; fail "--no-demangle: no raw symbol in the summary"; }
echo ok
