#!/bin/sh
# Debug info from a debuginfod server: Debian's debuginfod on the loopback
# address serves a directory holding the debug file of a stripped program;
# with DEBUGINFOD_URLS the program's functions and lines come back, without
# it they are FDE functions (PROGRAM+0xSTART); an unreachable server
# changes nothing else.
. tests/integration/lib.sh
need_root
command -v debuginfod >/dev/null || fail "debuginfod missing (debuginfod)"
command -v curl >/dev/null || skip "curl missing"

cat >"$TMP/dbg.c" <<'C'
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) static void dbgd_hot(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i * i;
}
int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 1);
	while (time(NULL) < end)
		dbgd_hot();
	return 0;
}
C
mkdir -p "$TMP/srv"
gcc -g -O1 -fno-omit-frame-pointer -o "$TMP/full" "$TMP/dbg.c" || fail "gcc failed"
objcopy --only-keep-debug "$TMP/full" "$TMP/srv/dbg.debug"
strip --strip-all -o "$TMP/dbg" "$TMP/full"
id=$(readelf -n "$TMP/dbg" | sed -n 's/.*Build ID: *//p')
[ -n "$id" ] || fail "no build-id"

# the server, on a port of its own; up once it serves the debug file
port=$((20000 + $$ % 20000))
debuginfod -F -p "$port" -d "$TMP/db.sqlite" -t 0 "$TMP/srv" >"$TMP/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$TMP"' EXIT
for i in $(seq 1 100); do
	curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$id/debuginfo" && break
	kill -0 $server 2>/dev/null || { cat "$TMP/server.log"; fail "debuginfod exited"; }
	sleep 0.2
done
curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$id/debuginfo" ||
	{ cat "$TMP/server.log"; fail "debuginfod does not serve $id"; }

run() {
	"$COLLECTOR" -f callgrind -o "$TMP/$1" -- "$TMP/dbg" 2 >/dev/null 2>"$TMP/$1.summary" ||
		{ cat "$TMP/$1.summary"; fail "$1: collector exited $?"; }
}
# names and lines from the server (a cache of this test's own)
export DEBUGINFOD_CACHE_PATH="$TMP/cache"
DEBUGINFOD_URLS="http://127.0.0.1:$port" run served
grep -q " dbgd_hot  *dbg\$" "$TMP/served.summary" ||
	{ cat "$TMP/served.summary"; fail "served: no dbgd_hot in the summary"; }
grep -q "^fl=.*dbg\\.c" "$TMP"/served/callgrind.out.* || fail "served: no source file in Callgrind"
[ -n "$(find "$TMP/cache" -name debuginfo)" ] || fail "served: nothing in the cache"

# without the variable: nothing asked, the FDE's function
unset DEBUGINFOD_URLS
run local
grep -q " dbg+0x[0-9a-f]*  *dbg\$" "$TMP/local.summary" ||
	{ cat "$TMP/local.summary"; fail "without DEBUGINFOD_URLS: no FDE function"; }
grep -q "dbgd_hot" "$TMP/local.summary" && fail "without DEBUGINFOD_URLS: names came back"

# an unreachable server (a closed port): the same as without, and the
# run ends (at most DEBUGINFOD_TIMEOUT is spent on it)
DEBUGINFOD_URLS="http://127.0.0.1:1" DEBUGINFOD_TIMEOUT=2 DEBUGINFOD_CACHE_PATH="$TMP/cache2" \
	run unreachable
grep -q " dbg+0x[0-9a-f]*  *dbg\$" "$TMP/unreachable.summary" ||
	{ cat "$TMP/unreachable.summary"; fail "unreachable server: not the FDE function"; }
echo ok
