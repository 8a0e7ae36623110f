#!/bin/sh
# Java frames named on a busy machine (issue 37: -a with JVMs that live a
# second): `collector -a -d 8 -f pprof` while javac compiles the test
# workloads again and again and a copy of the project builds in a loop,
# RUNS times for each collector given (default ./collector; another, such
# as an older build, side by side in the same round): the Java frames it
# could not name (the summary's "frames unnamed"), the samples with Java
# frames, the JVMs walked, and the collector's own CPU and its programs'
# run time as its summary says.  Root.
# Usage: bench/java_busy.sh [RUNS] [COLLECTOR...]
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
runs=${1:-3}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- ./collector
tmp=$(mktemp -d)
loop=""
trap 'kill $loop 2>/dev/null; rm -rf "$tmp"' EXIT
command -v javac >/dev/null || { echo "bench/java_busy.sh: no javac" >&2; exit 1; }

# the build loop's tree: a copy of the project without its build
mkdir -p "$tmp/src"
git -C "$top" ls-files -z | (cd "$top" && xargs -0 cp --parents -t "$tmp/src") || exit 1
cp -r "$top/vmlinux" "$tmp/src/" 2>/dev/null

one() { # COLLECTOR OUT
	mkdir -p "$2/jc"
	(for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		javac -d "$2/jc" "$top"/tests/workloads/*.java 2>/dev/null
	done) &
	jl=$!
	(while kill -0 $jl 2>/dev/null; do
		make -s -C "$tmp/src" clean >/dev/null 2>&1
		make -s -C "$tmp/src" -j2 collector >/dev/null 2>&1
	done) &
	loop=$!
	sleep 1
	"$1" -a -d 8 -f pprof -o "$2/out" >/dev/null 2>"$2/log"
	wait $jl
	kill $loop 2>/dev/null
	wait
	awk -v c="$1" '
		/^  java / && /JVMs? walked/ { for (i = 1; i <= NF; i++) {
			if ($i == "unnamed") unnamed = $(i - 2)
			if ($i == "walked") jvms = $(i - 2)
			if ($i == "with" && $(i + 1) == "Java") java = $(i - 5) " of " $(i - 3) } }
		/profiler CPU/ { for (i = 1; i <= NF; i++) { if ($i == "own,") own = $(i - 2)
			if ($i == "BPF") bpf = $(i - 2) } }
		END { printf "%-28s %6s %8s %18s %8s %8s\n", c, jvms, unnamed, java, own, bpf }' \
		"$2/log"
}

printf "%-28s %6s %8s %18s %8s %8s\n" collector JVMs unnamed "samples with Java" "own s" "BPF s"
r=0
while [ $r -lt "$runs" ]; do
	for c in "$@"; do
		rm -rf "$tmp/run"
		one "$c" "$tmp/run"
	done
	r=$((r + 1))
done
