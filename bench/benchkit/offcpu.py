# SPDX-License-Identifier: GPL-2.0
"""Section offcpu: what --off-cpu costs on a workload of ~100 k context
switches a second, against an empty tp_btf/sched_switch program (the floor).

bpftrace's offcputime-style scripts (a tracepoint:sched:sched_switch or
kprobe:finish_task_switch program keyed by stack) cannot run here:
tracepoints need tracefs, which is not mounted, and kprobes do not attach on
this kernel, so they are not in the table."""
import os

from benchkit.common import RUNS, bin_, bpf_stats_enabled, fmt, fmt_spread, median, table
from benchkit.measure import Collector, Floor, Tool, has_live_prog
from benchkit.sampling import run_rounds

ROUNDS = int(os.environ.get("BENCH_PINGPONG_ROUNDS", "200000"))


class SwitchFloor(Floor):
    name = "floor (empty tp_btf/sched_switch)"

    def start(self, wl_pid, tmp):
        import subprocess
        p = subprocess.Popen([bin_("switch-floor")], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self._wait_ready(p)
        return p


class SwitchCollector(Collector):
    """Ready once its programs on the scheduler's tracepoints run: the
    workload waits for its go blocked, so no sample comes before (the
    perf_event program, what Collector waits for, never ran)."""

    def ready(self, proc):
        return has_live_prog(proc, ["perf_event", "tracing"])


# collector's programs that run on every context switch of the machine
SWITCH_PROGS = ("on_switch", "on_switch_offcpu")


def _switch_prog(res, prefix):
    """(run time ns, runs) of the programs on sched_switch the tool holds."""
    by = res.get("bpf_by_type", {})
    names = SWITCH_PROGS if res["tool"].startswith("collector") else ("floor_switch",)
    ns = sum(by.get("ns:" + n, 0) for n in names if n.startswith(prefix))
    cnt = sum(by.get("cnt:" + n, 0) for n in names if n.startswith(prefix))
    return ns, cnt


def offcpu():
    old_stats = bpf_stats_enabled(True)
    wl = [bin_("pingpong"), str(ROUNDS)]
    tools = [
        Tool(),
        SwitchFloor(),
        SwitchCollector("collector --no-switches", ["-f", "callgrind", "--no-switches"]),
        SwitchCollector("collector --no-switches --off-cpu",
                        ["-f", "callgrind", "--no-switches", "--off-cpu"]),
        # run_rounds() compares every tool with the one named "collector"
        SwitchCollector("collector", ["-f", "callgrind", "--off-cpu"]),
    ]
    try:
        results = run_rounds(tools, wl, "offcpu")
    finally:
        bpf_stats_enabled(old_stats == "1")
    rows = []
    for t in tools:
        rs = [r for r in results[t.name] if r]
        if not rs:
            rows.append([t.name, "failed"] + [""] * 7)
            continue
        prof = t.name != "none"
        rate = [int(r["switches"]) / (r["wall_ns"] / 1e9) for r in rs]
        share = [100 * (r["tool_cpu_ns"] + r["bpf_ns"]) / (r["window_s"] * 1e9) for r in rs]
        per_switch = []
        offcpu_per_run = []
        for r in rs:
            ns, cnt = _switch_prog(r, "")
            per_switch.append(ns / cnt if cnt else None)
            ns, cnt = _switch_prog(r, "on_switch_offcpu")
            offcpu_per_run.append(ns / cnt if cnt else None)
        rows.append([
            t.name,
            fmt_spread([r["wall_ns"] / 1e9 for r in rs]),
            fmt(median(rate), 0),
            fmt_spread([r.get("wall_slowdown") for r in rs], 3),
            fmt_spread(per_switch, 0) if prof and t.bpf else "—",
            fmt_spread(offcpu_per_run, 0) if any(x is not None for x in offcpu_per_run) else "—",
            fmt_spread(share, 2) if prof else "—",
            fmt(median([r.get("lost") for r in rs]), 0) if "lost" in rs[0] else "—",
        ])
    table(f"--off-cpu: two threads bouncing a byte through pipes, {ROUNDS} rounds "
          f"(median of {RUNS} runs [min–max])",
          ["profiler", "workload wall s", "switches/s (workload)", "slowdown (wall)",
           "BPF ns per switch (sched_switch programs, every switch of the machine)",
           "off-CPU program ns per run", "profiler CPU + BPF, % of a core", "lost events"],
          rows,
          "collector: --off-cpu with its context-switch records (the default). "
          "The sched_switch programs run on every switch of the machine, the target's or "
          "not; their cost per run is run_time_ns / run_cnt from bpf_stats. The floor is "
          "an empty tp_btf/sched_switch program. bpftrace's offcputime-style scripts "
          "(tracepoint:sched:sched_switch, kprobe:finish_task_switch) cannot run here: "
          "tracefs is not mounted and kprobes do not attach.")
