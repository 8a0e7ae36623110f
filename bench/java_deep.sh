#!/bin/sh
# The JVM walk on a deep Java stack (bench/workloads/DeepJ.java: 60 calls
# of one method into a hot leaf, started without flags): the sampler's BPF
# ns per sample (on_sample with the JVM's walk it hands over to, from the
# kernel's BPF statistics) of `collector -p -F 9999 -d 3`, RUNS rounds,
# each round this collector and, when given, BASE (an older build) back to
# back on the same JVM; and the Java frames a sample served from the walk's
# blob cache (the summary's count).  Root.
# Usage: bench/java_deep.sh [RUNS] [BASE]
cd "$(dirname "$0")/.." || exit 1
runs=${1:-3}
base=${2:-}
c=${COLLECTOR:-./collector}
cls=${BENCH_BUILD:-build/bench}/java
tmp=$(mktemp -d)
jpid=""
stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'kill $jpid 2>/dev/null; echo "$stats" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
[ -f "$cls/DeepJ.class" ] || { echo "bench/java_deep.sh: make $cls/DeepJ.class first" >&2; exit 1; }
echo 1 >/proc/sys/kernel/bpf_stats_enabled
java -cp "$cls" DeepJ 60 3600 >/dev/null &
jpid=$!
sleep 4 # compiled by then

# one run of collector $1: "NS_PER_SAMPLE SAMPLES CACHED"
one() {
	rm -rf "$tmp/o"
	"$1" -p "$jpid" -F 9999 -d 3 -f folded -o "$tmp/o" >"$tmp/log" 2>&1 &
	cp=$!
	sleep 2.8
	ns=$(bpftool prog show 2>/dev/null | awk '/name on_sample/ {
		for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") n = $(i + 1) }
		if (n > 0) { printf "%d %d", t / n, n; exit } }')
	wait "$cp"
	cached=$(sed -n "s/.*; \([0-9]*\) frames' code blobs from the cache.*/\1/p" "$tmp/log")
	echo "${ns:-- -} ${cached:--}"
}

printf '%-6s %-40s %12s %10s %14s\n' round collector "BPF ns/smp" samples "cached frames"
for r in $(seq 1 "$runs"); do
	for b in "$c" $base; do
		set -- $(one "$b")
		printf '%-6s %-40s %12s %10s %14s\n' "$r" "$b" "$1" "$2" "$3"
	done
done
