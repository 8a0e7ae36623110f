# CPU samples summed by stack in the kernel (no format needing them in
# time order): every sample the program counted is decoded once, or counted
# as lost to a full map; the functions and chains are the stream's; a
# time-ordered format, or --no-aggregate, keeps the stream.
. tests/integration/lib.sh
need_root

# lost_of SUMMARY CAUSE-PREFIX: the lost count of that cause, 0 if absent
lost_of() {
	awk -v cause="$2" 'index($0, "    " cause) == 1 { n = $NF } END { print n + 0 }' "$1"
}

# counted_of SUMMARY: the samples the kernel counted, from the in-kernel line
counted_of() {
	sed -n 's/.*in-kernel sums .*(\([0-9]*\) counted there.*/\1/p' "$1"
}

# check_exact SUMMARY: decoded samples + sums refused by a full map ==
# samples the kernel counted
check_exact() {
	samples=$(summary_value "$1" samples)
	counted=$(counted_of "$1")
	refused=$(lost_of "$1" "kernel by-stack sums map full")
	[ -n "$counted" ] || { cat "$1"; fail "$2: no in-kernel sums line"; }
	[ $((samples + refused)) -eq "$counted" ] ||
		fail "$2: $samples samples decoded + $refused refused, the kernel counted $counted"
}

# hot_share SUMMARY: hot_function's share of hot + cold (3:1 by work)
hot_share() {
	percent_of "$(samples_of "$1" self hot_function)" "$(samples_of "$1" self cold_function)"
}

# One run summed, its count checked against ip_counts of the same run
# (COLLECTOR_COUNT_BY_IP: the per-instruction map, counted independently).
COLLECTOR_COUNT_BY_IP=1 "$COLLECTOR" -v -f folded -o "$TMP/agg" -- "$WL/split" 1 2 \
	>"$TMP/stdout" 2>"$TMP/agg.txt" || { cat "$TMP/agg.txt"; fail "aggregated: exited $?"; }
check_exact "$TMP/agg.txt" "aggregated, ip_counts"
grep -q "in-kernel sums: .* reads (in batches)" "$TMP/agg.txt" ||
	{ cat "$TMP/agg.txt"; fail "aggregated: the sums not read in batches"; }
grep -q "^  truncated stacks" "$TMP/agg.txt" || fail "aggregated: no complete-stack figure"
f="$TMP/agg/collector.folded"
sum=$(awk '{ t += $NF } END { print t + 0 }' "$f")
[ "$sum" = "$(summary_value "$TMP/agg.txt" samples)" ] ||
	fail "aggregated: the folded counts add up to $sum, not to the samples"
grep -Eq "split;(_start;__libc_start_main;)?__libc_start_call_main;main;run;chain_a;chain_b;chain_c;hot_function [0-9]" "$f" ||
	grep -Eq "split;start_thread;.*;chain_a;chain_b;chain_c;hot_function [0-9]" "$f" ||
	fail "aggregated: no line with the whole chain to hot_function"

# Read key by key (COLLECTOR_AGG_NO_BATCH: as on a kernel without batch map
# operations) instead of in batches: as exact, the same chains
COLLECTOR_AGG_NO_BATCH=1 COLLECTOR_COUNT_BY_IP=1 "$COLLECTOR" -v -f folded -o "$TMP/bykey" -- \
	"$WL/split" 1 2 >"$TMP/stdout" 2>"$TMP/bykey.txt" || { cat "$TMP/bykey.txt"; fail "key by key: exited $?"; }
check_exact "$TMP/bykey.txt" "key by key, ip_counts"
grep -q "in-kernel sums: .* reads (key by key)" "$TMP/bykey.txt" ||
	fail "key by key: the sums read otherwise"
grep -Eq ";chain_a;chain_b;chain_c;hot_function [0-9]" "$TMP/bykey/collector.folded" ||
	fail "key by key: no line with the chain to hot_function"

# The same workload streamed: the same top function, the same split
"$COLLECTOR" --no-aggregate -f folded -o "$TMP/stream" -- "$WL/split" 1 2 \
	>"$TMP/stdout" 2>"$TMP/stream.txt" || { cat "$TMP/stream.txt"; fail "stream: exited $?"; }
grep -q "in-kernel sums" "$TMP/stream.txt" && fail "--no-aggregate summed in the kernel"
for run in agg stream; do
	top=$(awk '/^Top functions by self/ { getline; getline; print $3; exit }' "$TMP/$run.txt")
	[ "$top" = hot_function ] || { cat "$TMP/$run.txt"; fail "$run: top self function $top"; }
	s=$(hot_share "$TMP/$run.txt")
	within "$s" 60 90 || fail "$run: hot_function has $s% of hot + cold, 75% expected"
done

# Counted by the kernel's own counter (no ip_counts), with a time-ordered
# format beside: the stream
"$COLLECTOR" -f folded -o "$TMP/agg2" -- "$WL/split" 1 >"$TMP/stdout" 2>"$TMP/agg2.txt" ||
	fail "aggregated: exited $?"
check_exact "$TMP/agg2.txt" "aggregated"
"$COLLECTOR" -f folded,sampler -o "$TMP/sampler" -- "$WL/split" 1 >"$TMP/stdout" \
	2>"$TMP/sampler.txt" || fail "sampler: exited $?"
grep -q "in-kernel sums" "$TMP/sampler.txt" && fail "a sampler run summed in the kernel"

# Maps far too small: what they refuse is reported as lost, the rest exact
COLLECTOR_AGG_KEYS=2 COLLECTOR_AGG_STACKS=2 "$COLLECTOR" -f folded -o "$TMP/full" -- \
	"$WL/split" 1 2 >"$TMP/stdout" 2>"$TMP/full.txt" || fail "full maps: exited $?"
check_exact "$TMP/full.txt" "full maps"
keys=$(lost_of "$TMP/full.txt" "kernel by-stack sums map full")
stacks=$(lost_of "$TMP/full.txt" "kernel stack map full")
[ "$keys" -gt 0 ] && [ "$stacks" -gt 0 ] ||
	{ cat "$TMP/full.txt"; fail "full maps: $keys sums and $stacks stacks refused"; }
echo ok
