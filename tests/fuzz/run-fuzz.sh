#!/bin/sh
# Runs the libFuzzer harnesses built by mk/fuzz.mk (build/fuzz/fuzz-NAME).
#
#   run-fuzz.sh smoke SECONDS NAME...  each harness SECONDS over its committed
#                                      corpus (new inputs thrown away); writes
#                                      build/fuzz-smoke-results "PASSED FAILED SKIPPED"
#   run-fuzz.sh fuzz SECONDS NAME...   the same, keeping new inputs in
#                                      build/fuzz/corpus-NAME/
#   run-fuzz.sh merge 0 NAME...        merges build/fuzz/corpus-NAME/ into
#                                      tests/fuzz/corpus/NAME/ (-merge=1)
#
# One line per harness with its exec count, in the order given; smoke and
# fuzz run as many harnesses at once as there are CPUs (each fuzzes on one).
# A harness fails when libFuzzer finds a crash, a leak, a timeout or an
# out-of-memory; the input is kept as build/fuzz/artifacts/NAME-crash-* (or
# -leak-, -timeout-, -oom-).  Exit status: non-zero if any failed.
mode=$1
seconds=$2
shift 2

F=build/fuzz
# Leaks inside the Debian libraries that the callers cannot free (see the
# file); libdw has no frame pointers, so malloc stacks need the slow unwinder
# to name the libdw function.
case ${LSAN_OPTIONS:-} in
*fuzz/lsan.supp*) ;;
*) export LSAN_OPTIONS="suppressions=$(pwd)/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" ;;
esac
mkdir -p "$F/artifacts" "$F/logs"

# one MODE SECONDS NAME: runs harness NAME; its line in $F/logs/NAME.line,
# and "rc" (0 passed) in $F/logs/NAME.rc
if [ "$mode" = one ]; then
	mode=$seconds
	seconds=$1
	name=$2
	bin="$F/fuzz-$name"
	seeds="tests/fuzz/corpus/$name"
	log="$F/logs/$name.log"
	line="$F/logs/$name.line"
	if [ ! -x "$bin" ]; then
		echo "FAIL $name: $bin was not built" >"$line"
		echo 1 >"$F/logs/$name.rc"
		exit 0
	fi
	mkdir -p "$seeds"
	if [ "$mode" = smoke ]; then
		out="$F/smoke-$name"
		rm -rf "$out"
	else
		out="$F/corpus-$name"
	fi
	mkdir -p "$out"
	# -close_fd_mask=3: the readers' error messages would drown libFuzzer's
	# (sanitizer reports still reach the log through libFuzzer's own stderr).
	asan=${ASAN_OPTIONS:-}
	[ "$name" = elf ] && asan="fast_unwind_on_malloc=0${asan:+:$asan}"
	ASAN_OPTIONS=$asan "$bin" "$out" "$seeds" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=25 \
		-close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$F/artifacts/$name-" \
		>"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
	if [ "$rc" -eq 0 ]; then
		echo "PASS $name: ${execs:-?} execs in ${seconds} s, coverage ${cov:-?} edges," \
			"corpus $(ls "$out" "$seeds" | grep -vc ':$\|^$') inputs" >"$line"
	else
		{
			echo "FAIL $name (exit $rc) after ${execs:-?} execs; log $log"
			grep -E '^==[0-9]+==ERROR|SUMMARY:|^artifact_prefix|Test unit written' "$log" |
				sed 's/^/    /'
		} >"$line"
	fi
	echo "$rc" >"$F/logs/$name.rc"
	[ "$mode" = smoke ] && rm -rf "$out"
	exit 0
fi

if [ "$mode" = merge ]; then
	for name in "$@"; do
		bin="$F/fuzz-$name"
		seeds="tests/fuzz/corpus/$name"
		[ -x "$bin" ] || { echo "merge $name: $bin was not built"; continue; }
		mkdir -p "$seeds" "$F/corpus-$name"
		before=$(ls "$seeds" | wc -l)
		"$bin" -merge=1 -rss_limit_mb=2048 -timeout=25 "$seeds" "$F/corpus-$name" \
			>"$F/logs/$name.log" 2>&1
		echo "merge $name: $before -> $(ls "$seeds" | wc -l) inputs," \
			"$(du -sb "$seeds" | cut -f1) bytes (keep it under ~200 KB)"
	done
	exit 0
fi

passed=0
failed=0
skipped=0
for name in "$@"; do
	rm -f "$F/logs/$name.rc" "$F/logs/$name.line"
	printf '%s\n' "$name"
done | xargs -P "$(nproc 2>/dev/null || echo 1)" -I{} sh "$0" one "$mode" "$seconds" {}
for name in "$@"; do
	if [ "$(cat "$F/logs/$name.rc" 2>/dev/null)" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	cat "$F/logs/$name.line" 2>/dev/null || echo "FAIL $name: it did not run"
done
echo "fuzz-$mode: $passed passed, $failed failed, $skipped skipped"
if [ "$mode" = smoke ]; then
	# the file tests/summarize.sh reads for the suite, and a shorter name
	echo "$passed $failed $skipped" >build/fuzz-smoke-results
	cp build/fuzz-smoke-results build/fuzz-results
fi
[ "$failed" -eq 0 ]
