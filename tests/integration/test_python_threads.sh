#!/bin/sh
# -p on a running python3.11 with two busy threads, each in a function of
# its own: each thread's samples carry its own function (the thread state
# is found per sampled thread, not the GIL holder's) and never the other's.
. tests/integration/lib.sh
need_root
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"

/usr/bin/python3.11 "$TOP/tests/workloads/pythreads.py" >"$TMP/ready" &
pid=$!
add_cleanup "kill $pid 2>/dev/null"
for _ in $(seq 1 100); do
	grep -q READY "$TMP/ready" && break
	sleep 0.1
done
grep -q READY "$TMP/ready" || fail "the workload did not start"
"$COLLECTOR" -q -p "$pid" -d 2 -f pprof -o "$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; fail "collector failed"; }
"$COLLECTOR" dump "$TMP/out/profile.pb.gz" >"$TMP/dump" || fail "dump failed"
# per thread: its samples, and those under each worker
awk '/^sample / { tid = $5; c = $2; n[tid] += c; delete seen; next }
	/^    #/ && $3 ~ /^(left|right)_worker$/ && !seen[$3]++ { w[tid, $3] += c }
	END { for (t in n) printf "%s %d %d %d\n", t, n[t], w[t, "left_worker"], w[t, "right_worker"] }' \
	"$TMP/dump" | sort >"$TMP/threads"
cat "$TMP/threads"
left=0 right=0
while read -r tid n l r; do
	[ "$n" -ge 100 ] || continue
	[ "$l" -gt 0 ] && [ "$r" -gt 0 ] && fail "$tid has samples of both workers ($l, $r)"
	named=$((l + r))
	[ $((100 * named)) -ge $((90 * n)) ] || fail "$tid: $named of $n samples under its worker (< 90%)"
	[ "$l" -gt 0 ] && left=$((left + 1))
	[ "$r" -gt 0 ] && right=$((right + 1))
done <"$TMP/threads"
[ "$left" -eq 1 ] && [ "$right" -eq 1 ] || fail "threads named left_worker: $left, right_worker: $right (1 each expected)"
echo ok
