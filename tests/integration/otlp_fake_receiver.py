# SPDX-License-Identifier: GPL-2.0
"""An OTLP/HTTP endpoint that misbehaves on purpose, for the push's tests.

Usage: otlp_fake_receiver.py PORT DIR

Listens on 127.0.0.1:PORT.  Every POST's body (gunzipped when its
Content-Encoding says gzip) goes to DIR/N.body and its headers to
DIR/N.headers (N from 1, in the order the requests were read; a test that
removes the bodies starts the count again), and is
answered as DIR/mode says, read at each request:

  ok          200 with an empty ExportProfilesServiceResponse
  status:N    N, with the text body "fake receiver says N"
  hang        no answer: the connection is held open (and its request not
              recorded) until the client gives up or the mode changes

DIR/ready is made once the port listens.  Stops on SIGTERM.
"""
import gzip
import http.server
import os
import signal
import sys
import threading
import time

PORT = int(sys.argv[1])
DIR = sys.argv[2]
lock = threading.Lock()


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            return f.read().strip() or "ok"
    except OSError:
        return "ok"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if mode() == "hang":
            # hold the connection until the client closes it or the mode
            # changes; the request is not recorded (it was not answered)
            while mode() == "hang":
                time.sleep(0.05)
            self.close_connection = True
            return
        if self.headers.get("Content-Encoding", "") == "gzip":
            body = gzip.decompress(body)
        with lock:
            n = 1 + sum(1 for f in os.listdir(DIR) if f.endswith(".body"))
            with open(os.path.join(DIR, "%d.headers" % n), "w") as f:
                f.write("POST %s\n" % self.path)
                for k, v in self.headers.items():
                    f.write("%s: %s\n" % (k.lower(), v))
            with open(os.path.join(DIR, "%d.body" % n), "wb") as f:
                f.write(body)
        m = mode()
        status = int(m.split(":", 1)[1]) if m.startswith("status:") else 200
        reply = b"" if status == 200 else ("fake receiver says %d" % status).encode()
        self.send_response(status)
        self.send_header("Content-Type",
                         "application/x-protobuf" if status == 200 else "text/plain")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=server.shutdown).start())
open(os.path.join(DIR, "ready"), "w").close()
server.serve_forever()
