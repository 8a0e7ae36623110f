#!/bin/sh
# CPython 3.11 as a shared library: pyenv's 3.11.7, whose python3.11 maps
# libpython3.11.so (the image exporting _PyRuntime, not /proc/PID/exe): the
# shares test of python_shares.sh.  Skipped where that build is missing.
. tests/integration/lib.sh
. tests/integration/python_shares.sh
need_root
PY=${PYENV_PYTHON311:-/root/.pyenv/versions/3.11.7/bin/python3.11}
[ -x "$PY" ] || skip "no libpython build of 3.11 ($PY)"
ldd "$PY" | grep -q 'libpython3\.11' || skip "$PY does not link libpython3.11"

python_shares libpython -- "$PY"
echo ok
