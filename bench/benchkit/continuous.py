# SPDX-License-Identifier: GPL-2.0
"""Continuous: `collector -a -F 99 --interval 60` for CONTINUOUS_MINUTES
(default 30), RSS minute by minute, beside `perf record -a -F 99 -g
--switch-output=60s` (perf's own way of cutting a long run into files)
running at the same time."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from benchkit.common import (COLLECTOR, NCPUS, fmt, log, perf_fds, stop, table, tool_cpu_ns,
                             wait_until)
from benchkit.measure import collector_summary
from benchkit.soak import proc_status_kb

MINUTES = int(os.environ.get("BENCH_CONTINUOUS_MINUTES", "30"))


def continuous():
    tmp = tempfile.mkdtemp(prefix="bench-continuous-")
    secs = MINUTES * 60
    cargv = [COLLECTOR, "-a", "-F", "99", "--interval", "60", "-f", "pprof",
             "-d", str(secs + 5), "-o", os.path.join(tmp, "collector")]
    pargv = ["perf", "record", "-a", "-F", "99", "-g", "--switch-output=60s", "-q",
             "-o", os.path.join(tmp, "perf.data")]
    log(f"bench: continuous: {' '.join(cargv)} ({MINUTES} min), beside {' '.join(pargv)}")
    c = subprocess.Popen(cargv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p = subprocess.Popen(pargv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = []
    try:
        wait_until(lambda: c.poll() is not None or perf_fds(c.pid) >= NCPUS, 60,
                   "collector to open its perf events")
        time.sleep(1)
        t0 = time.monotonic()
        ccpu0, pcpu0 = tool_cpu_ns(c.pid), tool_cpu_ns(p.pid)
        for minute in range(MINUTES + 1):
            while time.monotonic() < t0 + minute * 60 and c.poll() is None:
                time.sleep(0.5)
            if c.poll() is not None:
                break
            crss, canon = proc_status_kb(c.pid, "VmRSS"), proc_status_kb(c.pid, "RssAnon")
            prss = proc_status_kb(p.pid, "VmRSS")
            rows.append([minute, fmt(crss / 1024 if crss else None, 1),
                         fmt(canon / 1024 if canon else None, 1),
                         fmt((tool_cpu_ns(c.pid) - ccpu0) / 1e9, 2),
                         fmt(prss / 1024 if prss else None, 1),
                         fmt((tool_cpu_ns(p.pid) - pcpu0) / 1e9, 2)])
            log(f"bench: continuous minute {minute}: collector RSS {crss} kB, perf {prss} kB")
        out, err = c.communicate(timeout=600)
        s = collector_summary(out + err)
        sets = len([d for d in os.listdir(os.path.join(tmp, "collector")) if d.endswith("Z")])
    finally:
        if c.poll() is None:
            stop(c, signal.SIGKILL, 10)
        stop(p, signal.SIGINT, 120)
        shutil.rmtree(tmp, ignore_errors=True)
    table(f"Continuous: `{' '.join(cargv[1:11])}` for {MINUTES} minutes ({sets} sets of files, "
          f"lost {fmt(s.get('lost'), 0)}), beside `perf record -a -F 99 -g --switch-output=60s`",
          ["minute", "collector RSS MiB", "of which anonymous", "collector CPU s",
           "perf RSS MiB", "perf CPU s"], rows,
          "Both run at once, so each also samples the other. CPU is cumulative from minute 0.")
