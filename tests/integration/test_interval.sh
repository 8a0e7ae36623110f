# Continuous runs (--interval): a complete set of sampled profiles per
# interval in DIR/<UTC start>/, each valid for its readers (go tool pprof,
# collector dump), and the intervals' samples adding up to the run's: none
# lost and none counted twice at the cuts.  Then a -p run whose target exits
# mid-interval, and the options refused.
. tests/integration/lib.sh
need_root
command -v go >/dev/null || fail "go missing (golang-go): go tool pprof reads the profiles"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod

# check_intervals OUT STDERR MIN MAX SECONDS: MIN to MAX interval
# directories of SECONDS each, named by their slots' UTC start in increasing
# order, each a complete valid set whose
# sample count is the one the run printed for it; prints the sum
check_intervals() {
	out=$1 log=$2
	n=0 sum=0 prev= prev_t=
	for d in "$out"/*/; do
		d=${d%/}
		name=${d##*/}
		echo "$name" | grep -Eq '^[0-9]{8}T[0-9]{6}Z$' || fail "$d: not named by a UTC time"
		[ -z "$prev" ] || [ "$name" \> "$prev" ] || fail "$name does not follow $prev"
		prev=$name
		for f in profile.pb.gz collector.folded flamegraph.html speedscope.json; do
			[ -s "$d/$f" ] || fail "$d: no $f"
		done
		"$COLLECTOR" dump --check "$d" >/dev/null 2>"$TMP/err" ||
			{ cat "$TMP/err"; fail "$d: collector dump --check rejects it"; }
		said=$(sed -n "s/^collector: interval $name: \([0-9]*\) samples.*/\1/p" "$log")
		[ -n "$said" ] || fail "the run did not report interval $name"
		got=$(pprof_samples "$d/profile.pb.gz")
		[ "$got" = "$said" ] || fail "$d: pprof counts $got samples, the run said $said"
		folded=$(awk '{ n += $NF } END { print n + 0 }' "$d/collector.folded")
		[ "$folded" = "$said" ] || fail "$d: the folded stacks count $folded, the run said $said"
		# pprof's time_nanos is the interval's start, in the slot the
		# directory's name is the start of; later than the previous one's
		t=$(pprof_start_ns "$d/profile.pb.gz") || fail "$d: go tool pprof reads no Time"
		in_slot "$name" "$t" "$5" ||
			fail "$d: the profile starts at $(date -u -d "@$((t / 1000000000))"), outside the slot $name"
		[ -z "$prev_t" ] || [ "$t" -gt "$prev_t" ] || fail "$d starts at $t, before $prev_t"
		prev_t=$t
		n=$((n + 1)) sum=$((sum + got))
	done
	[ "$n" -ge "$3" ] && [ "$n" -le "$4" ] || fail "$out: $n intervals, expected $3 to $4"
	echo "$sum"
}

# 1. -a for 7 s in 2 s intervals, with a busy workload: cuts are due at
# 2, 4 and 6 s (on that grid however late one is), then the last second
# (4 sets; 3 should the cut at 6 s come after the end at 7 s)
# and short processes coming and going all along (forgotten between
# intervals once they have ended: their samples must be in their interval)
"$WL/split" 9 >/dev/null &
busy=$!
# (until the stop file, or $TMP is gone: a failure exits without it)
(while [ -d "$TMP" ] && [ ! -e "$TMP/stop" ]; do "$WL/forkexec" "$WL/split" 0.05 >/dev/null; done) &
churn=$!
add_cleanup "kill $busy $churn 2>/dev/null"
# (the formats of the whole system at once: those with a file per process
# would make each cut take seconds under ASan, and the -p run has them)
"$COLLECTOR" -a -d 7 --interval 2 -f pprof,folded,flamegraph,speedscope -o "$TMP/all" \
	>"$TMP/summary" 2>"$TMP/log" ||
	{ cat "$TMP/log"; fail "collector -a --interval failed"; }
touch "$TMP/stop"
kill "$busy" 2>/dev/null
wait "$busy" "$churn" 2>/dev/null
cat "$TMP/log" "$TMP/summary" >"$TMP/all.txt"
sum=$(check_intervals "$TMP/all" "$TMP/all.txt" 3 4 2) || exit 1
total=$(summary_value "$TMP/all.txt" samples)
[ "$sum" = "$total" ] || fail "-a: the intervals hold $sum samples, the run $total"
[ "$total" -gt 1000 ] || fail "-a: only $total samples in 7 s with a busy workload"
sets=$(summary_value "$TMP/all.txt" intervals)
[ "$sets" = "$(ls -d "$TMP"/all/*/ | wc -l)" ] || fail "the summary says $sets intervals"
# the short processes of every interval are in that interval's files
for d in "$TMP"/all/*/; do
	grep -q '^split;' "$d/collector.folded" || fail "$d: no samples of split"
done
echo "-a: $sets intervals, $sum samples in all"

# 2. -p on a process that works for 2.5 s, in 1 s intervals, every sampled
# format: the last
# interval ends with it, and every sample of the run is in some interval
# (how many intervals depends on when the work ends: at least 2)
"$WL/split" 2.5 >/dev/null &
pid=$!
"$COLLECTOR" -p "$pid" --interval 1 -o "$TMP/pid" >"$TMP/summary" 2>"$TMP/log" ||
	{ cat "$TMP/log"; fail "collector -p --interval failed"; }
wait "$pid"
cat "$TMP/log" "$TMP/summary" >"$TMP/pid.txt"
sum=$(check_intervals "$TMP/pid" "$TMP/pid.txt" 2 1000 1) || exit 1
total=$(summary_value "$TMP/pid.txt" samples)
[ "$sum" = "$total" ] || fail "-p: the intervals hold $sum samples, the run $total"
[ "$total" -gt 1000 ] || fail "-p: only $total samples of 2.5 s of work"
# every sampled format, in every interval; none of another kind
for d in "$TMP"/pid/*/; do
	for f in callgrind.out.* hpctoolkit sampler dcpi; do
		ls -d "$d"$f >/dev/null 2>&1 || fail "$d: no $f"
	done
	ls "$d" | grep -q xray && fail "$d: an XRay file in a sampled interval"
done
ls "$TMP/all"/*/callgrind.out.* >/dev/null 2>&1 && fail "-f was not followed: callgrind written"
sets=$(summary_value "$TMP/pid.txt" intervals)
[ "$sets" = "$(ls -d "$TMP"/pid/*/ | wc -l)" ] || fail "the summary says $sets intervals"
echo "-p: $sets intervals, $sum samples in all"

# 3. refused: a clear message and exit 2, nothing written
cd "$TMP" || exit 1
expect_exit 2 "$COLLECTOR" -a --interval 0
grep -q "at least 1" "$TMP/err" || fail "--interval 0: $(cat "$TMP/err")"
expect_exit 2 "$COLLECTOR" -a --interval abc
grep -q "not a number of seconds" "$TMP/err" || fail "--interval abc: $(cat "$TMP/err")"
expect_exit 2 "$COLLECTOR" --interval 2 --trace "$WL/calls:leaf" -- "$WL/calls"
grep -q "two runs" "$TMP/err" || fail "--interval --trace: $(cat "$TMP/err")"
expect_exit 2 "$COLLECTOR" -a --interval 2 -f pprof,xray
grep -q "xray format holds traced calls" "$TMP/err" || fail "-f xray --interval: $(cat "$TMP/err")"
ls -d "$TMP"/collector-* >/dev/null 2>&1 && fail "a refused run left an output directory"
echo "PASS"
