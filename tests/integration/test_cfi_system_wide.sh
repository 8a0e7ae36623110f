#!/bin/sh
# -a --call-graph cfi while Debian's xz and python3 run,
# both started after sampling began: their tables come when they ask
# (their first samples), and at least 90% of their stacks are complete
# (the Callgrind file of each process says how many were truncated).
# An exec'd process's maps are read at its first sample, an interpreter's
# at its exec (its walker needs them before): python3's stacks hold the
# script's Python function, and the summary counts the processes whose
# maps waited.
. tests/integration/lib.sh
need_root
# the ASan build builds tables about ten times slower (3.5 s for this run's
# 53 images): samples before them are a large share of a 5-second run
plain_suite_only "tables take seconds under ASan"
command -v xz >/dev/null || fail "xz missing (xz-utils)"
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 missing (python3)"

seq 1 150000 | awk '{ print $1, $1 * 7919 % 1000003, "line of text for xz to chew on" }' \
	>"$TMP/input"

"$COLLECTOR" -a -v -d 5 -o "$TMP/out" >/dev/null 2>"$TMP/summary" &
cpid=$!
sleep 1
xz -6 -c "$TMP/input" >/dev/null &
xpid=$!
/usr/bin/python3 "$TOP/tests/workloads/pyloop.py" &
ppid=$!
wait $xpid $ppid
wait $cpid || { cat "$TMP/summary"; fail "collector exited $?"; }
grep -A2 "truncated" "$TMP/summary"
grep -q "call graph: cfi" "$TMP/summary" || fail "cfi is not the default for -a"

# complete_of PID NAME: the complete share of that process's stacks, from
# the Callgrind file of its image that runs NAME (the shell forked it, then
# it exec'd: callgrind.out.PID.1)
complete_of() {
	f=$(grep -l "^cmd: [^ ]*$2\( \|\$\)" "$TMP/out/callgrind.out.$1" "$TMP/out/callgrind.out.$1".* \
		2>/dev/null | head -n 1)
	[ -n "$f" ] || { echo "0 0"; return; } # no samples at all
	awk '/^desc: TruncatedStacks:/ { t = $3; n = $5 }
		END { if (n) printf "%.1f %d\n", 100 * (n - t) / n, n }' "$f"
}

# the share is only measured where the programs ran: on a machine busy
# with other work they may get a tenth of a CPU, and the time their tables
# take to come (other processes' tables before theirs) weighs ten times
# more; that is said, not taken for a result
for p in "xz $xpid" "python3 $ppid"; do
	set -- $p
	r=$(complete_of "$2" "$1")
	echo "$1: $r (complete %, samples)"
	set -- $r
	[ "${2:-0}" -ge 800 ] ||
		skip "the machine is too busy to measure: $p got ${2:-0} samples in 2-3 s of work"
done
for p in "xz $xpid" "python3 $ppid"; do
	set -- $p
	set -- $(complete_of "$2" "$1")
	within "$1" 90 100 || fail "$p: $1% of the stacks complete, expected >= 90%"
done
f=$(grep -l "^cmd: [^ ]*python3 " "$TMP/out/callgrind.out.$ppid" "$TMP/out/callgrind.out.$ppid".* \
	2>/dev/null | head -n 1)
grep -q "^fn=.*\bwork\b" "$f" || { grep "^fn=" "$f" | head; fail "python3: no Python frame 'work' in $f"; }
deferred=$(sed -n "s/.*; \([0-9]*\) exec'd processes' maps left for a first sample/\1/p" "$TMP/summary")
[ "${deferred:-0}" -ge 1 ] || { cat "$TMP/summary"; fail "no exec'd process's maps left for a first sample"; }
echo ok
