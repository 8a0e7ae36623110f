# A 0.3 s script (thread CPU time): its samples must be named as fully as
# a long one's, though its code objects die with it.
import time


def brief_work():
    s = 0
    end = time.thread_time() + 0.3
    while time.thread_time() < end:
        for i in range(1000):
            s += i * i
    return s


brief_work()
