# Ground truth for the Python profiling tests: three functions whose own
# thread CPU time (time.thread_time_ns around each call) this program
# measures, and whose shares of it it writes, with each function's lines
# (its def line, where CPython puts the RESUME that starts every call, to
# its last line) to OUT:
#   NAME SHARE FIRST_LINE LAST_LINE
# gamma sorts with a key function, key_of: a Python function called back
# from C (list.sort), under native frames, under gamma.
# Usage: pyshares.py CPU_SECONDS OUT (its thread's CPU time: a loaded
# machine makes the run longer, not its profile thinner)
import time

# Off the CPU for half a second first, before the imports (inspect's
# compile 250 ms of CPU): the profiler meets the interpreter (its walk
# loaded, the process's entry written) while no sample is taken.  Under
# ASan that took up to 450 ms of a run, whose imports then had no Python
# frames (85% of the samples with them, where the test wants 90%); how
# soon a short interpreter is met is test_python_short's to check.
time.sleep(0.5)

import inspect  # noqa: E402
import sys  # noqa: E402


def alpha(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def beta(n):
    d = {}
    for i in range(n):
        d[i & 255] = str(i)
    return len(d)


def key_of(x):
    return -x


def gamma(n):
    return sorted(range(n), key=key_of)[0]


def main():
    seconds, out = float(sys.argv[1]), sys.argv[2]
    plan = [(alpha, 30000), (beta, 12000), (gamma, 10000)]
    spent = {f.__name__: 0 for f, _ in plan}
    # Each call's size varies (n/2 to 3n/2, a fixed pseudo-random
    # sequence): with sizes fixed, a round took the same time again and
    # again and a periodic sampler fell on the same points of it for long
    # stretches, which moved a share by up to 3 points in a run.
    x = 1
    while time.thread_time() < seconds:
        for f, n in plan:
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            size = n // 2 + x % n
            t0 = time.thread_time_ns()
            f(size)
            spent[f.__name__] += time.thread_time_ns() - t0
    total = sum(spent.values())
    with open(out, "w") as o:
        for f in (alpha, beta, gamma, key_of):
            lines, first = inspect.getsourcelines(f)
            share = spent.get(f.__name__, 0) / total
            o.write("%s %.4f %d %d\n" % (f.__name__, share, first, first + len(lines) - 1))


main()
