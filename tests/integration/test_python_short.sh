#!/bin/sh
# A 0.3 s python3.11 script, summed in the kernel and streamed: its code
# objects die with it, and are read while it lives: at least 85% of its
# samples carry its named function brief_work.
. tests/integration/lib.sh
need_root
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"

for mode in summed streamed; do
	opt=
	[ $mode = streamed ] && opt=--no-aggregate
	# shellcheck disable=SC2086
	"$COLLECTOR" -q -f pprof $opt -o "$TMP/$mode" -- /usr/bin/python3.11 \
		"$TOP/tests/workloads/pyshort.py" 2>"$TMP/err" || { cat "$TMP/err"; fail "collector failed"; }
	"$COLLECTOR" dump "$TMP/$mode/profile.pb.gz" >"$TMP/dump" || fail "dump failed"
	set -- $(awk '/^sample / { n += $2; c = $2; delete seen; next }
		/^    #/ && $3 == "brief_work" && !seen[$3]++ { named += c }
		END { print n + 0, named + 0 }' "$TMP/dump")
	echo "$mode: $2 of $1 samples under brief_work"
	[ "$1" -ge 150 ] || fail "$mode: only $1 samples of a 0.3 s script"
	[ $((100 * $2)) -ge $((85 * $1)) ] || fail "$mode: $2 of $1 samples named brief_work (< 85%)"
done
echo ok
