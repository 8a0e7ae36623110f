# The administrator's policy, SYSCONFDIR/collector.conf (issue 17): each
# line refuses, to a user who is not root, what it names (exit 3, naming
# the line); root is not bound by it; a file others may write is ignored;
# a line that cannot be read refuses every user's run.  The copy installed
# with SYSCONFDIR=$TMP/etc reads $TMP/etc/collector.conf; the user comes
# through sudo (SUDO_* set by hand: CI has no sudo).
. tests/integration/lib.sh
need_root
sudo_user
mkdir -p "$TMP/etc"
install_copy "$TMP/dest" "$TMP/etc"
bin="$TMP/dest/usr/bin/collector"
conf="$TMP/etc/collector.conf"
# user_run ARG...: the installed copy through sudo; root_run: as root
n=0
user_run() {
	n=$((n + 1))
	as_sudo "$bin" -q -o "$TMP/home/o$n" "$@"
}
root_run() {
	n=$((n + 1))
	"$bin" -q -o "$TMP/home/o$n" "$@"
}
# policy LINE...: the policy file, root's, mode 644
policy() {
	printf '# collector policy for the test\n' >"$conf"
	printf '%s\n' "$@" >>"$conf"
	chown root:root "$conf"
	chmod 644 "$conf"
}

# a process of root's and one of the user's (setpriv execs the program:
# $! is its pid)
sleep 60 &
roots=$!
add_cleanup "kill $roots 2>/dev/null; wait $roots 2>/dev/null"
setpriv --reuid="$uid" --regid="$gid" --clear-groups sleep 60 &
users=$!
add_cleanup "kill $users 2>/dev/null; wait $users 2>/dev/null"
wait_exec "$users" sleep || fail "the user's sleep did not start"

# no policy file: today's behaviour
expect_exit 0 user_run -d 0.3 -p "$roots"

# each line refuses what it names, and says which line
policy "run-as-root = no" "all-cpus = yes"
expect_exit 3 user_run --run-as-root -- true
grep -q "collector.conf:2: run-as-root = no" "$TMP/err" ||
	fail "--run-as-root: the refusal does not name the line: $(cat "$TMP/err")"
expect_exit 0 user_run -- true
expect_exit 0 user_run -a -d 0.3

policy "all-cpus = no"
expect_exit 3 user_run -a -d 0.3
grep -q "collector.conf:2: all-cpus = no" "$TMP/err" ||
	fail "-a: the refusal does not name the line: $(cat "$TMP/err")"
expect_exit 0 user_run --run-as-root -- true

policy "" "  other-users-pids  =  no"
expect_exit 3 user_run -d 0.3 -p "$roots"
grep -q "collector.conf:3: other-users-pids = no" "$TMP/err" ||
	fail "-p: the refusal does not name the line: $(cat "$TMP/err")"
expect_exit 3 user_run -d 0.3 -p "$users,$roots"
expect_exit 0 user_run -d 0.3 -p "$users"

# root himself is not bound
policy "run-as-root = no" "all-cpus = no" "other-users-pids = no"
expect_exit 0 root_run -a -d 0.3
expect_exit 0 root_run -d 0.3 -p "$users"

# a line that cannot be read refuses the user, naming it
policy "all-cpus = no" "run-as-root = maybe"
expect_exit 3 user_run -- true
grep -q "collector.conf:3: 'run-as-root = maybe'" "$TMP/err" ||
	fail "a bad line is not named: $(cat "$TMP/err")"

# a file others may write is no policy: ignored, with a warning
policy "run-as-root = no"
chmod 666 "$conf"
expect_exit 0 user_run --run-as-root -- true
grep -q "ignoring .*collector.conf" "$TMP/err" || fail "no warning for a writable policy"
chmod 644 "$conf"
chown "$uid" "$conf"
expect_exit 0 user_run --run-as-root -- true
grep -q "ignoring" "$TMP/err" || fail "no warning for a policy the user owns"

# the build's own copy reads /etc/collector.conf, not this one
chown root "$conf"
if [ ! -e /etc/collector.conf ]; then
		expect_exit 0 as_sudo "$COLLECTOR" -q -o "$TMP/home/build" --run-as-root -- true
fi
kill "$roots" "$users" 2>/dev/null
wait
echo ok
