# Under sudo the command runs as the invoking user, and the output belongs
# to that user (SUDO_UID/SUDO_GID/SUDO_USER set by hand: CI has no sudo).
. tests/integration/lib.sh
need_root
# the output goes where the user may write (test_user_rights: nowhere else)
sudo_user

as_sudo "$COLLECTOR" -o "$TMP/home/out" -- \
	sh -c 'id -u > "$1/uid"; id -G > "$1/groups"; "$2" 0.5' sh "$TMP/home" "$WL/split" \
	>"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "collector exited $?"; }
ran_as=$(cat "$TMP/home/uid")
groups=$(cat "$TMP/home/groups")
rm -f "$TMP/home/uid" "$TMP/home/groups"
[ "$ran_as" = "$uid" ] || fail "the command ran as uid $ran_as, not $uid"
case " $groups " in *" 0 "*) fail "the command kept root's group: $groups" ;; esac
[ "$(stat -c %u "$TMP/home/out")" = "$uid" ] || fail "the output directory is not the user's"
[ "$(stat -c %a "$TMP/home/out")" = "755" ] || fail "the output directory mode is not 755"
files=$(find "$TMP/home/out" -type f | wc -l)
[ "$files" -gt 0 ] || fail "no output file written"
bad=$(find "$TMP/home/out" \( ! -user "$uid" -o \( -type f ! -perm 644 \) -o \( -type d ! -perm 755 \) \) | head -n 3)
[ -z "$bad" ] || fail "not owned by the user or wrong mode: $bad"

# --run-as-root keeps root
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$user "$COLLECTOR" -q -o "$TMP/home/out3" --run-as-root -- \
	sh -c 'id -u > "$1"' sh "$TMP/root-uid" >/dev/null 2>&1
[ "$(cat "$TMP/root-uid")" = 0 ] || fail "--run-as-root did not run as root"
# malformed SUDO_UID
SUDO_UID=abc SUDO_GID=0 "$COLLECTOR" -- true >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "malformed SUDO_UID accepted"
grep -q "SUDO_UID" "$TMP/err" || fail "no message on malformed SUDO_UID"
echo ok
