# The main thread blocked since before a run of collector -p (--off-cpu over
# a whole window): sleeper() sleeps 100000 s in time.sleep, the file argv[1]
# written (whole, by a rename) just before; a sleep that returned would say
# so on stderr and exit 1.
import os
import sys
import time


def sleeper():
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(100000)


sleeper()
print("pyblocked: the sleep returned", file=sys.stderr)
sys.exit(1)
