# --otlp to a real OpenTelemetry Collector (tests/integration/otelcol.sh):
# an -a run in 2 s intervals, with split, Debian's python3 and a JVM
# (JavaShares on Debian's OpenJDK 17, started without flags) running, each
# told its service by OTEL_SERVICE_NAME.  Every interval arrives once, in
# order, its samples equal to that interval's local pprof (go tool pprof);
# native, Python, Java (walked in the kernel, named while the JVM runs) and
# kernel frames are named, each with its frame type;
# the services are the targets' own; the collector's own attributes
# (OTEL_RESOURCE_ATTRIBUTES) are on every resource.  Then the push of a run
# without --interval: once, at its end, with the container.id of the
# command's cgroup, and no directory left behind.
. tests/integration/lib.sh
. tests/integration/otelcol.sh
need_root
otelcol_need
command -v go >/dev/null || fail "go missing (golang-go): go tool pprof reads the local profiles"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod
[ -x "$WL/split" ] || fail "build/workloads/split missing"

port=$(otelcol_free_port)
recv=$TMP/recv.jsonl
otelcol_start "$port" "$recv"

OTEL_SERVICE_NAME=otlp-split "$WL/split" 7 >/dev/null &
split=$!
# (pyloop twice over: 6 s of Python, started after the collector has
# loaded however slow its start, under ASan)
OTEL_SERVICE_NAME=otlp-python sh -c "/usr/bin/python3 tests/workloads/pyloop.py &&
	/usr/bin/python3 tests/workloads/pyloop.py" &
py=$!
WLJ=$TOP/build/workloads/java
[ -f "$WLJ/JavaShares.class" ] || fail "no $WLJ/JavaShares.class (make builds it: openjdk-17-jdk-headless)"
start_blocked java "$TMP/java.ready" env OTEL_SERVICE_NAME=otlp-java java -cp "$WLJ" JavaShares \
	--until "$TMP/java.stop" 1 "$TMP/java.truth" "$TMP/java.ready"
jvm=$BG
OTEL_RESOURCE_ATTRIBUTES="deployment.environment=otlp-test,region=here%2Cthere" \
	"$COLLECTOR" -a -F 499 --interval 2 -d 7 --otlp="http://127.0.0.1:$port" \
	--otlp-spool "$TMP/spool" -f pprof -o "$TMP/out" >"$TMP/stdout" 2>"$TMP/err" ||
	{ cat "$TMP/err"; fail "collector -a --otlp exited $?"; }
touch "$TMP/java.stop"
wait "$split" "$py"
wait "$jvm" || fail "JavaShares failed: $(cat "$TMP/java.stderr")"
cat "$TMP/err"

python3 tests/integration/otlp_json.py requests "$recv" >"$TMP/requests" ||
	fail "the receiver's file does not read as OTLP/JSON"
cat "$TMP/requests"
# one request per interval directory, in the order of the intervals, each
# interval once, with the samples of its local profile
n=$(ls "$TMP/out" | grep -cE '^[0-9]{8}T[0-9]{6}Z$')
[ "$n" -ge 3 ] || fail "$n intervals written, expected 3 or 4"
otlp_pushed_as_written "$TMP/out" "$TMP/requests" 2
awk '$2 < 2 { print "interval " $1 ": " $2 " resources"; exit 1 }' "$TMP/requests" ||
	fail "an interval has fewer than 2 resources"
grep -q "OTLP push       $n of $n intervals accepted" "$TMP/err" ||
	fail "the summary does not say every interval was accepted"

# the targets' services, their frames named with their types
python3 tests/integration/otlp_json.py frames "$recv" otlp-split >"$TMP/split-frames"
grep -Eq '^[0-9]+ hot_function native$' "$TMP/split-frames" ||
	{ cat "$TMP/split-frames"; fail "split's hot_function is not a native frame of service otlp-split"; }
grep -Eq '^[0-9]+ main native$' "$TMP/split-frames" || fail "split's main is not named"
python3 tests/integration/otlp_json.py frames "$recv" otlp-python >"$TMP/py-frames"
grep -Eq '^[0-9]+ work cpython$' "$TMP/py-frames" ||
	{ cat "$TMP/py-frames"; fail "pyloop's work() is not a cpython frame of service otlp-python"; }
grep -Eq '^[0-9]+ <module> cpython$' "$TMP/py-frames" || fail "pyloop's <module> is not named"
grep -Eq '^[0-9]+ [^ ]+ native$' "$TMP/py-frames" || fail "python3's interpreter frames are missing"
python3 tests/integration/otlp_json.py frames "$recv" otlp-java >"$TMP/java-frames"
grep -Eq '^[0-9]+ long Shares\.alpha\(long\[\], int\) jvm$' "$TMP/java-frames" ||
	{ cat "$TMP/java-frames"; fail "JavaShares' Shares.alpha is not a jvm frame of service otlp-java"; }
grep -Eq '^[0-9]+ void JavaShares\.main\(java\.lang\.String\[\]\) jvm$' "$TMP/java-frames" ||
	{ cat "$TMP/java-frames"; grep -A2 '^  java ' "$TMP/err"
	  fail "JavaShares.main is not a jvm frame of otlp-java (the walk stopped above it)"; }
grep -Eq '^[0-9]+ JavaCalls::call_helper.* native$' "$TMP/java-frames" ||
	fail "the JVM's own frames below Java's are missing"
python3 tests/integration/otlp_json.py resources "$recv" >"$TMP/resources"
grep "service.name=otlp-split" "$TMP/resources" | head -n 1 >"$TMP/split-res"
grep -q "process.pid=$split " "$TMP/split-res" || fail "split's resource has not its pid"
grep -q "process.executable.name=split " "$TMP/split-res" || fail "split's executable name"
grep -q "host.name=$(hostname) " "$TMP/split-res" || fail "split's resource has not the host's name"
# every resource carries the collector's own attributes, decoded
grep -v 'deployment.environment=otlp-test' "$TMP/resources" >"$TMP/lacking"
[ -s "$TMP/lacking" ] && { head -n 3 "$TMP/lacking"; fail "a resource lacks the collector's OTEL_RESOURCE_ATTRIBUTES"; }
grep -q 'region=here,there' "$TMP/resources" || fail "region's value was not percent-decoded"
# a process that was not told its service: unknown_service and its executable
self=$(basename "$COLLECTOR")
grep -Eq "service.name=unknown_service:$self( |$)" "$TMP/resources" ||
	fail "the collector's own process is not unknown_service:$self"
python3 tests/integration/otlp_json.py frames "$recv" "unknown_service:$self" |
	grep -Eq '^[0-9]+ [^ ]+ kernel$' || fail "no kernel frame in the collector's own samples"

# without --interval: the whole run once, at its end; no file written
# (the command in a cgroup named as Docker names a container's: its id is
# the resource's container.id)
: >"$recv"
mkdir "$TMP/cwd"
cid=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
cg=/sys/fs/cgroup/pids/docker/$cid
mkdir -p "$cg" || fail "cannot make the cgroup $cg (cgroup v1's pids hierarchy)"
add_cleanup "rmdir '$cg' 2>/dev/null; rmdir /sys/fs/cgroup/pids/docker 2>/dev/null"
(cd "$TMP/cwd" && OTEL_SERVICE_NAME=otlp-once "$COLLECTOR" --otlp="http://127.0.0.1:$port" \
	--otlp-spool "$TMP/spool" -- sh -c "echo \$\$ >$cg/cgroup.procs && exec $WL/split 2" \
	>/dev/null 2>"$TMP/err1") || { cat "$TMP/err1"; fail "collector --otlp -- split exited $?"; }
python3 tests/integration/otlp_json.py resources "$recv" | grep "service.name=otlp-once" |
	grep -q "container.id=$cid " || fail "the command's resource has not its container's id"

[ "$(wc -l <"$recv")" -eq 1 ] || fail "a run without --interval pushed $(wc -l <"$recv") requests"
python3 tests/integration/otlp_json.py frames "$recv" otlp-once | grep -Eq '^[0-9]+ hot_function native$' ||
	fail "the command's samples are not in the pushed run"
[ -z "$(ls "$TMP/cwd")" ] || fail "a run that only pushes left an output directory"
echo "OK: $n intervals pushed and received, each once and in order"
