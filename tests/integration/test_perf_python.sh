#!/bin/sh
# Debian's python3 running a loop, beside perf: the same top self functions
# (the interpreter's symbols, its static functions summed per FDE) with
# shares within 3 points.
. tests/integration/lib.sh
. tests/integration/perf_compare.sh
need_root
plain_suite_only "shares beside perf"
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 missing (python3)"

# the native frames, as perf sees them: Python frames stand in place of the
# evaluator's (and its cold part's), which perf names, so shares of
# _PyEval_EvalFrameDefault cannot be matched; test_python*.sh check them
# against the workload's own measure
export COLLECTOR_NO_PYTHON_WALK=1
compare_with_perf python 999 /usr/bin/python3 "$TOP/tests/workloads/pyloop.py"
echo ok
