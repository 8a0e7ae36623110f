# collector -a finds the workload among everything else.
. tests/integration/lib.sh
need_root

"$WL/split" 30 >/dev/null &
pid=$!
sleep 0.3
"$COLLECTOR" -a -d 1.5 -o "$TMP/out" >"$TMP/stdout" 2>"$TMP/summary"
rc=$?
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
cat "$TMP/summary"
[ $rc -eq 0 ] || fail "collector exited $rc"
grep -q "^collector: system-wide" "$TMP/summary" || fail "summary does not say system-wide"
hot=$(share "$TMP/summary" self hot_function)
cold=$(share "$TMP/summary" self cold_function)
# its share of the whole machine depends on what else runs; its own split
# does not: hot_function does three times cold_function's work
within "$hot" 3 100 || fail "hot_function not found system-wide (share '$hot')"
ratio=$(awk -v h="$hot" -v c="$cold" 'BEGIN { if (c > 0) print h / c }')
within "$ratio" 2 4.5 || fail "hot/cold ratio '$ratio' system-wide is not about 3"
echo ok
