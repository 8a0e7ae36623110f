# A workload that forks and execs is followed into the child.
. tests/integration/lib.sh
need_root

"$COLLECTOR" -o "$TMP/out" -- "$WL/forkexec" "$WL/split" 1.5 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "collector exited $?"; }
cat "$TMP/summary"
grep -q "parent_spin" "$TMP/summary" || fail "the parent's own work is missing"
hot=$(share "$TMP/summary" self hot_function)
within "$hot" 30 85 || fail "the exec'd child's hot_function is missing (share '$hot')"
procs=$(summary_value "$TMP/summary" processes | tr -d ,)
[ "$procs" -ge 2 ] || fail "expected the parent and the exec'd child, got $procs processes"
echo ok
