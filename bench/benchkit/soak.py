# SPDX-License-Identifier: GPL-2.0
"""Soak: collector -a for SOAK_MINUTES, RSS every minute; and collector -p
on one steady process."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from benchkit.common import (COLLECTOR, NCPUS, SOAK_MINUTES, bin_, fmt, log, perf_fds, stop,
                             table, tool_cpu_ns, wait_until)
from benchkit.measure import collector_summary


def soak():
    tmp = tempfile.mkdtemp(prefix="bench-soak-")
    secs = SOAK_MINUTES * 60
    # a few seconds past the last minute's reading, so that it is taken
    # while the collector still runs
    argv = [COLLECTOR, "-a", "-d", str(secs + 5), "-o", os.path.join(tmp, "out")]
    soak_steady()
    log(f"bench: soak: {' '.join(argv)} ({SOAK_MINUTES} min)")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = []
    hwm_before_export = None
    # minute 0: once sampling is live, not at exec
    wait_until(lambda: p.poll() is not None or perf_fds(p.pid) >= NCPUS, 60,
               "collector to open its perf events")
    time.sleep(1)
    t0 = time.monotonic()
    cpu0 = tool_cpu_ns(p.pid)

    def status(key):
        return proc_status_kb(p.pid, key)

    for minute in range(SOAK_MINUTES + 1):
        while time.monotonic() < t0 + minute * 60 and p.poll() is None:
            time.sleep(0.5)
        if p.poll() is not None:
            break
        rss, anon, mapped = status("VmRSS"), status("RssAnon"), status("RssFile")
        hwm_before_export = status("VmHWM") or hwm_before_export
        cpu = tool_cpu_ns(p.pid)
        rows.append([minute, fmt(rss / 1024 if rss else None, 1),
                     fmt(anon / 1024 if anon else None, 1),
                     fmt(mapped / 1024 if mapped else None, 1),
                     fmt((cpu - cpu0) / 1e9, 2)])
        log(f"bench: soak minute {minute}: RSS {rss} kB")
    hwm_before_export = status("VmHWM") or hwm_before_export
    t1 = time.monotonic()
    out, err = p.communicate()
    s = collector_summary(out + err)
    shutil.rmtree(tmp, ignore_errors=True)
    table(f"Soak: `collector -a` for {SOAK_MINUTES} minutes, every format "
          f"(samples {fmt(s.get('samples'), 0)}, lost {fmt(s.get('lost'), 0)})",
          ["minute", "RSS MiB", "of which anonymous", "of which mapped files",
           "collector CPU s (cumulative)"], rows,
          f"Peak RSS at the end of collection: {fmt((hwm_before_export or 0) / 1024, 1)} MiB; "
          f"its last 5 s and writing every format took {time.monotonic() - t1:.1f} s. Lost by cause: "
          + (", ".join(f"{k} {v:,}" for k, v in s.get("lost_causes", {}).items()) or "none"))


def proc_status_kb(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def soak_steady():
    """collector -p on one steady process (deep: one stack, ~1000 samples
    and a few switches a second): what the collector keeps per event, apart
    from what grows with new processes and stacks."""
    secs = int(os.environ.get("BENCH_STEADY_SECONDS", "120"))
    step = max(1, secs // 6)
    tmp = tempfile.mkdtemp(prefix="bench-steady-")
    wl = subprocess.Popen([bin_("deep"), str(10 ** 13)], stdin=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, text=True)
    argv = [COLLECTOR, "-p", str(wl.pid), "-d", str(secs), "-o", os.path.join(tmp, "out")]
    log(f"bench: steady: {' '.join(argv)}")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = []
    try:
        wait_until(lambda: p.poll() is not None or perf_fds(p.pid) >= NCPUS, 60,
                   "collector to open its perf events")
        time.sleep(1)
        wl.stdin.write("g")
        wl.stdin.flush()
        t0 = time.monotonic()
        for k in range(secs // step):
            while time.monotonic() < t0 + k * step and p.poll() is None:
                time.sleep(0.2)
            if p.poll() is not None:
                break
            anon, mapped = proc_status_kb(p.pid, "RssAnon"), proc_status_kb(p.pid, "RssFile")
            rows.append([k * step, fmt(anon / 1024 if anon else None, 2),
                         fmt(mapped / 1024 if mapped else None, 2)])
        out, err = p.communicate(timeout=300)
        s = collector_summary(out + err)
    finally:
        wl.kill()
        wl.wait()
        if p.poll() is None:
            stop(p, signal.SIGKILL, 10)
        shutil.rmtree(tmp, ignore_errors=True)
    table(f"Steady: `collector -p` on `deep` for {secs} s (samples {fmt(s.get('samples'), 0)}, "
          f"lost {fmt(s.get('lost'), 0)})",
          ["second", "anonymous MiB", "mapped files MiB"], rows,
          "One process with one stack: every sample and switch is an event to keep, nothing "
          "else is new. Events spill to files in the output directory, so memory stays flat.")

