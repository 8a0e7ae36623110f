#!/bin/sh
# --trace py:GLOB (bpf/trace_python.bpf.h): Python functions traced through
# the interpreter's USDT probes, with exact call counts.  The script calls
# work_a 2N times (N directly, N through other()), work_raise N times (each
# raises), work_rec 51 times (recursion), a generator worker_gen over 10
# values (11 returns: each resumption is a call to the probes), and
# helper() N times, which no glob here matches.  The summary and the XRay
# account (llvm-xray) show exactly those counts; a file glob narrows the
# match; on Debian's python3.11 (probes) and on a libpython build
# (/root/.pyenv, built without them: named, exit 2).
. tests/integration/lib.sh
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY"
readelf -n "$PY" 2>/dev/null | grep -q function__entry || skip "$PY has no USDT probes"
command -v llvm-xray-14 >/dev/null || fail "llvm-xray-14 missing"
N=1234

cat >"$TMP/calls.py" <<'PY'
import sys
def work_a(x):
    return x * 2 + 1
def work_raise(x):
    raise ValueError(x)
def work_rec(n):
    return 0 if n == 0 else 1 + work_rec(n - 1)
def worker_gen(n):
    for i in range(n):
        yield i
def helper(x):
    return x - 1
def other(x):
    return x + work_a(x)
n = int(sys.argv[1])
t = 0
for i in range(n):
    t += work_a(i)
    t += other(i)
    t += helper(i)
    try:
        work_raise(i)
    except ValueError:
        t += 1
t += work_rec(50)
t += sum(worker_gen(10))
print(t)
PY

# calls FILE FUNCTION: the calls column of the summary's traced table
calls() {
	awk -v fn="$2" '/^Traced functions/ { on = 1; next } /^Top functions/ { on = 0 }
		on && $1 == fn { print $2; exit }' "$1"
}

"$COLLECTOR" --trace 'py:work*' -f xray -o "$TMP/out" -- "$PY" "$TMP/calls.py" "$N" \
	>"$TMP/stdout" 2>"$TMP/summary" || { cat "$TMP/summary"; fail "collector failed"; }
cat "$TMP/summary"
[ -s "$TMP/stdout" ] || fail "the script printed nothing"
for f in "work_a $((2 * N))" "work_raise $N" "work_rec 51" "worker_gen 11"; do
	set -- $f
	got=$(calls "$TMP/summary" "$1")
	[ "$got" = "$2" ] || fail "summary: $1 has '$got' calls, not $2"
done
for f in helper other; do
	[ -z "$(calls "$TMP/summary" $f)" ] || fail "summary: $f is traced but matches no glob"
done
xray=$(ls "$TMP"/out/xray/*.xray) || fail "no XRay trace"
llvm-xray-14 account -instr_map="${xray%.xray}.map.elf" "$xray" >"$TMP/account" 2>&1 ||
	{ cat "$TMP/account"; fail "llvm-xray account failed"; }
cat "$TMP/account"
for f in "work_a $((2 * N))" "work_raise $N" "work_rec 51"; do
	set -- $f
	got=$(awk -v fn="$1" '$NF == fn { print $2; exit }' "$TMP/account")
	[ "$got" = "$2" ] || fail "XRay: $1 has '$got' calls, not $2"
done
grep -q "helper" "$TMP/account" && fail "XRay: helper is traced"

# a file glob: the base name, or the whole path
"$COLLECTOR" --trace 'py:calls.py:work_a' -o "$TMP/out2" -- "$PY" "$TMP/calls.py" "$N" \
	>/dev/null 2>"$TMP/summary2" || fail "collector with a file glob failed"
[ "$(calls "$TMP/summary2" work_a)" = "$((2 * N))" ] || fail "py:calls.py:work_a: wrong count"
[ -z "$(calls "$TMP/summary2" work_raise)" ] || fail "py:calls.py:work_a traced work_raise"
"$COLLECTOR" --trace "py:$TMP/*.py:work_r?c" -o "$TMP/out3" -- "$PY" "$TMP/calls.py" 3 \
	>/dev/null 2>"$TMP/summary3" || fail "collector with a path glob failed"
[ "$(calls "$TMP/summary3" work_rec)" = 51 ] || fail "py:PATH:work_r?c: wrong count"
"$COLLECTOR" --trace 'py:other.py:work*' -o "$TMP/out4" -- "$PY" "$TMP/calls.py" 3 \
	>/dev/null 2>"$TMP/summary4" || fail "collector with a file glob of no file failed"
[ -z "$(calls "$TMP/summary4" work_a)" ] || fail "py:other.py:work* traced work_a"

# an interpreter without the probes: named, exit 2
LIBPY=/root/.pyenv/versions/3.11.7
if [ -x "$LIBPY/bin/python3.11" ]; then
	"$COLLECTOR" --trace 'py:work*' -o "$TMP/out5" -- "$LIBPY/bin/python3.11" \
		"$TMP/calls.py" 3 >/dev/null 2>"$TMP/err5"
	rc=$?
	cat "$TMP/err5"
	if readelf -n "$LIBPY/lib/libpython3.11.so.1.0" | grep -q function__entry; then
		[ $rc -eq 0 ] || fail "the libpython build with probes: exit $rc"
	else
		[ $rc -eq 2 ] || fail "an interpreter without probes: exit $rc, not 2"
		grep -q "libpython3.11.so.1.0 was built without its USDT probes" "$TMP/err5" ||
			fail "the message does not name the libpython without probes"
	fi
	[ -e "$TMP/out5/xray" ] && fail "files written for an interpreter without probes"
else
	echo "no $LIBPY: the libpython build is not tried"
fi
echo ok
