# SPDX-License-Identifier: GPL-2.0
"""Shared by the bench's sections: settings from the environment, number
formatting, Markdown tables, and what a tool costs (its CPU time, its BPF
programs' run time)."""
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BENCH_BUILD", "build/bench"))
# BENCH_COLLECTOR: another build to measure (a revision to compare with)
COLLECTOR = os.environ.get("BENCH_COLLECTOR") or os.path.join(ROOT, "collector")
RUNS = max(1, int(os.environ.get("BENCH_RUNS", "3")))
SIZES = [int(s) for s in os.environ.get("BENCH_SIZES", "1000000 10000000").split()]
CALLS = int(os.environ.get("BENCH_CALLS", "1000000"))
ITERS = int(os.environ.get("BENCH_ITERS", "800000000"))
SOAK_MINUTES = int(os.environ.get("BENCH_SOAK_MINUTES", "10"))
NCPUS = os.cpu_count() or 1


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def bin_(name):
    return os.path.join(BUILD, name)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


def fmt(x, digits=2):
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    if abs(x) >= 1000 or digits == 0:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def fmt_spread(xs, digits=2):
    lo, hi = spread(xs)
    if lo is None:
        return "—"
    return f"{fmt(median(xs), digits)} [{fmt(lo, digits)}–{fmt(hi, digits)}]"


def table(title, header, rows, note=None):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" for _ in header) + " |")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    if note:
        print(f"\n{note}")
    sys.stdout.flush()



# ---------------------------------------------------------------------------
# What a tool costs: its own CPU (every thread's sum_exec_runtime, in ns, from
# /proc/PID/task/*/schedstat) and the run time of the BPF programs it holds
# (bpf_stats; programs found through the tool's bpf-prog and bpf_link fds).

def tool_cpu_ns(pid):
    total = 0
    for st in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(st) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def tool_prog_ids(pid):
    ids = set()
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if "bpf-prog" not in target and "bpf_link" not in target:
            continue
        try:
            with open(f"/proc/{pid}/fdinfo/{os.path.basename(fd)}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except (OSError, ValueError):
            pass
    return ids


def bpf_stats(ids):
    """(run_time_ns, run_cnt, {type: run_cnt}) summed over programs `ids`."""
    if not ids:
        return 0, 0, {}
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    try:
        progs = json.loads(out.stdout)
    except json.JSONDecodeError:
        return 0, 0, {}
    t = n = 0
    by_type = {}
    for p in progs:
        if p.get("id") in ids:
            t += p.get("run_time_ns", 0)
            n += p.get("run_cnt", 0)
            by_type[p.get("type")] = by_type.get(p.get("type"), 0) + p.get("run_cnt", 0)
            # run time and count by program name, under keys no type takes
            key = "ns:" + str(p.get("name"))
            by_type[key] = by_type.get(key, 0) + p.get("run_time_ns", 0)
            key = "cnt:" + str(p.get("name"))
            by_type[key] = by_type.get(key, 0) + p.get("run_cnt", 0)
    return t, n, by_type


class Snapshot:
    def __init__(self, pid, ids):
        self.wall = time.monotonic()
        self.cpu = tool_cpu_ns(pid) if pid else 0
        self.bpf_ns, self.bpf_cnt, self.by_type = bpf_stats(ids)


def bpf_stats_enabled(on):
    path = "/proc/sys/kernel/bpf_stats_enabled"
    with open(path) as f:
        old = f.read().strip()
    with open(path, "w") as f:
        f.write("1" if on else "0")
    return old


def read_int(path):
    with open(path) as f:
        return int(f.read().strip())


def write_str(path, s):
    with open(path, "w") as f:
        f.write(s)


def wait_until(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    log(f"bench: timed out waiting for {what}")
    return False


def stop(proc, sig=signal.SIGINT, timeout=120):
    """Stops a tool and returns (stdout, stderr)."""
    if proc.poll() is None:
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            pass
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return out or "", err or ""


def parse_kv(line):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def perf_fds(pid):
    n = 0
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            if "perf_event" in os.readlink(fd):
                n += 1
        except OSError:
            pass
    return n

