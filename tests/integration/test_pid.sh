# collector -p PID on a running workload.
. tests/integration/lib.sh
need_root

"$WL/split" 30 >/dev/null &
pid=$!
sleep 0.3
"$COLLECTOR" -p "$pid" -d 1.5 -o "$TMP/out" >"$TMP/stdout" 2>"$TMP/summary"
rc=$?
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
cat "$TMP/summary"
[ $rc -eq 0 ] || fail "collector exited $rc"
# the split of the work (see percent_of in lib.sh)
pct=$(percent_of "$(samples_of "$TMP/summary" self hot_function)" \
	"$(samples_of "$TMP/summary" self cold_function)")
within "$pct" 65 85 || fail "hot_function has '$pct'% of hot + cold self samples, not 75 +- 10"
# the machine may be busy: judge the rate per CPU-second the target got
rate=$(summary_value "$TMP/summary" rate)
within "$rate" 800 1100 || fail "achieved $rate samples per CPU-second at -F 999"
echo ok
