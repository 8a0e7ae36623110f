# SPDX-License-Identifier: GPL-2.0
"""Section cfi: the unwinder in BPF (--call-graph cfi) beside the
frame-pointer walk, the user-space dwarf unwinder, perf --call-graph dwarf
and bpftrace, on the 43-frame chain built with and without frame pointers,
at 999 and 9 999 Hz, cfi and fp each with the samples summed in the kernel
(-f folded needs no time order) and streamed (--no-aggregate); then the
unwind tables' build time and memory for -a, xz, python3 and node."""
import os
import re
import shutil
import subprocess
import tempfile

from benchkit.common import COLLECTOR, ITERS, RUNS, bin_, bpf_stats_enabled, fmt, log, median, table
from benchkit.measure import Bpftrace, Collector, PerfDwarf, Tool
from benchkit.sampling import run_rounds, sampling_table

# a sample record: the ring's 8-byte header, struct collector_sample_event
# (56 bytes), then 8 bytes per frame (kernel and user)
RECORD_BYTES, FRAME_BYTES = 8 + 56, 8


class CollectorFolded(Collector):
    """collector writing the folded format, from which the frames per
    sample (and so the bytes per sample through the ring) are counted."""

    def __init__(self, name, extra, hz):
        super().__init__(name, ["-f", "folded"] + extra, hz)

    def finish(self, proc, tmp):
        res = super().finish(proc, tmp)
        frames = samples = 0
        try:
            with open(os.path.join(tmp, "out", "collector.folded")) as f:
                for line in f:
                    stack, _, n = line.rstrip("\n").rpartition(" ")
                    frames += int(n) * stack.count(";")  # the first item is the command
                    samples += int(n)
        except (OSError, ValueError):
            return res
        if samples and res.get("call_graph") in ("cfi", "fp"):
            res["frames"] = frames / samples
            res["ring_bytes_per_sample"] = 0 if res.get("summed_in_kernel") else \
                RECORD_BYTES + FRAME_BYTES * frames / samples
        return res


def cfi():
    old_stats = bpf_stats_enabled(True)
    try:
        for wl_name, fp in (("deep", True), ("deep-nofp", False)):
            for hz in (999, 9999):
                cfi, fpw = ["--call-graph", "cfi"], ["--call-graph", "fp"]
                stream = ["--no-aggregate"]
                tools = [
                    Tool(),
                    # run_rounds() compares every tool with the one named
                    # "collector": cfi, summed in the kernel
                    CollectorFolded("collector", cfi, hz),
                    CollectorFolded("collector --call-graph cfi --no-aggregate", cfi + stream, hz),
                    CollectorFolded("collector --call-graph fp", fpw, hz),
                    CollectorFolded("collector --call-graph fp --no-aggregate", fpw + stream, hz),
                    Collector("collector --call-graph dwarf",
                              ["-f", "folded", "--call-graph", "dwarf"], hz),
                    PerfDwarf(hz),
                ]
                if fp:
                    tools.append(Bpftrace("bpftrace (profile, ustack)",
                                          f"profile:hz:{hz} /pid == PID/ {{ @[ustack] = count(); }}",
                                          ["perf_event"]))
                label = f"cfi {wl_name} {hz} Hz"
                results = run_rounds(tools, [bin_(wl_name), str(ITERS)], label)
                print(f"\n### {wl_name} ({'frame pointers' if fp else 'no frame pointers'}); "
                      "collector: --call-graph cfi, summed in the kernel")
                sampling_table(hz, tools, results)
                notes = []
                for t in tools[1:]:
                    rs = [r for r in results[t.name] if r]
                    b = [r["ring_bytes_per_sample"] for r in rs
                         if r.get("ring_bytes_per_sample") is not None]
                    fr = [r["frames"] for r in rs if r.get("frames")]
                    if b and all(x is not None for x in b):
                        notes.append(f"{t.name}: {fmt(median(b), 0)} bytes per sample"
                                     + (f" ({fmt(median(fr), 1)} frames)" if fr else ""))
                print("\nBytes per sample through the ring (perf: perf.data per sample; "
                      "0 when summed in the kernel): " + "; ".join(notes) + ".")
        tables_figures()
    finally:
        bpf_stats_enabled(old_stats == "1")


def _tables_line(err):
    m = re.search(r"unwind tables: (\d+) images, (\d+) rows and \d+ page index entries "
                  r"\(([\d.]+) MiB of ([\d.]+) MiB of maps\), built and loaded in ([\d.]+) ms", err)
    c = re.search(r"truncated stacks ([\d.]+)%", err)
    if not m:
        return None
    return [m.group(1), m.group(2), m.group(3), m.group(4), m.group(5),
            f"{100 - float(c.group(1)):.1f}" if c else "?"]


def tables_figures():
    """Build time and memory of the unwind tables, one run each."""
    tmp = tempfile.mkdtemp(prefix="bench-cfi-")
    rows = []
    try:
        inp = os.path.join(tmp, "input")
        with open(inp, "w") as f:
            for i in range(1, 150001):
                f.write(f"{i} {i * 7919 % 1000003} line of text for xz to chew on\n")
        loop = "import time\nt = time.time()\nwhile time.time() - t < 2: sum(range(10000))\n"
        runs = [("xz -6", ["--", "xz", "-6", "-c", inp]),
                ("python3", ["--", "/usr/bin/python3", "-c", loop])]
        if shutil.which("node"):
            runs.append(("node", ["--", "node", "-e",
                                  "const t = Date.now(); while (Date.now() - t < 2000) {}"]))
        runs.append(("-a (3 s, this machine)", ["-a", "-d", "3"]))
        for i, (name, args) in enumerate(runs):
            log(f"bench: cfi tables: {name}")
            out = os.path.join(tmp, f"out{i}")
            # the tables' figures are in the summary with -v
            p = subprocess.run([COLLECTOR, "-v", "--call-graph", "cfi", "-f", "folded",
                                "-o", out] + args,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               timeout=300)
            r = _tables_line(p.stderr)
            rows.append([name] + (r if r else ["failed"] + [""] * 5))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    table("Unwind tables (--call-graph cfi): images, rows, memory and build time, one run each",
          ["run", "images", "rows", "rows + page index MiB", "maps MiB (allocated)",
           "build + load ms", "complete stacks %"], rows,
          "Rows are 8 bytes, and so is a page index entry (one per 256 bytes of text, kept "
          "after the image's rows); the maps grow in chunks of 2 MiB as the images need them "
          "(up to 64 MiB). Build + load: the tables built and written into the maps, and "
          "the processes' mapping tables, in the collector's own thread.")
