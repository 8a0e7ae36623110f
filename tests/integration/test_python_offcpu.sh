#!/bin/sh
# --off-cpu on python3.11: where a Python thread waits, by Python stack:
# the off-CPU time under napper (20 sleeps of 20 ms) is at least 0.38 s
# and at most 2 s, at least 95% of it at its time.sleep line (the rest:
# preempted elsewhere in the loop), and worker's CPU samples are named.
. tests/integration/lib.sh
need_root
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"

W=$TOP/tests/workloads/pysleep.py
"$COLLECTOR" -q --off-cpu -f pprof -o "$TMP/out" -- /usr/bin/python3.11 "$W" 2>"$TMP/err" ||
	{ cat "$TMP/err"; fail "collector failed"; }
"$COLLECTOR" dump "$TMP/out/profile.pb.gz" >"$TMP/dump" || fail "dump failed"
sleep_line=$(grep -n '^ *time.sleep(' "$W" | cut -d: -f1)
# per sample (count cpu-ns off-cpu-ns wall-ns): off-CPU ns under napper,
# and at which of its lines; CPU samples under worker
set -- $(awk -v line="$sleep_line" '
	/^sample / { off = $4; cpu = $2 * ($3 > 0); seen_n = seen_w = 0; next }
	/^    #/ && $3 == "napper" && !seen_n++ { nap += off; l = $NF; sub(/.*:/, "", l); if (l != line) bad += off }
	/^    #/ && $3 == "worker" && !seen_w++ { work += cpu }
	END { print nap + 0, bad + 0, work + 0 }' "$TMP/dump")
echo "off-CPU under napper: $1 ns ($2 ns elsewhere than line $sleep_line); CPU samples under worker: $3"
[ "$1" -ge 380000000 ] && [ "$1" -le 2000000000 ] || fail "napper off the CPU for $1 ns, expected 0.4 s"
[ $((20 * $2)) -le "$1" ] || fail "$2 ns of napper's off-CPU time not at its sleep line (> 5%)"
[ "$3" -ge 20 ] || fail "only $3 CPU samples under worker"
echo ok
