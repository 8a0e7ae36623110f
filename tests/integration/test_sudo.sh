# Under sudo the command runs as the invoking user, and the output belongs
# to that user (SUDO_UID/SUDO_GID/SUDO_USER set by hand: CI has no sudo).
. tests/integration/lib.sh
need_root
user=nobody
uid=$(id -u $user) || skip "no user $user"
gid=$(id -g $user)
chmod 755 "$TMP"

SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$user "$COLLECTOR" -o "$TMP/out" -- \
	sh -c 'id -u > /dev/shm/collector-sudo-uid; id -G > /dev/shm/collector-sudo-groups;
	       '"$WL/split"' 0.5' >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "collector exited $?"; }
ran_as=$(cat /dev/shm/collector-sudo-uid)
groups=$(cat /dev/shm/collector-sudo-groups)
rm -f /dev/shm/collector-sudo-uid /dev/shm/collector-sudo-groups
[ "$ran_as" = "$uid" ] || fail "the command ran as uid $ran_as, not $uid"
case " $groups " in *" 0 "*) fail "the command kept root's group: $groups" ;; esac
[ "$(stat -c %u "$TMP/out")" = "$uid" ] || fail "the output directory is not the user's"
[ "$(stat -c %a "$TMP/out")" = "755" ] || fail "the output directory mode is not 755"
files=$(find "$TMP/out" -type f | wc -l)
[ "$files" -gt 0 ] || fail "no output file written"
bad=$(find "$TMP/out" \( ! -user "$uid" -o \( -type f ! -perm 644 \) -o \( -type d ! -perm 755 \) \) | head -n 3)
[ -z "$bad" ] || fail "not owned by the user or wrong mode: $bad"

# --run-as-root keeps root
"$COLLECTOR" -q -o "$TMP/out2" --run-as-root -- sh -c 'id -u > /dev/shm/collector-sudo-uid' \
	>/dev/null 2>&1
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$user "$COLLECTOR" -q -o "$TMP/out3" --run-as-root -- \
	sh -c 'id -u > /dev/shm/collector-sudo-uid' >/dev/null 2>&1
[ "$(cat /dev/shm/collector-sudo-uid)" = 0 ] || fail "--run-as-root did not run as root"
rm -f /dev/shm/collector-sudo-uid
# malformed SUDO_UID
SUDO_UID=abc SUDO_GID=0 "$COLLECTOR" -- true >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "malformed SUDO_UID accepted"
grep -q "SUDO_UID" "$TMP/err" || fail "no message on malformed SUDO_UID"
echo ok
