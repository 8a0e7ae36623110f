# Ctrl-C (SIGINT) and SIGTERM while collecting, a second Ctrl-C while
# writing, and a target killed mid-run: complete, valid files every time.
. tests/integration/lib.sh
need_root

# check_out DIR: every file is valid and none is left half-written
check_out() {
	[ -z "$(find "$1" -name '*.tmp')" ] || fail "temporary files left in $1"
	"$COLLECTOR" dump --check "$1" >/dev/null || fail "invalid files in $1"
}

for sig in INT TERM; do
	"$COLLECTOR" -o "$TMP/$sig" -- "$WL/split" 30 >"$TMP/stdout" 2>"$TMP/summary" &
	pid=$!
	wait_sampling $pid || { cat "$TMP/summary"; fail "SIG$sig: the collector did not start sampling"; }
	sleep 1
	kill -$sig $pid
	wait $pid
	rc=$?
	pkill -f "$WL/split 30"
	[ $rc -eq 0 ] || { cat "$TMP/summary"; fail "SIGINT: exit $rc"; }
	grep -q "hot_function" "$TMP/summary" || fail "SIG$sig: no summary"
	check_out "$TMP/$sig"
done

# two Ctrl-C in a row: the second may land while writing; it must finish
"$COLLECTOR" -F 4999 -a -o "$TMP/twice" >/dev/null 2>"$TMP/err" &
pid=$!
sleep 1.5
kill -INT $pid
sleep 0.05
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/err"; fail "two SIGINTs: exit $rc"; }
check_out "$TMP/twice"

# signals during the attach of many probes: the run still ends cleanly
"$COLLECTOR" -o "$TMP/attach" --trace 'libc:*' -- "$WL/split" 2 >/dev/null 2>"$TMP/err" &
pid=$!
sleep 0.3
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || { cat "$TMP/err"; fail "SIGTERM while attaching: exit $rc"; }
[ ! -d "$TMP/attach" ] || [ -z "$(find "$TMP/attach" -name '*.tmp')" ] || fail "temporary files left"
pkill -f "$WL/split 2"

# the target killed mid-run
"$WL/split" 30 >/dev/null &
target=$!
"$COLLECTOR" -p $target -o "$TMP/killed" >"$TMP/stdout" 2>"$TMP/summary" &
pid=$!
wait_sampling $pid || { kill -KILL $target; cat "$TMP/summary"; fail "target killed: the collector did not start sampling"; }
sleep 1
kill -KILL $target
wait $pid
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/summary"; fail "target killed: exit $rc"; }
grep -q "hot_function" "$TMP/summary" || fail "target killed: no summary"
check_out "$TMP/killed"
echo ok
