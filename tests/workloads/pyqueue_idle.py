# Ten threads idle on a queue.Queue().get() nobody puts into, since before a
# run of collector -p: worker-0 .. worker-9, named by threading.Thread(name=)
# and, for the profiles' thread_name label (the thread's comm), by their OS
# name too (Python sets it itself only from 3.14).  Once all ten are about
# to block, the file argv[1] gets a line "NAME TID" per worker (whole, by a
# rename); the main thread then waits in join.  A get that returned would
# say so on stderr.
import os
import queue
import sys
import threading

N = 10
q = queue.Queue()
lock = threading.Lock()
started = []
all_started = threading.Event()


def worker():
    me = threading.current_thread()
    tid = threading.get_native_id()
    with open("/proc/self/task/%d/comm" % tid, "w") as f:
        f.write(me.name)
    with lock:
        started.append((me.name, tid))
        if len(started) == N:
            all_started.set()
    item = q.get()
    print("pyqueue_idle: %s got %r" % (me.name, item), file=sys.stderr)


threads = [threading.Thread(target=worker, name="worker-%d" % i) for i in range(N)]
for t in threads:
    t.start()
all_started.wait()
with open(sys.argv[1] + ".tmp", "w") as f:
    for name, tid in sorted(started):
        f.write("%s %d\n" % (name, tid))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
for t in threads:
    t.join()
