#!/bin/sh
# The Java walk's cost (issue 37's bench section): a JVM started without
# flags (tests/workloads/JavaShares, its main thread in alpha, beta and
# gamma) under `collector -p` for 5 s at 999 and 9 999 Hz, back to back with
# a native program of the same stack depth (bench/workloads/deep, its depth
# argument set so that its samples have as many frames as the JVM's main
# thread's), both walked by the cfi unwinder in BPF: BPF ns per sample (the
# sampler's runs, from the kernel's BPF statistics), frames per sample (the
# folded stacks, weighted), stacks truncated, the collector's own CPU, and
# the Java walks stopped early.  Root.
# Usage: bench/java.sh [RUNS] [JAVA]   (JAVA: a java command, default java)
cd "$(dirname "$0")/.." || exit 1
runs=${1:-3}
java=${2:-java}
c=${COLLECTOR:-./collector}
deep=${BENCH_BUILD:-build/bench}/deep
tmp=$(mktemp -d)
jpid=""
dpid=""
trap 'kill $jpid $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
[ -f build/workloads/java/JavaShares.class ] || { echo "bench/java.sh: make build/workloads/java/JavaShares.class first" >&2; exit 1; }
[ -x "$deep" ] || { echo "bench/java.sh: make $deep first" >&2; exit 1; }

# figures of one run: its summary and folded stacks
figures() { # LABEL HZ
	awk -v label="$1" -v hz="$2" '
		FNR == NR {
			if (/profiler CPU/) for (i = 1; i <= NF; i++) { if ($i == "own,") own = $(i - 2)
				if ($i == "each;") us = $(i - 2) }
			if (/^  samples /) n = $2
			if (/truncated stacks/) trunc = $3
			if (/^  java / && /walks,/) for (i = 1; i <= NF; i++) if ($i == "stopped") stop = $(i - 1)
			next }
		{ w = $NF; k = split($0, f, ";"); frames += w * k; weight += w }
		END { printf "%-8s %-6s %12.0f %10.1f %10s %10s %10s %s\n", label, hz, us * 1000,
			weight ? frames / weight : 0, trunc, own, n, stop == "" ? "-" : stop }' \
		"$tmp/log" "$tmp/o/collector.folded"
}

rm -f "$tmp/ready" "$tmp/stop"
$java -cp build/workloads/java JavaShares --until "$tmp/stop" 1 "$tmp/truth" "$tmp/ready" &
jpid=$!
for _ in $(seq 1 100); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
jpid=$(awk '{ print $2 }' "$tmp/ready")
# deep under 5 levels: main, run, level x 5, spin, store, and libc's two
# and _start: the JVM main thread's 12 or so frames
"$deep" 100000000000000 5 </dev/zero >/dev/null &
dpid=$!
printf '%-8s %-6s %12s %10s %10s %10s %10s %s\n' program Hz "BPF ns/smp" frames/smp truncated \
	"own CPU s" samples "java walks stopped"
for hz in 999 9999; do
	for i in $(seq 1 "$runs"); do
		for p in java native; do
			rm -rf "$tmp/o"
			pid=$jpid
			[ "$p" = native ] && pid=$dpid
			"$c" -p "$pid" -F "$hz" -d 5 -f folded -o "$tmp/o" >/dev/null 2>"$tmp/log"
			figures "$p" "$hz"
		done
	done
done
touch "$tmp/stop"
