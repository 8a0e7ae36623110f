#!/bin/sh
# A 0.3 s python3.11 script, summed in the kernel and streamed: its code
# objects die with it, and are read while it lives: at least 95% of the
# samples in its code (a frame of pyshort.py) carry its named function
# brief_work.
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
	# (of the samples in the script's own code, a frame of pyshort.py on
	# the stack: the interpreter's start before it, 10-16% of the run's
	# samples as the machine's load has it, took a run under 85% once)
	set -- $(awk '/^sample / { n += $2; c = $2; delete seen; next }
		/^    #/ && $3 == "brief_work" && !seen[$3]++ { named += c }
		/^    #/ && /\/pyshort\.py:[0-9]+$/ && !seen["script"]++ { script += c }
		END { print n + 0, script + 0, named + 0 }' "$TMP/dump")
	echo "$mode: $3 of the script's $2 samples ($1 in all) under brief_work"
	[ "$2" -ge 150 ] || fail "$mode: only $2 samples of a 0.3 s script ($1 in all)"
	[ $((100 * $3)) -ge $((95 * $2)) ] || fail "$mode: $3 of the script's $2 samples named brief_work (< 95%)"
done
echo ok
