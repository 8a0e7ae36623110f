# SPDX-License-Identifier: GPL-2.0
"""Continuous (`make bench-continuous`): `collector -a -F 99 --interval 10
-f pprof` for BENCH_SECONDS (1800, the half hour a fleet agent is judged
over; a short value for a quick look) while the build loop
(benchkit/buildloop.py) rebuilds this project, and beside it, at the same
time, `perf record -a -g -F 99 --switch-output=10s` (perf's way of cutting
a long run into files).

With the push on (the default; BENCH_OTLP=0 for the run without it), three
collectors run side by side in the same window, on the same load: `--otlp`
to a real OpenTelemetry Collector on 127.0.0.1 (scripts/build-otelcol.sh
builds it; without it the push runs are skipped, loudly) with `-f pprof`
kept (the bytes of both, interval by interval), `--otlp` alone (no local
file: a fleet's run), and `-f pprof` alone (the run without the push), so
that the push's cost is a difference taken on the same host at the same
time.  All run with -v (the per-interval lines the bench reads).

Printed: each collector's CPU and its BPF programs' run time as a share of
one core, per interval and over the run, its RSS at every interval's end
and its peak, perf's CPU and RSS; the push's encoding CPU (the summary's),
its thread's CPU, its bytes per interval (gzip'd OTLP, as sent) beside the
interval's profile.pb.gz, the spool's size; the BPF programs' run time one
by one and the frames of a sample (from the profiles); whether every
interval's profile.pb.gz reads with `go tool pprof -top` and every interval
reached the receiver.  BENCH_SELF_PROFILE=S: the push collector itself
sampled for S seconds (`collector -p PID -F 2999 -f folded`) from its
fourth interval on, its CPU split by what it was doing (BENCH_SELF_FOLDED=FILE
keeps the folded stacks)."""
import glob
import gzip
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from benchkit.buildloop import BuildLoop
from benchkit.common import (COLLECTOR, NCPUS, bpf_stats, bpf_stats_enabled, fmt, log,
                             perf_fds, stop, table, tool_cpu_ns, tool_prog_ids, wait_until)
from benchkit.measure import collector_summary
from benchkit.otlp import Receiver, otelcol_path, push_summary, pusher_tid, thread_cpu_ns
from benchkit.soak import proc_status_kb
from benchkit.wholecost import bpf_run_ns

SECONDS = int(os.environ.get("BENCH_SECONDS", "1800"))
INTERVAL = 10
MAX_ROWS = 40
# more collector options, to compare (--call-graph fp: without the unwind tables)
EXTRA = os.environ.get("BENCH_COLLECTOR_ARGS", "").split()
OTLP = os.environ.get("BENCH_OTLP", "1") != "0"
SELF_PROFILE = int(os.environ.get("BENCH_SELF_PROFILE", "0"))


def _pprof_top(path):
    """(readable, first line of the top table or the error)."""
    p = subprocess.run(["go", "tool", "pprof", "-top", "-nodecount=3", path],
                       capture_output=True, text=True, timeout=120)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0:
        return False, (p.stderr.strip().splitlines() or ["?"])[-1]
    return True, next((l.strip() for l in lines if "samples" in l or "Showing" in l), "")


# ---------------------------------------------------------------------------
# What a profile.pb.gz holds: samples and the frames (locations) of each, read
# straight from the protobuf (profile.proto: Profile.sample = 2, .location = 4,
# .mapping = 3, .string_table = 6; Sample.location_id = 1, .value = 2;
# Location.id = 1, .address = 3, .line = 4).

def _varint(b, i):
    x = s = 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return x, i


def _fields(b):
    i, n = 0, len(b)
    while i < n:
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            ln, i = _varint(b, i)
            v = b[i:i + ln]
            i += ln
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError(f"wire type {wt}")
        yield f, wt, v


def _ints(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def pprof_frames(path):
    """{samples, frames, kernel, lines}: samples (the count of the first
    sample type) and, over them, the locations (frames the sampler walked or
    copied), of which kernel ones, and the lines (inlined frames named)."""
    with open(path, "rb") as f:
        b = gzip.decompress(f.read())
    locs = {}      # id -> (kernel, lines)
    samples = []
    for fno, wt, v in _fields(b):
        if fno == 4:
            lid = addr = 0
            lines = 0
            for g, gwt, gv in _fields(v):
                if g == 1:
                    lid = gv
                elif g == 3:
                    addr = gv
                elif g == 4:
                    lines += 1
            locs[lid] = (addr >= 0xffff000000000000, max(lines, 1))
        elif fno == 2:
            ids, vals = [], []
            for g, gwt, gv in _fields(v):
                if g == 1:
                    ids += _ints(gwt, gv)
                elif g == 2:
                    vals += _ints(gwt, gv)
            samples.append((ids, vals[0] if vals else 0))
    out = {"samples": 0, "frames": 0, "kernel": 0, "lines": 0}
    for ids, n in samples:
        out["samples"] += n
        out["frames"] += n * len(ids)
        for i in ids:
            k, ln = locs.get(i, (False, 1))
            out["kernel"] += n * k
            out["lines"] += n * ln
    return out


# ---------------------------------------------------------------------------
# What else the machine did (a shared host: other jobs run their tests): its
# busy CPU (/proc/stat) and the CPU of the processes outside the bench and its
# build loop that are alive at each reading (short-lived ones are missed).

def _cpu_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]) - idle, sum(v[:8])


class Machine:
    def __init__(self, loop_sid):
        self.loop_sid, self.own_pgid = loop_sid, os.getpgid(0)
        self.hz = os.sysconf("SC_CLK_TCK")
        self.stat = _cpu_ticks()
        self.procs = self._procs()

    def _procs(self):
        out = {}
        for d in glob.glob("/proc/[0-9]*/stat"):
            try:
                with open(d) as f:
                    text = f.read()
            except OSError:
                continue
            comm = text[text.find("(") + 1:text.rfind(")")]
            rest = text[text.rfind(")") + 2:].split()
            pid, ppid, pgrp, sid = int(d.split("/")[2]), int(rest[1]), int(rest[2]), int(rest[3])
            if ppid == 2 or pid == 2 or sid == self.loop_sid or pgrp == self.own_pgid:
                continue
            out[pid] = (comm, int(rest[11]) + int(rest[12]))
        return out

    def reading(self):
        """(busy % of all CPUs, others' CPU s, 'comm s, ...' of the top 3)."""
        stat, procs = _cpu_ticks(), self._procs()
        busy = 100 * (stat[0] - self.stat[0]) / max(1, stat[1] - self.stat[1])
        by = {}
        for pid, (comm, t) in procs.items():
            d = t - self.procs.get(pid, (comm, 0))[1] if pid in self.procs else t
            if d > 0:
                by[comm] = by.get(comm, 0) + d / self.hz
        self.stat, self.procs = stat, procs
        top = sorted(by.items(), key=lambda kv: -kv[1])[:3]
        return busy, sum(by.values()), ", ".join(f"{c} {v:.1f}" for c, v in top)


# ---------------------------------------------------------------------------
# One collector of the run, and its readings after each interval.

def dir_bytes(path):
    n = total = 0
    for p in glob.glob(os.path.join(path, "*")):
        try:
            total += os.path.getsize(p)
            n += 1
        except OSError:
            pass
    return n, total


class Run:
    def __init__(self, name, argv, out, logpath, spool=None):
        self.name, self.argv, self.out, self.logpath, self.spool = name, argv, out, logpath, spool
        self.rows = []       # one per interval: see reading()
        self.proc = None
        self.seen = 0
        self.tid = None
        self.done = False

    def start(self):
        self.logf = open(self.logpath, "w")
        self.proc = subprocess.Popen(self.argv, stdout=self.logf, stderr=self.logf)

    def live(self):
        return self.proc.poll() is not None or perf_fds(self.proc.pid) >= NCPUS

    def base(self, t0):
        self.t0 = t0
        self.cpu0, self.bpf0 = tool_cpu_ns(self.proc.pid), bpf_run_ns(self.proc.pid)
        self.ids = tool_prog_ids(self.proc.pid)
        self.progs0 = bpf_stats(self.ids)[2]
        self.last = (t0, self.cpu0, self.bpf0)
        if self.spool:
            wait_until(lambda: pusher_tid(self.proc.pid) is not None, 5, "the push thread")
            self.tid = pusher_tid(self.proc.pid)
        self.tcpu0 = thread_cpu_ns(self.proc.pid, self.tid) or 0

    def intervals(self):
        if self.out:
            return len(glob.glob(os.path.join(self.out, "*Z")))
        # no directory (no -f): the -v line each interval's end prints, read
        # on from where the last look stopped (whole lines only)
        with open(self.logpath, "rb") as f:
            f.seek(getattr(self, "_logpos", 0))
            text = f.read()
        text = text[:text.rfind(b"\n") + 1]
        self._logpos = getattr(self, "_logpos", 0) + len(text)
        self._nlog = getattr(self, "_nlog", 0) + len(
            re.findall(rb"^collector: interval \d{8}T\d{6}Z:", text, re.M))
        return self._nlog

    def reading(self):
        """After an interval's files are written: the collector's state after
        its cut.  False when the collector is gone or going."""
        pid = self.proc.pid
        now, cpu, bpf = time.monotonic(), tool_cpu_ns(pid), bpf_run_ns(pid)
        rss, anon = proc_status_kb(pid, "VmRSS"), proc_status_kb(pid, "RssAnon")
        hwm = proc_status_kb(pid, "VmHWM")
        tcpu = thread_cpu_ns(pid, self.tid)
        # gone, or going (its programs closed): no reading
        if rss is None or self.proc.poll() is not None or cpu < self.last[1] or \
                bpf < self.last[2]:
            self.done = True
            return False
        self.progs1 = bpf_stats(self.ids)[2]
        share = 100 * ((cpu - self.last[1]) + (bpf - self.last[2])) / 1e9 / (now - self.last[0])
        spool = dir_bytes(self.spool) if self.spool else (None, None)
        self.rows.append({"n": self.seen, "t": now - self.t0, "rss": rss / 1024,
                          "anon": anon / 1024, "hwm": hwm / 1024, "share": share,
                          "cpu": (cpu - self.cpu0) / 1e9, "bpf": (bpf - self.bpf0) / 1e9,
                          "push_cpu": (tcpu - self.tcpu0) / 1e9 if tcpu is not None else None,
                          "spool_files": spool[0], "spool_bytes": spool[1],
                          "on_sample": (self.progs1.get("ns:on_sample", 0),
                                        self.progs1.get("cnt:on_sample", 0))})
        self.last = (now, cpu, bpf)
        return True

    def poll(self):
        """A reading when a new interval's directory appeared."""
        if self.done:
            return
        if self.proc.poll() is not None:
            self.done = True
            return
        n = self.intervals()
        if n != self.seen:
            self.seen = n
            if self.reading():
                r = self.rows[-1]
                log(f"bench: continuous: {self.name}: interval {n} at {r['t']:.0f} s: RSS "
                    f"{r['rss']:.1f} MiB, peak {r['hwm']:.1f} MiB, {r['share']:.2f}% of a core")

    def finish(self, timeout=600):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop(self.proc, signal.SIGINT, 120)
        self.logf.close()
        with open(self.logpath, errors="replace") as f:
            self.text = f.read()
        s = collector_summary(self.text)
        s.update(push_summary(self.text))
        m = re.search(r"profiler CPU\s+([\d.]+) s: ([\d.]+) s own, ([\d.]+) s BPF \(sampler: "
                      r"(\d+) runs, ([\d.]+) us each", self.text)
        if m:
            s["sum_own"], s["sum_bpf"] = float(m.group(2)), float(m.group(3))
            s["sampler_runs"], s["bpf_us_per_run"] = int(m.group(4)), float(m.group(5))
        # per interval, in order: its UTC start and samples; what was sent
        s["interval_samples"] = re.findall(r"^collector: interval (\d{8}T\d{6}Z): (\d+) samples",
                                           self.text, re.M)
        s["sent"] = {int(a): int(b) for a, b in re.findall(
            r"^collector: OTLP: interval (\d+) \((\d+) bytes\) sent", self.text, re.M)}
        s["not_sent"] = len(re.findall(r"^collector: OTLP: interval \d+ not sent", self.text,
                                       re.M))
        last = self.rows[-1] if self.rows else None
        s["cpu"] = last["cpu"] if last else None
        s["bpf"] = last["bpf"] if last else None
        s["secs"] = last["t"] if last else None
        s["peak"] = max((r["hwm"] for r in self.rows), default=None)
        s["push_cpu"] = last["push_cpu"] if last else None
        self.s = s
        return s

    def summary_lines(self):
        keep = ("samples ", "truncated stacks", "unwound in BPF", "samples unwound in user",
                "unwinding ", "profiler CPU", "OTLP push", "retries,", "lost events",
                "duration ", "in-kernel sums", "unwind tables built", "unwind tables:")
        return [l.rstrip() for l in self.text.splitlines()
                if any(k in l for k in keep) and not l.startswith("libbpf")]


def collector_argv(out, extra):
    """-f pprof -o OUT, or no local file when out is None."""
    return [COLLECTOR, "-a", "-F", "99", "--interval", str(INTERVAL)] + \
        (["-f", "pprof", "-o", out] if out else []) + ["-d", str(SECONDS), "-v"] + extra + EXTRA


def interval_files(out):
    """[(UTC start, profile.pb.gz path)] in order."""
    return [(os.path.basename(os.path.dirname(p)), p)
            for p in sorted(glob.glob(os.path.join(out, "*Z", "profile.pb.gz")))]


# ---------------------------------------------------------------------------
# The collector sampling itself: folded stacks split by what it was doing.
# The first rule a stack matches names it: the interval's writers first, then
# what the drain does whichever path it comes by (a sum read at the cut and
# named is naming), then what is left of the cut, the ring, the waiting.

SELF_RULES = [
    ("push thread: gzip", r"\botlp_gzip"),
    ("push thread: spool files, HTTP", r"\bspool_|\bsend_oldest|\botlp_http|\bpusher_|\bcurl"),
    ("interval cut: OTLP encode", r"\bpush_model|\botlp_encode"),
    ("interval cut: pprof write", r"\bpprof_"),
    ("unwind tables built or loaded (its thread)",
     r"\bimages_build|\bbuild_tables|\bcfi_table|\btable_cache|\bimages_get_ready"),
    ("stack copies unwound in user space (no table yet)", r"\btrk_unwind_copy|\bunwinder_unwind"),
    ("a new process's identity (environ, cgroup)", r"\bidentify;"),
    ("process maps", r"\btrk_load_maps|\bmaps_store|\bprocmaps|\bdefers_maps"),
    ("ended processes forgotten", r"\btracker_forget_ended|\bforget_code"),
    ("naming (symbols, DWARF)", r"\buser_location|\bsym_|\bsymbolizer_|\bkernel_part"),
    ("in-kernel sums: read and stored", r"\bread_samples|\bbpf_session_read_aggregates"),
    ("interval cut: other (spill files, malloc_trim, JVM maps)",
     r"\bcut_interval|\bcontinuous_write"),
    ("ring records: fork, exec, exit", r"\btracker_handle_record|\bring_callback"),
    ("waiting (epoll, futex: the scheduler's share)",
     r"\bepoll_wait|\bwaiter_wait|\bfutex|\bpthread_cond"),
]


def self_profile(pid, secs, tmp):
    """Starts `collector -p PID -F 2999 -f folded` on the collector."""
    out = os.path.join(tmp, "self")
    argv = [COLLECTOR, "-p", str(pid), "-F", "2999", "-f", "folded", "-d", str(secs),
            "-o", out, "-q"]
    log(f"bench: continuous: the push collector sampled itself: {' '.join(argv)}")
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out


def self_profile_split(folded):
    """({category: samples}, total, {leaf: samples}, {category: {leaf: samples}})."""
    cats, total, fns, leaves = {}, 0, {}, {}
    with open(folded, errors="replace") as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            try:
                n = int(n)
            except ValueError:
                continue
            total += n
            name = next((c for c, rx in SELF_RULES if re.search(rx, stack)), None)
            if name is None:
                name = "kernel (syscalls, faults)" if stack.endswith("_[k]") else "other"
            cats[name] = cats.get(name, 0) + n
            leaf = stack.split(";")[-1]
            fns[leaf] = fns.get(leaf, 0) + n
            by = leaves.setdefault(name, {})
            by[leaf] = by.get(leaf, 0) + n
    return cats, total, fns, leaves


# ---------------------------------------------------------------------------

def continuous():
    tmp = tempfile.mkdtemp(prefix="bench-continuous-")
    recv = None
    runs = []
    if OTLP:
        binary, why = otelcol_path()
        if binary is None:
            log("bench: continuous: *** the OpenTelemetry Collector is not built "
                f"({why.splitlines()[-1] if why else ''}): the push run is SKIPPED; "
                "build it with scripts/build-otelcol.sh (root, a few minutes) ***")
            print("\n*The push run was skipped: the OpenTelemetry Collector is not built "
                  "(scripts/build-otelcol.sh).*")
        else:
            recv = Receiver(binary, tmp)
            spool = os.path.join(tmp, "spool")
            runs.append(Run("push + pprof", collector_argv(
                os.path.join(tmp, "push"), [f"--otlp={recv.url}", "--otlp-spool", spool]),
                os.path.join(tmp, "push"), os.path.join(tmp, "push.log"), spool))
            # the fleet's run: the push alone, no local file
            spool2 = os.path.join(tmp, "spool-only")
            runs.append(Run("push only", collector_argv(
                None, [f"--otlp={recv.url}", "--otlp-spool", spool2]),
                None, os.path.join(tmp, "push-only.log"), spool2))
    runs.append(Run("pprof only", collector_argv(os.path.join(tmp, "pprof"), []),
                    os.path.join(tmp, "pprof"), os.path.join(tmp, "pprof.log")))
    pargv = ["perf", "record", "-a", "-F", "99", "-g", f"--switch-output={INTERVAL}s", "-q",
             "-o", os.path.join(tmp, "perf.data")]
    old_stats = bpf_stats_enabled(True)
    p = selfp = None
    perf_rows, files, checks, self_res = [], [], [], None
    try:
        with BuildLoop() as loop:
            loop.warm_up()
            if recv:
                recv.start()
            for r in runs:
                log(f"bench: continuous: {r.name}: {' '.join(r.argv)} ({SECONDS} s)")
                r.start()
            log(f"bench: continuous: beside {' '.join(pargv)}")
            p = subprocess.Popen(pargv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for r in runs:
                wait_until(r.live, 60, f"{r.name} collector to open its perf events")
            t0 = time.monotonic()
            for r in runs:
                r.base(t0)
            pcpu0 = tool_cpu_ns(p.pid)
            rcpu0 = recv.cpu() if recv else 0
            machine = Machine(loop.proc.pid)
            self_t = None
            while any(not r.done for r in runs):
                time.sleep(0.5)
                before = runs[-1].seen
                for r in runs:
                    r.poll()
                if runs[-1].seen != before and not runs[-1].done:
                    prss = proc_status_kb(p.pid, "VmRSS")
                    perf_rows.append((prss / 1024 if prss else None,
                                      (tool_cpu_ns(p.pid) - pcpu0) / 1e9,
                                      recv.cpu() - rcpu0 if recv else None) +
                                     machine.reading())
                # the push collector sampled from its 4th interval on
                if SELF_PROFILE and recv and selfp is None and runs[0].seen >= 4 and \
                        not runs[0].done:
                    selfp, self_out = self_profile(runs[0].proc.pid, SELF_PROFILE, tmp)
                    self_t = (time.monotonic(), tool_cpu_ns(runs[0].proc.pid))
                if selfp is not None and self_t and len(self_t) == 2 and \
                        selfp.poll() is not None and not runs[0].done:
                    self_t = self_t + (time.monotonic(), tool_cpu_ns(runs[0].proc.pid))
            for r in runs:
                r.finish()
            stop(p, signal.SIGINT, 120)
            if recv:
                time.sleep(1)
                rcpu = recv.cpu() - rcpu0
                recv.stop()
            if selfp is not None:
                stop(selfp, signal.SIGINT, 300)
                folded = glob.glob(os.path.join(self_out, "*.folded"))
                if folded and os.environ.get("BENCH_SELF_FOLDED"):
                    # kept for a closer look (BENCH_SELF_FOLDED=FILE)
                    shutil.copyfile(folded[0], os.environ["BENCH_SELF_FOLDED"])
                if folded and self_t and len(self_t) == 4:
                    self_res = self_profile_split(folded[0]) + (
                        (self_t[3] - self_t[1]) / 1e9, self_t[2] - self_t[0])
            files = interval_files(runs[0].out)
            checks = [_pprof_top(f) for _, f in files]
    finally:
        bpf_stats_enabled(old_stats == "1")
        for proc in [r.proc for r in runs] + [p, selfp]:
            if proc is not None and proc.poll() is None:
                stop(proc, signal.SIGKILL, 10)
        if recv:
            recv.stop()
    try:
        report(runs, recv, perf_rows, files, checks, rcpu if recv else None, self_res)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(runs, recv, perf_rows, files, checks, rcpu, self_res):
    push = runs[0] if recv else None
    base = runs[-1]
    what = f"`collector -a -F 99 --interval {INTERVAL} -v{'' if push else ' -f pprof'}" \
           f"{' ' if EXTRA else ''}{' '.join(EXTRA)}`"
    _interval_table(runs, push, perf_rows, what)
    _run_table(runs, push, base, recv, perf_rows, rcpu)
    if not push:
        _checks_note(files, checks)
        return
    _push_table(runs, push, recv, files)
    _bpf_table(push, files)
    _sampler_fit(push, files)
    _summary_lines(push)
    if self_res:
        _self_profile_table(self_res)
    _checks_note(files, checks)


def _interval_table(runs, push, perf_rows, what):
    """Per interval: each collector's share and RSS, perf and the machine beside."""
    # 1. per interval: each collector's share and RSS, perf beside
    n = min(len(r.rows) for r in runs)
    rows = []
    for i in range(n):
        row = [runs[0].rows[i]["n"], f"{runs[0].rows[i]['t']:.0f}"]
        for r in runs:
            x = r.rows[i]
            row += [fmt(x["share"], 2), fmt(x["rss"], 1), fmt(x["anon"], 1)]
        if i < len(perf_rows):
            pr = perf_rows[i]
            row += [fmt(pr[0], 1), fmt(pr[1], 2), fmt(pr[3], 0),
                    f"{fmt(pr[4], 1)} ({pr[5]})" if pr[5] else fmt(pr[4], 1)]
        else:
            row += ["—"] * 4
        rows.append(row)
    shown = rows if len(rows) <= MAX_ROWS else rows[::max(1, len(rows) // MAX_ROWS)] + [rows[-1]]
    header = ["interval", "s"]
    for r in runs:
        header += [f"{r.name}: CPU + BPF this interval, % of a core", f"{r.name}: RSS MiB",
                   f"{r.name}: anonymous"]
    header += ["perf RSS MiB", "perf CPU s (cumulative)", "machine busy, % of its CPUs",
               "other jobs' CPU s (top 3)"]
    table(f"Continuous: {what}" + (" with `--otlp` and `-f pprof`, `--otlp` alone, `-f pprof` "
                                   "alone, side by side," if push else "") +
          f" for {SECONDS} s "
          f"under the build loop, beside `perf record -a -g -F 99 --switch-output={INTERVAL}s`",
          header, shown,
          "RSS is read just after each interval's files are written; every process samples "
          "the others (they run at once). The machine is shared: its busy share is every CPU's "
          "(the build loop, the bench, other jobs); other jobs' CPU is that of the processes "
          "outside the bench and the build loop alive at the reading (short-lived ones are "
          "missed).")


def _run_table(runs, push, base, recv, perf_rows, rcpu):
    """Over the run: each collector's CPU, BPF and RSS, perf's, the receiver's;
    the push's cost as the difference of the runs with and without it."""
    # 2. over the run
    orows = []
    for r in runs:
        s = r.s
        share = 100 * (s["cpu"] + s["bpf"]) / s["secs"] if s.get("cpu") is not None else None
        steady = [x["rss"] for x in r.rows[3:]] or [x["rss"] for x in r.rows]
        # the second half: the steady state, the first reading of every process left out
        half = [x for x in r.rows if x["t"] >= r.rows[-1]["t"] / 2] if r.rows else []
        hshare = None
        if len(half) >= 2:
            a, b = half[0], half[-1]
            hshare = 100 * ((b["cpu"] - a["cpu"]) + (b["bpf"] - a["bpf"])) / (b["t"] - a["t"])
        orows.append([r.name, fmt(share, 2), fmt(hshare, 2), fmt(s.get("cpu"), 2),
                      fmt(s.get("bpf"), 3), fmt(s.get("secs"), 0), fmt(s.get("peak"), 1),
                      f"{fmt(min(steady), 1)}-{fmt(max(steady), 1)}" if steady else "—",
                      fmt(s.get("samples"), 0), fmt(s.get("lost"), 0), len(r.rows),
                      fmt(s.get("sampler_runs"), 0),
                      fmt(1e3 * s["bpf"] * 1e6 / s["sampler_runs"] / 1e3
                          if s.get("sampler_runs") and s.get("bpf") else None, 1)])
    secs = base.s.get("secs")
    pcpu = perf_rows[-1][1] if perf_rows else None
    orows.append(["perf record -a -g -F 99", fmt(100 * pcpu / secs if pcpu and secs else None, 2),
                  "—", fmt(pcpu, 2), "—", fmt(secs, 0),
                  fmt(max((x[0] for x in perf_rows if x[0]), default=None), 1), "—", "—", "—",
                  "—", "—", "—"])
    if recv:
        orows.append(["the receiver (otelcol, debug exporter)",
                      fmt(100 * rcpu / secs if rcpu and secs else None, 2), "—", fmt(rcpu, 2),
                      "—", fmt(secs, 0), "—", "—", "—", "—", "—", "—", "—"])
    note = ""
    if push:
        a, b = push.s, base.s

        def pct(x):
            return 100 * (x["cpu"] + x["bpf"]) / x["secs"] if x.get("secs") else float("nan")
        pa, pb = pct(a), pct(b)
        alone = runs[1].s if len(runs) == 3 else None
        note = (f"The push's cost in this run: {fmt(pa - pb, 3)} points of a core "
                f"({fmt(pa / pb if pb else None, 2)}x the run without it)" +
                (f"; the push alone (no local file, a fleet's run) {fmt(pct(alone), 2)}% against "
                 f"{fmt(pb, 2)}% for the pprof files alone" if alone else "") +
                (" (*the first collector was sampled by a second at 2999 Hz for "
                 f"{SELF_PROFILE} s: that sampler's BPF runs in its threads and counts in its "
                 "CPU*)" if SELF_PROFILE else "") + "; its encoding "
                f"{fmt(a.get('encode_s'), 3)} s of the drain thread's CPU (the summary's), its "
                f"thread (gzip, spool, HTTP) {fmt(a.get('push_cpu'), 3)} s, together "
                f"{fmt(1e3 * ((a.get('encode_s') or 0) + (a.get('push_cpu') or 0)) / max(1, a.get('encoded') or 1), 1)}"
                f" ms an interval, {fmt(100 * ((a.get('encode_s') or 0) + (a.get('push_cpu') or 0)) / a['secs'], 3)}% of a core. ")
    table("Continuous, over the run", ["run", "CPU + BPF, % of a core", "second half, %",
                                       "CPU s", "BPF s", "window s", "peak RSS MiB",
                                       "RSS after the 3rd interval, MiB", "samples", "lost",
                                       "intervals read", "sampler runs", "BPF µs per run"],
          orows, note + "CPU: every thread's sum_exec_runtime; BPF: its programs' run_time_ns "
          "(bpf_stats), both read at each interval's end, from the first to the last interval "
          "read (the last interval, written at exit, is not in the window).")


def _push_table(runs, push, recv, files):
    """Per interval: the push's bytes and its thread's CPU beside the pprof file."""
    # 3. per interval: the push's bytes beside the pprof file's
    a = push.s
    sizes = {name: os.path.getsize(f) for name, f in files if os.path.exists(f)}
    brows = []
    for k, (start, nsamp) in enumerate(a["interval_samples"]):
        sent = a["sent"].get(k + 1)
        pb = sizes.get(start)
        x = push.rows[k] if k < len(push.rows) else None
        prev = push.rows[k - 1]["push_cpu"] if k and x and x["push_cpu"] is not None else 0
        brows.append([start, nsamp, fmt(pb / 1024 if pb else None, 1),
                      fmt(sent / 1024 if sent else None, 1),
                      fmt(sent / pb if sent and pb else None, 2),
                      fmt(1e3 * (x["push_cpu"] - prev) if x and x["push_cpu"] is not None
                          else None, 1),
                      fmt(x["spool_bytes"] / 1024 if x and x["spool_bytes"] is not None
                          else None, 1)])
    bshown = brows if len(brows) <= MAX_ROWS else \
        brows[::max(1, len(brows) // MAX_ROWS)] + [brows[-1]]
    sent_total = sum(a["sent"].values())
    pprof_total = sum(sizes.values())
    reqs = recv.requests()
    table("The push, interval by interval",
          ["interval (UTC start)", "samples", "profile.pb.gz KiB", "OTLP sent KiB (gzip'd)",
           "OTLP ÷ pprof", "push thread CPU ms", "spool KiB at the interval's end"], bshown,
          f"Over the run: {a.get('accepted')} of {a.get('encoded')} intervals accepted; "
          f"{fmt(a.get('proto_mib'), 2)} MiB of protobuf, {fmt(a.get('sent_mib'), 2)} MiB sent "
          f"gzip'd ({fmt(a['proto_mib'] / a['sent_mib'] if a.get('sent_mib') else None, 1)}x); "
          f"the pprof files {fmt(pprof_total / 1048576, 2)} MiB "
          f"(OTLP sent ÷ pprof {fmt(sent_total / pprof_total if pprof_total else None, 2)}); "
          f"per interval {fmt(sent_total / 1024 / max(1, len(a['sent'])), 1)} KiB sent against "
          f"{fmt(pprof_total / 1024 / max(1, len(sizes)), 1)} KiB of pprof. Retries "
          f"{a.get('retries')}, refused {a.get('refused')}, dropped {a.get('dropped')}, waiting "
          f"at exit {a.get('waiting')}. The receiver logged {len(reqs)} requests "
          f"({sum(x[1] for x in reqs)} sample records) from the collectors that push, which "
          f"wrote {' + '.join(str(len(r.s['interval_samples'])) for r in runs if r.spool)} "
          f"intervals. The push thread's CPU is read at each interval's end: the interval just "
          f"cut is usually sent by then.")


def _bpf_table(push, files):
    """The push collector's BPF programs one by one, and the frames of a sample."""
    # 4. the BPF programs one by one, and the frames of a sample
    p0, p1 = push.progs0, getattr(push, "progs1", {})
    names = sorted({k[3:] for k in p1 if k.startswith("ns:")},
                   key=lambda k: -(p1.get("ns:" + k, 0) - p0.get("ns:" + k, 0)))
    fr = {"samples": 0, "frames": 0, "kernel": 0, "lines": 0}
    for _, f in files:
        try:
            for k, v in pprof_frames(f).items():
                fr[k] += v
        except (OSError, ValueError, IndexError, EOFError) as e:
            log(f"bench: continuous: {f}: {e}")
    fps = fr["frames"] / fr["samples"] if fr["samples"] else None
    prow = []
    secs = push.s["secs"]
    for k in names:
        ns = p1.get("ns:" + k, 0) - p0.get("ns:" + k, 0)
        cnt = p1.get("cnt:" + k, 0) - p0.get("cnt:" + k, 0)
        if not cnt and not ns:
            continue
        prow.append([k, fmt(cnt, 0), fmt(ns / cnt / 1e3 if cnt else None, 2), fmt(ns / 1e9, 3),
                     fmt(100 * ns / 1e9 / secs if secs else None, 3)])
    onsample = (p1.get("ns:on_sample", 0) - p0.get("ns:on_sample", 0),
                p1.get("cnt:on_sample", 0) - p0.get("cnt:on_sample", 0))
    per_run = onsample[0] / onsample[1] if onsample[1] else None
    table("The push collector's BPF programs over the window (bpf_stats)",
          ["program", "runs", "µs per run", "s", "% of a core"], prow,
          f"Frames of a sample (every interval's profile.pb.gz: {fmt(fr['samples'], 0)} samples): "
          f"{fmt(fps, 1)} locations ({fmt(fr['kernel'] / fr['samples'] if fr['samples'] else None, 1)}"
          f" kernel, {fmt((fr['frames'] - fr['kernel']) / fr['samples'] if fr['samples'] else None, 1)}"
          f" user), {fmt(fr['lines'] / fr['samples'] if fr['samples'] else None, 1)} with inlined "
          f"lines; on_sample {fmt(per_run / 1e3 if per_run else None, 2)} µs a run, "
          f"{fmt(per_run / fps if per_run and fps else None, 0)} ns a frame if all of it were per "
          f"frame. A run that samples an idle CPU or a kernel thread walks no user stack.")


def _sampler_fit(push, files):
    """The sampler's run time per run against the frames of each interval's samples."""
    a = push.s
    # the sampler's run time against the frames of the interval's samples:
    # a least-squares line over the intervals (fixed cost + cost per frame)
    byname = dict(files)
    pts = []
    for k, (start, _) in enumerate(a["interval_samples"]):
        if k == 0 or k >= len(push.rows) or start not in byname:
            continue
        (ns1, c1), (ns0, c0) = push.rows[k]["on_sample"], push.rows[k - 1]["on_sample"]
        try:
            f = pprof_frames(byname[start])
        except (OSError, ValueError, IndexError, EOFError):
            continue
        if c1 > c0 and f["samples"]:
            pts.append((f["frames"] / f["samples"], (ns1 - ns0) / (c1 - c0)))
    if len(pts) >= 3:
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        sxx = sum((x - mx) ** 2 for x, _ in pts)
        sxy = sum((x - mx) * (y - my) for x, y in pts)
        syy = sum((y - my) ** 2 for _, y in pts)
        if sxx > 0 and syy > 0:
            slope = sxy / sxx
            r2 = sxy * sxy / (sxx * syy)
            print(f"\nThe sampler's run time against the frames of each interval's samples "
                  f"({len(pts)} intervals, frames {fmt(min(x for x, _ in pts), 1)}-"
                  f"{fmt(max(x for x, _ in pts), 1)} a sample, {fmt(min(y for _, y in pts) / 1e3, 1)}-"
                  f"{fmt(max(y for _, y in pts) / 1e3, 1)} µs a run): least squares "
                  f"{fmt((my - slope * mx) / 1e3, 2)} µs + {fmt(slope, 0)} ns a frame "
                  f"(r² {fmt(r2, 2)}).")


def _summary_lines(push):
    """The push collector's summary lines on the cost."""
    print("\nThe push collector's summary (its lines on the cost):\n\n```")
    for l in push.summary_lines():
        print(l)
    print("```")


def _self_profile_table(self_res):
    """Where the push collector's own CPU went (BENCH_SELF_PROFILE)."""
    cats, total, fns, leaves, cpu_s, wall = self_res

    def lead(c):
        top = sorted(leaves.get(c, {}).items(), key=lambda kv: -kv[1])[:3]
        return ", ".join(f"{f} {100 * v / total:.1f}%" for f, v in top)
    crow = [[c, fmt(v, 0), fmt(100 * v / total, 1), fmt(1e3 * cpu_s * v / total / wall, 2),
             lead(c)] for c, v in sorted(cats.items(), key=lambda kv: -kv[1])]
    top = sorted(fns.items(), key=lambda kv: -kv[1])[:15]
    table(f"Where the push collector's own CPU goes ({SELF_PROFILE} s sampled at 2999 Hz "
          f"by `collector -p PID -f folded`)",
          ["what", "samples", "%", "ms per second", "leading leaf functions (% of all)"],
          crow, f"{total} samples; its CPU over the window {fmt(cpu_s, 3)} s in "
          f"{fmt(wall, 0)} s ({fmt(100 * cpu_s / wall if wall else None, 2)}% of a core, "
          f"the sampler's own cost in it included). Leaf functions: " +
          ", ".join(f"{f} {100 * v / total:.1f}%" for f, v in top))


def _checks_note(files, checks):
    readable = sum(1 for ok, _ in checks if ok)
    bad = [m for ok, m in checks if not ok]
    print(f"\n`go tool pprof -top` read {readable} of {len(files)} interval profiles"
          + (f"; failures: {'; '.join(bad[:3])}" if bad else "") + ".")
