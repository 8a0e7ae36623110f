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
# stop_leftovers NAME SID: the processes of test NAME's session still
# running 5 s after it ended are named and killed
stop_leftovers() {
	[ -n "$2" ] || return 0
	# (checked every 0.1 s: a test's last background process often
	# takes a moment to go, and 0.5 s steps cost 17 s over a suite)
	for _ in $(seq 1 50); do
		pgrep -s "$2" >/dev/null || return 0
		sleep 0.1
	done
	echo "LEFT $1: its processes still ran 5 s after it ended (killed):"
	ps -o pid=,args= -s "$2" | cut -c1-160 | sed 's/^/    /'
	pkill -KILL -s "$2"
}

for t in tests/integration/test_*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	log="build/$SUITE-$name.log"
	mkdir -p build
	start=$(date +%s)
	# in a session of its own: what it leaves running is found by the
	# session's id and stopped before the next test (test_jvm_attach's
	# JVMs once spun for 30 s beside the tests after it)
	rm -f "build/$SUITE-sid"
	setsid -w sh -c 'echo $$ >"$1"; exec sh "$2"' sh "build/$SUITE-sid" "$t" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	case $rc in
	0) passed=$((passed + 1)); echo "PASS $name (${secs}s)" ;;
	77) skipped=$((skipped + 1)); echo "SKIP $name: $(tail -n 1 "$log")" ;;
	*) failed=$((failed + 1)); echo "FAIL $name (exit $rc, ${secs}s)"; sed 's/^/    /' "$log" | tail -n 60 ;;
	esac
	stop_leftovers "$name" "$(cat "build/$SUITE-sid" 2>/dev/null)"
done
echo "$SUITE: $passed passed, $failed failed, $skipped skipped"
echo "$passed $failed $skipped" > "build/$SUITE-results"
[ "$failed" -eq 0 ]
