# SPDX-License-Identifier: GPL-2.0
"""The OTLP push in the benches (benchkit/continuous.py,
benchkit/otlp_outage.py): the receiver they push to (the OpenTelemetry
Collector of the tests, tests/otelcol, built by scripts/build-otelcol.sh) and
what they read of the push from the collector (its push thread and that
thread's CPU, the summary's `OTLP push` lines)."""
import glob
import os
import re
import signal
import socket
import subprocess

from benchkit.common import ROOT, stop, tool_cpu_ns, wait_until


# ---------------------------------------------------------------------------
# The receiver: the OpenTelemetry Collector of the tests (tests/otelcol,
# built by scripts/build-otelcol.sh), started as tests/integration/otelcol.sh
# starts it.  The debug exporter at verbosity basic logs one line per request
# (its resources and samples); jsonfile, when asked, appends each request as
# one line of OTLP/JSON (read by tests/integration/otlp_json.py).

def otelcol_path():
    """The binary of the current sources, or (None, why)."""
    p = subprocess.run([os.path.join(ROOT, "scripts", "build-otelcol.sh"), "--path"],
                       capture_output=True, text=True)
    path = p.stdout.strip()
    if p.returncode == 0 and path and os.access(path, os.X_OK):
        return path, None
    return None, (p.stderr.strip() or "no binary")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _connects(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class Receiver:
    def __init__(self, binary, tmp, jsonfile=None):
        self.binary, self.port, self.jsonfile = binary, free_port(), jsonfile
        self.cfg = os.path.join(tmp, "otelcol.yaml")
        self.log = os.path.join(tmp, "otelcol.log")
        self.proc = None
        self.cpu_ns = 0          # CPU of the instances stopped so far
        exporters = ["debug"] + (["jsonfile"] if jsonfile else [])
        with open(self.cfg, "w") as f:
            f.write("receivers:\n  otlp:\n    protocols:\n      http:\n"
                    f"        endpoint: \"127.0.0.1:{self.port}\"\n"
                    "exporters:\n  debug:\n    verbosity: basic\n" +
                    (f"  jsonfile:\n    path: \"{jsonfile}\"\n" if jsonfile else "") +
                    "service:\n  telemetry:\n    metrics:\n      level: none\n"
                    # every request's line: no sampling of repeated lines
                    "    logs:\n      sampling:\n        enabled: false\n"
                    f"      output_paths: [\"{self.log}\"]\n"
                    f"      error_output_paths: [\"{self.log}\"]\n"
                    "  pipelines:\n    profiles:\n      receivers: [otlp]\n"
                    f"      exporters: [{', '.join(exporters)}]\n")
        open(self.log, "w").close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def _ready_lines(self):
        with open(self.log, errors="replace") as f:
            return f.read().count("Everything is ready")

    def start(self):
        before = self._ready_lines()
        with open(self.log, "a") as logf:
            self.proc = subprocess.Popen([self.binary, f"--config={self.cfg}",
                                         "--feature-gates=service.profilesSupport"],
                                        stdout=logf, stderr=logf)
        ok = wait_until(lambda: self.proc.poll() is not None or
                        (self._ready_lines() > before and _connects(self.port)), 30,
                        "the OpenTelemetry Collector to accept connections")
        if not ok or self.proc.poll() is not None:
            with open(self.log, errors="replace") as f:
                tail = f.read()[-1500:]
            raise RuntimeError(f"the OpenTelemetry Collector did not start on {self.url}: {tail}")

    def cpu(self):
        """CPU seconds of every instance so far (the running one's included)."""
        live = tool_cpu_ns(self.proc.pid) if self.proc and self.proc.poll() is None else 0
        return (self.cpu_ns + live) / 1e9

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.cpu_ns += tool_cpu_ns(self.proc.pid)
            stop(self.proc, signal.SIGTERM, 30)
        self.proc = None

    def requests(self):
        """[(resource profiles, sample records)] of every request the debug
        exporter logged."""
        out = []
        with open(self.log, errors="replace") as f:
            for line in f:
                if '"otelcol.component.id": "debug"' not in line or "\tProfiles\t" not in line:
                    continue
                m = re.search(r'"resource profiles": (\d+), "sample records": (\d+)', line)
                if m:
                    out.append((int(m.group(1)), int(m.group(2))))
        return out


# ---------------------------------------------------------------------------
# The push as the collector shows it: its thread (and that thread's CPU), the
# summary's lines.

def pusher_tid(pid):
    """The push thread: the one that blocks every signal (transport/pusher.c)."""
    for st in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            with open(st) as f:
                blk = next((l.split()[1] for l in f if l.startswith("SigBlk:")), "0")
        except OSError:
            continue
        if bin(int(blk, 16)).count("1") >= 32:
            return int(st.split("/")[4])
    return None


def thread_cpu_ns(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError, TypeError):
        return None


def push_summary(text):
    """The summary's two `OTLP push` lines."""
    out = {}
    m = re.search(r"OTLP push\s+(\d+) of (\d+) intervals accepted by \S+"
                  r"(?: \(([\d.]+) MiB of protobuf, ([\d.]+) MiB sent)?", text)
    if m:
        out["accepted"], out["encoded"] = int(m.group(1)), int(m.group(2))
        if m.group(3):
            out["proto_mib"], out["sent_mib"] = float(m.group(3)), float(m.group(4))
    m = re.search(r"(\d+) retries, (\d+) refused, (\d+) dropped, (\d+) waiting in \S+ "
                  r"\(([\d.]+) MiB\).*?encoding took ([\d.]+) s", text)
    if m:
        out["retries"], out["refused"], out["dropped"] = (int(m.group(i)) for i in (1, 2, 3))
        out["waiting"], out["waiting_mib"] = int(m.group(4)), float(m.group(5))
        out["encode_s"] = float(m.group(6))
    return out
