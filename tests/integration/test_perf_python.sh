#!/bin/sh
# Debian's python3 running a loop, beside perf: the same top self functions
# (the interpreter's symbols, its static functions summed per FDE) with
# shares within 3 points.
. tests/integration/lib.sh
. tests/integration/perf_compare.sh
need_root
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 missing (python3)"

cat >"$TMP/loop.py" <<'PY'
import time
def work(n):
    d = {}
    s = 0
    for i in range(n):
        d[i % 1000] = str(i)
        s += len(d[i % 1000]) * i
    return s
t = time.time()
while time.time() - t < 3:
    work(100000)
PY
compare_with_perf python 999 /usr/bin/python3 "$TMP/loop.py"
echo ok
