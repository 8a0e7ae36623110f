#!/bin/sh
# Runs every cmocka unit test binary given, as many at once as there are
# CPUs (each a process of its own, none timed against the clock beyond
# generous bounds: 62 s one at a time on 2 CPUs under ASan, the longest
# binary 25 s); prints one line per binary, in the order given, and a
# total.  Exit status: non-zero if any failed.
passed=0
failed=0
mkdir -p build
jobs=$(nproc 2>/dev/null || echo 1)
for t in "$@"; do
	rm -f "$t.rc"
	printf '%s\n' "$t"
done | xargs -P "$jobs" -I{} sh -c '"$1" >"$1.log" 2>&1; echo $? >"$1.rc"' sh {}
for t in "$@"; do
	log="$t.log"
	if [ "$(cat "$t.rc" 2>/dev/null)" = 0 ]; then
		passed=$((passed + 1))
		echo "PASS $(basename "$t")"
	else
		failed=$((failed + 1))
		echo "FAIL $(basename "$t")"
		cat "$log"
	fi
	# cmocka's own per-test count
	grep -E '^\[  (PASSED|FAILED)  \]' "$log" | sed 's/^/    /'
done
echo "unit: $passed passed, $failed failed"
echo "$passed $failed" > build/unit-results
[ "$failed" -eq 0 ]
