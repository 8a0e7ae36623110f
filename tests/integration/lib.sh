# Shared helpers for the integration tests (sourced, POSIX sh).
# Each test runs from the repository root with $COLLECTOR set.

: "${COLLECTOR:=$PWD/collector}"
WL="$PWD/build/workloads"
TMP=$(mktemp -d /tmp/collector-test.XXXXXX)
trap '[ -n "$KEEP_TMP" ] || rm -rf "$TMP"' EXIT
# the unwind tables' cache of each test its own, empty at its start: no
# test reads another's tables or the machine's /var/cache/collector
export COLLECTOR_CACHE_DIR="$TMP/cache"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "$*"
	exit 77
}

# plain_suite_only WHY: the test is skipped in the ASan suite (WHY: what
# it measures that the sanitizer's build would only slow, its code paths
# run there by other tests)
plain_suite_only() {
	[ "${SUITE:-}" != integration-san ] || skip "$1: the plain suite runs it"
}

need_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (real BPF)"
}

# share SUMMARY_FILE self|total FUNCTION: the percentage (no %), or empty
share() {
	awk -v which="$2" -v fn="$3" '
		/^Top functions by self/ { mode = "self"; next }
		/^Top functions by total/ { mode = "total"; next }
		mode == which && $3 == fn { sub("%", "", $1); print $1; exit }
	' "$1"
}

# samples_of SUMMARY_FILE self|total FUNCTION: its samples, or empty.  The
# summary lists the top 20 only: read from it only functions that cannot
# miss the list (not one of many of about equal share, whose order is
# decided by ties); every function's share is in Callgrind (annotate below).
samples_of() {
	awk -v which="$2" -v fn="$3" '
		/^Top functions by self/ { mode = "self"; next }
		/^Top functions by total/ { mode = "total"; next }
		mode == which && $3 == fn { print $2; exit }
	' "$1"
}

# percent_of A B: 100 * A / (A + B), or empty when either is missing.
# hot_function's share of hot_function + cold_function is what split's 3:1
# work means: on this VM up to a fifth of a run's samples may land in the
# kernel (the return from a reschedule IPI, pvm_irq_enable) with the
# interrupted user stack under them, which lowers every share of the total.
percent_of() {
	[ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (a + b > 0) print 100 * a / (a + b) }'
}

# annotate CALLGRIND_FILE OUT [OPTION...]: callgrind_annotate's report with
# every function in it (--threshold=100: by default it stops once 99% of
# the cost is listed, so which of many functions of equal inclusive cost are
# listed would depend on how they tie)
annotate() {
	cg_file=$1 cg_out=$2
	shift 2
	callgrind_annotate --threshold=100 "$@" "$cg_file" >"$cg_out" 2>&1
}

# annotated_share OUT FUNCTION: its percentage (first event) in an annotate
# report, or empty; annotated_count OUT FUNCTION: its count
annotated_share() {
	awk -v fn=":$2 " '{ line = $0 " " } index(line, fn) && $1 != "." {
		sub(/^ *[0-9,]* \(/, ""); sub(/%\).*/, ""); print; exit }' "$1"
}
annotated_count() {
	awk -v fn=":$2 " '{ line = $0 " " } index(line, fn) && $1 != "." {
		gsub(",", "", $1); print $1; exit }' "$1"
}

# within VALUE LOW HIGH: true when LOW <= VALUE <= HIGH (decimals allowed)
within() {
	[ -n "$1" ] && awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
}

# wait_sampling PID: waits (30 s at most) until collector PID samples: its
# perf events, opened when sampling starts, are among its files.  A test
# that needs samples waits for this rather than for a fixed time, which a
# loaded machine (or the sanitizer build) may take just to load and start.
wait_sampling() {
	for _ in $(seq 1 300); do
		ls -l /proc/"$1"/fd 2>/dev/null | grep -q 'perf_event' && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

expect_exit() {
	want=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	[ "$got" -eq "$want" ] || {
		cat "$TMP/out" "$TMP/err" >&2
		fail "'$*' exited $got, expected $want"
	}
}

# callgrind_of DIR PROGRAM: the Callgrind file of the process that ran
# PROGRAM (its "cmd:" line), not any other process a run may have met
callgrind_of() {
	grep -l "^cmd: [^ ]*$(basename "$2")\( \|\$\)" "$1"/callgrind.out.* 2>/dev/null | head -n 1
}

# hk_total DUMP METRIC [FUNCTION]: from `collector dump` of an HPCToolkit
# database, the summary profile's sum over the threads of METRIC's
# inclusive value (execution scope) at FUNCTION's call contexts added up,
# or at the root without FUNCTION; fails when the database has no METRIC
hk_total() {
	awk -v name="$2" -v fn="$3" '
		/^  metric "/ { in_m = ($0 == "  metric \"" name "\"") }
		in_m && $1 == "statMetricId" && $3 == "sum" && $NF == "execution" { id = $2; sub(":", "", id) }
		fn != "" && $2 == "-call->" && $3 == "[function]" && $4 == fn { want[$1 ":"] = 1 }
		/^  profile 0 / { on = 1; if (fn == "") want["#0:"] = 1; next }
		/^  profile / { on = 0 }
		on && want[$2] && id != "" { for (i = 3; i <= NF; i++) if ($i ~ ("^m" id "=")) {
			v = $i; sub(/^m[0-9]+=/, "", v); s += v } }
		END { if (id == "") exit 1; printf "%.9g\n", s }' "$1"
}

# pprof_samples PROFILE: the total of a pprof profile's "samples" values, as
# go tool pprof -top sums them (its -raw listing, parsed, undercounts a
# long interval)
pprof_samples() {
	go tool pprof -sample_index=samples -top -nodecount=1 "$1" 2>/dev/null |
		sed -n 's/.*Total samples = \([0-9]*\).*/\1/p'
}

# pprof_start_ns PROFILE: a pprof profile's time_nanos, as go tool pprof
# reads it (its -raw "Time:" line, to the nanosecond)
pprof_start_ns() {
	t=$(go tool pprof -raw "$1" 2>/dev/null | sed -n 's/^Time: \(.*\) UTC$/\1/p')
	[ -n "$t" ] && date -u -d "$t" +%s%N
}

# in_slot NAME START_NS SECONDS: an interval that began at START_NS lies in
# the slot its directory NAME (20261205T181510Z, --interval SECONDS) names:
# a cut that came late starts the next interval late, but within its slot
# (the name is the slot's start to the second, so up to SECONDS later)
in_slot() {
	slot=$(date -u -d "$(echo "$1" | sed 's/^\(....\)\(..\)\(..\)T\(..\)\(..\)\(..\)Z$/\1-\2-\3 \4:\5:\6/')" +%s) ||
		return 1
	s=$(($2 / 1000000000))
	[ "$s" -ge "$slot" ] && [ "$s" -le $((slot + $3)) ]
}

# summary_value SUMMARY_FILE LABEL: the first number after a summary label
summary_value() {
	awk -v label="$2" '$1 == label { print $2; exit }' "$1"
}

# install_copy DESTDIR SYSCONFDIR [TARGET]: `make install` (or TARGET, e.g.
# install-caps) of this tree into DESTDIR with PREFIX=/usr, reading its
# policy from SYSCONFDIR/collector.conf; the installed copy is
# DESTDIR/usr/bin/collector.  Not the parent make's jobs: a make of its own.
install_copy() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$TOP" "${3:-install}" \
		DESTDIR="$1" PREFIX=/usr SYSCONFDIR="$2" >"$TMP/install.log" 2>&1 ||
		{ cat "$TMP/install.log"; fail "make ${3:-install} failed"; }
}

# add_cleanup CMD: CMD runs at exit, before $TMP is removed (the last
# added first).
CLEANUP=""
add_cleanup() {
	CLEANUP="$1; $CLEANUP"
	trap 'eval "$CLEANUP"; [ -n "$KEEP_TMP" ] || rm -rf "$TMP"' EXIT
}

# test_user: the unprivileged user collector-test, in group collector,
# both created when missing and removed at exit.  Sets TUSER, TUID, TGID.
test_user() {
	TUSER=collector-test
	if ! getent group collector >/dev/null; then
		groupadd --system collector || fail "groupadd collector"
		add_cleanup "groupdel collector 2>/dev/null"
	fi
	if ! id "$TUSER" >/dev/null 2>&1; then
		useradd --system -M -N -g nogroup -G collector -d /nonexistent \
			-s /usr/sbin/nologin "$TUSER" || fail "useradd $TUSER"
		add_cleanup "userdel $TUSER 2>/dev/null"
	fi
	id -nG "$TUSER" | grep -qw collector || fail "$TUSER is not in group collector"
	TUID=$(id -u "$TUSER")
	TGID=$(id -g "$TUSER")
}

# as_user USER CMD...: CMD as USER with his groups, no capability kept (in
# the foreground: in the background, $! would be a subshell's pid)
as_user() {
	u=$1
	shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"
}

# wait_exec PID COMM: waits (10 s at most) until PID runs the program COMM
# (a process started through setpriv or sh is that program only once it
# has called exec)
wait_exec() {
	for _ in $(seq 1 100); do
		[ "$(cat /proc/"$1"/comm 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# sudo_user: the test's sudo user is nobody (user, uid, gid), who owns
# nothing but $TMP/home (made here; $TMP is opened to him); as_sudo CMD...
# runs CMD with the SUDO_* variables sudo would set (CI has no sudo).
sudo_user() {
	user=nobody
	uid=$(id -u $user) || skip "no user $user"
	gid=$(id -g $user)
	chmod 755 "$TMP"
	mkdir -p "$TMP/home"
	chown "$uid:$gid" "$TMP/home"
}
as_sudo() {
	env SUDO_UID="$uid" SUDO_GID="$gid" SUDO_USER="$user" "$@"
}

# A test of several cases that goes on after a failure: bad MSG counts a
# failed check, skipped MSG says a part not run (loudly, as its log's last
# line); checks_done ends the test, failed when any check did.
failures=0
skipped=""
bad() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
skipped() {
	echo "SKIPPED: $*"
	skipped="$skipped${skipped:+; }$*"
}
checks_done() {
	[ -z "$skipped" ] || echo "SKIPPED parts: $skipped"
	[ "$failures" -eq 0 ] || fail "$failures checks failed"
	if [ -n "$skipped" ]; then echo "PASS, with parts SKIPPED: $skipped"; else echo PASS; fi
}

# for_each_python FN: FN LABEL PYTHON [VERSION] for Debian's python3.11 and
# for 3.13, 3.14 and 3.15 through build/pythons/run.sh (VERSION its first
# argument), those missing skipped (scripts/install-deps.sh unpacks them).
for_each_python() {
	if [ -x /usr/bin/python3.11 ]; then
		"$1" python3.11 /usr/bin/python3.11
	else
		skipped "python3.11: no /usr/bin/python3.11"
	fi
	for v in 3.13 3.14 3.15; do
		if [ ! -x "$TOP/build/pythons/run.sh" ]; then
			skipped "python$v: no $TOP/build/pythons/run.sh (scripts/install-deps.sh unpacks Debian's CPython 3.13+ there)"
		elif ! "$TOP/build/pythons/run.sh" "$v" -c pass 2>/dev/null; then
			skipped "python$v: not under build/pythons, or it does not run (scripts/install-deps.sh)"
		else
			"$1" "python$v" "$TOP/build/pythons/run.sh" "$v"
		fi
	done
}

# for_each_java FN: FN N JAVA... for OpenJDK 17 (Debian 12's own), 21 and
# 25 (Debian 13's and unstable's, unpacked under build/jdks), JAVA... the
# command that runs java N: build/jdks/run.sh N java (its other tools:
# build/jdks/run.sh N jcmd...); those missing or not running skipped
# (scripts/install-deps.sh, through scripts/fetch-jdks.sh, writes run.sh
# and unpacks 21 and 25).
for_each_java() {
	for v in 17 21 25; do
		if [ ! -x "$TOP/build/jdks/run.sh" ]; then
			skipped "java$v: no $TOP/build/jdks/run.sh (scripts/install-deps.sh writes it and unpacks OpenJDK 21 and 25 there)"
		elif ! "$TOP/build/jdks/run.sh" "$v" java -version >/dev/null 2>&1; then
			skipped "java$v: not installed or not under build/jdks, or it does not run (scripts/install-deps.sh)"
		else
			"$1" "$v" "$TOP/build/jdks/run.sh" "$v" java
		fi
	done
}

# start_blocked NAME READY CMD...: runs CMD in the background (killed at the
# test's exit), waits until it created READY (10 s at most); sets BG
start_blocked() {
	sb_name=$1 sb_ready=$2
	shift 2
	"$@" 2>"$TMP/$sb_name.stderr" &
	BG=$!
	add_cleanup "kill -KILL $BG 2>/dev/null"
	for _ in $(seq 1 100); do
		[ -e "$sb_ready" ] && return 0
		kill -0 "$BG" 2>/dev/null || { cat "$TMP/$sb_name.stderr"; fail "$sb_name: $* exited before it was ready"; }
		sleep 0.1
	done
	fail "$sb_name: $* did not create $sb_ready in 10 s"
}
