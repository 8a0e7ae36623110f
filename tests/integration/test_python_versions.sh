#!/bin/sh
# CPython 3.13, 3.14 and 3.15 (Debian 13's and unstable's, unpacked under
# build/pythons by scripts/install-deps.sh and run with their own C
# library through ld.so: the interpreter is a mapped image, not
# /proc/PID/exe), walked with the layouts their _Py_DebugOffsets give:
# the shares test of python_shares.sh on each.  Skipped when none of them
# is there; a version missing from a tree that has the others fails.
. tests/integration/lib.sh
. tests/integration/python_shares.sh
need_root
RUN=$TOP/build/pythons/run.sh
[ -x "$RUN" ] || skip "no CPython 3.13+ under build/pythons (scripts/install-deps.sh fetches them)"

for v in 3.13 3.14 3.15; do
	"$RUN" "$v" -c pass 2>/dev/null || fail "python$v does not run from build/pythons"
	python_shares "python$v" -- "$RUN" "$v"
done
echo ok
