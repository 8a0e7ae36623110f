#!/bin/sh
# compare-outputs.sh [BASE_REV]: the outputs of this tree and of BASE_REV
# (default eff2424, the last commit before the layout in layers; any later
# one works too, main say), byte for byte, on the same real runs.
# README.md beside this script says how.
#
# Builds BASE_REV in a temporary git worktree outside the tree, and this
# tree; builds tests/compare/replay.c against each.  For each workload:
# runs this tree's collector with -p on it with COLLECTOR_SAVE_RECORDS,
# stops the workload (SIGSTOP: its /proc/PID/maps and map_files stay
# readable), replays the saved file with both drivers and compares the two
# output trees.  Then bench/exporters.c's outputs of both trees.
#
# Prints a line per comparison and "N passed, M failed"; exit 1 on any
# difference, 2 when something could not be built or run.  Needs root.
# COMPARE_KEEP=1 keeps the work directory (records, outputs, diffs, logs).
top=$(cd "$(dirname "$0")/../.." && pwd)
base=${1:-eff2424}
cd "$top" || exit 2
[ "$(id -u)" -eq 0 ] || { echo "compare-outputs: needs root (real BPF)" >&2; exit 2; }

work=$(mktemp -d /tmp/compare-outputs.XXXXXX) || exit 2
wl_pid=
cleanup() {
	[ -n "$wl_pid" ] && kill -KILL "$wl_pid" 2>/dev/null
	git -C "$top" worktree remove --force "$work/base" 2>/dev/null
	git -C "$top" worktree prune
	if [ -n "$COMPARE_KEEP" ]; then
		echo "compare-outputs: the saved records and outputs are in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP

CFLAGS="-O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE"
B=build
passed=0
failed=0

die() {
	echo "compare-outputs: $*" >&2
	exit 2
}

# build DIR LOG: the collector, its library and the exporter bench of DIR
build() {
	[ -f "$top/vmlinux/vmlinux.h" ] && [ ! -f "$1/vmlinux/vmlinux.h" ] &&
		mkdir -p "$1/vmlinux" && cp "$top/vmlinux/vmlinux.h" "$1/vmlinux/"
	make -C "$1" -j2 collector $B/libcollector.a $B/bench/exporters-bench >"$2" 2>&1 ||
		{ tail -20 "$2" >&2; die "building $1 failed (log: $2)"; }
}

echo "compare-outputs: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes)" \
	"against $base"
base_sha=$(git rev-parse --verify -q "$base^{commit}") || die "no revision $base"
git worktree add -q --detach "$work/base" "$base_sha" || die "cannot check out $base"
build "$work/base" "$work/build-base.log"
build "$top" "$work/build-new.log"
make -j2 $B/workloads/split $B/workloads/pie_lib $B/workloads/deep $B/workloads/calls \
	$B/workloads/escapes $B/bench/funcs10k >"$work/build-wl.log" 2>&1 ||
	{ tail -20 "$work/build-wl.log" >&2; die "building the workloads failed"; }

# the driver against each tree: the old layout's folders (user/,
# exporters/, bpf/, before a78ab22), or the layers'
ob="$work/base"
if [ -f "$ob/user/record.c" ]; then
	base_flags="-DREPLAY_OLD_LAYOUT -I$ob/$B -I$ob/user -I$ob/exporters -I$ob/bpf"
else
	base_flags="-I$ob"
fi
# the formats the base revision knows (its message for an unknown one
# lists them): formats added since are not compared
base_formats=$("$ob/collector" -f nosuch -a 2>&1 | sed -n "s/.*choose from //p")
[ -n "$base_formats" ] || die "cannot tell which formats $base knows"

# the libraries each tree links (`make print-ldlibs`; trees before it had
# no other libraries than these)
ldlibs() {
	make -s -C "$1" print-ldlibs 2>/dev/null || echo "-lbpf -lelf -ldw -lz -lpthread -lm"
}
# shellcheck disable=SC2086
gcc $CFLAGS $base_flags -o "$work/replay-old" tests/compare/replay.c "$ob/$B/libcollector.a" \
	$(ldlibs "$ob") || die "the replay driver does not build against $base"
# shellcheck disable=SC2086
gcc $CFLAGS -I. -o "$work/replay-new" tests/compare/replay.c $B/libcollector.a $(ldlibs .) ||
	die "the replay driver does not build against this tree"

result() {
	if [ "$1" = pass ]; then
		passed=$((passed + 1))
		echo "PASS $2"
	else
		failed=$((failed + 1))
		echo "FAIL $2"
	fi
}

# normalise DIR: what differs between two replays of one file, made equal.
# The summary's unwinding line times this replay's unwinder ("N us per
# sample"); everything else is written from the saved file and /proc of the
# stopped targets.
normalise() {
	[ -f "$1/summary.txt" ] || return 0
	sed -i 's/^\(  unwinding  *\)[0-9.]* us per sample/\1<time> us per sample/' "$1/summary.txt"
}

# compare_dirs NAME LABEL: one line for the trees $work/NAME.old and .new
compare_dirs() {
	nfiles=$(find "$work/$1.new" -type f | wc -l)
	if [ "$nfiles" -eq 0 ]; then
		result fail "$2: nothing was written"
	elif diff -r "$work/$1.old" "$work/$1.new" >"$work/$1.diff" 2>&1; then
		result pass "$2: identical ($nfiles files)"
	else
		grep '^Binary files\|^diff \|^Only in' "$work/$1.diff" >"$work/$1.differ"
		result fail "$2: $(wc -l <"$work/$1.differ") of $nfiles files differ:"
		head -10 "$work/$1.differ" | sed "s|$work/||g; s/^/    /"
	fi
}

# stopped PID: waits until every thread of PID is stopped (SIGSTOP takes
# effect when a thread next runs): until then /proc shows its CPU time grow
stopped() {
	for _ in $(seq 1 200); do
		running=$(cat /proc/"$1"/task/*/stat 2>/dev/null |
			awk '{ sub(/.*\) /, ""); if ($1 != "T") n++ } END { print n + 0 }')
		[ "$running" -eq 0 ] && return 0
		sleep 0.01
	done
	echo "compare-outputs: $1 did not stop" >&2
}

# run NAME SAMPLES_AT_LEAST "WORKLOAD ARGS" COLLECTOR_ARGS...: a -p run on
# the running workload, stopped, replayed by both drivers, compared
run() {
	name=$1 min=$2 cmd=$3
	shift 3
	rec="$work/$name.rec"
	# shellcheck disable=SC2086
	$cmd >/dev/null &
	wl_pid=$!
	sleep 0.3
	COLLECTOR_SAVE_RECORDS="$rec" ./collector -q -p "$wl_pid" -o "$work/$name.run" "$@" \
		>"$work/$name.log" 2>&1
	rc=$?
	kill -STOP "$wl_pid"
	stopped "$wl_pid"
	# one copy of the kernel's symbols for both replays (see replay.c)
	cp /proc/kallsyms "$work/$name.kallsyms"
	export REPLAY_KALLSYMS="$work/$name.kallsyms"
	if [ $rc -ne 0 ]; then
		result fail "$name: collector exited $rc: $(tail -1 "$work/$name.log")"
	elif ! "$work/replay-old" "$rec" "$work/$name.old" >"$work/$name.old.log" 2>&1; then
		result fail "$name: the old replay failed: $(tail -1 "$work/$name.old.log")"
	elif ! REPLAY_FORMATS=$base_formats "$work/replay-new" "$rec" "$work/$name.new" \
		>"$work/$name.new.log" 2>&1; then
		result fail "$name: the new replay failed: $(tail -1 "$work/$name.new.log")"
	else
		samples=$(awk '$1 == "samples" { print $2; exit }' "$work/$name.new/summary.txt")
		if [ "${samples:-0}" -lt "$min" ]; then
			result fail "$name: only ${samples:-no} samples replayed (at least $min expected)"
		else
			normalise "$work/$name.old"
			normalise "$work/$name.new"
			compare_dirs "$name" \
				"$name: $samples samples, $(du -k "$rec" | cut -f1) KiB of records"
		fi
	fi
	kill -KILL "$wl_pid"
	wait "$wl_pid" 2>/dev/null
	wl_pid=
}

WL=$B/workloads
run split-threads 100 "$WL/split 600 2" -d 2
run pie_lib 100 "$WL/pie_lib 600" -d 2
run deep-dwarf 100 "$WL/deep 600" -d 2 --call-graph dwarf
run calls-trace-args 100 "$WL/calls 100000000" -d 1 --trace "$WL/calls:traced_*" --args 2
run escapes-trace 100 "$WL/escapes 1000000000" -d 1 --trace "$WL/escapes:traced_*"
# a library by name, found in the target's maps
run split-trace-libc 100 "$WL/split 600" -d 1 --trace "libc:__clock_gettime"

# bench/exporters.c: both trees' writers on the same synthetic model
for fmt in dcpi sampler callgrind hpctoolkit xray; do
	mkdir "$work/exp-$fmt.old" "$work/exp-$fmt.new"
	if ! "$ob/$B/bench/exporters-bench" "$fmt" 20000 "$B/bench/funcs10k" "$work/exp-$fmt.old" \
		>"$work/exp-$fmt.old.log" 2>&1; then
		result fail "exporters-bench $fmt: the old bench failed: $(tail -1 "$work/exp-$fmt.old.log")"
	elif ! $B/bench/exporters-bench "$fmt" 20000 "$B/bench/funcs10k" "$work/exp-$fmt.new" \
		>"$work/exp-$fmt.new.log" 2>&1; then
		result fail "exporters-bench $fmt: the new bench failed: $(tail -1 "$work/exp-$fmt.new.log")"
	else
		compare_dirs "exp-$fmt" "exporters-bench $fmt 20000 samples"
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
