#!/bin/sh
# Java by attach (runtimes/jvm/), the fallback for a JVM whose Java frames
# are not walked (--no-jvm-walk here, or --call-graph fp; a JVM the walk does not know; the
# walk itself: test_java_walk): a JVM started without flags writes no
# perf map; `collector -p PID` asks it for one through HotSpot's attach
# listener (as `jcmd PID Compiler.perfmap`) and names its hot method, in ONE
# row although the map lists several compiled copies of it, with the share
# perf gives over the same window from the same map (within 5 points).  A
# JVM that does not answer (-XX:+DisableAttachMechanism) is left alone
# after 2 s and said so; a process with JIT code that is not a JVM (node
# without --perf-basic-prof) is left alone and said so; --no-jvm-attach
# asks nothing; a map older than the JVM (an earlier process's of the same
# pid) is no agent's: the JVM is asked.  The summary says each JVM was not
# walked.  A -p target that becomes a JVM after the run began is walked
# (the JVM's walks, of samples and of switch-outs, loaded when the run
# meets it).
. tests/integration/lib.sh
need_root
command -v java >/dev/null || skip "java missing (openjdk-17-jdk-headless)"
command -v javac >/dev/null || skip "javac missing (openjdk-17-jdk-headless)"
command -v perf >/dev/null || fail "perf missing (linux-perf)"

cat >"$TMP/Kestrel.java" <<'JAVA'
public class Kestrel {
    static long hotMix(long[] a, int n) {
        long x = 1;
        for (int r = 0; r < n; r++)
            for (int i = 0; i < a.length; i++) { x ^= a[i] + (x << 13); x ^= x >>> 7; a[i] = x; }
        return x;
    }
    static double coldSum(int n) {
        double s = 0;
        for (int i = 0; i < n; i++) s += Math.sqrt(i);
        return s;
    }
    // Kestrel SECONDS naps: a thread sleeps 5 ms at a time besides
    static void napOnce() throws InterruptedException { Thread.sleep(5); }
    static void naps() {
        try { for (;;) napOnce(); } catch (InterruptedException e) { }
    }
    public static void main(String[] args) throws Exception {
        long end = System.nanoTime() + (long)(Double.parseDouble(args[0]) * 1e9);
        if (args.length > 1) {
            Thread t = new Thread(Kestrel::naps, "kestrel-naps");
            t.setDaemon(true);
            t.start();
        }
        long[] a = new long[4096];
        long t = 0;
        while (System.nanoTime() < end) { t += hotMix(a, 50); t += (long)coldSum(20000); }
        System.out.println(t != 0 ? "done" : "zero");
    }
}
JAVA
javac -d "$TMP" "$TMP/Kestrel.java" || fail "javac failed"
HOT='long Kestrel.hotMix(long[], int)'
JVMS=""
NODE=""
cleanup_jvms() {
	for p in $JVMS $NODE; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
NSDIR=""
# /tmp/perf-PID.map written since this test began: pids are reused, and a
# map an earlier process of the same pid left (a node's, a JVM's) is older
touch "$TMP/started"
map_written() {
	[ -n "$(find /tmp -maxdepth 1 -name "perf-$1.map" -newer "$TMP/started" 2>/dev/null)" ]
}
# the maps this test's JVMs wrote do not outlive it
remove_maps() {
	for p in $JVMS; do map_written "$p" && rm -f "/tmp/perf-$p.map"; done
}
# (through add_cleanup: a trap of the test's own was replaced by the first
# add_cleanup below, and the JVMs outlived the test)
add_cleanup 'cleanup_jvms; remove_maps; [ -z "$NSDIR" ] || rm -rf "$NSDIR"'

# the JVM runs its hot loop 2 s before it is sampled (compiled by then)
java -cp "$TMP" Kestrel 30 >"$TMP/jvm.out" 2>&1 &
jvm=$!
JVMS="$jvm"
sleep 2.5
! map_written "$jvm" || fail "the JVM wrote a perf map of its own: nothing to ask"
perf record -F 999 -p "$jvm" -o "$TMP/perf.data" -- sleep 5 >/dev/null 2>&1 &
perf=$!
"$COLLECTOR" --no-jvm-walk -p "$jvm" -d 5 -o "$TMP/out" >"$TMP/stdout" 2>"$TMP/summary"
rc=$?
wait "$perf"
cat "$TMP/summary"
[ $rc -eq 0 ] || fail "collector exited $rc"
grep -q "PID $jvm: its perf map written on request" "$TMP/summary" ||
	fail "the summary does not say the JVM was asked for its perf map"
grep -q "java            1 JVM not walked (--no-jvm-walk" "$TMP/summary" ||
	fail "the summary does not say the JVM was not walked"
copies=$(grep -c "hotMix" "/tmp/perf-$jvm.map")
[ "$copies" -ge 2 ] || fail "the perf map lists $copies copies of hotMix: nothing to group"
# one row per method in the summary, speedscope and Callgrind
rows=$(awk -v fn="$HOT" '/^Top functions by self/ { on = 1; next } /^Top functions by total/ { on = 0 }
	on && index($0, fn) { n++ } END { print n + 0 }' "$TMP/summary")
[ "$rows" -eq 1 ] || fail "hotMix in $rows rows of the summary's self table (copies: $copies)"
mine=$(awk -v fn="$HOT" '/^Top functions by self/ { on = 1; next } on && index($0, fn) {
	sub("%", "", $1); print $1; exit }' "$TMP/summary")
"$COLLECTOR" dump "$TMP/out/profile.pb.gz" >"$TMP/pprof.txt" || fail "dump of profile.pb.gz failed"
grep -qF "$HOT" "$TMP/pprof.txt" || fail "hotMix is not named in pprof"
n=$(node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1]));
	console.log(d.shared.frames.filter(f => f.name.includes("hotMix")).length)' \
	"$TMP/out/speedscope.json") || fail "cannot read speedscope.json"
[ "$n" -eq 1 ] || fail "hotMix is $n frames in speedscope"
# a name is given once, with its id, where it first appears: in a fn= line,
# or in the cfn= line of a caller written before it (then its own fn= line
# holds the id alone); the functions named hotMix are the ids given that name
n=$(awk -v fn="$HOT" '/^c?fn=\([0-9]+\) / { id = $0; sub(/^c?fn=\(/, "", id); sub(/\).*/, "", id)
		name = $0; sub(/^c?fn=\([0-9]+\) /, "", name)
		if (name == fn && !(FILENAME SUBSEP id in seen)) { seen[FILENAME SUBSEP id] = 1; n++ } }
	END { print n + 0 }' "$TMP"/out/callgrind.out.*)
[ "$n" -eq 1 ] || fail "hotMix is $n Callgrind functions"
# perf over the same window, from the same map
perf report -i "$TMP/perf.data" --stdio --sort sym 2>/dev/null >"$TMP/perf.txt"
theirs=$(awk -v fn="$HOT" '$1 ~ /%$/ && index($0, fn) { sub("%", "", $1); s += $1 } END { print s + 0 }' \
	"$TMP/perf.txt")
echo "hotMix: collector $mine%, perf $theirs% (copies in the map: $copies)"
d=$(awk -v a="$mine" -v b="$theirs" 'BEGIN { d = a - b; print d < 0 ? -d : d }')
within "$d" 0 5 || fail "hotMix: collector $mine%, perf $theirs%: more than 5 points apart"
within "$mine" 50 100 || fail "hotMix has $mine% of the samples"

# --interval: asked again at each cut (code compiled since is named too):
# every interval names hotMix and nearly all its JIT code (code freed
# between its sample and the cut is in no map)
"$COLLECTOR" --no-jvm-walk -p "$jvm" -d 4 --interval 2 -f folded -o "$TMP/outi" >/dev/null 2>"$TMP/summaryi" ||
	fail "collector --interval on the JVM failed"
n=0
for d in "$TMP"/outi/*/; do
	n=$((n + 1))
	grep -qF "$HOT" "$d/collector.folded" || fail "interval $d: hotMix not named"
	unnamed=$(awk '{ n = $NF; $NF = ""; if (index($0, "[jit]_[j]")) u += n; if (index($0, "_[j]")) j += n }
		END { printf "%.1f", j ? 100 * u / j : 100 }' "$d/collector.folded")
	within "$unnamed" 0 5 || fail "interval $d: $unnamed% of the JIT samples unnamed"
done
[ "$n" -ge 2 ] || fail "$n intervals written, not 2"
# its map, HotSpot's own from the first run, is asked for again (stale)
grep -q "PID $jvm: its perf map written on request" "$TMP/summaryi" ||
	fail "--interval: the JVM with a map of the first run's request was not asked again"

# --call-graph fp: the walk, which goes on from the cfi walk, is not
# used; the JVM is asked instead, its JIT code named, and the summary says
# why it was not walked
"$COLLECTOR" --call-graph fp -p "$jvm" -d 1 -f folded -o "$TMP/outfp" >/dev/null 2>"$TMP/summaryfp" ||
	fail "collector --call-graph fp on the JVM failed"
grep -q "java            1 JVM not walked (--call-graph fp)" "$TMP/summaryfp" ||
	{ cat "$TMP/summaryfp"; fail "--call-graph fp: the summary does not say the JVM was not walked, and why"; }
grep -qF "$HOT" "$TMP/outfp/collector.folded" || fail "--call-graph fp: hotMix not named"

# --no-jvm-attach asks nothing (the map exists now: a new JVM)
java -cp "$TMP" Kestrel 30 >"$TMP/jvm2.out" 2>&1 &
jvm2=$!
JVMS="$JVMS $jvm2"
sleep 2
"$COLLECTOR" --no-jvm-walk --no-jvm-attach -p "$jvm2" -d 1 -o "$TMP/out2" >/dev/null 2>"$TMP/summary2" ||
	fail "collector --no-jvm-attach failed"
! map_written "$jvm2" || fail "--no-jvm-attach: the JVM wrote a perf map"
grep -q "JVMs" "$TMP/summary2" && fail "--no-jvm-attach: the summary speaks of JVMs asked"
grep -q "hotMix" "$TMP/summary2" && fail "--no-jvm-attach: hotMix named without a map"
# a map a perf-map agent keeps (its "%lx %x NAME" lines) is not overwritten
printf '7f0000001000 40 agent_written\n' >"/tmp/perf-$jvm2.map"
"$COLLECTOR" --no-jvm-walk -p "$jvm2" -d 1 -o "$TMP/out2b" >/dev/null 2>"$TMP/summary2b" ||
	fail "collector on a JVM with an agent's map failed"
grep -q "PID $jvm2" "$TMP/summary2b" && fail "a JVM with an agent's map was asked"
[ "$(cat "/tmp/perf-$jvm2.map")" = "7f0000001000 40 agent_written" ] ||
	fail "the agent's map was overwritten"
# the same map dated before the JVM started: an earlier process's of this
# pid, no agent of this JVM's; the JVM is asked, and its map replaces it
touch -d '1 hour ago' "/tmp/perf-$jvm2.map"
"$COLLECTOR" --no-jvm-walk -p "$jvm2" -d 1 -o "$TMP/out2c" >/dev/null 2>"$TMP/summary2c" ||
	fail "collector on a JVM with an earlier process's map failed"
grep -q "PID $jvm2: its perf map written on request" "$TMP/summary2c" ||
	{ cat "$TMP/summary2c"; fail "a JVM with an earlier process's map was not asked"; }
grep -q "agent_written" "/tmp/perf-$jvm2.map" && fail "the earlier process's map was not replaced"
rm -f "/tmp/perf-$jvm2.map"

# a JVM that does not answer: left alone after 2 s, said so
java -XX:+DisableAttachMechanism -cp "$TMP" Kestrel 30 >"$TMP/jvm3.out" 2>&1 &
jvm3=$!
JVMS="$JVMS $jvm3"
sleep 2
t0=$(date +%s.%N)
"$COLLECTOR" --no-jvm-walk -p "$jvm3" -d 1 -o "$TMP/out3" >/dev/null 2>"$TMP/summary3" ||
	fail "collector on a JVM that does not answer failed"
t1=$(date +%s.%N)
cat "$TMP/summary3"
grep -q "PID $jvm3: did not answer the attach within 2 s (waited [0-9.]* s): left alone" \
	"$TMP/summary3" || fail "the summary does not say the JVM did not answer"
kill -0 "$jvm3" 2>/dev/null || fail "the JVM that did not answer is gone"
waited=$(sed -n "s/.*PID $jvm3: did not answer.*(waited \([0-9.]*\) s).*/\1/p" "$TMP/summary3")
within "$waited" 1.9 2.3 || fail "the JVM that does not answer was waited for $waited s, not 2"
# the run's whole time, for a wait that the summary would not tell of
# (1 s sampled, 2 s waited: the rest is the start and writing, slow on a
# busy machine)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
echo "a JVM that does not answer: waited $waited s, the run took $secs s"
within "$secs" 3 12 || fail "collector took $secs s on a JVM that does not answer"
[ ! -e "/proc/$jvm3/cwd/.attach_pid$jvm3" ] || fail "the attach trigger file was left behind"

# a JVM in its own PID and mount namespaces (a container's): pid 1 there,
# its /tmp a tmpfs of its own; asked through /proc/PID/root and its cwd
# (its class outside /tmp, which its tmpfs hides)
if unshare -pmf --mount-proc true 2>/dev/null; then
	NSDIR=$(mktemp -d /var/tmp/collector-jvm.XXXXXX) || fail "mktemp failed"
	cp "$TMP/Kestrel.class" "$NSDIR/"
	unshare -pmf --mount-proc sh -c "cd '$NSDIR' && mount -t tmpfs tmpfs /tmp &&
		exec java -cp . Kestrel 30" >"$TMP/jvm5.out" 2>&1 &
	unshared=$!
	sleep 3
	jvm5=$(pgrep -P "$unshared" | head -1) # unshare's child, pid 1 there: sh, then java
	[ -n "$jvm5" ] || fail "the JVM in its namespaces did not start: $(cat "$TMP/jvm5.out")"
	JVMS="$JVMS $jvm5 $unshared"
	grep -q "^NSpid:.*[[:space:]]1\$" "/proc/$jvm5/status" || fail "the JVM is not pid 1 in its namespace"
	"$COLLECTOR" --no-jvm-walk -p "$jvm5" -d 1 -f folded -o "$TMP/out5" >/dev/null 2>"$TMP/summary5" ||
		fail "collector on a JVM in its namespaces failed"
	grep -q "PID $jvm5: its perf map written on request" "$TMP/summary5" ||
		{ cat "$TMP/summary5"; fail "the JVM in its namespaces: not asked"; }
	[ -e "/proc/$jvm5/root/tmp/perf-1.map" ] || fail "no perf-1.map in the JVM's own /tmp"
	! map_written "$jvm5" || fail "the map is in the host's /tmp"
	grep -qF "$HOT" "$TMP/out5/collector.folded" || fail "the JVM in its namespaces: hotMix unnamed"
else
	echo "no unshare: the JVM in its own namespaces is not tried"
fi

# a -p target that becomes a JVM once sampling runs (a shell that execs
# java when told): the JVM's walks are loaded when the run meets it, its
# hot method stands on main in its stacks, and (--off-cpu) a thread that
# sleeps again and again waits in Thread.sleep under its Java frames;
# the walk's Java frames end in "_[j]" in folded stacks, as the perf map's
# do (flamegraph.pl --color=java colours them as Java)
sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; exec java -cp "$2" Kestrel 2 naps >/dev/null' \
	sh "$TMP/go" "$TMP" &
later=$!
add_cleanup "kill $later 2>/dev/null"
"$COLLECTOR" --off-cpu -p "$later" -d 20 -o "$TMP/out6" >/dev/null 2>"$TMP/summary6" &
c6=$!
wait_sampling "$c6" || fail "the collector on the shell did not start sampling"
touch "$TMP/go"
wait "$c6" || { cat "$TMP/summary6"; fail "collector -p on the shell that became a JVM failed"; }
grep -q "java            1 JVM walked" "$TMP/summary6" ||
	{ cat "$TMP/summary6"; fail "a JVM started after -p began: not walked"; }
! grep -q "not walked" "$TMP/summary6" ||
	{ cat "$TMP/summary6"; fail "a JVM started after -p began: said to be unwalked"; }
grep -F "$HOT" "$TMP/out6/collector.folded" | grep -qF "void Kestrel.main(java.lang.String[])_[j];" ||
	{ grep -F "$HOT" "$TMP/out6/collector.folded" | head -5
	  fail "a JVM started after -p began: $HOT not on Kestrel.main"; }
grep -F "void Kestrel.napOnce()_[j];void java.lang.Thread.sleep(long)_[j]" "$TMP/out6/off-cpu/collector.folded" |
	grep -qF "void Kestrel.naps()_[j];" ||
	{ grep -F "kestrel-naps" "$TMP/out6/off-cpu/collector.folded" | head -5
	  fail "a JVM started after -p began: its thread's sleeps not under Kestrel.naps off the CPU"; }

# JIT code of a process that is not a JVM: left alone, said so
if command -v node >/dev/null; then
	node -e 'function h(n){let x=1;for(let i=0;i<n;i++){x^=x<<13;x^=x>>>17;x^=x<<5;}return x}
		const e=Date.now()+30000;let t=0;while(Date.now()<e)t+=h(1e6);console.log(t)' \
		>/dev/null 2>&1 &
	NODE=$!
	sleep 1
	"$COLLECTOR" -p "$NODE" -d 1 -o "$TMP/out4" >/dev/null 2>"$TMP/summary4" ||
		fail "collector on node failed"
	grep -q "JIT code        unnamed in 1 process that wrote no perf map and is not a JVM (left alone): $NODE\$" \
		"$TMP/summary4" || { cat "$TMP/summary4"; fail "node's JIT code: not said to be left alone"; }
	kill -0 "$NODE" 2>/dev/null || fail "node is gone"
fi
echo ok
