# A CPU-bound loop in CPython for 3 seconds (wall), for the tests that
# profile Debian's /usr/bin/python3: dictionary stores, str(), arithmetic.
import time


def work(n):
    d = {}
    s = 0
    for i in range(n):
        d[i % 1000] = str(i)
        s += len(d[i % 1000]) * i
    return s


t = time.time()
while time.time() - t < 3:
    work(100000)
