#!/bin/sh
# Bad input for the Python walk: three threads of python3.11 compile, run
# and drop a new function after another, so that frames are pushed and
# popped under the walk and code objects are freed (their memory reused)
# before they are read.  No crash (the ASan suite runs it too), every
# output reads back, the walks and the unnamed frames are counted in the
# summary, and the functions read in time are named with their file.
. tests/integration/lib.sh
need_root
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"

"$COLLECTOR" -f pprof,folded,flamegraph -o "$TMP/out" -- /usr/bin/python3.11 \
	"$TOP/tests/workloads/pychurn.py" 2 2>"$TMP/err" || { cat "$TMP/err"; fail "collector failed"; }
"$COLLECTOR" dump -c "$TMP/out" >"$TMP/check" 2>&1 || { cat "$TMP/check"; fail "an output does not read back"; }
line=$(grep '^  python ' "$TMP/err") || { cat "$TMP/err"; fail "no python line in the summary"; }
echo "$line"
echo "$line" | grep -q ' [1-9][0-9]* walks, [0-9]* stopped early (' || fail "no walks counted"
echo "$line" | grep -q ' [0-9]* frames unnamed' || fail "unnamed frames not counted"
"$COLLECTOR" dump "$TMP/out/profile.pb.gz" >"$TMP/dump"
named=$(grep -c ' gen_[abc]_[0-9]* <gen_[abc]_[0-9]*>:[0-9]' "$TMP/dump")
echo "frames of generated functions named: $named"
[ "$named" -ge 10 ] || fail "only $named frames of generated functions named"
echo ok
