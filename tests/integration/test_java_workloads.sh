#!/bin/sh
# The Java workloads the JVM walker's tests stand on (tests/workloads/
# JavaShares.java and Shares.java, built into build/workloads/java), on
# their own, on OpenJDK 17, 21 and 25 (for_each_java): no profiler here,
# only what those tests will take as true.
#  - With every option (--threads --blocked --deopt --churn), 2 s: READY
#    appears and names the pid the test started; `jcmd PID Thread.print`
#    shows main in JavaShares.main, shares-second in its loop,
#    shares-churn in its loop, shares-wait WAITING in Object.wait and
#    shares-sleep TIMED_WAITING in Thread.sleep, the last two at the lines
#    their // LINE: markers say; the shares written add up to 100, alpha's
#    is at least 1.25 times beta's and beta's 1.25 times gamma's (their
#    work is 5:3:2), the total is the 2 s asked for, and classes the
#    churn defined were unloaded (all of them, on most runs: the JVM
#    unloads at its collections, and 101 of 103 were seen once).
#  - The same classes under -Xint, 1 s, no option: READY, nothing on
#    stdout, the same shares.
# The run's end is the test's (--until FILE): jcmd answers while the
# workload still runs, however slow the machine.
. tests/integration/lib.sh
plain_suite_only "the workload alone, no collector"

if [ ! -e "$WL/java/JavaShares.class" ]; then
	if [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/javac ] || command -v javac >/dev/null; then
		fail "no $WL/java/JavaShares.class though there is a javac (make integration builds it)"
	fi
	skip "no javac: the Java workloads are not built (openjdk-17-jdk-headless)"
fi

# line NAME: the line of Shares.java marked // LINE:NAME
line() {
	grep -n "// LINE:$1\$" tests/workloads/Shares.java | cut -d: -f1
}
WAIT_LINE=$(line wait)
SLEEP_LINE=$(line sleep)
{ [ -n "$WAIT_LINE" ] && [ -n "$SLEEP_LINE" ]; } || fail "no // LINE:wait or // LINE:sleep in Shares.java"

# ended PID SECONDS: waits until the child PID has ended (gone, or a zombie
# its shell has not reaped yet), killed when it has not after SECONDS; its
# exit status
ended() {
	for _ in $(seq 1 $(($2 * 10))); do
		st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
		if [ -z "$st" ] || [ "$st" = Z ]; then
			wait "$1"
			return
		fi
		sleep 0.1
	done
	kill -KILL "$1"
	wait "$1"
}

# thread DUMP NAME: NAME's paragraph of a Thread.print
thread() {
	awk -v n="\"$2\"" 'BEGIN { RS = "" } index($0, n) == 1 { print; exit }' "$1"
}

# has LABEL DUMP NAME TEXT...: bad unless NAME's paragraph holds each TEXT
has() {
	h_label=$1 h_dump=$2 h_name=$3
	shift 3
	h_para=$(thread "$h_dump" "$h_name")
	[ -n "$h_para" ] || { bad "$h_label: no thread \"$h_name\" in Thread.print"; return; }
	for h_text in "$@"; do
		case $h_para in
		*"$h_text"*) ;;
		*) bad "$h_label: thread \"$h_name\" is not at \"$h_text\":"; echo "$h_para" >&2 ;;
		esac
	done
}

# value FILE KEY: the number after KEY in a shares file
value() {
	awk -v k="$2" '$1 == k { print $2; exit }' "$1"
}

# shares_sane LABEL FILE SECONDS [deopt-churn]: the shares file of a run of
# SECONDS (with --deopt and --churn: their lines too)
shares_sane() {
	s_label=$1 s_file=$2
	[ -s "$s_file" ] || { bad "$s_label: no shares file"; return; }
	sed "s/^/$s_label: /" "$s_file"
	a=$(value "$s_file" Shares.alpha)
	b=$(value "$s_file" Shares.beta)
	g=$(value "$s_file" Shares.gamma)
	if [ -z "$a" ] || [ -z "$b" ] || [ -z "$g" ]; then
		bad "$s_label: a share of alpha, beta or gamma is missing"
		return
	fi
	sum=$(awk '$1 ~ /^Shares\./ { s += $2 } END { print s + 0 }' "$s_file")
	within "$sum" 99.9 100.1 || bad "$s_label: the shares add up to $sum"
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a >= 1.25 * b) }' ||
		bad "$s_label: alpha $a% is not 1.25 times beta's $b%"
	awk -v b="$b" -v g="$g" 'BEGIN { exit !(b >= 1.25 * g) }' ||
		bad "$s_label: beta $b% is not 1.25 times gamma's $g%"
	# at least the time asked for (more: --until's file came later)
	total=$(value "$s_file" total-ns)
	awk -v t="$total" -v s="$3" 'BEGIN { exit !(t >= s * 1e9) }' ||
		bad "$s_label: total-ns $total for a run of $3 s"
	[ "${4:-}" = deopt-churn ] || return
	d=$(value "$s_file" Shares.delta)
	within "$d" 1 50 || bad "$s_label: delta has ${d:-no share}"
	def=$(value "$s_file" classes-defined)
	unl=$(value "$s_file" classes-unloaded)
	if [ -z "$def" ] || [ "$def" -lt 1 ]; then
		bad "$s_label: the churn defined ${def:-no} classes"
	elif [ -z "$unl" ] || [ "$unl" -lt 1 ]; then
		bad "$s_label: ${unl:-no} classes unloaded of the $def the churn defined"
	fi
}

ran=0
workloads() {
	v=$1
	shift
	label=java$v
	ran=$((ran + 1))

	# every option, ended by the test
	ready=$TMP/$label.ready
	start_blocked "$label" "$ready" "$@" -cp "$WL/java" JavaShares --threads --blocked --deopt \
		--churn --until "$TMP/$label.stop" 2 "$TMP/$label.shares" "$ready"
	[ "$(cat "$ready")" = "pid $BG" ] || bad "$label: the ready file says '$(cat "$ready")', not pid $BG"
	"$TOP/build/jdks/run.sh" "$v" jcmd "$BG" Thread.print >"$TMP/$label.threads" 2>&1 || {
		cat "$TMP/$label.threads" >&2
		bad "$label: jcmd $BG Thread.print failed"
	}
	has "$label" "$TMP/$label.threads" main "JavaShares.main(JavaShares.java:"
	has "$label" "$TMP/$label.threads" shares-second "java.lang.Thread.State: RUNNABLE" \
		'JavaShares$Worker.second(JavaShares.java:'
	has "$label" "$TMP/$label.threads" shares-churn 'JavaShares$Worker.churn(JavaShares.java:'
	has "$label" "$TMP/$label.threads" shares-wait "java.lang.Thread.State: WAITING (on object monitor)" \
		"Shares.waitForever(Shares.java:$WAIT_LINE)"
	has "$label" "$TMP/$label.threads" shares-sleep "java.lang.Thread.State: TIMED_WAITING (sleeping)" \
		"Shares.sleepForever(Shares.java:$SLEEP_LINE)"
	touch "$TMP/$label.stop"
	ended "$BG" 120
	rc=$?
	[ "$rc" -eq 0 ] || { cat "$TMP/$label.stderr" >&2; bad "$label: JavaShares exited $rc (137: killed after 120 s)"; }
	shares_sane "$label" "$TMP/$label.shares" 2 deopt-churn

	# the same classes interpreted only, in the foreground: nothing on
	# stdout
	label=$label-Xint
	timeout -s KILL 120 "$@" -Xint -cp "$WL/java" JavaShares 1 "$TMP/$label.shares" "$TMP/$label.ready" \
		>"$TMP/$label.stdout" 2>"$TMP/$label.stderr"
	rc=$?
	[ "$rc" -eq 0 ] || { cat "$TMP/$label.stderr" >&2; bad "$label: JavaShares exited $rc"; }
	grep -q '^pid [0-9][0-9]*$' "$TMP/$label.ready" 2>/dev/null || bad "$label: no ready file, or not 'pid N'"
	[ ! -s "$TMP/$label.stdout" ] || bad "$label: JavaShares wrote on stdout: $(head -c 200 "$TMP/$label.stdout")"
	shares_sane "$label" "$TMP/$label.shares" 1
}

for_each_java workloads
[ "$ran" -gt 0 ] || skip "no Java ran: $skipped"
checks_done
