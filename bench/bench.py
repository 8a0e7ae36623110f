#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""collector's bench: overhead, throughput and memory, side by side with peers.

    bench.py SECTION...      SECTION: sampling tracing exporters soak continuous high-rate offcpu
                                  short busy otlp-outage

Prints one Markdown table per measurement on stdout (progress on stderr).
Run through `make bench` (or bench-sampling, ...), which builds what it
needs; see bench/README.md for how to read the tables.

Environment: BENCH_RUNS (repetitions, default 3), BENCH_SIZES (exporter
model sizes), BENCH_BUILD (where the bench binaries are, build/bench),
BENCH_CALLS (calls per tracing run, default 1000000), BENCH_ITERS (deep's
work per sampling run), BENCH_SOAK_MINUTES (default 10).
"""
import os
import sys
import time

# the sections are modules beside this file; no bytecode files in the tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchkit.cfi import cfi  # noqa: E402
from benchkit.common import NCPUS, RUNS, log  # noqa: E402
from benchkit.continuous import continuous  # noqa: E402
from benchkit.exporters import exporters  # noqa: E402
from benchkit.high_rate import high_rate  # noqa: E402
from benchkit.offcpu import offcpu  # noqa: E402
from benchkit.otlp_outage import otlp_outage  # noqa: E402
from benchkit.sampling import dwarf, sampling  # noqa: E402
from benchkit.short_runs import short_runs  # noqa: E402
from benchkit.busy import busy  # noqa: E402
from benchkit.soak import soak  # noqa: E402
from benchkit.tracing import tracing  # noqa: E402


def main():
    sections = sys.argv[1:] or ["sampling", "dwarf", "tracing", "exporters"]
    known = {"sampling": sampling, "dwarf": dwarf, "cfi": cfi, "tracing": tracing,
             "exporters": exporters, "soak": soak, "continuous": continuous,
             "high-rate": high_rate, "offcpu": offcpu,
             "short": short_runs, "busy": busy, "otlp-outage": otlp_outage}
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
