#!/bin/sh
# Runs every cmocka unit test binary given; prints one line per binary and a
# total.  Exit status: non-zero if any failed.
passed=0
failed=0
mkdir -p build
for t in "$@"; do
	log="$t.log"
	if "$t" >"$log" 2>&1; then
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
