# collector -a finds the workload among everything else.
. tests/integration/lib.sh
need_root

"$WL/split" 30 >/dev/null &
pid=$!
sleep 0.3
"$COLLECTOR" -a -d 1.5 -o "$TMP/out" >"$TMP/summary" 2>"$TMP/err"
rc=$?
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
cat "$TMP/summary" "$TMP/err"
[ $rc -eq 0 ] || fail "collector exited $rc"
grep -q "^collector: system-wide" "$TMP/summary" || fail "summary does not say system-wide"
hot=$(share "$TMP/summary" self hot_function)
# the workload keeps one of the two CPUs busy: about 3/4 of half the samples
within "$hot" 15 85 || fail "hot_function not found system-wide (share '$hot')"
echo ok
