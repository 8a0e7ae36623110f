# Bad input: a clear message, the documented exit code, nothing half-written.
. tests/integration/lib.sh
need_root
cd "$TMP" || exit 1

# message_has PATTERN: the last command's stderr names the problem
message_has() {
	grep -qi -- "$1" "$TMP/err" || { cat "$TMP/err"; fail "message lacks '$1'"; }
}

# no collector-* directory may be left behind by a refused run
no_output_left() {
	ls -d "$TMP"/collector-* >/dev/null 2>&1 && fail "a refused run left an output directory"
	return 0
}

expect_exit 2 "$COLLECTOR"
message_has "say what to profile"
expect_exit 2 "$COLLECTOR" -F 0 -- true
message_has "at least 1"
expect_exit 2 "$COLLECTOR" -F -5 -- true
message_has "not a whole number"
expect_exit 2 "$COLLECTOR" -F abc -- true
message_has "not a whole number"
# above the kernel's limit: capped there, with perf's warning (a command
# that does not exist: nothing is sampled at the limit)
expect_exit 4 "$COLLECTOR" -F 100000000 -- /nonexistent/command
message_has "throttling from 100000000 Hz to"
message_has "perf_event_max_sample_rate"
expect_exit 2 "$COLLECTOR" -p abc
message_has "PID 'abc'"
expect_exit 2 "$COLLECTOR" -d -1 -- true
message_has "duration"
expect_exit 2 "$COLLECTOR" -f nosuch -- true
message_has "unknown format 'nosuch'"
expect_exit 2 "$COLLECTOR" -a -p 1
message_has "choose one of"
no_output_left

# a PID that does not exist
expect_exit 4 "$COLLECTOR" -p 999999999
message_has "no process with PID"
# a kernel thread (kthreadd is PID 2)
expect_exit 4 "$COLLECTOR" -p 2
message_has "kernel thread"
# a zombie
sh -c 'sleep 0.1 & exec sleep 3' &
parent=$!
sleep 0.5
zombie=$(ps -o pid= --ppid "$parent" | tr -d ' ')
[ -n "$zombie" ] || fail "could not make a zombie"
expect_exit 4 "$COLLECTOR" -p "$zombie"
message_has "zombie"
kill "$parent" 2>/dev/null
# a missing command
expect_exit 4 "$COLLECTOR" -- /nonexistent/program
message_has "cannot run '/nonexistent/program'"
expect_exit 4 "$COLLECTOR" -- no-such-command-anywhere
message_has "searched PATH"
no_output_left

# an output path that is a file, or that cannot be created
: > "$TMP/afile"
expect_exit 5 "$COLLECTOR" -o "$TMP/afile" -- true
message_has "not a directory"
expect_exit 5 "$COLLECTOR" -o /proc/collector-test -- true
message_has "cannot create the output directory"
mkdir -p "$TMP/full" && : > "$TMP/full/x"
expect_exit 5 "$COLLECTOR" -o "$TMP/full" -- true
message_has "not empty"
# a symlink is never followed
ln -s "$TMP/elsewhere" "$TMP/link"
mkdir "$TMP/elsewhere"
expect_exit 5 "$COLLECTOR" -o "$TMP/link" -- true
[ -z "$(ls "$TMP/elsewhere")" ] || fail "wrote through a symlink"

# a PID that exits during start-up: refused, or profiled until it exits
sleep 0.2 &
short=$!
timeout 20 "$COLLECTOR" -p "$short" -o "$TMP/short" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 4 ] || { cat "$TMP/err"; fail "short-lived PID: exit $rc"; }

# no privileges: one line that says how to run it
if command -v setpriv >/dev/null; then
	expect_exit 3 setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all "$COLLECTOR" -o "$TMP/np" -- true
	message_has "sudo collector"
	[ ! -e "$TMP/np" ] || fail "an unprivileged run created its output directory"
fi

# collector dump on garbage
head -c 4096 /dev/urandom > "$TMP/garbage"
expect_exit 7 "$COLLECTOR" dump "$TMP/garbage"
message_has "not a file in a format"
expect_exit 7 "$COLLECTOR" dump "$TMP/nonexistent"
echo ok
