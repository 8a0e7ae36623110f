# Two threads of one interpreter, each in a function of its own, until
# killed: `collector -p` must name each thread's function in its samples.
# Writes READY to stdout once both threads run.
import sys
import threading


def left_worker():
    s = 0
    while True:
        for i in range(10000):
            s += i * 3


def right_worker():
    d = {}
    while True:
        for i in range(10000):
            d[i & 127] = i


for fn in (left_worker, right_worker):
    threading.Thread(target=fn, name=fn.__name__, daemon=True).start()
print("READY", flush=True)
threading.Event().wait()
