#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""collector's bench: overhead, throughput and memory, side by side with peers.

    bench.py SECTION...      SECTION: sampling tracing exporters soak

Prints one Markdown table per measurement on stdout (progress on stderr).
Run through `make bench` (or bench-sampling, ...), which builds what it
needs; see bench/README.md for how to read the tables.

Environment: BENCH_RUNS (repetitions, default 3), BENCH_SIZES (exporter
model sizes), BENCH_BUILD (where the bench binaries are, build/bench),
BENCH_CALLS (calls per tracing run, default 1000000), BENCH_ITERS (deep's
work per sampling run), BENCH_SOAK_MINUTES (default 10).
"""
import glob
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("BENCH_BUILD", "build/bench"))
COLLECTOR = os.path.join(ROOT, "collector")
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
            # run time by program name, under a key no type takes
            key = "ns:" + str(p.get("name"))
            by_type[key] = by_type.get(key, 0) + p.get("run_time_ns", 0)
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


# ---------------------------------------------------------------------------
# One measured run: start the workload (it waits for a byte on stdin), start
# the tool and wait until it is live, snapshot, let the workload run, read
# its result line, snapshot again while it waits to exit, then let it exit
# and stop the tool.  The window is the same for the target and the tool.

class Tool:
    """How to start one profiler on a workload and read what it reports."""
    name = "none"
    bpf = False          # holds BPF programs whose run time counts
    launches = False     # starts the workload itself (argv = tool + workload)

    def start(self, wl_pid, tmp):
        return None

    def argv(self, wl_argv, tmp):
        return wl_argv

    def ready(self, proc):
        return True

    def finish(self, proc, tmp):
        """Stops the tool; returns {samples, lost, ...} from its output."""
        return {}


def measure(tool, wl_argv, cwd=None):
    tmp = tempfile.mkdtemp(prefix="bench-")
    res = {"tool": tool.name}
    tproc = None
    try:
        if tool.launches:
            tproc = subprocess.Popen(tool.argv(wl_argv, tmp), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=cwd or tmp)
            wl = tproc
        else:
            wl = subprocess.Popen(wl_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, cwd=cwd or tmp)
            tproc = tool.start(wl.pid, tmp)
        if tproc is not None:
            if not wait_until(lambda: tproc.poll() is not None or tool.ready(tproc), 60,
                              f"{tool.name} to attach"):
                raise RuntimeError(f"{tool.name} did not attach")
            if tproc.poll() is not None:
                raise RuntimeError(f"{tool.name} exited early: {stop(tproc)[1][-500:]}")
            time.sleep(0.2)
        ids = tool_prog_ids(tproc.pid) if (tproc is not None and tool.bpf) else set()
        tpid = tproc.pid if tproc is not None else None
        s0 = Snapshot(tpid, ids)
        sh = None
        wl.stdin.write("g")
        wl.stdin.flush()
        line = wl.stdout.readline()
        if line.startswith("half"):
            sh = Snapshot(tpid, ids)
            line = wl.stdout.readline()
        s1 = Snapshot(tpid, ids)
        kv = parse_kv(line)
        if "wall_ns" not in kv:
            raise RuntimeError(f"{tool.name}: workload printed {line!r}")
        wl.stdin.close()
        if wl is not tproc:
            wl.wait()
        res.update(kv)
        res["window_s"] = s1.wall - s0.wall
        res["tool_cpu_ns"] = s1.cpu - s0.cpu
        res["bpf_ns"] = s1.bpf_ns - s0.bpf_ns
        res["bpf_runs"] = s1.bpf_cnt - s0.bpf_cnt
        res["bpf_by_type"] = {k: v - s0.by_type.get(k, 0) for k, v in s1.by_type.items()}
        if sh is not None:
            # the second half alone: the tool's steady state, one-off work
            # (symbol tables read on the first samples) left out
            res["half_window_s"] = s1.wall - sh.wall
            res["half_profiler_ns"] = (s1.cpu - sh.cpu) + (s1.bpf_ns - sh.bpf_ns)
        if tproc is not None:
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            res.update(tool.finish(tproc, tmp))
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if not tool.launches:
                res["tool_total_s"] = (ru1.ru_utime + ru1.ru_stime) - \
                    (ru0.ru_utime + ru0.ru_stime)
    finally:
        if tproc is not None and tproc.poll() is None:
            stop(tproc, signal.SIGKILL, 10)
        shutil.rmtree(tmp, ignore_errors=True)
    return res


def collector_summary(err):
    """samples, lost and traced calls from collector's summary (stderr)."""
    out = {}
    m = re.search(r"^\s*samples\s+(\d+)", err, re.M)
    if m:
        out["samples"] = int(m.group(1))
    m = re.search(r"^\s*lost events\s+(\d+)", err, re.M)
    if m:
        out["lost"] = int(m.group(1))
    causes = re.findall(r"^    (\S.*?)\s{2,}(\d+)$", err, re.M)
    out["lost_causes"] = {c: int(v) for c, v in causes}
    m = re.search(r"call graph: (\w+)", err)
    if m:
        out["call_graph"] = m.group(1)
    m = re.search(r"unwinding\s+([\d.]+) us per sample.*?(\d+) bytes per sample", err)
    if m:
        out["unwind_us"] = float(m.group(1))
        out["ring_bytes_per_sample"] = int(m.group(2))
    m = re.search(r"attached in ([\d.]+) s", err)
    if m:
        out["attach_s"] = float(m.group(1))
    return out


class Floor(Tool):
    bpf = True

    def ready(self, proc):
        return self._ready

    def _wait_ready(self, proc):
        self._ready = proc.stdout.readline().strip() == "ready"

    def finish(self, proc, tmp):
        out, _ = stop(proc)
        return {}


class SampleFloor(Floor):
    name = "floor (empty BPF program)"

    def __init__(self, hz):
        self.hz = hz

    def start(self, wl_pid, tmp):
        p = subprocess.Popen([bin_("sample-floor"), str(self.hz)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self._wait_ready(p)
        return p


class UprobeFloor(Floor):
    name = "floor (empty uprobe + uretprobe)"

    def __init__(self, binary, func):
        self.binary, self.func = binary, func

    def start(self, wl_pid, tmp):
        p = subprocess.Popen([bin_("uprobe-floor"), self.binary, self.func],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._wait_ready(p)
        return p


def has_live_prog(proc, types):
    """True once one of the tool's BPF programs of these types has run."""
    ids = tool_prog_ids(proc.pid)
    if not ids:
        return False
    _, _, by_type = bpf_stats(ids)
    return any(by_type.get(t, 0) > 0 for t in types)


class Collector(Tool):
    bpf = True

    def __init__(self, name, extra, hz=999):
        self.name, self.extra, self.hz = name, extra, hz

    def start(self, wl_pid, tmp):
        out = os.path.join(tmp, "out")
        argv = [COLLECTOR, "-p", str(wl_pid), "-F", str(self.hz), "-o", out] + self.extra
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ready(self, proc):
        return has_live_prog(proc, ["perf_event"])

    def finish(self, proc, tmp):
        # collector stops by itself when its target exits, then writes
        t0 = time.monotonic()
        try:
            out, err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            out, err = stop(proc)
        res = collector_summary(out + err)  # the summary is on stdout
        res["after_s"] = time.monotonic() - t0
        if proc.returncode != 0:
            log(f"bench: collector exited {proc.returncode}: {err[-400:]}")
        return res


class Perf(Tool):
    name = "perf record -g"

    def __init__(self, hz):
        self.hz = hz

    def start(self, wl_pid, tmp):
        argv = ["perf", "record", "-g", "-F", str(self.hz), "-p", str(wl_pid), "-o",
                os.path.join(tmp, "perf.data")]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ready(self, proc):
        return perf_fds(proc.pid) > 0

    def finish(self, proc, tmp):
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            out, err = stop(proc)
        res = {}
        m = re.search(r"\((\d+) samples\)", err)
        if m:
            res["samples"] = int(m.group(1))
        lost = sum(int(x) for x in re.findall(r"[Ll]ost (\d+)", err))
        res["lost"] = lost
        return res


class PerfDwarf(Perf):
    name = "perf record --call-graph dwarf"

    def start(self, wl_pid, tmp):
        self.data = os.path.join(tmp, "perf.data")
        argv = ["perf", "record", "--call-graph", "dwarf", "-F", str(self.hz), "-p", str(wl_pid),
                "-o", self.data]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, proc, tmp):
        res = super().finish(proc, tmp)
        try:
            if res.get("samples"):
                res["ring_bytes_per_sample"] = os.path.getsize(self.data) // res["samples"]
        except OSError:
            pass
        return res


class Bpftrace(Tool):
    bpf = True

    def __init__(self, name, program, types, n_probes=0):
        self.name, self.program, self.types = name, program, types
        self.n_probes = n_probes

    def start(self, wl_pid, tmp):
        prog = self.program.replace("PID", str(wl_pid))
        return subprocess.Popen(["bpftrace", "-e", prog], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def ready(self, proc):
        if self.n_probes:
            # uprobes: one perf event per probe, attached last
            return perf_fds(proc.pid) >= self.n_probes
        return has_live_prog(proc, self.types)

    def finish(self, proc, tmp):
        out, err = stop(proc)
        res = {}
        # map lines end in ": N"; stack maps print "]: N"
        counts = [int(x) for x in re.findall(r":\s+(\d+)\s*$", out, re.M)]
        res["samples"] = sum(counts)
        m = re.findall(r"Lost (\d+) events", out + err)
        res["lost"] = sum(int(x) for x in m)
        return res


class Uftrace(Tool):
    name = "uftrace record (-pg build)"
    launches = True

    def argv(self, wl_argv, tmp):
        return ["uftrace", "record", "--no-pager", "-d", os.path.join(tmp, "uftrace.data"),
                "-F", "bench_traced"] + wl_argv

    def finish(self, proc, tmp):
        out = proc.stdout.read()
        err = proc.stderr.read()
        proc.wait(timeout=120)
        res = {}
        m = re.findall(r"(\d+) records? (?:are |were )?lost|LOST (\d+)", err)
        res["lost"] = sum(int(a or b) for a, b in m) if m else 0
        return res


# ---------------------------------------------------------------------------
# Section 1: sampling.

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


# ---------------------------------------------------------------------------
# Section 2: tracing.

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


# ---------------------------------------------------------------------------
# Section 3: exporters.

FORMATS = ["dcpi", "sampler", "callgrind", "hpctoolkit", "xray", "pprof", "folded", "flamegraph",
           "speedscope"]
EXPORT_TIMEOUT = int(os.environ.get("BENCH_EXPORT_TIMEOUT", "150"))


def _limit_memory():
    """A writer may use at most half of the machine's memory (the bench must
    not push the machine into the OOM killer)."""
    with open("/proc/meminfo") as f:
        total_kb = int(f.readline().split()[1])
    lim = total_kb * 1024 // 2
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))


def exporters():
    image = bin_("funcs10k")
    rows = []
    for n in SIZES:
        for fmt_ in FORMATS:
            runs = []
            failed = "failed"
            reps = RUNS if n <= 1000000 else 1
            for r in range(reps):
                log(f"bench: exporter {fmt_}, {n:,} {'events' if fmt_ == 'xray' else 'samples'}"
                    f", run {r + 1}/{reps}")
                tmp = tempfile.mkdtemp(prefix="bench-exp-", dir=os.environ.get("BENCH_TMP"))
                try:
                    p = subprocess.run([bin_("exporters-bench"), fmt_, str(n), image, tmp],
                                       capture_output=True, text=True, timeout=EXPORT_TIMEOUT,
                                       preexec_fn=_limit_memory)
                    if p.returncode != 0:
                        log(f"bench: {fmt_}: {p.stderr.strip()[-300:]}")
                        failed = "failed: " + (p.stderr.strip().splitlines() or ["?"])[-1][-80:]
                        continue
                    runs.append({k: float(v) for k, v in
                                 re.findall(r"(\w+)=([\d.]+)", p.stdout)})
                except subprocess.TimeoutExpired:
                    log(f"bench: {fmt_} at {n}: more than {EXPORT_TIMEOUT} s")
                    failed = f"stopped after {EXPORT_TIMEOUT} s"
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
            if not runs:
                rows.append([fmt_, f"{n:,}", failed, "", "", "", "", "", ""])
                continue
            rows.append([
                fmt_, f"{n:,}" + (" events" if fmt_ == "xray" else " samples"),
                fmt(median([r["write_s"] for r in runs]), 2),
                fmt(median([r["bytes"] / 1e6 for r in runs]), 1),
                fmt_spread([r["mb_per_s"] for r in runs], 1),
                fmt(median([r["n"] / r["write_s"] / 1e6 for r in runs]), 2),
                fmt(median([r["model_rss_kb"] / 1024 for r in runs]), 0),
                fmt(median([r["peak_rss_kb"] / 1024 for r in runs]), 0),
                fmt(median([(r["peak_rss_kb"] - r["model_rss_kb"]) / 1024 for r in runs]), 0),
            ])
    table("Exporters: one writer per process on a synthetic model (4 threads, 100 000 "
          "unique stacks of 8-40 frames sharing prefixes, 20 000 locations; xray: 16 "
          "functions nested "
          f"8 deep); median of {RUNS} runs at 10^6, one run above [min–max]",
          ["format", "model", "write s", "MB written", "MB/s", "M samples/s",
           "model RSS MiB", "peak RSS MiB", "writer's own MiB"],
          rows)


# ---------------------------------------------------------------------------
# Soak: collector -a for SOAK_MINUTES, RSS every minute.

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


def main():
    sections = sys.argv[1:] or ["sampling", "dwarf", "tracing", "exporters"]
    known = {"sampling": sampling, "dwarf": dwarf, "tracing": tracing, "exporters": exporters,
             "soak": soak}
    for s in sections:
        if s not in known:
            log(f"usage: bench.py [{'|'.join(known)}]...")
            return 2
    if any(s != "exporters" for s in sections) and os.geteuid() != 0:
        log("bench: sampling, tracing and soak load BPF programs: run as root")
        return 3
    t0 = time.monotonic()
    print(f"## collector bench ({time.strftime('%Y-%m-%d %H:%M')}, {os.uname().nodename}, "
          f"{NCPUS} CPUs, kernel {os.uname().release}, BENCH_RUNS={RUNS})")
    print(f"\nCommand: make bench{'-' + sections[0] if len(sections) == 1 else ''} "
          f"BENCH_RUNS={RUNS}")
    for s in sections:
        known[s]()
    print(f"\nTotal bench time: {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
