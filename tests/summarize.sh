#!/bin/sh
# The closing line of `make check`: every suite's counts added up.  A suite
# that left no results counts as failed: it did not run to its end.
passed=0
failed=0
skipped=0
for suite in "$@"; do
	f="build/$suite-results"
	if [ ! -s "$f" ]; then
		echo "$suite: no results (the suite did not finish)"
		failed=$((failed + 1))
		continue
	fi
	read -r p fl sk <"$f"
	passed=$((passed + p))
	failed=$((failed + fl))
	skipped=$((skipped + ${sk:-0}))
done
echo "check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
