# SPDX-License-Identifier: GPL-2.0
"""Section 2: tracing, cost per call and attach time."""
import os
import shutil
import subprocess
import tempfile
import threading
import time

from benchkit.common import (CALLS, COLLECTOR, RUNS, bin_, bpf_stats_enabled, fmt, fmt_spread,
                             log, median, parse_kv, table)
from benchkit.measure import (Bpftrace, Collector, Tool, UprobeFloor, Uftrace,
                              collector_summary, measure)


def tracing():
    old_stats = bpf_stats_enabled(True)
    hot, hot_pg = bin_("hot"), bin_("hot-pg")
    fn = "bench_traced"
    try:
        tools = [
            (Tool(), [hot]),
            (UprobeFloor(hot, fn), [hot]),
            (Collector("collector, aggregate (-f dcpi)", ["-q", "--trace", f"{hot}:{fn}",
                                                           "-f", "dcpi"]), [hot]),
            (Collector("collector, full trace (-f xray)", ["--trace", f"{hot}:{fn}",
                                                            "-f", "xray"]), [hot]),
            (Bpftrace("bpftrace uprobe+uretprobe count",
                      f"uprobe:{hot}:{fn} /pid == PID/ {{ @entry = count(); }} "
                      f"uretprobe:{hot}:{fn} /pid == PID/ {{ @exit = count(); }}",
                      ["kprobe"], n_probes=2), [hot]),
        ]
        nopg = Tool()
        nopg.name = "none (-pg build)"
        tools.append((nopg, [hot_pg]))
        if shutil.which("uftrace"):
            tools.append((Uftrace(), [hot_pg]))
        results = {t.name: [] for t, _ in tools}
        for r in range(RUNS):
            for t, wl in tools:
                log(f"bench: tracing, run {r + 1}/{RUNS}: {t.name}")
                try:
                    res = measure(t, wl + [str(CALLS)])
                except Exception as e:
                    log(f"bench: {t.name}: {e}")
                    results[t.name].append(None)
                    continue
                res["ns_per_call"] = res["cpu_ns"] / res["calls"]
                res["wall_ns_per_call"] = res["wall_ns"] / res["calls"]
                results[t.name].append(res)
            floor = results[tools[1][0].name][-1]
            for t, _ in tools:
                res = results[t.name][-1]
                if res and floor and floor["ns_per_call"] > 0:
                    res["floor_ratio"] = res["ns_per_call"] / floor["ns_per_call"]
        rows = []
        for t, _ in tools:
            rs = [r for r in results[t.name] if r]
            if not rs:
                rows.append([t.name, "failed"] + [""] * 6)
                continue
            events = [2 * r["calls"] for r in rs]
            rate = [2 * r["calls"] / (r["wall_ns"] / 1e9) for r in rs]
            rows.append([
                t.name,
                fmt_spread([r["ns_per_call"] for r in rs], 0),
                fmt_spread([r["wall_ns_per_call"] for r in rs], 0),
                fmt(median([r.get("floor_ratio") for r in rs]), 2),
                fmt(median([r["bpf_ns"] / r["calls"] for r in rs]), 0) if t.bpf else "—",
                fmt(median([r["tool_cpu_ns"] / 1e6 for r in rs]), 1)
                if t.name.startswith(("collector", "bpftrace", "uftrace", "floor")) else "—",
                fmt(median(rate), 0) if t.name.startswith(("collector, full", "uftrace"))
                else "—",
                fmt(median([_trace_lost(r) for r in rs]), 0) if "lost" in rs[0] else "—",
            ])
        table(f"Tracing: {CALLS:,} calls of a traced function (push %rbp first), "
              f"median of {RUNS} runs [min–max]",
              ["tracer", "ns per call (target CPU)", "ns per call (wall)",
               "ratio to floor", "BPF ns per call", "tool CPU ms",
               "events/s produced (entry+exit)", "lost"],
              rows,
              "collector's runs sample at 999 Hz as well (it always samples its targets). "
              "Lost: trace records lost (for collector, its \"ring buffer full (traced "
              "entries/exits)\" counts). " + _trace_prog_note(results))
        attach_times()
    finally:
        bpf_stats_enabled(old_stats == "1")


def _trace_prog_note(results):
    notes = []
    for name, rs in results.items():
        if not name.startswith("collector"):
            continue
        by_prog = {}
        for r in (r for r in rs if r):
            for k, v in r["bpf_by_type"].items():
                if k.startswith("ns:trace_e"):
                    by_prog.setdefault(k[3:], []).append(v / r["calls"])
        if by_prog:
            notes.append(f"{name}: " + ", ".join(
                f"{k} {fmt(median(v), 0)} ns" for k, v in sorted(by_prog.items())))
    return ("BPF ns per call by program: " + "; ".join(notes) + ".") if notes else ""


def _trace_lost(res):
    causes = res.get("lost_causes")
    if causes is None:
        return res.get("lost")
    return sum(v for k, v in causes.items() if "traced" in k or "nested" in k or
               "map full" in k)


BPFTRACE_MAX_FUNCS = int(os.environ.get("BENCH_BPFTRACE_MAX_FUNCS", "100"))


def bpftrace_attach_time(funcs, pat, n, timeout=120):
    """Seconds from starting bpftrace to the command's first instruction.
    bpftrace is killed as soon as the command has started: on this kernel
    its own detach goes through tracefs, which is not mounted, and takes
    minutes for a thousand probes (the kernel drops the probes at exit)."""
    prog = f"uprobe:{funcs}:{pat} {{ @e = count(); }} uretprobe:{funcs}:{pat} {{ @r = count(); }}"
    # bpftrace refuses more than 512 probes unless told
    env = dict(os.environ, BPFTRACE_MAX_PROBES="25000")
    t0 = time.monotonic_ns()
    p = subprocess.Popen(["bpftrace", "-e", prog, "-c", funcs], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    result = float("inf")
    try:
        for line in p.stdout:
            kv = parse_kv(line)
            if "start_ns" in kv:
                result = (kv["start_ns"] - t0) / 1e9
                break
    finally:
        timer.cancel()
        p.kill()
        _, err = p.communicate()
    if result == float("inf"):
        errs = [ln for ln in err.splitlines() if "ERROR" in ln]
        log(f"bench: bpftrace on {n} functions: {(errs or ['no start'])[-1][:200]}")
        return None if errs else result
    return result


def attach_times():
    funcs = bin_("funcs10k")
    # bpftrace globs know only '*'
    patterns = [(1, "f_0000"), (100, "f_00*"), (1000, "f_0*"), (10000, "f_*")]
    rows = []
    for n, pat in patterns:
        col, col_own, bt = [], [], []
        reps = RUNS if n < 10000 else 1  # tens of seconds each: once
        for r in range(reps):
            log(f"bench: attach {n} functions, run {r + 1}/{reps}")
            tmp = tempfile.mkdtemp(prefix="bench-")
            try:
                t0 = time.monotonic_ns()
                p = subprocess.run([COLLECTOR, "--trace", f"{funcs}:{pat}", "-f", "dcpi",
                                    "-o", os.path.join(tmp, "out"), "--", funcs],
                                   capture_output=True, text=True, timeout=300)
                kv = parse_kv(p.stdout)
                s = collector_summary(p.stdout + p.stderr)
                if "start_ns" in kv:
                    col.append((kv["start_ns"] - t0) / 1e9)
                col_own.append(s.get("attach_s"))
                if True:
                    t0 = time.monotonic_ns()
                    prog = (f"uprobe:{funcs}:{pat} {{ @e = count(); }} "
                            f"uretprobe:{funcs}:{pat} {{ @r = count(); }}")
                    # bpftrace's uprobes take ~0.1 s each to tear down (3.5 min
                    # for 1 000 functions): 100 at most, once, unless asked
                    if n == 1 or (n <= BPFTRACE_MAX_FUNCS and r == 0):
                        bt.append(bpftrace_attach_time(funcs, pat, n))
            except subprocess.TimeoutExpired:
                col.append(float("inf"))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        rows.append([f"{n:,}", fmt_spread(col_own, 3), fmt_spread(col, 3),
                     fmt_spread(bt, 3)])
    table(f"Attach time: entry + return probes on N functions of one binary "
          f"(median of {RUNS} runs [min–max], 10 000: one run; seconds)",
          ["functions", "collector: attach (its own report)",
           "collector: start to command running", "bpftrace: start to command running"],
          rows,
          "\"start to command running\": from launching the tool to the traced command's "
          "first instruction (both start it only once every probe is attached); it includes "
          "loading the BPF programs and reading the binary's symbols. bpftrace runs with "
          "BPFTRACE_MAX_PROBES=25000 (its default refuses more than 512 probes), at most "
          "BENCH_BPFTRACE_MAX_FUNCS functions (default 100): its perf-event uprobes take about "
          "0.1 s each to tear down when it exits (3.5 min for 1 000 functions); inf: no start "
          "within 120 s.")

