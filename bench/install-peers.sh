#!/bin/sh
# Install, with apt-get, the peer tools the bench compares collector with:
# perf (linux-perf), bpftrace and uftrace, and what the bench itself runs
# (time, python3).  Only what is missing is installed, through sudo only
# when not already root.
exec "$(dirname "$0")/../scripts/install-deps.sh" linux-perf bpftrace uftrace time python3
