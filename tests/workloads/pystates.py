# Four threads in four states, for `collector stacks` (test_stacks.sh):
#  - spin:  running, a pure-Python loop in spin();
#  - nap:   waiting in time.sleep(100000) in nap();
#  - stuck: waiting in stuck() on a threading.Lock() the main thread holds
#           (and never releases);
#  - main:  waiting in time.sleep(100000) at the module's level.
# Each thread says its native id (threading.get_native_id()) right before
# it starts what it does; once all three have, the file argv[1] is written
# (whole, by a rename), one "NAME TID" line per thread, main first.  A wait
# that returned says so on stderr and ends the process with status 1.
import os
import sys
import threading
import time

ids = {}
said = threading.Condition()
lock = threading.Lock()
lock.acquire()


def say(name):
    with said:
        ids[name] = threading.get_native_id()
        said.notify_all()


def spin():
    say("spin")
    x = 0
    while True:
        x += 1
        if x < 0:
            break


def nap():
    say("nap")
    time.sleep(100000)  # nap waits here
    print("pystates: nap's sleep returned", file=sys.stderr)
    os._exit(1)


def stuck():
    say("stuck")
    lock.acquire()  # stuck waits here
    print("pystates: stuck got the lock", file=sys.stderr)
    os._exit(1)


for f in (spin, nap, stuck):
    threading.Thread(target=f, name=f.__name__, daemon=True).start()
with said:
    said.wait_for(lambda: len(ids) == 3)
with open(sys.argv[1] + ".tmp", "w") as out:
    out.write("main %d\n" % threading.get_native_id())
    for name in ("spin", "nap", "stuck"):
        out.write("%s %d\n" % (name, ids[name]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(100000)  # main waits here
print("pystates: the main thread's sleep returned", file=sys.stderr)
sys.exit(1)
