# SPDX-License-Identifier: GPL-2.0
"""High rate: a command that needs about 1 ms of CPU (`true`) profiled at
-F 10 000, 50 000 and 100 000 (the kernel's usual top,
kernel.perf_event_max_sample_rate), beside `perf record -F` on the same
command: how long the command takes under each, and how many samples each
took.  Every run has a hard limit (timeout -s KILL), since a sampler that
costs more than the period leaves the target hardly running."""
import os
import re
import shutil
import subprocess
import tempfile
import time

from benchkit.common import COLLECTOR, RUNS, fmt_spread, log, table
from benchkit.measure import collector_summary

RATES = [10000, 50000, 100000]
LIMIT_S = 120
SKIPPED = "samples skipped (sampler over its CPU share)"


def timed(argv):
    t0 = time.monotonic()
    p = subprocess.run(["timeout", "-s", "KILL", str(LIMIT_S)] + argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return time.monotonic() - t0, p


def perf_run(hz, tmp, graph=False):
    data = os.path.join(tmp, "perf.data")
    wall, p = timed(["perf", "record", "-q", "-F", str(hz), "-o", data] + (["-g"] if graph else [])
                    + ["--", "true"])
    if p.returncode != 0:
        return wall, None, None
    # one line per sample: with -g, "ip" would print every frame of the chain
    s = subprocess.run(["perf", "script", "-i", data, "-F", "tid"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return wall, len(s.stdout.splitlines()), None


def collector_run(hz, tmp):
    out = os.path.join(tmp, "collector")
    shutil.rmtree(out, ignore_errors=True)
    wall, p = timed([COLLECTOR, "-F", str(hz), "-f", "folded", "-o", out, "--", "true"])
    if p.returncode != 0:
        return wall, None, None
    s = collector_summary(p.stderr)
    m = re.search(r"sampler: (\d+) runs, ([\d.]+) us each", p.stderr)
    k = re.search(re.escape(SKIPPED) + r"\s+(\d+)", p.stderr)
    return wall, s.get("samples"), (int(k.group(1)) if k else 0,
                                    float(m.group(2)) if m else None)


def high_rate():
    tmp = tempfile.mkdtemp(prefix="bench-high-rate-")
    rows = []
    try:
        for hz in RATES:
            res = {"perf": [], "perf -g": [], "collector": []}
            for i in range(RUNS):
                log(f"bench: high rate: -F {hz} -- true, run {i + 1}/{RUNS}")
                res["perf"].append(perf_run(hz, tmp))
                res["perf -g"].append(perf_run(hz, tmp, True))
                res["collector"].append(collector_run(hz, tmp))
            for tool, runs in res.items():
                skipped = [r[2][0] for r in runs if r[2]]
                cost = [r[2][1] for r in runs if r[2] and r[2][1] is not None]
                rows.append([hz, tool, fmt_spread([r[0] for r in runs], 2),
                             fmt_spread([r[1] for r in runs], 0),
                             fmt_spread(skipped, 0) if skipped else "—",
                             fmt_spread(cost, 1) if cost else "—"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    table(f"High rate: `-F HZ -- true` ({RUNS} runs; median [min–max])",
          ["-F", "tool", "wall s", "samples", "skipped (CPU share)", "BPF us per run"], rows,
          "`true` alone takes about 1 ms. The collector takes the kernel and user call "
          "stacks of every sample, as `perf -g` does (plain `perf` takes none). Its sampler "
          "keeps to kernel.perf_cpu_time_max_percent of a CPU (the share the kernel allows "
          "perf's handlers) and counts the samples it skips. The wall time includes each "
          "tool's start and its files.")
