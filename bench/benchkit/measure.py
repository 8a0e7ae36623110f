# SPDX-License-Identifier: GPL-2.0
"""One measured run of a profiler on a workload (measure()), and the
profilers: collector, perf, bpftrace, uftrace and the BPF floors."""
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time

from benchkit.common import (COLLECTOR, Snapshot, bin_, bpf_stats, log, parse_kv, perf_fds,
                             stop, tool_prog_ids, wait_until)


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
    causes = re.findall(r"^    (\S.*?)\s+(\d+)$", err, re.M)
    out["lost_causes"] = {c: int(v) for c, v in causes}
    m = re.search(r"call graph: (\w+)", err)
    if m:
        out["call_graph"] = m.group(1)
    m = re.search(r"unwinding\s+([\d.]+) us per sample.*?(\d+) bytes per sample", err)
    if m:
        out["unwind_us"] = float(m.group(1))
        out["ring_bytes_per_sample"] = int(m.group(2))
    if re.search(r"^  in-kernel sums", err, re.M):
        out["summed_in_kernel"] = True  # no ring record per sample
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
        # its perf events open (after its programs are loaded): since
        # collector -p follows the target's threads, its sampler runs only
        # while they run, and the workload waits for its go off the CPU
        return perf_fds(proc.pid) > 0 and bool(tool_prog_ids(proc.pid))

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

