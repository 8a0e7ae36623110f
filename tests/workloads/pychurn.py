# Code objects that die under the profiler: three threads compile, run
# once and drop a new function after another for SECONDS, so that many a
# sampled code object is freed (its memory reused) before the collector
# reads it.  Usage: pychurn.py SECONDS
import sys
import threading
import time


def churn(tag, stop):
    i = 0
    while time.time() < stop:
        name = "gen_%s_%d" % (tag, i)
        src = "def %s(n):\n    s = 0\n    for k in range(n):\n        s += k\n    return s\n" % name
        ns = {}
        exec(compile(src, "<%s>" % name, "exec"), ns)
        ns[name](3000)
        i += 1


stop = time.time() + float(sys.argv[1])
threads = [threading.Thread(target=churn, args=(t, stop)) for t in "abc"]
for t in threads:
    t.start()
for t in threads:
    t.join()
