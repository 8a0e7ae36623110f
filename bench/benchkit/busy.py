# SPDX-License-Identifier: GPL-2.0
"""Busy machine (`make bench-busy`): `collector -a -F 499 -d N -v` while the
build loop (benchkit/buildloop.py) rebuilds this project, beside `perf
record -a -g -F 499` for as long: how many user stacks end before a
thread's start (truncated), what the collector and its BPF programs cost,
the unwind tables it built, and the cache figures the summary gives."""
import os
import re
import shutil
import subprocess
import tempfile
import time

from benchkit.buildloop import BuildLoop
from benchkit.common import (COLLECTOR, RUNS, bpf_stats_enabled, fmt, fmt_spread, log, median,
                             table)
from benchkit.measure import collector_summary
from benchkit.wholecost import BpfWatch, wait_cost

SECONDS = int(os.environ.get("BENCH_BUSY_SECONDS", "8"))


def busy_summary(text):
    """The figures of collector's -v summary a busy run is judged by."""
    out = {}
    m = re.search(r"truncated stacks\s+([\d.]+)% \((\d+) of (\d+)", text)
    if m:
        out["truncated_pct"] = float(m.group(1))
        out["truncated"], out["user_stacks"] = int(m.group(2)), int(m.group(3))
    m = re.search(r"(\d+) samples before their image's table", text)
    if m:
        out["before_tables"] = int(m.group(1))
    m = re.search(r"(\d+) mappings found in the kernel's VMAs", text)
    if m:
        out["learned"] = int(m.group(1))
    m = re.search(r"unwind tables: (\d+) images, (\d+) rows .*?built and loaded in ([\d.]+) ms",
                  text)
    if m:
        out["images"], out["rows"] = int(m.group(1)), int(m.group(2))
        out["build_ms"] = float(m.group(3))
    m = re.search(r"unwind tables evicted: (\d+) images, (\d+) rows", text)
    if m:
        out["evicted_images"], out["evicted_rows"] = int(m.group(1)), int(m.group(2))
    m = re.search(r"profiler CPU\s+([\d.]+) s: ([\d.]+) s own, ([\d.]+) s BPF", text)
    if m:
        out["own_s"], out["summary_bpf_s"] = float(m.group(2)), float(m.group(3))
    out.update(collector_summary(text))
    m = re.search(r"^\s*processes\s+(\d+)", text, re.M)
    if m:
        out["processes"] = int(m.group(1))
    # whatever the summary says about caches (a table cache, a symbol
    # cache): printed as it is
    out["cache"] = "; ".join(sorted({l.strip() for l in text.splitlines()
                                     if re.search(r"\bcache", l, re.I)
                                     and not l.startswith("libbpf")}))
    return out


def _run(argv, tmp, name, secs):
    err = open(os.path.join(tmp, name + ".err"), "w+")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, text=True)
    p.t0 = time.monotonic()
    watch = BpfWatch(p.pid)
    res = wait_cost(p, watch, timeout=secs + 600)
    err.seek(0)
    res["text"] = err.read()
    err.close()
    return res


def busy():
    old_stats = bpf_stats_enabled(True)
    tmp = tempfile.mkdtemp(prefix="bench-busy-")
    col, perf = [], []
    try:
        with BuildLoop() as loop:
            loop.warm_up()
            for r in range(RUNS):
                log(f"bench: busy, run {r + 1}/{RUNS}: collector -a -F 499 -d {SECONDS}")
                res = _run([COLLECTOR, "-a", "-F", "499", "-d", str(SECONDS), "-v", "-o",
                            os.path.join(tmp, "out")], tmp, "collector", SECONDS)
                res.update(busy_summary(res["text"]))
                if res.get("truncated_pct") is None:
                    log(f"bench: collector said: {res['text'][-600:]}")
                col.append(res)
                shutil.rmtree(os.path.join(tmp, "out"), ignore_errors=True)
                log(f"bench: busy, run {r + 1}/{RUNS}: perf record -a -g -F 499 -- sleep {SECONDS}")
                res = _run(["perf", "record", "-a", "-g", "-F", "499", "-o",
                            os.path.join(tmp, "perf.data"), "--", "sleep", str(SECONDS)],
                           tmp, "perf", SECONDS)
                m = re.search(r"\((\d+) samples\)", res["text"])
                res["samples"] = int(m.group(1)) if m else None
                perf.append(res)
                try:
                    os.unlink(os.path.join(tmp, "perf.data"))
                except OSError:
                    pass
    finally:
        bpf_stats_enabled(old_stats == "1")
        shutil.rmtree(tmp, ignore_errors=True)

    def core_pct(x):
        return 100 * (x["cpu_s"] + x["bpf_s"]) / SECONDS

    rows = [
        ["collector -a -F 499", fmt_spread([x.get("truncated_pct") for x in col], 1),
         fmt(median([x.get("before_tables") for x in col]), 0) + " (mappings found in the VMAs: "
         + fmt(median([x.get("learned") for x in col]), 0) + ")",
         fmt_spread([x.get("own_s") for x in col], 2),
         fmt_spread([x["cpu_s"] for x in col], 2),
         fmt_spread([x["bpf_s"] for x in col], 3),
         fmt_spread([core_pct(x) for x in col], 1),
         fmt(median([x["rss_mib"] for x in col]), 0),
         fmt(median([x.get("samples") for x in col]), 0),
         fmt(median([x.get("lost") for x in col]), 0),
         f"{fmt(median([x.get('images') for x in col]), 0)} images, "
         f"{fmt(median([x.get('rows') for x in col]), 0)} rows, "
         f"{fmt(median([x.get('build_ms') for x in col]), 0)} ms; evicted "
         f"{fmt(median([x.get('evicted_images') for x in col]), 0)}"],
        ["perf record -a -g -F 499", "—", "—", "—",
         fmt_spread([x["cpu_s"] for x in perf], 2), "—",
         fmt_spread([core_pct(x) for x in perf], 1),
         fmt(median([x["rss_mib"] for x in perf]), 0),
         fmt(median([x.get("samples") for x in perf]), 0), "—", "—"],
    ]
    table(f"Busy machine: {SECONDS} s system-wide at 499 Hz while `make -j2 collector` rebuilds "
          f"a clone of this project in a loop ({RUNS} runs, median [min–max])",
          ["profiler", "truncated user stacks %", "samples before their image's table",
           "collector CPU in the run s", "CPU start to exit s", "BPF s",
           "CPU + BPF, % of a core", "peak RSS MiB", "samples", "lost", "unwind tables"], rows,
          "Truncated: user stacks that end before a thread's start (the summary's figure). "
          "CPU in the run: the summary's own figure over the window; start to exit: rusage, "
          "loading and writing every format included; BPF: run_time_ns of the programs "
          "(perf has none: its stack walks run in the kernel's handler and show nowhere). "
          "Cache: " + ("; ".join(sorted({x["cache"] for x in col if x.get("cache")})) or
                       "the summary prints no cache figures"))
