# SPDX-License-Identifier: GPL-2.0
"""Short runs (`make bench-short`): the whole cost, start to exit, of a 1 s
and a 10 s `collector -p PID` with the default formats beside bpftrace's
`profile:hz:999 /pid == PID/ { @[ustack] = count(); }` on the same running
`deep` (a CPU-bound loop under 43 frames) and on the same loop under 5
frames (`deep N 0`: main, run, level, spin), where bpftrace's own cost,
which grows with depth, is smallest.  What a short run costs is mostly
its fixed start and exit work (loading, reading symbols, writing), which
the sampling section's window leaves out.

BENCH_SHORT_BASE=PATH adds an older collector binary to each round, run
the same way, for a change's cost side by side on the host of the day."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from benchkit.common import (COLLECTOR, RUNS, bin_, bpf_stats_enabled, fmt, fmt_spread, log,
                             median, table)
from benchkit.wholecost import BpfWatch, wait_cost

SECONDS = [int(s) for s in os.environ.get("BENCH_SHORT_SECONDS", "1 10").split()]
# (label, depth argument of deep)
WORKLOADS = [("deep", 40), ("5 frames", 0)]
BASE = os.environ.get("BENCH_SHORT_BASE", "")
TOOLS = ["collector"] + (["base"] if BASE else []) + ["bpftrace"]


def _collector(pid, secs, tmp, binary=COLLECTOR):
    return [binary, "-p", str(pid), "-F", "999", "-d", str(secs), "-o",
            os.path.join(tmp, "out")]


def _bpftrace(pid):
    return ["bpftrace", "-e", f"profile:hz:999 /pid == {pid}/ {{ @[ustack] = count(); }}"]


def _run(name, argv, secs, tmp):
    out = open(os.path.join(tmp, name + ".out"), "w+")
    err = open(os.path.join(tmp, name + ".err"), "w+")
    p = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
    p.t0 = time.monotonic()
    watch = BpfWatch(p.pid)
    if name == "bpftrace":
        # it runs until told to stop: N s from its "Attaching" line
        end = time.monotonic() + 120
        while time.monotonic() < end and p.poll() is None:
            out.seek(0)
            if "Attaching" in out.read():
                break
            time.sleep(0.02)
        time.sleep(secs)
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    res = wait_cost(p, watch, timeout=secs + 300)
    out.seek(0)
    err.seek(0)
    text = out.read() + err.read()
    out.close()
    err.close()
    if name == "bpftrace":
        import re
        res["samples"] = sum(int(x) for x in re.findall(r"\]:\s+(\d+)\s*$", text, re.M))
    else:
        import re
        m = re.search(r"^\s*samples\s+(\d+)", text, re.M)
        res["samples"] = int(m.group(1)) if m else None
        if p.returncode != 0:
            log(f"bench: collector exited {p.returncode}: {text[-400:]}")
    return res


def _workload_runs(depth, tmp):
    wl = subprocess.Popen([bin_("deep"), str(10 ** 14), str(depth)], stdin=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, text=True)
    wl.stdin.write("g")
    wl.stdin.flush()
    results = {}
    try:
        for secs in SECONDS:
            for r in range(RUNS):
                argvs = {"collector": _collector(wl.pid, secs, tmp),
                         "base": _collector(wl.pid, secs, tmp, BASE),
                         "bpftrace": _bpftrace(wl.pid)}
                for name in TOOLS:
                    argv = argvs[name]
                    log(f"bench: short runs, depth {depth}, {secs} s, run {r + 1}/{RUNS}: {name}")
                    res = _run(name, argv, secs, tmp)
                    results.setdefault((secs, name), []).append(res)
                    shutil.rmtree(os.path.join(tmp, "out"), ignore_errors=True)
                bt = results[(secs, "bpftrace")][-1]
                for name in TOOLS[:-1]:
                    col = results[(secs, name)][-1]
                    col["ratio"] = (col["cpu_s"] + col["bpf_s"]) / (bt["cpu_s"] + bt["bpf_s"])
    finally:
        wl.kill()
        wl.wait()
    return results


def short_runs():
    old_stats = bpf_stats_enabled(True)
    tmp = tempfile.mkdtemp(prefix="bench-short-")
    by_workload = {}
    try:
        for label, depth in WORKLOADS:
            by_workload[label] = _workload_runs(depth, tmp)
    finally:
        bpf_stats_enabled(old_stats == "1")
        shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for label, _ in WORKLOADS:
        results = by_workload[label]
        for secs in SECONDS:
            for name in TOOLS:
                rs = results[(secs, name)]
                rows.append([label, f"{secs} s", name,
                             fmt_spread([(x["cpu_s"] + x["bpf_s"]) * 1e3 for x in rs], 0),
                             fmt_spread([x["user_s"] * 1e3 for x in rs], 0),
                             fmt_spread([x["sys_s"] * 1e3 for x in rs], 0),
                             fmt_spread([x["bpf_s"] * 1e3 for x in rs], 1),
                             fmt_spread([x["wall_s"] for x in rs], 2),
                             fmt(median([x["rss_mib"] for x in rs]), 1),
                             fmt(median([x["samples"] for x in rs]), 0),
                             fmt_spread([x.get("ratio") for x in rs], 2) if name != "bpftrace"
                             else "1"])
    table(f"Short runs: whole cost of `collector -p PID -F 999 -d N` (default formats) and "
          f"`bpftrace -e 'profile:hz:999 /pid == PID/ {{ @[ustack] = count(); }}'` "
          f"(SIGINT N s after it attached) on `deep` (43 frames) and `deep N 0` (5 frames) "
          f"({RUNS} runs, median [min–max])",
          ["workload", "run", "tool", "CPU + BPF ms", "user ms", "system ms", "BPF ms", "wall s",
           "peak RSS MiB", "samples", "÷ bpftrace (same round)"], rows,
          "CPU is the tool's whole rusage, start to exit (loading, symbols, writing every file); "
          "BPF the run time of its programs (fdinfo run_time_ns, bpf_stats_enabled on)." +
          (f" base: {BASE}." if BASE else ""))
