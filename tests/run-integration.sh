#!/bin/sh
# Runs every integration test (tests/integration/test_*.sh) against the
# built ./collector.  They need root (real BPF).  Exit 77 means skipped.
cd "$(dirname "$0")/.." || exit 1
passed=0
failed=0
skipped=0
export COLLECTOR="${COLLECTOR:-$PWD/collector}"
SUITE="${SUITE:-integration}"
export TOP="$PWD"
for t in tests/integration/test_*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	log="build/$SUITE-$name.log"
	mkdir -p build
	start=$(date +%s)
	sh "$t" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	case $rc in
	0) passed=$((passed + 1)); echo "PASS $name (${secs}s)" ;;
	77) skipped=$((skipped + 1)); echo "SKIP $name: $(tail -n 1 "$log")" ;;
	*) failed=$((failed + 1)); echo "FAIL $name (exit $rc, ${secs}s)"; sed 's/^/    /' "$log" | tail -n 60 ;;
	esac
done
echo "$SUITE: $passed passed, $failed failed, $skipped skipped"
echo "$passed $failed $skipped" > "build/$SUITE-results"
[ "$failed" -eq 0 ]
