# SPDX-License-Identifier: GPL-2.0
"""The receiver down (`make bench-otlp-outage`): `collector -a -F 99
--interval 10 -f pprof -v --otlp=URL` under the build loop, pushing to a
real OpenTelemetry Collector on 127.0.0.1 (scripts/build-otelcol.sh; the
section is skipped, loudly, without it) that is stopped after
BENCH_OUTAGE_BEFORE seconds (120), kept down for BENCH_OUTAGE_SECONDS (600)
and started again for BENCH_OUTAGE_AFTER seconds (120) before the collector
stops.  Printed: the collector's RSS, CPU and spool (files, bytes) after
every interval, and whether every interval it wrote reached the receiver
once and in order (the receiver's jsonfile read by
tests/integration/otlp_json.py: one request per interval, named by its
profiles' timeUnixNano, against the local directories' names, samples
against the collector's own count)."""
import collections
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from benchkit.buildloop import BuildLoop
from benchkit.common import COLLECTOR, ROOT, bpf_stats_enabled, fmt, log, stop, table, wait_until
from benchkit.continuous import INTERVAL, Machine, Run
from benchkit.otlp import Receiver, otelcol_path

BEFORE = int(os.environ.get("BENCH_OUTAGE_BEFORE", "120"))
OUTAGE = int(os.environ.get("BENCH_OUTAGE_SECONDS", "600"))
AFTER = int(os.environ.get("BENCH_OUTAGE_AFTER", "120"))
MAX_ROWS = 45


def _requests(jsonfile):
    """[(UTC start, resources, samples)] of the receiver's requests, in order."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "integration", "otlp_json.py"),
                        "requests", jsonfile], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        log(f"bench: otlp-outage: otlp_json.py: {p.stderr.strip()[-400:]}")
    out = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            out.append((f[0], int(f[1]), int(f[2])))
    return out


def otlp_outage():
    binary, why = otelcol_path()
    if binary is None:
        log("bench: otlp-outage: *** the OpenTelemetry Collector is not built "
            f"({why.splitlines()[-1] if why else ''}): SKIPPED; build it with "
            "scripts/build-otelcol.sh (root, a few minutes) ***")
        print("\n*The outage run was skipped: the OpenTelemetry Collector is not built "
              "(scripts/build-otelcol.sh).*")
        return
    total = BEFORE + OUTAGE + AFTER
    tmp = tempfile.mkdtemp(prefix="bench-otlp-outage-")
    jsonfile = os.path.join(tmp, "received.jsonl")
    recv = Receiver(binary, tmp, jsonfile)
    spool = os.path.join(tmp, "spool")
    out = os.path.join(tmp, "out")
    argv = [COLLECTOR, "-a", "-F", "99", "--interval", str(INTERVAL), "-f", "pprof", "-v",
            "-d", str(total), "-o", out, f"--otlp={recv.url}", "--otlp-spool", spool]
    run = Run("push", argv, out, os.path.join(tmp, "collector.log"), spool)
    old_stats = bpf_stats_enabled(True)
    phases = []      # (t, what)
    try:
        with BuildLoop() as loop:
            loop.warm_up()
            recv.start()
            log(f"bench: otlp-outage: {' '.join(argv)}; the receiver down from {BEFORE} s "
                f"for {OUTAGE} s")
            run.start()
            wait_until(run.live, 60, "collector to open its perf events")
            t0 = time.monotonic()
            run.base(t0)
            machine = Machine(loop.proc.pid)
            down = up = False
            while not run.done:
                time.sleep(0.5)
                n = len(run.rows)
                run.poll()
                if len(run.rows) != n:
                    run.rows[-1]["machine"] = machine.reading()
                t = time.monotonic() - t0
                if not down and t >= BEFORE:
                    recv.stop()
                    down = True
                    phases.append((t, "receiver stopped"))
                    log(f"bench: otlp-outage: receiver stopped at {t:.0f} s")
                if down and not up and t >= BEFORE + OUTAGE:
                    recv.start()
                    up = True
                    phases.append((t, "receiver started again"))
                    log(f"bench: otlp-outage: receiver started again at {t:.0f} s")
            s = run.finish(timeout=total + 300)
            time.sleep(2)
            recv.stop()
    finally:
        bpf_stats_enabled(old_stats == "1")
        if run.proc is not None and run.proc.poll() is None:
            stop(run.proc, signal.SIGKILL, 10)
        recv.stop()
    try:
        report(run, s, recv, jsonfile, phases, total)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(run, s, recv, jsonfile, phases, total):
    t_down = phases[0][0] if phases else None
    t_up = phases[1][0] if len(phases) > 1 else None

    def phase(t):
        if t_down is None or t < t_down:
            return "up"
        if t_up is None or t < t_up:
            return "DOWN"
        return "up again"

    rows = [[r["n"], f"{r['t']:.0f}", phase(r["t"]), fmt(r["rss"], 1), fmt(r["anon"], 1),
             fmt(r["hwm"], 1), fmt(r["share"], 2), r["spool_files"],
             fmt(r["spool_bytes"] / 1024, 1),
             fmt(1e3 * r["push_cpu"] if r["push_cpu"] is not None else None, 1),
             fmt(r["machine"][0], 0) if "machine" in r else "—",
             (f"{fmt(r['machine'][1], 1)} ({r['machine'][2]})" if r["machine"][2]
              else fmt(r["machine"][1], 1)) if "machine" in r else "—"]
            for r in run.rows]
    shown = rows if len(rows) <= MAX_ROWS else rows[::max(1, len(rows) // MAX_ROWS)] + [rows[-1]]
    by = collections.defaultdict(list)
    for r in run.rows:
        by[phase(r["t"])].append(r)

    def rng(key, ph, digits=1):
        xs = [r[key] for r in by.get(ph, [])]
        return f"{fmt(min(xs), digits)}-{fmt(max(xs), digits)}" if xs else "—"
    table(f"Receiver outage: `collector -a -F 99 --interval {INTERVAL} -f pprof -v --otlp` for "
          f"{total} s under the build loop, the OpenTelemetry Collector stopped at "
          f"{fmt(t_down, 0)} s and started again at {fmt(t_up, 0)} s",
          ["interval", "s", "receiver", "RSS MiB", "of which anonymous", "peak RSS MiB",
           "CPU + BPF this interval, % of a core", "spool files", "spool KiB",
           "push thread CPU ms (cumulative)", "machine busy, % of its CPUs",
           "other jobs' CPU s (top 3)"], shown,
          f"RSS before the outage {rng('rss', 'up')} MiB (anonymous {rng('anon', 'up')}), during "
          f"it {rng('rss', 'DOWN')} (anonymous {rng('anon', 'DOWN')}), after "
          f"{rng('rss', 'up again')} (anonymous {rng('anon', 'up again')}); peak "
          f"{fmt(s.get('peak'), 1)} MiB. Spool at its largest "
          f"{max((r['spool_files'] or 0 for r in run.rows), default=0)} files, "
          f"{fmt(max((r['spool_bytes'] or 0 for r in run.rows), default=0) / 1024, 1)} KiB. "
          f"CPU + BPF over the run {fmt(100 * (s['cpu'] + s['bpf']) / s['secs'] if s.get('secs') else None, 2)}% "
          f"of a core ({fmt(s.get('cpu'), 2)} s + {fmt(s.get('bpf'), 3)} s BPF in "
          f"{fmt(s.get('secs'), 0)} s); the push's encoding {fmt(s.get('encode_s'), 3)} s, its "
          f"thread {fmt(s.get('push_cpu'), 3)} s.")

    # delivery: every interval written, once, in order, with its samples
    written = [(name, int(n)) for name, n in s.get("interval_samples", [])]
    local = sorted(os.path.basename(d) for d in glob.glob(os.path.join(run.out, "*Z")))
    got = _requests(jsonfile) if os.path.exists(jsonfile) else []
    names = [g[0] for g in got]
    counts = collections.Counter(names)
    want = [w[0] for w in written]
    missing = [w for w in want if w not in counts]
    twice = sorted(n for n, c in counts.items() if c > 1)
    extra = sorted(n for n in counts if n not in set(want))
    in_order = names == sorted(names)
    samples_want = dict(written)
    samples_bad = [(n, samples_want[n], c) for n, _, c in got
                   if n in samples_want and samples_want[n] != c]
    drows = [["intervals written (-v lines)", len(written)],
             ["interval directories written", len(local)],
             ["requests the receiver wrote (jsonfile lines)", len(got)],
             ["intervals received once", sum(1 for w in want if counts.get(w) == 1)],
             ["missing", f"{len(missing)} {' '.join(missing[:5])}".strip()],
             ["received twice or more", f"{len(twice)} {' '.join(twice[:5])}".strip()],
             ["received, not written", f"{len(extra)} {' '.join(extra[:5])}".strip()],
             ["received in order", "yes" if in_order else "NO"],
             ["samples differing from the interval's", f"{len(samples_bad)} "
              f"{' '.join(f'{n}:{a}/{b}' for n, a, b in samples_bad[:3])}".strip()],
             ["push summary", f"{s.get('accepted')} of {s.get('encoded')} accepted, "
              f"{s.get('retries')} retries, {s.get('refused')} refused, {s.get('dropped')} "
              f"dropped, {s.get('waiting')} waiting at exit; {fmt(s.get('proto_mib'), 2)} MiB "
              f"of protobuf, {fmt(s.get('sent_mib'), 2)} MiB sent"]]
    table("Receiver outage: delivery", ["what", "count"], drows,
          "The receiver's jsonfile exporter writes each request before answering it; a request "
          "is named by its profiles' timeUnixNano (the interval's UTC start, as the local "
          "directory is named). Its debug exporter logged "
          f"{len(recv.requests())} requests.")
    print("\nThe collector's messages on the push (stderr):\n\n```")
    for l in run.text.splitlines():
        if "OTLP endpoint" in l or "OTLP push" in l or " retries, " in l:
            print(l.rstrip())
    print("```")
