# Shared helpers for the integration tests (sourced, POSIX sh).
# Each test runs from the repository root with $COLLECTOR set.

: "${COLLECTOR:=$PWD/collector}"
WL="$PWD/build/workloads"
TMP=$(mktemp -d /tmp/collector-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "$*"
	exit 77
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

# within VALUE LOW HIGH: true when LOW <= VALUE <= HIGH (decimals allowed)
within() {
	[ -n "$1" ] && awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
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

# summary_value SUMMARY_FILE LABEL: the first number after a summary label
summary_value() {
	awk -v label="$2" '$1 == label { print $2; exit }' "$1"
}
