# SPDX-License-Identifier: GPL-2.0
"""Section 3: the writers' throughput and memory (bench/exporters.c)."""
import os
import re
import resource
import shutil
import subprocess
import tempfile

from benchkit.common import RUNS, SIZES, bin_, fmt, fmt_spread, log, median, table


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

