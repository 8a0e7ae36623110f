#!/bin/sh
# Debian's /usr/bin/python3.11 (a stripped executable exporting _PyRuntime)
# with its Python frames walked in BPF: the shares of a workload that
# measures its own CPU time per function, summed in the kernel and
# streamed (python_shares.sh says what is checked).
. tests/integration/lib.sh
. tests/integration/python_shares.sh
need_root
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"

python_shares summed -- /usr/bin/python3.11
python_shares streamed --no-aggregate -- /usr/bin/python3.11
echo ok
