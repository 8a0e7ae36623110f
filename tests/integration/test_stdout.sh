#!/bin/sh
# stdout belongs to the profiled command: the summary, the status line and
# every message go to stderr, so `collector -- CMD > FILE` leaves FILE as
# CMD wrote it (xz's compressed stream decompresses to the input byte for
# byte).
. tests/integration/lib.sh
need_root
command -v xz >/dev/null || fail "xz missing (xz-utils)"

# a few MB of text that compresses slowly enough to be sampled
seq 1 400000 | awk '{ print $1, $1 * 7919 % 1000003, "line of text for xz to chew on" }' \
	>"$TMP/input"
"$COLLECTOR" -o "$TMP/run" -- xz -9 -c "$TMP/input" >"$TMP/out.xz" 2>"$TMP/err" ||
	{ cat "$TMP/err"; fail "collector exited $?"; }
grep -q "^Top functions by self" "$TMP/err" || { cat "$TMP/err"; fail "no summary on stderr"; }
xz -dc "$TMP/out.xz" | cmp - "$TMP/input" || fail "the command's stdout was changed"
echo ok
