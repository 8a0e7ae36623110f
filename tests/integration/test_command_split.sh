# collector -- workload: a known 75/25 CPU split and the nested chain.
. tests/integration/lib.sh
need_root

"$COLLECTOR" -o "$TMP/out" -- "$WL/split" 2 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "collector exited $?"; }
cat "$TMP/summary"

# the split of the work between hot_function and cold_function (of all
# samples they may have less: see percent_of in lib.sh)
hot=$(samples_of "$TMP/summary" self hot_function)
cold=$(samples_of "$TMP/summary" self cold_function)
pct=$(percent_of "$hot" "$cold")
within "$pct" 65 85 || fail "hot_function has '$pct'% of hot + cold self samples, not 75 +- 10"
pct=$(percent_of "$cold" "$hot")
within "$pct" 15 35 || fail "cold_function has '$pct'% of hot + cold self samples, not 25 +- 10"

# the chain main -> run -> chain_a -> chain_b -> chain_c -> hot_function:
# every caller's total share covers its callee's
for fn in chain_c chain_b chain_a; do
	t=$(share "$TMP/summary" total $fn)
	within "$t" 65 85 || fail "$fn total share '$t' is not the hot chain's"
done
for fn in run main; do
	t=$(share "$TMP/summary" total $fn)
	within "$t" 95 100 || fail "$fn total share '$t' is not ~100"
done
rate=$(summary_value "$TMP/summary" rate)
within "$rate" 800 1100 || fail "achieved $rate samples per CPU-second at -F 999"
pct=$(awk '$1 == "truncated" && $2 == "stacks" { sub("%", "", $3); print $3; exit }' "$TMP/summary")
within "$pct" 0 1 || fail "$pct% of frame-pointer stacks reported truncated"
echo ok
