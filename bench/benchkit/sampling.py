# SPDX-License-Identifier: GPL-2.0
"""Section 1: sampling, and the dwarf call graph beside fp and perf."""
from benchkit.common import (ITERS, RUNS, bin_, bpf_stats_enabled, fmt, fmt_spread, log, median,
                             read_int, table, write_str)
from benchkit.measure import Bpftrace, Collector, Perf, PerfDwarf, SampleFloor, Tool, measure


def run_rounds(tools, wl, label):
    """RUNS rounds of every tool on the workload; slowdowns against the
    round's "none" run and collector's CPU over each tool's, in the same round."""
    results = {t.name: [] for t in tools}
    for r in range(RUNS):
        base = None
        for t in tools:
            log(f"bench: {label}, run {r + 1}/{RUNS}: {t.name}")
            try:
                res = measure(t, wl)
            except Exception as e:  # keep going: one tool failing is a result
                log(f"bench: {t.name}: {e}")
                results[t.name].append(None)
                continue
            if t.name == "none":
                base = res
            res["slowdown"] = (res["cpu_ns"] / base["cpu_ns"]) if base else None
            res["wall_slowdown"] = (res["wall_ns"] / base["wall_ns"]) if base else None
            results[t.name].append(res)
        # ratios of the same round: collector's CPU to each peer's
        col = results["collector"][-1]
        for t in tools:
            res = results[t.name][-1]
            if res and col and t.name != "none":
                res["col_ratio"] = _ratio(_share(col), _share(res))
                res["col_ratio_half"] = _ratio(_half_share(col), _half_share(res))
    return results


def sampling():
    hzs = [999, 9999]
    old_stats = bpf_stats_enabled(True)
    max_rate = read_int("/proc/sys/kernel/perf_event_max_sample_rate")
    wl = [bin_("deep"), str(ITERS)]
    try:
        for hz in hzs:
            tools = [
                Tool(),
                SampleFloor(hz),
                Collector("collector", ["-f", "dcpi"], hz),
                Collector("collector --no-switches", ["-f", "dcpi", "--no-switches"], hz),
                Perf(hz),
                Bpftrace("bpftrace (profile, ustack)",
                         f"profile:hz:{hz} /pid == PID/ {{ @[ustack] = count(); }}",
                         ["perf_event"]),
            ]
            results = run_rounds(tools, wl, f"sampling {hz} Hz")
            sampling_table(hz, tools, results)
    finally:
        bpf_stats_enabled(old_stats == "1")
        now = read_int("/proc/sys/kernel/perf_event_max_sample_rate")
        if now != max_rate:
            log(f"bench: the kernel lowered perf_event_max_sample_rate from {max_rate} to "
                f"{now} (perf interrupts took too long); restored")
            write_str("/proc/sys/kernel/perf_event_max_sample_rate", str(max_rate))


def dwarf():
    """Call graphs of a binary without frame pointers: collector's dwarf mode
    beside its fp mode and perf --call-graph dwarf, at 999 Hz."""
    hz = 999
    old_stats = bpf_stats_enabled(True)
    wl = [bin_("deep-nofp"), str(ITERS)]
    try:
        tools = [
            Tool(),
            Collector("collector", ["-f", "dcpi", "--call-graph", "dwarf"], hz),
            Collector("collector --call-graph fp", ["-f", "dcpi", "--call-graph", "fp"], hz),
            PerfDwarf(hz),
        ]
        results = run_rounds(tools, wl, "dwarf")
        sampling_table(hz, tools, results)
        notes = []
        for name in ("collector", "perf record --call-graph dwarf"):
            rs = [r for r in results[name] if r]
            b = [r.get("ring_bytes_per_sample") for r in rs if r.get("ring_bytes_per_sample")]
            u = [r.get("unwind_us") for r in rs if r.get("unwind_us")]
            notes.append(f"{name}: {fmt(median(b), 0) if b else '?'} bytes per sample"
                         + (f", unwinding {fmt(median(u), 1)} µs per sample in user space"
                            if u else ""))
        print("\nDwarf mode (\"collector\" above; the last column is its CPU ÷ each "
              "row's): " + "; ".join(notes) + ". perf's bytes are perf.data's size per "
              "sample (it unwinds at perf report time, not while recording).")
    finally:
        bpf_stats_enabled(old_stats == "1")


def _profiler_ns(res):
    return res["tool_cpu_ns"] + res["bpf_ns"]


def _ratio(a, b):
    return a / b if a is not None and b else None


def _share(res):
    return _profiler_ns(res) / (res["window_s"] * 1e9) if res["window_s"] > 0 else None


def _half_share(res):
    if not res.get("half_window_s"):
        return None
    return res["half_profiler_ns"] / (res["half_window_s"] * 1e9)


def _samples(res):
    """Samples the profiler took of the target (the floor: every BPF run)."""
    if res.get("samples"):
        return res["samples"]
    if res["tool"].startswith("floor"):
        return res["bpf_runs"]
    return None


def sampling_table(hz, tools, results):
    rows = []
    modes = set()
    for t in tools:
        rs = [r for r in results[t.name] if r]
        if not rs:
            rows.append([t.name, "failed"] + [""] * 11)
            continue
        modes.update(r["call_graph"] for r in rs if r.get("call_graph"))
        prof = t.name != "none"
        share = [100 * _share(r) for r in rs] if prof else []
        half = [100 * _half_share(r) for r in rs if _half_share(r) is not None] if prof else []
        per_sample = [(_profiler_ns(r) / _samples(r) / 1000) if _samples(r) else None
                      for r in rs] if prof else []
        achieved = [100 * _samples(r) / (r["cpu_ns"] / 1e9 * hz)
                    if _samples(r) and not r["tool"].startswith("floor") else None for r in rs]
        rows.append([
            t.name,
            fmt_spread([r["cpu_ns"] / 1e9 for r in rs]),
            fmt_spread([r.get("slowdown") for r in rs], 3),
            fmt(median([r["tool_cpu_ns"] / 1e6 for r in rs]), 1) if prof else "—",
            fmt(median([r["bpf_ns"] / 1e6 for r in rs]), 1) if t.bpf else "—",
            fmt_spread(share, 3) if share else "—",
            fmt_spread(half, 3) if half else "—",
            fmt(median(per_sample), 2) if per_sample else "—",
            fmt(median([_samples(r) for r in rs]), 0) if prof else "—",
            fmt(median(achieved), 1) if any(a is not None for a in achieved) else "—",
            fmt(median([r.get("lost") for r in rs]), 0) if "lost" in rs[0] else "—",
            fmt(median([r.get("tool_total_s") for r in rs]), 2) if prof else "—",
            (f"{fmt(median([r.get('col_ratio') for r in rs]), 2)} / "
             f"{fmt(median([r.get('col_ratio_half') for r in rs]), 2)}") if prof else "—",
        ])
    by_prog = {}
    for r in (r for r in results.get("collector", []) if r):
        for k, v in r["bpf_by_type"].items():
            if k.startswith("ns:"):
                by_prog.setdefault(k[3:], []).append(v / 1e6)
    prog_note = ", ".join(f"{k} {fmt(median(v), 1)} ms" for k, v in sorted(by_prog.items()))
    table(f"Sampling at {hz} Hz: CPU-bound workload, 43-frame call chain "
          f"(median of {RUNS} runs [min–max])",
          ["profiler", "target CPU s", "target slowdown (CPU time)", "tool CPU ms",
           "BPF ms", "profiler CPU, % of a core (whole run)",
           "profiler CPU, % of a core (2nd half)", "profiler µs per sample",
           "samples", "achieved % of Hz", "lost", "tool CPU s, start to exit",
           "collector's CPU ÷ this (whole / 2nd half)"],
          rows,
          f"collector's call graph mode: {', '.join(sorted(modes)) or '?'}; its BPF time by "
          f"program: {prog_note or '?'}. "
          "bpftrace runs `profile:hz:N /pid == PID/ { @[ustack] = count(); }` (the pid "
          "filter makes it walk the target's stacks only, as collector -p and perf -p do).")

