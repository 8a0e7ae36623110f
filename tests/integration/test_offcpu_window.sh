#!/bin/sh
# --off-cpu over the whole window (issue 38): a target thread switched out
# when the run attaches is accounted from the run's start, by the stack
# where it waits (kernel frames, native frames, Python frames with their
# lines), and a block still going on at the end of the run or at an
# --interval cut is counted up to that moment, the rest going to the next
# interval.  Every workload blocks before the run starts and stays blocked
# through it, so its blocked thread's off-CPU time is the window:
#  1. pyblocked.py (python3.11, and 3.13, 3.14, 3.15 from build/pythons
#     when there): the main thread in time.sleep(100000) under sleeper();
#     its off-CPU ns within 2% of the profile's duration, and at least 98%
#     of the window in stacks starting at hrtimer_nanosleep (kernel: where the
#     thread chose to wait, no scheduler frame above it) .. a native frame ..
#     sleeper at its time.sleep line, <module> at its sleeper() line
#     right under it;
#  2. pyqueue_idle.py (python3.11): ten threads worker-0..9 in
#     queue.Queue().get(): each (by tid, its thread_name label its name)
#     within 2% of the window, at least 98% of it in stacks through a
#     futex kernel frame, a native frame, Queue.get and worker at its
#     q.get() line;
#  3. pipe_block.c (built here, -O0 with frame pointers): the main thread
#     in read() on a pipe nobody writes to: the same, the stacks
#     (anon_)pipe_read .. a native frame (libc's read) .. wait_for_input,
#     main right under it;
#  4. the same program with --interval 1 -d 3, one directory per interval:
#     each interval's off-CPU time within 2% (at least 20 ms) of that
#     interval's duration, the sum over the intervals within 2% of the
#     run's duration (the summary's), at least three intervals.
# The summary of the queue run says its eleven threads add up.  Every
# target is still alive and blocked (state S) after its run.  Each
# case's failures are reported and the others still run; the test fails
# at the end when any did.  A Python version that is not there is
# skipped, loudly (the log's SKIPPED lines and its last line).
. tests/integration/lib.sh
need_root
command -v cc >/dev/null || fail "no cc: the pipe reader is built at test time"

PY311=/usr/bin/python3.11

# near VALUE WANT PERCENT [FLOOR]: |VALUE - WANT| <= max(PERCENT% of WANT, FLOOR)
near() {
	[ -n "$1" ] && [ -n "$2" ] && awk -v v="$1" -v w="$2" -v p="$3" -v f="${4:-0}" \
		'BEGIN { d = v - w; if (d < 0) d = -d; t = w * p / 100; if (t < f) t = f; exit !(d <= t) }'
}
# at_least VALUE WANT PERCENT: VALUE >= PERCENT% of WANT
at_least() {
	[ -n "$1" ] && [ -n "$2" ] && awk -v v="$1" -v w="$2" -v p="$3" 'BEGIN { exit !(v >= w * p / 100) }'
}
# pct A B: A as a percentage of B
pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f%%", 100 * a / b; else print "-" }'
}

# thread_state PID TID: the state letter of /proc/PID/task/TID/stat
# (after the comm's closing parenthesis), empty when gone
thread_state() {
	sed 's/^.*) //' /proc/"$1"/task/"$2"/stat 2>/dev/null | cut -d' ' -f1
}

# wait_blocked NAME PID TID...: waits (5 s at most) until every TID of PID
# sleeps (state S), then 0.3 s more: surely inside its blocking call
# before the run starts
wait_blocked() {
	wb_name=$1 wb_pid=$2
	shift 2
	for wb_tid in "$@"; do
		for _ in $(seq 1 50); do
			wb_state=$(thread_state "$wb_pid" "$wb_tid")
			[ "$wb_state" = S ] && break
			sleep 0.1
		done
		[ "$wb_state" = S ] || fail "$wb_name: thread $wb_tid of $wb_pid not asleep after 5 s (state '$wb_state')"
	done
	sleep 0.3
}

# undisturbed NAME PID TID...: after the run the target lives, every TID
# still asleep in its blocking call (a wait that returned ends the
# workloads, a stopped thread is T)
undisturbed() {
	ud_name=$1 ud_pid=$2
	shift 2
	kill -0 "$ud_pid" 2>/dev/null || { cat "$TMP/$ud_name.stderr"; bad "$ud_name: the target $ud_pid did not survive the run"; return; }
	for ud_tid in "$@"; do
		s=$(thread_state "$ud_pid" "$ud_tid")
		[ "$s" = S ] || bad "$ud_name: thread $ud_tid of $ud_pid is '$s' after the run, not asleep (S)"
	done
}

# profile NAME PID [OPTION...]: collector -p PID --off-cpu -f pprof into
# $TMP/NAME, its summary in $TMP/NAME.sum
profile() {
	pr_name=$1 pr_pid=$2
	shift 2
	"$COLLECTOR" -p "$pr_pid" --off-cpu -f pprof -o "$TMP/$pr_name" "$@" 2>"$TMP/$pr_name.sum"
	pr_rc=$?
	[ "$pr_rc" -eq 0 ] || { cat "$TMP/$pr_name.sum"; fail "$pr_name: collector -p $pr_pid --off-cpu $* exited $pr_rc"; }
}

# stacks PPROF OUT: `collector dump` of PPROF into OUT.dump, and into OUT
# one line per sample, tab-separated: tid, thread_name label, off-CPU ns,
# and its frames leaf first joined by ";", each k:FUNCTION (kernel),
# n:FUNCTION (native) or p:FUNCTION:LINE (Python: a .py or <frozen ...> file)
stacks() {
	"$COLLECTOR" dump "$1" >"$2.dump" 2>"$2.err" || { cat "$2.err"; fail "collector dump $1 failed"; }
	grep -q '^sample_types .* off-cpu/nanoseconds' "$2.dump" ||
		{ grep '^sample_types' "$2.dump"; fail "$1: no off-cpu/nanoseconds sample type"; }
	awk '
	function flush() { if (have) printf "%s\t%s\t%s\t%s\n", tid, tname, off, fr; have = 0 }
	function frame(rest,   name, file, line, t) {
		if (rest == "?") { name = "?"; file = "?"; line = 0 }
		else if (match(rest, / <[^>]*>:-?[0-9]+$/) || match(rest, / [^ ]*:-?[0-9]+$/)) {
			name = substr(rest, 1, RSTART - 1); file = substr(rest, RSTART + 1)
			line = file; sub(/.*:/, "", line); sub(/:-?[0-9]+$/, "", file)
		} else { name = rest; file = "?"; line = 0 }
		if (kern) t = "k:" name
		else if (file ~ /\.py$/ || file ~ /^<frozen /) t = "p:" name ":" line
		else t = "n:" name
		fr = fr (fr == "" ? "" : ";") t
	}
	/^sample_types / { for (i = 2; i <= NF; i++) if ($i == "off-cpu/nanoseconds") col = i; next }
	/^sample / { flush(); have = 1; off = $col; tid = tname = ""; fr = ""
		for (i = col + 1; i <= NF; i++) {
			if ($i ~ /^tid=/) tid = substr($i, 5)
			else if ($i ~ /^thread_name=/) tname = substr($i, 13)
		}
		next }
	have && /^    #[0-9]+ 0x[0-9a-f]+ / {
		kern = (length($2) == 18 && $2 ~ /^0xffff/)
		rest = $0; sub(/^    #[0-9]+ 0x[0-9a-f]+ /, "", rest); frame(rest); next }
	have && /^        inlined into / { rest = $0; sub(/^        inlined into /, "", rest); frame(rest); next }
	END { flush() }' "$2.dump" >"$2"
}

# offcpu STACKS TID REGEX: "TOTAL MATCHED": TID's off-CPU ns, and those of
# its samples whose frames (as stacks writes them) match REGEX
offcpu() {
	awk -F '\t' -v tid="$2" -v re="$3" '$1 == tid { t += $3; if ($4 ~ re) m += $3 }
		END { printf "%.0f %.0f\n", t, m }' "$1"
}

# top_stacks STACKS TID: TID's heaviest off-CPU stacks, for a failure's log
top_stacks() {
	awk -F '\t' -v tid="$2" '$1 == tid && $3 > 0' "$1" | sort -t "$(printf '\t')" -k3,3nr | head -n 5 |
		awk -F '\t' '{ printf "    %s ns  %s\n", $3, $4 }' >&2
	awk -F '\t' -v tid="$2" '$1 == tid' "$1" | grep -q . ||
		echo "    (no sample of thread $2 at all; $(grep -c '^sample ' "${1}.dump") samples in the profile)" >&2
}

# window_check LABEL STACKS TID WINDOW REGEX WHAT: TID's off-CPU ns within
# 2% of WINDOW ns, and at least 98% of WINDOW in stacks matching REGEX
# (WHAT says which)
window_check() {
	wc_label=$1 wc_stacks=$2 wc_tid=$3 wc_window=$4 wc_what=$6
	read -r wc_total wc_matched <<-EOF
		$(offcpu "$2" "$3" "$5")
	EOF
	echo "$wc_label: thread $wc_tid off-CPU $wc_total ns of a $wc_window ns window" \
		"($(pct "$wc_total" "$wc_window")), $wc_matched ns in $wc_what ($(pct "$wc_matched" "$wc_window"))"
	wc_ok=1
	near "$wc_total" "$wc_window" 2 || {
		bad "$wc_label: thread $wc_tid off the CPU $wc_total ns, not within 2% of the window ($wc_window ns)"
		wc_ok=0
	}
	at_least "$wc_matched" "$wc_window" 98 || {
		bad "$wc_label: only $wc_matched ns of thread $wc_tid's off-CPU time in $wc_what (< 98% of the $wc_window ns window)"
		wc_ok=0
	}
	[ "$wc_ok" -eq 1 ] || top_stacks "$wc_stacks" "$wc_tid"
}

duration_of() {
	awk '$1 == "duration_nanos" { print $2; exit }' "$1"
}

# --- 1. a Python main thread in time.sleep since before the run ----------------
W=$TOP/tests/workloads/pyblocked.py
sleep_line=$(grep -n 'time\.sleep(100000)' "$W" | cut -d: -f1)
call_line=$(grep -n '^sleeper()' "$W" | cut -d: -f1)
{ [ -n "$sleep_line" ] && [ -n "$call_line" ]; } || fail "$W: no time.sleep(100000) or sleeper() line"
SLEEP_RE="^k:hrtimer_nanosleep;(.*;)?n:[^;]*;(.*;)?p:sleeper:$sleep_line;p:<module>:$call_line(;|$)"

# pyblocked LABEL INTERPRETER_COMMAND...
pyblocked() {
	label=$1
	shift
	start_blocked "$label" "$TMP/$label.ready" "$@" "$W" "$TMP/$label.ready"
	pid=$BG
	wait_blocked "$label" "$pid" "$pid"
	profile "$label" "$pid" -d 2
	undisturbed "$label" "$pid" "$pid"
	kill -KILL "$pid" 2>/dev/null
	stacks "$TMP/$label/profile.pb.gz" "$TMP/$label.stacks"
	window_check "$label" "$TMP/$label.stacks" "$pid" "$(duration_of "$TMP/$label.stacks.dump")" "$SLEEP_RE" \
		"hrtimer_nanosleep .. native .. sleeper:$sleep_line, <module>:$call_line"
}

for_each_python pyblocked

# --- 2. ten Python threads idle on queue.Queue().get() ---------------------------
if [ -x "$PY311" ]; then
	W=$TOP/tests/workloads/pyqueue_idle.py
	get_line=$(grep -n 'q\.get()' "$W" | cut -d: -f1)
	[ -n "$get_line" ] || fail "$W: no q.get() line"
	QUEUE_RE="^k:[^;]*futex[^;]*;(.*;)?n:[^;]*;(.*;)?p:(Queue[.])?get:[0-9]+;p:worker:$get_line(;|$)"
	start_blocked queue "$TMP/queue.ready" "$PY311" "$W" "$TMP/queue.ready"
	pid=$BG
	[ "$(wc -l <"$TMP/queue.ready")" -eq 10 ] || { cat "$TMP/queue.ready"; fail "queue: not ten workers ready"; }
	tids=$(awk '{ print $2 }' "$TMP/queue.ready")
	# shellcheck disable=SC2086
	wait_blocked queue "$pid" $tids
	profile queue "$pid" -d 2
	# shellcheck disable=SC2086
	undisturbed queue "$pid" $tids
	kill -KILL "$pid" 2>/dev/null
	stacks "$TMP/queue/profile.pb.gz" "$TMP/queue.stacks"
	window=$(duration_of "$TMP/queue.stacks.dump")
	while read -r name tid; do
		window_check "queue $name" "$TMP/queue.stacks" "$tid" "$window" "$QUEUE_RE" \
			"futex .. native .. Queue.get, worker:$get_line"
		labels=$(awk -F '\t' -v tid="$tid" '$1 == tid { print $2 }' "$TMP/queue.stacks" | sort -u | tr '\n' ' ')
		[ -z "$labels" ] || [ "$labels" = "$name " ] ||
			bad "queue $name: thread $tid's samples are labelled thread_name '$labels', not $name"
	done <"$TMP/queue.ready"
	# the summary's wall view: the ten workers and the main thread (in
	# join) each add up to their time in the run
	grep -q "^ *11 of 11 threads add up" "$TMP/queue.sum" ||
		{ grep -A8 "wall view" "$TMP/queue.sum"; bad "queue: the summary does not say 11 of 11 threads add up"; }
fi

# --- 3. a C program blocked in read() on a pipe ----------------------------------
cc -g -O0 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$TMP/pipe_block" \
	"$TOP/tests/workloads/pipe_block.c" || fail "cannot build pipe_block"
PIPE_RE="^k:(anon_)?pipe_read;(.*;)?n:[^;]*;(.*;)?n:wait_for_input;n:main(;|$)"
start_blocked pipe "$TMP/pipe.ready" "$TMP/pipe_block" "$TMP/pipe.ready"
pid=$BG
wait_blocked pipe "$pid" "$pid"
profile pipe "$pid" -d 2
undisturbed pipe "$pid" "$pid"
stacks "$TMP/pipe/profile.pb.gz" "$TMP/pipe.stacks"
window_check pipe "$TMP/pipe.stacks" "$pid" "$(duration_of "$TMP/pipe.stacks.dump")" "$PIPE_RE" \
	"(anon_)pipe_read .. native .. wait_for_input, main"

# --- 4. the same reader over --interval 1 cuts --------------------------------------
# (the same process, still blocked since before this run too)
profile interval "$pid" -d 3 --interval 1
undisturbed interval "$pid" "$pid"
set -- "$TMP/interval"/*/profile.pb.gz
[ -e "$1" ] || { ls -R "$TMP/interval"; fail "interval: no DIR/<UTC start>/profile.pb.gz"; }
[ $# -ge 3 ] || bad "interval: $# intervals written in a 3 s run of --interval 1, not at least 3"
sum=0
sum_windows=0
n=0
for f in "$@"; do
	n=$((n + 1))
	stacks "$f" "$TMP/interval.$n.stacks"
	w=$(duration_of "$TMP/interval.$n.stacks.dump")
	read -r total matched <<-EOF
		$(offcpu "$TMP/interval.$n.stacks" "$pid" "$PIPE_RE")
	EOF
	iv=$(basename "$(dirname "$f")")
	echo "interval $iv: thread $pid off-CPU $total ns of a $w ns interval ($(pct "$total" "$w")), $matched ns by wait_for_input's read"
	near "$total" "$w" 2 20000000 || {
		bad "interval $iv: thread $pid off the CPU $total ns, not within 2% (at least 20 ms) of the interval's $w ns"
		top_stacks "$TMP/interval.$n.stacks" "$pid"
	}
	near "$matched" "$w" 2 20000000 ||
		bad "interval $iv: $matched ns of thread $pid's off-CPU time by wait_for_input's read, not within 2% (at least 20 ms) of the interval's $w ns"
	sum=$(awk -v a="$sum" -v b="$total" 'BEGIN { printf "%.0f", a + b }')
	sum_windows=$(awk -v a="$sum_windows" -v b="$w" 'BEGIN { printf "%.0f", a + b }')
done
run=$(summary_value "$TMP/interval.sum" duration | awk '{ printf "%.0f", $1 * 1e9 }')
[ -n "$run" ] || { cat "$TMP/interval.sum"; fail "interval: no duration in the summary"; }
echo "interval: $n intervals, off-CPU $sum ns over them ($(pct "$sum" "$run") of the $run ns run; the intervals' durations add up to $sum_windows ns)"
near "$sum" "$run" 2 || bad "interval: the intervals' off-CPU time adds up to $sum ns, not within 2% of the run's $run ns"
kill -KILL "$pid" 2>/dev/null

checks_done
