# SPDX-License-Identifier: GPL-2.0
"""What a tool costs from its start to its exit: its CPU (user + system,
from wait4's rusage: every thread, loading, symbolizing and writing files
included) and the run time of its BPF programs (run_time_ns in the fdinfo
of the program fds it holds, read every POLL_S while it runs: the last
reading before it exits; kernel.bpf_stats_enabled must be on).  Its peak
RSS too (ru_maxrss)."""
import glob
import os
import threading
import time

POLL_S = 0.1


def bpf_run_ns(pid):
    """Sum of run_time_ns over the BPF programs pid holds (fdinfo)."""
    total = 0
    for fd in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(fd) as f:
                text = f.read()
        except OSError:
            continue
        if "prog_type:" not in text:
            continue
        for line in text.splitlines():
            if line.startswith("run_time_ns:"):
                total += int(line.split()[1])
    return total


class BpfWatch:
    """Follows the BPF run time of a process until it exits."""

    def __init__(self, pid):
        self.pid, self.ns, self._stop = pid, 0, False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop:
            ns = bpf_run_ns(self.pid)
            # programs close one by one at exit: keep the largest sum seen
            if ns > self.ns:
                self.ns = ns
            time.sleep(POLL_S)

    def stop(self):
        self._stop = True
        self._t.join()
        return self.ns


def wait_cost(proc, watch, timeout=None):
    """Waits for proc (a Popen) to exit; returns {cpu_s, bpf_s, rss_mib, wall_s}
    measured from its start (the caller sets proc.t0)."""
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if end is not None and time.monotonic() > end:
            proc.kill()
            pid, status, ru = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)
    bpf = watch.stop() if watch else 0
    return {"cpu_s": ru.ru_utime + ru.ru_stime, "user_s": ru.ru_utime, "sys_s": ru.ru_stime,
            "bpf_s": bpf / 1e9, "rss_mib": ru.ru_maxrss / 1024,
            "wall_s": time.monotonic() - proc.t0}
