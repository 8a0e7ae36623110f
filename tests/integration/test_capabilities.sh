# File capabilities instead of sudo (issue 17): `make install-caps` into a
# temporary DESTDIR gives a copy root:collector 0750 with the capabilities
# of mk/install.mk; an unprivileged member of group collector runs it
# (setpriv) for -- CMD, -p on his own process and --trace, and the
# administrator's policy refuses -p on another user's process.
. tests/integration/lib.sh
need_root
command -v setcap >/dev/null || skip "no setcap (libcap2-bin)"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
test_user
chmod 755 "$TMP"
mkdir -p "$TMP/etc" "$TMP/home"
chown "$TUID:$TGID" "$TMP/home"
install_copy "$TMP/dest" "$TMP/etc" install-caps
bin="$TMP/dest/usr/bin/collector"
[ "$(stat -c '%U:%G %a' "$bin")" = "root:collector 750" ] ||
	fail "installed as $(stat -c '%U:%G %a' "$bin")"
getcap "$bin" | grep -q "cap_bpf" || fail "no capabilities: $(getcap "$bin")"
cp "$WL/split" "$TMP/home/split"
chown "$TUID:$TGID" "$TMP/home/split"
cd "$TMP/home" || fail "no home"

# -- CMD: profiled, and every output is the user's
as_user "$TUSER" "$bin" -o "$TMP/home/cmd" -- ./split 0.5 >"$TMP/out" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "-- CMD with capabilities exited $?"; }
[ -n "$(samples_of "$TMP/summary" self hot_function)" ] ||
	{ cat "$TMP/summary"; fail "hot_function not in the profile of -- CMD"; }
bad=$(find "$TMP/home/cmd" \( ! -user "$TUID" -o ! -group "$TGID" \) | head -n 3)
[ -z "$bad" ] || fail "not the user's: $bad"
# kernel frames are named (cap_syslog: /proc/kallsyms has addresses)
grep -q "kptr_restrict" "$TMP/summary" && fail "kernel symbols unreadable: $(cat "$TMP/summary")"

# -p on the user's own process
# (setpriv itself, not as_user: $! of a function is a subshell's pid)
setpriv --reuid="$TUID" --regid="$TGID" --init-groups ./split 60 >/dev/null &
own=$!
add_cleanup "kill $own 2>/dev/null; wait $own 2>/dev/null"
wait_exec "$own" split || fail "the user's split did not start"
as_user "$TUSER" "$bin" -o "$TMP/home/pid" -d 1 -p "$own" >"$TMP/out" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "-p on his own process exited $?"; }
[ -n "$(samples_of "$TMP/summary" self hot_function)" ] ||
	{ cat "$TMP/summary"; fail "hot_function not in the profile of -p"; }

# --trace a binary of his own: every call counted
as_user "$TUSER" "$bin" -o "$TMP/home/trace" -f callgrind --trace "./split:chain_c" \
	-- ./split 0.2 >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "--trace exited $?"; }
grep -q "tracing 1 functions" "$TMP/err" || fail "no function traced: $(cat "$TMP/err")"
grep -q "calibration failed" "$TMP/err" && fail "probe calibration failed: $(cat "$TMP/err")"
ls "$TMP/home/trace"/callgrind.out.* >/dev/null 2>&1 || fail "no callgrind output for --trace"

# not in group collector: cannot even run it (through sh: setpriv's own
# execve still holds root's capabilities, which pass any execute bit)
expect_exit 126 as_user nobody sh -c "exec '$bin' -q -o '$TMP/never' -- true"
[ ! -e "$TMP/never" ] || fail "a user outside group collector ran it"

# the user's rights hold with capabilities too
mkdir -m 700 "$TMP/rootonly"
expect_exit 5 as_user "$TUSER" "$bin" -q -o "$TMP/rootonly/out" -- true
[ -z "$(ls -A "$TMP/rootonly")" ] || fail "created under a root-only directory"

# the policy: another user's process refused, his own still allowed
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups sleep 30 &
other=$!
add_cleanup "kill $other 2>/dev/null; wait $other 2>/dev/null"
printf '# test policy\nother-users-pids = no\n' >"$TMP/etc/collector.conf"
expect_exit 3 as_user "$TUSER" "$bin" -q -o "$TMP/home/other" -d 1 -p "$other"
grep -q "collector.conf:2: other-users-pids = no" "$TMP/err" ||
	fail "the refusal does not name the policy line: $(cat "$TMP/err")"
[ ! -e "$TMP/home/other" ] || fail "an output directory was made for a refused run"
expect_exit 0 as_user "$TUSER" "$bin" -q -o "$TMP/home/own2" -d 0.5 -p "$own"
kill "$other" "$own" 2>/dev/null
wait
echo ok
