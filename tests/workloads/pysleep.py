# --off-cpu on Python: napper sleeps 20 times 20 ms (at least 0.4 s off
# the CPU, on the time.sleep line), then worker computes.
import time


def napper():
    for _ in range(20):
        time.sleep(0.02)


def worker():
    s = 0
    for i in range(3000000):
        s += i
    return s


napper()
worker()
