# SPDX-License-Identifier: GPL-2.0
"""Continuous (`make bench-continuous`): `collector -a -F 99 --interval 10
-f pprof` for BENCH_SECONDS (1800, the half hour a fleet agent is judged
over; a short value for a quick look) while the build loop
(benchkit/buildloop.py) rebuilds this project, and beside it, at the same
time, `perf record -a -g -F 99 --switch-output=10s` (perf's way of cutting
a long run into files).  Printed: the collector's CPU and its BPF
programs' run time as a share of one core, its RSS at every interval's
end and its peak, perf's CPU and RSS, and whether every interval's
profile.pb.gz reads with `go tool pprof -top`."""
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time

from benchkit.buildloop import BuildLoop
from benchkit.common import (COLLECTOR, NCPUS, bpf_stats_enabled, fmt, log, perf_fds, stop,
                             table, tool_cpu_ns, wait_until)
from benchkit.measure import collector_summary
from benchkit.soak import proc_status_kb
from benchkit.wholecost import bpf_run_ns

SECONDS = int(os.environ.get("BENCH_SECONDS", "1800"))
INTERVAL = 10
MAX_ROWS = 40
# more collector options, to compare (--call-graph fp: without the unwind tables)
EXTRA = os.environ.get("BENCH_COLLECTOR_ARGS", "").split()


def _pprof_top(path):
    """(readable, first line of the top table or the error)."""
    p = subprocess.run(["go", "tool", "pprof", "-top", "-nodecount=3", path],
                       capture_output=True, text=True, timeout=120)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0:
        return False, (p.stderr.strip().splitlines() or ["?"])[-1]
    return True, next((l.strip() for l in lines if "samples" in l or "Showing" in l), "")


def continuous():
    tmp = tempfile.mkdtemp(prefix="bench-continuous-")
    out = os.path.join(tmp, "collector")
    cargv = [COLLECTOR, "-a", "-F", "99", "--interval", str(INTERVAL), "-f", "pprof",
             "-d", str(SECONDS), "-o", out] + EXTRA
    pargv = ["perf", "record", "-a", "-F", "99", "-g", f"--switch-output={INTERVAL}s", "-q",
             "-o", os.path.join(tmp, "perf.data")]
    old_stats = bpf_stats_enabled(True)
    rows, s, files = [], {}, []
    c = p = None
    try:
        with BuildLoop() as loop:
            loop.warm_up()
            log(f"bench: continuous: {' '.join(cargv)} ({SECONDS} s), beside {' '.join(pargv)}")
            c = subprocess.Popen(cargv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
            p = subprocess.Popen(pargv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_until(lambda: c.poll() is not None or perf_fds(c.pid) >= NCPUS, 60,
                       "collector to open its perf events")
            t0 = time.monotonic()
            ccpu0, pcpu0, cbpf0 = tool_cpu_ns(c.pid), tool_cpu_ns(p.pid), bpf_run_ns(c.pid)
            last = (t0, ccpu0, cbpf0)
            seen = 0
            while c.poll() is None:
                time.sleep(0.5)
                n = len(glob.glob(os.path.join(out, "*Z")))
                if n == seen:
                    continue
                seen = n
                # an interval was just written: the collector's state after its cut
                now, ccpu, cbpf = time.monotonic(), tool_cpu_ns(c.pid), bpf_run_ns(c.pid)
                rss, anon = proc_status_kb(c.pid, "VmRSS"), proc_status_kb(c.pid, "RssAnon")
                hwm = proc_status_kb(c.pid, "VmHWM")
                # gone, or going (its programs closed): no reading
                if rss is None or c.poll() is not None or ccpu < last[1] or cbpf < last[2]:
                    break
                share = 100 * ((ccpu - last[1]) + (cbpf - last[2])) / 1e9 / (now - last[0])
                prss = proc_status_kb(p.pid, "VmRSS")
                rows.append([n, f"{now - t0:.0f}", fmt(rss / 1024, 1), fmt(anon / 1024, 1),
                             fmt(hwm / 1024, 1), fmt(share, 2),
                             fmt((ccpu - ccpu0) / 1e9, 2), fmt((cbpf - cbpf0) / 1e9, 3),
                             fmt(prss / 1024 if prss else None, 1),
                             fmt((tool_cpu_ns(p.pid) - pcpu0) / 1e9, 2)])
                last = (now, ccpu, cbpf)
                log(f"bench: continuous: interval {n} at {now - t0:.0f} s: RSS {rss} kB, "
                    f"peak {hwm} kB, {share:.2f}% of a core")
            end = time.monotonic()
            _, err = c.communicate(timeout=600)
            s = collector_summary(err)
            s["peak"] = max((float(r[4].replace(",", "")) for r in rows), default=None)
            s["cpu"] = float(rows[-1][6]) if rows else None
            s["bpf"] = float(rows[-1][7]) if rows else None
            s["secs"] = (float(rows[-1][1]) if rows else end - t0)
            pcpu = float(rows[-1][9]) if rows else None
            stop(p, signal.SIGINT, 120)
            files = sorted(glob.glob(os.path.join(out, "*Z", "profile.pb.gz")))
            checks = [_pprof_top(f) for f in files]
    finally:
        bpf_stats_enabled(old_stats == "1")
        for proc in (c, p):
            if proc is not None and proc.poll() is None:
                stop(proc, signal.SIGKILL, 10)
        shutil.rmtree(tmp, ignore_errors=True)
    readable = sum(1 for ok, _ in checks if ok)
    bad = [m for ok, m in checks if not ok]
    shown = rows if len(rows) <= MAX_ROWS else \
        rows[::max(1, len(rows) // MAX_ROWS)] + [rows[-1]]
    share = 100 * (s["cpu"] + s["bpf"]) / s["secs"] if s.get("cpu") is not None else None
    table(f"Continuous: `collector -a -F 99 --interval {INTERVAL} -f pprof{' ' if EXTRA else ''}"
          f"{' '.join(EXTRA)}` for {SECONDS} s "
          f"under the build loop, beside `perf record -a -g -F 99 --switch-output={INTERVAL}s`",
          ["interval", "s", "collector RSS MiB", "of which anonymous", "peak RSS MiB",
           "CPU + BPF this interval, % of a core", "collector CPU s (cumulative)",
           "BPF s (cumulative)", "perf RSS MiB", "perf CPU s (cumulative)"], shown,
          f"Collector CPU + BPF over the run: {fmt(share, 2)}% of one core "
          f"({fmt(s.get('cpu'), 2)} s CPU + {fmt(s.get('bpf'), 3)} s BPF in "
          f"{fmt(s.get('secs'), 0)} s); perf: {fmt(100 * pcpu / s['secs'] if pcpu else None, 2)}%. "
          f"Peak RSS {fmt(s.get('peak'), 1)} MiB. Samples {fmt(s.get('samples'), 0)}, lost "
          f"{fmt(s.get('lost'), 0)}. `go tool pprof -top` read {readable} of {len(files)} "
          f"interval profiles" + (f"; failures: {'; '.join(bad[:3])}" if bad else "") +
          ". Both run at once, so each also samples the other; RSS is read just after "
          "each interval's files are written.")
