#!/bin/sh
# The Python walk's cost (issue 24's bench section): a CPU-bound Python
# program (tests/workloads/pyshares.py, 3 CPU-s) under collector at 999 and
# 9 999 Hz, back to back with the same run whose interpreter is not walked
# (COLLECTOR_NO_PYTHON_WALK: the same native cfi stacks, of the same
# depth, without the Python frames): BPF ns per sample (the sampler's
# runs, from the kernel's BPF statistics), the collector's own CPU, walks
# stopped early.  Root.
# Usage: bench/python.sh [RUNS] [PYTHON]
cd "$(dirname "$0")/.." || exit 1
runs=${1:-3}
py=${2:-/usr/bin/python3.11}
c=${COLLECTOR:-./collector}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-8s %-8s %12s %12s %10s %s\n' Hz walk "BPF ns/smp" "own CPU s" samples "stopped early"
for hz in 999 9999; do
	for i in $(seq 1 "$runs"); do
		for mode in python native; do
			rm -rf "$tmp/o"
			env ${mode:+$( [ $mode = native ] && echo COLLECTOR_NO_PYTHON_WALK=1)} \
				"$c" -F "$hz" --no-aggregate -f folded -o "$tmp/o" -- "$py" \
				tests/workloads/pyshares.py 3 "$tmp/t" >/dev/null 2>"$tmp/log"
			awk -v hz="$hz" -v mode="$mode" '
				/profiler CPU/ { for (i = 1; i <= NF; i++) { if ($i == "own,") own = $(i - 2)
					if ($i == "each;") us = $(i - 2) } }
				/^  samples / { n = $2 }
				/^  python / && /walks,/ { for (i = 1; i <= NF; i++) if ($i == "stopped") stop = $(i - 1) }
				END { printf "%-8s %-8s %12.0f %12s %10s %s\n", hz, mode, us * 1000, own, n, stop }' "$tmp/log"
		done
	done
done
