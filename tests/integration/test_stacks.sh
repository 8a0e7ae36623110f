#!/bin/sh
# `collector stacks -p PID`: every thread of a running process printed once,
# the waiting ones by the stack they wait in (kernel, native and Python
# frames with file:line), the running ones by a sampled stack, and the
# process not stopped.  Every target is ready and in its state before the
# look: its ready file is written, and each waiting thread sleeps (state S)
# in the system call it waits in (/proc/PID/task/TID/syscall) with its
# context switch counts steady for 0.3 s (a thread still taking turns at
# the GIL switches every 5 ms).
#  1. tests/workloads/pystates.py on python3.11 (/usr/bin), and 3.13, 3.14,
#     3.15 from build/pythons (each skipped, loudly, when not there):
#     exit 0; "Process PID:" with the workload on its command line; its four
#     threads, each printed once and no other; nap `waiting` with the frame
#     `nap (PATH:LINE)` at its time.sleep line and a [k] ...nanosleep frame;
#     stuck `waiting` with `stuck (PATH:LINE)` at its acquire line and a
#     [k] ...futex... frame; main `waiting` with `<module> (PATH:LINE)` at
#     its time.sleep line; those three off their CPU at least 98% of the
#     look (they were blocked since before it, for all of it); spin
#     `running`, state R, with `spin (PATH:N)`, N a line of spin(); stderr
#     "collector: 4 threads looked at for T s, none stopped", T >= 0.1 (the
#     default look).  Afterwards the process lives, no thread of it is
#     stopped (no T or t in /proc/PID/task/*/stat), spin is R and the
#     waiting threads still S in the same system call with the same context
#     switch counts: none was woken, stopped or interrupted by the look.
#     Without -f nothing is written: its working directory stays empty.
#  2. the same process with -f pprof -o DIR: the same four threads on
#     stdout, and `collector dump DIR/profile.pb.gz` has exactly one sample
#     per thread (one per tid, the four, no other), nap's with its frame
#     `nap PATH:LINE`.
#  3. tests/workloads/stacks_block.c, built here (-g -O0, frame pointers):
#     the reader `waiting` with a [k] (anon_)pipe_read frame and
#     `wait_for_input (SRC:LINE)` at its read() line; main `waiting` with
#     `main (SRC:LINE)` at its pthread_join() line; untouched afterwards.
#  4. processes that exit during the look (-d 0.5): a shell `sleep 0.05`
#     and a python3.11 that exits after 50 ms, started right before
#     collector: exit 0 or 4 (4: gone before the probes were attached), no
#     crash (no signal, no sanitizer report), something said on stdout or
#     stderr.  And one that is surely alive when the look starts (collector
#     samples: its perf events are open) and is killed in it (-d 5): exit 0,
#     the run ended by the exit (T < 5 s), its thread, if printed, said
#     "(exited since)".
#  5. `collector stacks -- true`: refused, exit 2, a message on stderr.
# Each case's failures are reported and the others still run; the test
# fails at the end when any did.
. tests/integration/lib.sh
need_root
command -v cc >/dev/null || fail "no cc: stacks_block.c is built at test time"

PY311=/usr/bin/python3.11
W=$TOP/tests/workloads/pystates.py
SRC=$TOP/tests/workloads/stacks_block.c

case $(uname -m) in
x86_64) NR_READ=0 NR_FUTEX=202 NR_NANOSLEEP=230 ;;
aarch64) NR_READ=63 NR_FUTEX=98 NR_NANOSLEEP=115 ;;
*) fail "$(uname -m): the system call numbers this test waits in are not known here" ;;
esac

# line_of FILE MARKER: the number of the one line of FILE holding MARKER
line_of() {
	lo=$(grep -nF -- "$2" "$1" | cut -d: -f1)
	[ "$(printf '%s\n' "$lo" | grep -c .)" -eq 1 ] || fail "$1: not one line with '$2' ($lo)"
	echo "$lo"
}
NAP_LINE=$(line_of "$W" "# nap waits here")
STUCK_LINE=$(line_of "$W" "# stuck waits here")
MAIN_LINE=$(line_of "$W" "# main waits here")
SPIN_FIRST=$(line_of "$W" "def spin():")
SPIN_LAST=$(($(line_of "$W" "def nap():") - 1))
READ_LINE=$(line_of "$SRC" "/* the reader waits here */")
JOIN_LINE=$(line_of "$SRC" "/* main waits here */")

# thread_state PID TID: the state letter of /proc/PID/task/TID/stat (after
# the comm's closing parenthesis), empty when gone
thread_state() {
	sed 's/^.*) //' /proc/"$1"/task/"$2"/stat 2>/dev/null | cut -d' ' -f1
}
# thread_syscall PID TID: the number of the system call it is in
thread_syscall() {
	cut -d' ' -f1 /proc/"$1"/task/"$2"/syscall 2>/dev/null
}
# switches PID TID: its voluntary and involuntary context switches
switches() {
	awk '/^(non)?voluntary_ctxt_switches:/ { s = s $2 "/" } END { print s }' \
		/proc/"$1"/task/"$2"/status 2>/dev/null
}

# start_ready NAME READY CMD...: runs CMD in the background (killed at the
# test's exit), waits (10 s at most) until it wrote READY ("NAME TID"
# lines, main first); sets PID (READY's main, the process)
start_ready() {
	sr_name=$1 sr_ready=$2
	start_blocked "$@"
	PID=$(awk '$1 == "main" { print $2 }' "$sr_ready")
	[ -n "$PID" ] && [ -d "/proc/$PID" ] || fail "$sr_name: no live main pid in $sr_ready"
	add_cleanup "kill -KILL $PID 2>/dev/null"
}

# tid_of READY NAME
tid_of() {
	awk -v n="$2" '$1 == n { print $2 }' "$1"
}

# wait_waiting NAME PID TID SYSCALL: waits (10 s at most) until TID sleeps
# (S) in system call SYSCALL with its context switch counts unchanged over
# 0.3 s: it is in the wait it stays in, not on its way there
wait_waiting() {
	ww_sw=""
	for _ in $(seq 1 33); do
		if [ "$(thread_state "$2" "$3")" = S ] && [ "$(thread_syscall "$2" "$3")" = "$4" ]; then
			ww_now=$(switches "$2" "$3")
			[ -n "$ww_sw" ] && [ "$ww_now" = "$ww_sw" ] && return 0
			ww_sw=$ww_now
		else
			ww_sw=""
		fi
		sleep 0.3
	done
	fail "$1: thread $3 of $2 not steadily asleep in system call $4 after 10 s" \
		"(state '$(thread_state "$2" "$3")', system call '$(thread_syscall "$2" "$3")', switches $(switches "$2" "$3"))"
}

# wait_running NAME PID TID: waits (10 s at most) until TID is runnable (R)
wait_running() {
	for _ in $(seq 1 100); do
		[ "$(thread_state "$2" "$3")" = R ] && return 0
		sleep 0.1
	done
	fail "$1: thread $3 of $2 not running after 10 s (state '$(thread_state "$2" "$3")')"
}

# crashed RC ERRFILE: true when collector died of a signal or a sanitizer
# or the C library reported a fault
crashed() {
	[ "$1" -ge 128 ] ||
		grep -Eq 'Sanitizer|runtime error:|Segmentation fault|core dumped|Aborted|Assertion|double free|stack smashing' "$2"
}

# parse OUT THREADS: the threads of `collector stacks` stdout OUT, one line
# each, tab-separated: pid, tid, state letter, waiting|running, off-CPU
# percentage, then its frames as printed (without the indent)
parse() {
	awk '
	function flush() { if (have) print line; have = 0 }
	/^Process [0-9]+: / { flush(); pid = $2; sub(":", "", pid); next }
	/^  Thread [0-9]+ "/ {
		flush(); have = 1
		s = $0; sub(/^.*" \(/, "", s)
		state = substr(s, 1, 1); sub(/^.\): /, "", s)
		mode = s; sub(/,.*/, "", mode)
		pct = s; sub(/^[a-z]*, /, "", pct); sub(/%.*/, "", pct)
		line = pid "\t" $2 "\t" state "\t" mode "\t" pct
		next }
	have && /^    / { f = $0; sub(/^    /, "", f); line = line "\t" f; next }
	END { flush() }' "$1" >"$2"
}

# field THREADS TID N: field N of TID's line
field() {
	awk -F '\t' -v t="$2" -v n="$3" '$2 == t { print $n; exit }' "$1"
}
# has_frame THREADS TID FRAME: TID has a frame printed exactly FRAME
has_frame() {
	awk -F '\t' -v t="$2" -v f="$3" '$2 == t { for (i = 6; i <= NF; i++) if ($i == f) found = 1 }
		END { exit !found }' "$1"
}
# frame_like THREADS TID REGEX: TID has a frame matching REGEX
frame_like() {
	awk -F '\t' -v t="$2" -v re="$3" '$2 == t { for (i = 6; i <= NF; i++) if ($i ~ re) found = 1 }
		END { exit !found }' "$1"
}
# show THREADS TID: its frames, for a failure's log
show() {
	awk -F '\t' -v t="$2" '$2 == t { printf "    thread %s (%s, %s, %s%%):\n", $2, $3, $4, $5
		for (i = 6; i <= NF; i++) printf "      %s\n", $i }' "$1" >&2
}

# check_thread LABEL THREADS TID waiting|running [FRAME] [REGEX]: printed
# once, in that mode, with the frame FRAME (exactly) and a frame matching
# REGEX; a waiting one off its CPU at least 98% of the look
check_thread() {
	ct_n=$(awk -F '\t' -v t="$3" '$2 == t' "$2" | wc -l)
	[ "$ct_n" -eq 1 ] || { bad "$1: thread $3 printed $ct_n times, not once"; return; }
	ct_ok=1
	[ "$(field "$2" "$3" 4)" = "$4" ] || { bad "$1: thread $3 is '$(field "$2" "$3" 4)', not $4"; ct_ok=0; }
	if [ -n "$5" ] && ! has_frame "$2" "$3" "$5"; then
		bad "$1: thread $3 has no frame '$5'"
		ct_ok=0
	fi
	if [ -n "$6" ] && ! frame_like "$2" "$3" "$6"; then
		bad "$1: thread $3 has no frame matching '$6'"
		ct_ok=0
	fi
	if [ "$4" = waiting ] && ! awk -v p="$(field "$2" "$3" 5)" 'BEGIN { exit !(p != "" && p >= 98) }'; then
		bad "$1: thread $3, blocked since before the look, off its CPU $(field "$2" "$3" 5)% of it, not at least 98%"
		ct_ok=0
	fi
	[ "$ct_ok" -eq 1 ] || show "$2" "$3"
}

# only_threads LABEL THREADS TID...: the threads printed are these, no other
only_threads() {
	ot_label=$1 ot_threads=$2
	shift 2
	ot_want=$(printf '%s\n' "$@" | sort -n | tr '\n' ' ')
	ot_got=$(cut -f2 "$ot_threads" | sort -n | tr '\n' ' ')
	[ "$ot_got" = "$ot_want" ] || bad "$ot_label: threads printed: $ot_got; expected $ot_want (each once)"
}

# looked LABEL ERRFILE N: stderr says N threads looked at for T >= 0.1 s,
# none stopped
looked() {
	lk=$(sed -n 's/^collector: \([0-9]*\) threads looked at for \([0-9.]*\) s, none stopped.*/\1 \2/p' "$2")
	[ -n "$lk" ] || { cat "$2" >&2; bad "$1: stderr does not say 'collector: N threads looked at for T s, none stopped'"; return; }
	set -- "$1" "$2" "$3" $lk
	[ "$4" = "$3" ] || bad "$1: stderr says $4 threads looked at, not $3"
	awk -v t="$5" 'BEGIN { exit !(t >= 0.1) }' || bad "$1: looked at for $5 s, less than the default 0.1 s"
}

# snapshot PID TID...: "TID STATE SYSCALL SWITCHES" per TID
snapshot() {
	sn_pid=$1
	shift
	for sn_tid in "$@"; do
		echo "$sn_tid $(thread_state "$sn_pid" "$sn_tid") $(thread_syscall "$sn_pid" "$sn_tid") $(switches "$sn_pid" "$sn_tid")"
	done
}

# undisturbed LABEL PID BEFORE: the process lives, none of its threads is
# stopped, and the waiting threads of BEFORE (a snapshot) are as they were
undisturbed() {
	kill -0 "$2" 2>/dev/null || { bad "$1: the target $2 did not survive the look"; return; }
	for st in /proc/"$2"/task/*/stat; do
		s=$(sed 's/^.*) //' "$st" 2>/dev/null | cut -d' ' -f1)
		case $s in
		T | t) bad "$1: $(dirname "$st") is stopped ($s) after the look" ;;
		esac
	done
	while read -r ud_tid ud_rest; do
		ud_now=$(snapshot "$2" "$ud_tid")
		[ "$ud_now" = "$ud_tid $ud_rest" ] ||
			bad "$1: thread $ud_tid was 'state syscall switches' $ud_rest before the look, $(echo "$ud_now" | cut -d' ' -f2-) after: woken or stopped"
	done <"$3"
}

# --- 1 and 2. pystates.py ------------------------------------------------------
# pystates LABEL INTERPRETER_COMMAND...
pystates() {
	label=$1
	shift
	ready=$TMP/$label.ready
	start_ready "$label" "$ready" "$@" "$W" "$ready"
	pid=$PID
	nap=$(tid_of "$ready" nap) stuck=$(tid_of "$ready" stuck) spin=$(tid_of "$ready" spin)
	[ -n "$nap" ] && [ -n "$stuck" ] && [ -n "$spin" ] || { cat "$ready"; fail "$label: not four threads in $ready"; }
	wait_waiting "$label" "$pid" "$nap" "$NR_NANOSLEEP"
	wait_waiting "$label" "$pid" "$stuck" "$NR_FUTEX"
	wait_waiting "$label" "$pid" "$pid" "$NR_NANOSLEEP"
	wait_running "$label" "$pid" "$spin"
	snapshot "$pid" "$nap" "$stuck" "$pid" >"$TMP/$label.before"

	t0=$(date +%s.%N)
	mkdir "$TMP/$label.cwd"
	(cd "$TMP/$label.cwd" && exec "$COLLECTOR" stacks -p "$pid") >"$TMP/$label.out" 2>"$TMP/$label.err"
	rc=$?
	[ -z "$(ls -A "$TMP/$label.cwd")" ] ||
		bad "$label: without -f, collector stacks made files in its working directory: $(ls -A "$TMP/$label.cwd")"
	echo "$label: collector stacks -p $pid exited $rc in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
	if crashed "$rc" "$TMP/$label.err" || [ "$rc" -ne 0 ]; then
		cat "$TMP/$label.out" "$TMP/$label.err" >&2
		bad "$label: collector stacks -p $pid exited $rc"
		return
	fi
	undisturbed "$label" "$pid" "$TMP/$label.before"
	[ "$(thread_state "$pid" "$spin")" = R ] || bad "$label: spin ($spin) is '$(thread_state "$pid" "$spin")' after the look, not R"

	grep -q "^Process $pid: .*$W" "$TMP/$label.out" ||
		{ head -n 3 "$TMP/$label.out" >&2; bad "$label: no line 'Process $pid: ... $W'"; }
	parse "$TMP/$label.out" "$TMP/$label.threads"
	only_threads "$label" "$TMP/$label.threads" "$pid" "$spin" "$nap" "$stuck"
	check_thread "$label nap" "$TMP/$label.threads" "$nap" waiting "nap ($W:$NAP_LINE)" '^\[k\] [^ ]*nanosleep'
	check_thread "$label stuck" "$TMP/$label.threads" "$stuck" waiting "stuck ($W:$STUCK_LINE)" '^\[k\] [^ ]*futex'
	check_thread "$label main" "$TMP/$label.threads" "$pid" waiting "<module> ($W:$MAIN_LINE)"
	check_thread "$label spin" "$TMP/$label.threads" "$spin" running
	# its frame in spin(), at a line of spin()
	sl=$(awk -F '\t' -v t="$spin" -v w="spin ($W:" '$2 == t { for (i = 6; i <= NF; i++)
		if (index($i, w) == 1) { l = substr($i, length(w) + 1); sub(/\)$/, "", l); print l; exit } }' "$TMP/$label.threads")
	if [ -z "$sl" ]; then
		bad "$label spin: thread $spin has no frame 'spin ($W:LINE)'"
		show "$TMP/$label.threads" "$spin"
	elif ! { [ "$sl" -ge "$SPIN_FIRST" ] && [ "$sl" -le "$SPIN_LAST" ]; } 2>/dev/null; then
		bad "$label spin: its frame is 'spin ($W:$sl)', not at a line of spin() ($SPIN_FIRST-$SPIN_LAST)"
	fi
	[ "$(field "$TMP/$label.threads" "$spin" 3)" = R ] || bad "$label spin: printed in state '$(field "$TMP/$label.threads" "$spin" 3)', not R"
	looked "$label" "$TMP/$label.err" 4
	echo "$label: $(cut -f2-5 "$TMP/$label.threads" | tr '\t\n' ' ;')"

	# 2. the same, written as pprof: one sample per thread
	snapshot "$pid" "$nap" "$stuck" "$pid" >"$TMP/$label.before"
	"$COLLECTOR" stacks -p "$pid" -f pprof -o "$TMP/$label.pprof" >"$TMP/$label.pout" 2>"$TMP/$label.perr"
	rc=$?
	if crashed "$rc" "$TMP/$label.perr" || [ "$rc" -ne 0 ]; then
		cat "$TMP/$label.perr" >&2
		bad "$label: collector stacks -p $pid -f pprof exited $rc"
	else
		undisturbed "$label -f pprof" "$pid" "$TMP/$label.before"
		parse "$TMP/$label.pout" "$TMP/$label.pthreads"
		only_threads "$label -f pprof (stdout)" "$TMP/$label.pthreads" "$pid" "$spin" "$nap" "$stuck"
		if "$COLLECTOR" dump "$TMP/$label.pprof/profile.pb.gz" >"$TMP/$label.dump" 2>"$TMP/$label.derr"; then
			got=$(sed -n 's/^sample .* tid=\([0-9]*\) .*/\1/p' "$TMP/$label.dump" | sort -n | tr '\n' ' ')
			want=$(printf '%s\n' "$pid" "$spin" "$nap" "$stuck" | sort -n | tr '\n' ' ')
			n=$(grep -c '^sample ' "$TMP/$label.dump")
			echo "$label -f pprof: $n samples, of threads $got"
			if [ "$got" != "$want" ] || [ "$n" -ne 4 ]; then
				bad "$label -f pprof: $n samples, of threads $got; expected one per thread: $want"
				grep '^sample ' "$TMP/$label.dump" | sed 's/ service\.name=.*//; s/^/    /' >&2
			fi
			awk -v t="$nap" -v f=" nap $W:$NAP_LINE" '/^sample / { on = ($0 ~ (" tid=" t " ")) }
				on && index($0, f) { found = 1 } END { exit !found }' "$TMP/$label.dump" ||
				bad "$label -f pprof: nap's sample has no frame 'nap $W:$NAP_LINE'"
		else
			cat "$TMP/$label.derr" >&2
			bad "$label: collector dump $TMP/$label.pprof/profile.pb.gz failed"
		fi
	fi
	kill -KILL "$pid" 2>/dev/null
}

for_each_python pystates

# --- 3. a C reader blocked in read(), main in pthread_join() ----------------------
if cc -g -O0 -fno-omit-frame-pointer -pthread -o "$TMP/stacks_block" "$SRC" 2>"$TMP/cc.err"; then
	start_ready c "$TMP/c.ready" "$TMP/stacks_block" "$TMP/c.ready"
	pid=$PID
	reader=$(tid_of "$TMP/c.ready" reader)
	wait_waiting c "$pid" "$reader" "$NR_READ"
	wait_waiting c "$pid" "$pid" "$NR_FUTEX"
	snapshot "$pid" "$reader" "$pid" >"$TMP/c.before"
	"$COLLECTOR" stacks -p "$pid" >"$TMP/c.out" 2>"$TMP/c.err"
	rc=$?
	if crashed "$rc" "$TMP/c.err" || [ "$rc" -ne 0 ]; then
		cat "$TMP/c.out" "$TMP/c.err" >&2
		bad "c: collector stacks -p $pid exited $rc"
	else
		undisturbed c "$pid" "$TMP/c.before"
		parse "$TMP/c.out" "$TMP/c.threads"
		only_threads c "$TMP/c.threads" "$pid" "$reader"
		check_thread "c reader" "$TMP/c.threads" "$reader" waiting "wait_for_input ($SRC:$READ_LINE)" \
			'^\[k\] (anon_)?pipe_read '
		check_thread "c main" "$TMP/c.threads" "$pid" waiting "main ($SRC:$JOIN_LINE)"
		looked c "$TMP/c.err" 2
		echo "c: $(cut -f2-5 "$TMP/c.threads" | tr '\t\n' ' ;')"
	fi
	kill -KILL "$pid" 2>/dev/null
else
	cat "$TMP/cc.err" >&2
	bad "cannot build $SRC"
fi

# --- 4. targets that exit during the look -----------------------------------------
# exiting LABEL RC OUT ERR: exit 0 or 4, no crash, something said
exiting() {
	echo "$1: exit $2, $(wc -l <"$3") lines on stdout, stderr: $(head -c 300 "$4" | tr '\n' ' ')"
	if crashed "$2" "$4"; then
		cat "$4" >&2
		bad "$1: collector crashed (exit $2)"
	elif [ "$2" -ne 0 ] && [ "$2" -ne 4 ]; then
		cat "$4" >&2
		bad "$1: exit $2, not 0 (looked) or 4 (gone before the look)"
	fi
	[ -s "$3" ] || [ -s "$4" ] || bad "$1: nothing said on stdout or stderr"
}
sleep 0.05 &
"$COLLECTOR" stacks -p $! -d 0.5 >"$TMP/x1.out" 2>"$TMP/x1.err"
exiting "sleep 0.05" $? "$TMP/x1.out" "$TMP/x1.err"
if [ -x "$PY311" ]; then
	"$PY311" -c 'import time; time.sleep(0.05)' &
	"$COLLECTOR" stacks -p $! -d 0.5 >"$TMP/x2.out" 2>"$TMP/x2.err"
	exiting "python3.11 for 50 ms" $? "$TMP/x2.out" "$TMP/x2.err"
fi
# surely there when the look starts, killed during it
sleep 1000 &
victim=$!
add_cleanup "kill -KILL $victim 2>/dev/null"
"$COLLECTOR" stacks -p "$victim" -d 5 >"$TMP/x3.out" 2>"$TMP/x3.err" &
col=$!
if wait_sampling "$col"; then
	kill -KILL "$victim"
	wait "$col"
	rc=$?
	exiting "killed in the look" "$rc" "$TMP/x3.out" "$TMP/x3.err"
	[ "$rc" -eq 0 ] || bad "killed in the look: exit $rc, not 0 (the target was there when the look began)"
	t=$(sed -n 's/^collector: [0-9]* threads looked at for \([0-9.]*\) s.*/\1/p' "$TMP/x3.err")
	[ -n "$t" ] && awk -v t="$t" 'BEGIN { exit !(t < 5) }' ||
		bad "killed in the look: looked at for '$t' s: the target's exit did not end the 5 s look"
	if grep -q "^  Thread $victim " "$TMP/x3.out"; then
		grep -q "^  Thread $victim .*(exited since)\$" "$TMP/x3.out" ||
			bad "killed in the look: its thread is not said '(exited since)': $(grep "^  Thread $victim " "$TMP/x3.out")"
	fi
else
	wait "$col"
	rc=$?
	cat "$TMP/x3.err" >&2
	bad "killed in the look: collector stacks -p $victim never started sampling (exit $rc)"
fi

# --- 5. a command is refused ------------------------------------------------------
"$COLLECTOR" stacks -- true >"$TMP/cmd.out" 2>"$TMP/cmd.err"
rc=$?
echo "stacks -- true: exit $rc, stderr: $(head -n 1 "$TMP/cmd.err")"
[ "$rc" -eq 2 ] || bad "collector stacks -- true exited $rc, not 2"
[ -s "$TMP/cmd.err" ] || bad "collector stacks -- true said nothing on stderr"
crashed "$rc" "$TMP/cmd.err" && bad "collector stacks -- true crashed"

checks_done
