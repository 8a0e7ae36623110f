# The flame graph page of real runs, opened in headless Chromium without
# network: its DOM holds the workload's functions, each frame as wide as
# its share of the samples (within 1%), with the samples the folded stacks
# of the same run give; searching highlights and counts the matches; a
# process can be shown alone; a language runtime's frames say which
# runtime's they are.
. tests/integration/lib.sh
plain_suite_only "Chromium's drawing; the writer runs under ASan in test_flamegraph and test_unicode_names"
. tests/integration/chromium.sh
need_root
need_node_modules

# inclusive FOLDED FUNCTION: samples of the stacks that hold FUNCTION,
# counted once per occurrence (the flame graph has a frame per occurrence)
inclusive() {
	awk -v fn="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		for (i = 1; i <= k; i++) if (f[i] == fn) t += n } END { print t + 0 }' "$1"
}

# drawn DOMLIST FUNCTION: the samples of FUNCTION's frames on the page
drawn() {
	awk -F'\t' -v fn="$2" '$1 == fn { t += $2 } END { print t + 0 }' "$1"
}

"$COLLECTOR" -f folded,flamegraph -o "$TMP/split" -- "$WL/split" 1 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "split: collector exited $?"; }
page="$TMP/split/flamegraph.html"
[ -s "$page" ] || fail "no flamegraph.html"
"$COLLECTOR" dump --check "$page" >/dev/null || fail "collector dump --check rejects $page"
# nothing to load: no src= or href=, no address but the SVG namespace
grep -Eq '<[a-z]+ [^>]*(src|href)=' "$page" && fail "the page loads something from outside"
grep -Eo 'https?://[^"'"'"' )]*' "$page" | grep -v '^http://www.w3.org/2000/svg$' &&
	fail "the page names an address outside itself"

dump_dom "file://$page#search=chain_a" "$TMP/dom"
node "$JS/flamegraph-dom.mjs" "$TMP/dom" >"$TMP/frames" || { head -n 20 "$TMP/frames"; fail "frames are not as wide as their samples"; }
samples=$(summary_value "$TMP/summary" samples)
[ "$(awk -F'\t' '$1 == "all" { print $2 }' "$TMP/frames")" = "$samples" ] ||
	fail "the root frame does not hold the run's $samples samples"
for fn in split main run chain_a chain_b chain_c hot_function cold_path cold_function; do
	want=$(inclusive "$TMP/split/collector.folded" "$fn")
	[ "$fn" = split ] && want=$samples
	got=$(drawn "$TMP/frames" "$fn")
	echo "$fn: $got samples drawn, $want in the folded stacks"
	[ "$want" -gt 0 ] && [ "$got" = "$want" ] || fail "$fn: $got samples drawn, $want folded"
done
# search: chain_a matches, and everything above it is under the match
want=$(inclusive "$TMP/split/collector.folded" chain_a)
grep -q "^matched	Matched: [0-9.]*% ($want samples)" "$TMP/frames" ||
	fail "search for chain_a: '$(grep '^matched' "$TMP/frames")', expected $want samples"
grep -q 'data-name="chain_a"[^>]*>[^<]*<title>[^<]*</title><rect[^>]*fill="rgb(230,60,230)"' "$TMP/dom" ||
	fail "search for chain_a: its frame is not highlighted"

# two processes: each has its own graph
"$COLLECTOR" -f flamegraph -o "$TMP/fork" -- "$WL/forkexec" "$WL/split" 0.5 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "forkexec: collector exited $?"; }
dump_dom "file://$TMP/fork/flamegraph.html#process=split" "$TMP/dom"
node "$JS/flamegraph-dom.mjs" "$TMP/dom" >"$TMP/frames" || fail "forkexec: frames are not as wide as their samples"
grep -q '^ancestor	all	' "$TMP/frames" || fail "#process=split: the root is not drawn as an ancestor"
grep -q '^hot_function	' "$TMP/frames" || fail "#process=split: split's hot_function is not drawn"
grep -q '^parent_spin	' "$TMP/frames" && fail "#process=split: the other process's parent_spin is drawn"
grep -q '<option value="[0-9]*">forkexec (' "$TMP/dom" || fail "no forkexec in the process list"
# a language runtime's frames labelled by their runtime: Python's work()
# " [python]" in its tooltip, the interpreter's own C frames unlabelled
"$COLLECTOR" -f flamegraph -d 1 -o "$TMP/py" -- /usr/bin/python3 tests/workloads/pyloop.py \
	>"$TMP/stdout" 2>"$TMP/summary" || { cat "$TMP/summary"; fail "python3: collector exited $?"; }
dump_dom "file://$TMP/py/flamegraph.html" "$TMP/dom"
grep -q 'data-name="work"[^>]*><title>work \[python\] (' "$TMP/dom" ||
	{ grep -o 'data-name="work"[^>]*><title>[^<]*' "$TMP/dom" | head -3
	  fail "python3: work() is not labelled [python] on the page"; }
grep -q "<title>PyEval_EvalCode (" "$TMP/dom" ||
	fail "python3: the interpreter's PyEval_EvalCode is not an unlabelled frame"
echo ok
