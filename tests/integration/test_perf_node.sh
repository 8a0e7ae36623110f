#!/bin/sh
# Node with --perf-basic-prof beside perf: JIT code named from
# /tmp/perf-PID.map ("JS:*hotLoop FILE:1:17", image "[jit]"), V8's own C++
# demangled; the same top self functions with shares within 3 points.
. tests/integration/lib.sh
. tests/integration/perf_compare.sh
need_root
plain_suite_only "shares beside perf"
command -v node >/dev/null || fail "node missing (nodejs)"

cat >"$TMP/hot.js" <<'JS'
function hotLoop(n) {
  let x = 1;
  for (let i = 0; i < n; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; }
  return x;
}
function mathy(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sin(i);
  return s;
}
const end = Date.now() + 3000;
let t = 0;
while (Date.now() < end) { t += hotLoop(2000000); t += mathy(100000); }
console.log(t !== 0 ? "done" : "zero");
JS
# node leaves isolate-*-v8.log files in its directory: run it in $TMP
cd "$TMP" || fail "cannot enter $TMP"
compare_with_perf node 999 node --perf-basic-prof "$TMP/hot.js"
grep -q "^ .*JS:\\*hotLoop $TMP/hot.js:1:17 *\\[jit\\]\$" "$TMP/node.summary" ||
	fail "hotLoop is not a function of the image [jit] in the summary"
# the image in the formats: Callgrind's object, pprof's mapping, folded
# stacks' JIT mark
grep -q "JS:\\*hotLoop $TMP/hot.js:1:17_\\[j\\]" "$TMP/node.out/collector.folded" ||
	fail "hotLoop is not marked _[j] in the folded stacks"
grep -q '^ob=([0-9]*) \[jit\]$\|^cob=([0-9]*) \[jit\]$' "$TMP"/node.out/callgrind.out.* ||
	fail "no [jit] object in Callgrind"
"$COLLECTOR" -f pprof -o "$TMP/pp" -- node --perf-basic-prof "$TMP/hot.js" >/dev/null 2>&1 ||
	fail "pprof run failed"
"$COLLECTOR" dump "$TMP/pp/profile.pb.gz" >"$TMP/pp.txt" || fail "dump of profile.pb.gz failed"
grep -q '^mapping .* \[jit\] ' "$TMP/pp.txt" || fail "no [jit] mapping in pprof"
grep -q 'JS:\*hotLoop' "$TMP/pp.txt" || fail "no JS:*hotLoop in pprof"

# -p on a node that writes its perf map: the map is read at the end of the
# run, while node still runs, and names its JIT code; the summary must not
# call that code unnamed ("JIT code unnamed in 1 process that wrote no perf
# map and is not a JVM" was printed: the processes whose code was not looked
# up in their maps yet were taken for processes whose code stays unnamed)
sed 's/Date.now() + 3000/Date.now() + 15000/' "$TMP/hot.js" >"$TMP/long.js"
node --perf-basic-prof "$TMP/long.js" >/dev/null &
npid=$!
# until V8 has compiled hotLoop (its line in the map)
for _ in $(seq 1 100); do
	grep -q 'hotLoop' "/tmp/perf-$npid.map" 2>/dev/null && break
	sleep 0.05
done
"$COLLECTOR" -p "$npid" -d 2 -f folded -o "$TMP/p.out" >/dev/null 2>"$TMP/p.summary"
rc=$?
kill "$npid" 2>/dev/null
wait "$npid" 2>/dev/null
rm -f "/tmp/perf-$npid.map"
[ "$rc" -eq 0 ] || { cat "$TMP/p.summary"; fail "-p run on node failed ($rc)"; }
grep -q "^ .*JS:\\*hotLoop $TMP/long.js:1:17 *\\[jit\\]\$" "$TMP/p.summary" ||
	{ cat "$TMP/p.summary"; fail "-p: hotLoop is not named from the perf map"; }
if grep -q 'JIT code .*unnamed' "$TMP/p.summary"; then
	cat "$TMP/p.summary"
	fail "-p: JIT code reported unnamed although node's perf map named it"
fi
# the perf maps of the nodes the collector launched (named for their pids,
# which only their content ties to this test)
grep -l "$TMP/hot.js" /tmp/perf-*.map 2>/dev/null | xargs rm -f
echo ok
