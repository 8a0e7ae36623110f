# SPDX-License-Identifier: GPL-2.0
"""The load of the busy-machine sections: this project's sources, cloned
into a temporary directory (`git clone` of the tree's HEAD), rebuilt with
`make -j2 collector` again and again (hundreds of cc1, as and ld processes
a minute, each a new process with new images: what a build machine, a CI
runner or a developer's laptop does all day)."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from benchkit.common import ROOT, log

LOOP = "while :; do rm -rf build collector; make -j2 collector >/dev/null 2>&1; done"


class BuildLoop:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="bench-buildloop-")
        self.src = os.path.join(self.tmp, "src")
        self.proc = None

    def __enter__(self):
        log(f"bench: build loop: git clone {ROOT} {self.src}; make -j2 collector, over and over")
        subprocess.run(["git", "clone", "-q", ROOT, self.src], check=True)
        # its own session: stopped as a whole, make and every compiler
        self.proc = subprocess.Popen(["sh", "-c", LOOP], cwd=self.src, start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return self

    def warm_up(self, seconds=10):
        """Lets the loop reach its stride (the first compilations)."""
        time.sleep(seconds)

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return False
