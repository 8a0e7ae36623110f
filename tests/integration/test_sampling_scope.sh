# What the sampling clock follows, and what it costs the target.
# - `-- CMD` and -p follow the targets' threads, as perf record does: a
#   sleeping command takes next to no sampling interrupts (a clock per CPU
#   would fire on every CPU, idle or not: 2 CPUs x 10 000 Hz x 2 s).
# - -p reaches every thread the process already has, not only its first.
# - The sampler keeps to its CPU share: with a 1% share, most samples of a
#   busy target are skipped and counted as lost, not taken.
#   (COLLECTOR_SAMPLER_SHARE sets the share for one run; the default is
#   kernel.perf_cpu_time_max_percent's.)
. tests/integration/lib.sh
need_root

# 1. a command that sleeps 2 s at 10 000 Hz
"$COLLECTOR" -F 10000 -o "$TMP/sleep" -- sleep 2 >/dev/null 2>"$TMP/sleep.txt" ||
	{ cat "$TMP/sleep.txt"; fail "collector -- sleep 2 failed"; }
cat "$TMP/sleep.txt"
runs=$(sed -n 's/.*(sampler: \([0-9]*\) runs.*/\1/p' "$TMP/sleep.txt")
[ -n "$runs" ] || fail "no sampler run count in the summary (bpf_stats unavailable?)"
# about 1 ms of CPU makes about 10 samples; a clock per CPU would run the
# sampler some 20 000 times
[ "$runs" -le 2000 ] || fail "the sampler ran $runs times for a command that sleeps"

# 2. -p on a process whose two workers already run when the collector starts
"$WL/threads" 4 >/dev/null &
pid=$!
add_cleanup "kill $pid 2>/dev/null"
sleep 0.3
"$COLLECTOR" -p "$pid" -d 1.5 -o "$TMP/threads" >/dev/null 2>"$TMP/threads.txt" ||
	{ cat "$TMP/threads.txt"; fail "collector -p failed"; }
cat "$TMP/threads.txt"
a=$(samples_of "$TMP/threads.txt" total work_a)
b=$(samples_of "$TMP/threads.txt" total work_b)
# both spin the whole time, one CPU each when the machine is free: judge
# the split, not the counts
pct=$(percent_of "$a" "$b")
within "$pct" 20 80 || fail "work_a has '$pct'% of work_a + work_b samples: a thread is not sampled"

# 3. a 0.1% CPU share for the sampler
COLLECTOR_SAMPLER_SHARE=0.1 "$COLLECTOR" -F 20000 -o "$TMP/share" -- "$WL/threads" 0.3 \
	>/dev/null 2>"$TMP/share.txt" || { cat "$TMP/share.txt"; fail "collector -- threads failed"; }
cat "$TMP/share.txt"
skipped=$(awk '/samples skipped \(sampler over its CPU share\)/ { print $NF }' "$TMP/share.txt")
samples=$(summary_value "$TMP/share.txt" samples)
[ -n "$skipped" ] && [ "$skipped" -gt 0 ] || fail "no samples skipped with a 0.1% share"
[ "$samples" -gt 0 ] || fail "no samples taken with a 0.1% share"
# a sample costs more than 0.1 us (two clock reads, two map updates, the
# ring): 999 times that is two periods of 50 us or more, so at least two
# samples are skipped for every one taken
[ "$skipped" -ge $((2 * samples)) ] ||
	fail "$skipped skipped against $samples taken with a 0.1% share"
echo ok
