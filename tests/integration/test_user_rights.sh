# Under sudo every path the user names is used with the user's rights
# (issue 17): -o, what is written under it, dump, --trace BIN, the command.
# SUDO_UID/SUDO_GID/SUDO_USER are set by hand (CI has no sudo); the user is
# nobody, who owns nothing here but $TMP/home.
. tests/integration/lib.sh
need_root
sudo_user
mkdir -m 700 "$TMP/rootonly"
mkdir -m 755 "$TMP/rootdir"
echo "root's" >"$TMP/rootonly/victim"
cp "$WL/split" "$TMP/rootonly/split"

# -o where the user may not write: refused, nothing created
expect_exit 5 as_sudo "$COLLECTOR" -q -o "$TMP/rootonly/out" -- true
grep -q "Permission denied" "$TMP/err" || fail "no 'Permission denied' for -o: $(cat "$TMP/err")"
[ "$(ls -A "$TMP/rootonly")" = "$(printf 'split\nvictim')" ] ||
	fail "something was created in the root-only directory: $(ls -A "$TMP/rootonly")"
# an existing empty directory of root's, which the user cannot write into
expect_exit 5 as_sudo "$COLLECTOR" -q -o "$TMP/rootdir" -- true
grep -q "cannot write into" "$TMP/err" || fail "no message for root's directory"
[ -z "$(ls -A "$TMP/rootdir")" ] || fail "wrote into root's directory"
# root himself may (no SUDO_*): the refusal is the user's, not a bug
"$COLLECTOR" -q -o "$TMP/rootonly/out" -- true >/dev/null 2>&1 ||
	fail "root cannot write under his own directory"
rm -rf "$TMP/rootonly/out"

# -o in the user's own directory: every file and directory is his.  The
# command, run as the user, plants symlinks where the outputs will go: at
# a final name, at a temporary name, at a format's directory.
out="$TMP/home/out"
as_sudo "$COLLECTOR" -q -o "$out" -- sh -c "
	ln -s '$TMP/rootonly/victim' '$out/collector.folded'
	ln -s '$TMP/rootonly/victim' '$out/speedscope.json.tmp'
	ln -s '$TMP/rootonly' '$out/dcpi'
	exec '$WL/split' 0.5" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || { cat "$TMP/err"; fail "collector exited $rc"; }
[ "$(cat "$TMP/rootonly/victim")" = "root's" ] || fail "wrote through a planted symlink"
[ "$(ls -A "$TMP/rootonly")" = "$(printf 'split\nvictim')" ] ||
	fail "wrote into the root-only directory through a symlink: $(ls -A "$TMP/rootonly")"
[ -f "$out/collector.folded" ] && [ ! -L "$out/collector.folded" ] ||
	fail "collector.folded is not a file of its own"
[ -L "$out/dcpi" ] || fail "the planted dcpi symlink was replaced"
[ "$(find "$out" -type f | wc -l)" -gt 3 ] || fail "outputs missing: $(ls "$out")"
bad=$(find "$out" ! -type l \( ! -user "$uid" -o ! -group "$gid" \) | head -n 3)
[ -z "$bad" ] || fail "not the user's: $bad"

# dump: a file the user may not read is refused; root reads it
cp "$out/collector.folded" "$TMP/rootonly/secret.folded"
expect_exit 7 as_sudo "$COLLECTOR" dump "$TMP/rootonly/secret.folded"
grep -q "Permission denied" "$TMP/err" || fail "no 'Permission denied' for dump"
expect_exit 0 "$COLLECTOR" dump "$TMP/rootonly/secret.folded"
expect_exit 0 as_sudo "$COLLECTOR" dump --check "$out/collector.folded"

# --trace of a binary the user may not read: refused; root may
expect_exit 4 as_sudo "$COLLECTOR" -q -o "$TMP/home/t1" \
	--trace "$TMP/rootonly/split:chain_*" -- true
grep -q "Permission denied" "$TMP/err" || fail "no 'Permission denied' for --trace"
chmod 711 "$TMP/rootonly"
chmod 700 "$TMP/rootonly/split"
expect_exit 4 as_sudo "$COLLECTOR" -q -o "$TMP/home/t2" \
	--trace "$TMP/rootonly/split:chain_*" -- true
expect_exit 0 "$COLLECTOR" -q -o "$TMP/t3" --trace "$TMP/rootonly/split:chain_*" -- true

# a command the user may not run
expect_exit 4 as_sudo "$COLLECTOR" -q -o "$TMP/home/c1" -- "$TMP/rootonly/split" 0.1
grep -q "Permission denied" "$TMP/err" || fail "no 'Permission denied' for the command"
echo ok
