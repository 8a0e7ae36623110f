#!/bin/sh
# CPython 3.13, 3.14 and 3.15 (Debian 13's and unstable's, unpacked under
# build/pythons by scripts/install-deps.sh and run with their own C
# library through ld.so: the interpreter is a mapped image, not
# /proc/PID/exe), walked with the layouts their _Py_DebugOffsets give:
# the shares test of python_shares.sh on each.  A version missing from a
# tree that has the others fails.
# 3.12, which no Debian suite ships, when PYTHON312 names a 3.12
# interpreter (one built from CPython's sources): the same test, walked
# with the layout python_layouts.c takes from 3.12's headers.
# Skipped when none of them is there.
. tests/integration/lib.sh
. tests/integration/python_shares.sh
need_root
RUN=$TOP/build/pythons/run.sh
ran=0

if [ -n "${PYTHON312:-}" ]; then
	"$PYTHON312" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null ||
		fail "PYTHON312=$PYTHON312 is no CPython 3.12 that runs"
	python_shares python3.12 -- "$PYTHON312"
	ran=1
else
	echo "python3.12: not run (PYTHON312 names no 3.12 interpreter)"
fi
if [ -x "$RUN" ]; then
	for v in 3.13 3.14 3.15; do
		"$RUN" "$v" -c pass 2>/dev/null || fail "python$v does not run from build/pythons"
		python_shares "python$v" -- "$RUN" "$v"
	done
	ran=1
fi
[ "$ran" -eq 1 ] || skip "no CPython 3.13+ under build/pythons (scripts/install-deps.sh fetches them) and no PYTHON312"
echo ok
