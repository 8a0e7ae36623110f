# speedscope files of real runs: valid against the schema the speedscope
# package ships (ajv) and the checks the schema cannot make
# (tests/js/validate-speedscope.mjs); a sampled profile per thread whose
# weights add up to the run's CPU time; with --trace an evented profile of
# properly nested calls, one open and one close per traced call; and
# speedscope's own offline build, in headless Chromium, shows the profile
# with the summary's shares.
. tests/integration/lib.sh
plain_suite_only "speedscope's own checks; the writer runs under ASan in test_speedscope and test_unicode_names"
. tests/integration/chromium.sh
need_root
need_node_modules
SPEEDSCOPE="$JS/node_modules/speedscope/dist/release/index.html"

# open_in_speedscope FILE VIEW OUT: the DOM of speedscope showing FILE, loaded
# as its command-line tool loads one (a script that hands it the file)
open_in_speedscope() {
	printf 'speedscope.loadFileFromBase64("speedscope.json", "%s")\n' "$(base64 -w0 "$1")" \
		>"$TMP/load.js"
	dump_dom "file://$SPEEDSCOPE#localProfilePath=$TMP/load.js&view=$2" "$3"
}

# --- split: one thread, shares as the summary's -------------------------------
"$COLLECTOR" -f speedscope -o "$TMP/split" -- "$WL/split" 1 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "split: collector exited $?"; }
file="$TMP/split/speedscope.json"
"$COLLECTOR" dump --check "$file" >/dev/null || fail "collector dump --check rejects $file"
node "$JS/validate-speedscope.mjs" "$file" >"$TMP/profiles" || fail "split: not a valid speedscope file"
cat "$TMP/profiles"
[ "$(grep -c '^sampled' "$TMP/profiles")" -eq 1 ] || fail "split: expected one sampled profile"
samples=$(summary_value "$TMP/summary" samples)
weight=$(sed -n 's/.*weight=\([0-9]*\).*/\1/p' "$TMP/profiles")
period=$(awk -v h=999 'BEGIN { printf "%d", 1e9 / h }')
# every sample stands for the period (1e9 / 999 ns, rounded down)
[ "$weight" = "$(awk -v n="$samples" -v p="$period" 'BEGIN { printf "%d", n * p }')" ] ||
	fail "split: the weights add up to $weight ns, not $samples samples of $period ns"
grep -q 'top_self=hot_function' "$TMP/profiles" || fail "split: hot_function is not the top self frame"

open_in_speedscope "$file" sandwich "$TMP/dom"
grep -q "split [0-9]*/[0-9]*" "$TMP/dom" || fail "speedscope does not show the thread's profile"
node "$JS/speedscope-sandwich.mjs" "$TMP/dom" >"$TMP/table" || fail "speedscope shows no table"
head -n 5 "$TMP/table"
for fn in hot_function cold_function; do
	shown=$(awk -F'\t' -v fn="$fn" '$1 == fn { print $3; exit }' "$TMP/table")
	want=$(share "$TMP/summary" self "$fn")
	# the summary rounds to 0.1
	within "$(awk -v a="$shown" -v b="$want" 'BEGIN { print a - b }')" -0.051 0.051 ||
		fail "speedscope gives $fn $shown% self, the summary $want%"
done

# --- threads: a profile per thread with samples -------------------------------
"$COLLECTOR" -f speedscope -o "$TMP/threads" -- "$WL/threads" 0.3 >/dev/null 2>"$TMP/err" ||
	{ cat "$TMP/err"; fail "threads: collector exited $?"; }
node "$JS/validate-speedscope.mjs" "$TMP/threads/speedscope.json" >"$TMP/profiles" ||
	fail "threads: not a valid speedscope file"
cat "$TMP/profiles"
[ "$(grep -c '^sampled' "$TMP/profiles")" -ge 2 ] || fail "threads: fewer than 2 sampled profiles"

# --- calls --trace: a timeline of the traced calls ----------------------------
"$COLLECTOR" -f speedscope -o "$TMP/calls" --trace "$WL/calls:traced_*" -- "$WL/calls" \
	>"$TMP/stdout" 2>"$TMP/summary" || { cat "$TMP/summary"; fail "calls: collector exited $?"; }
node "$JS/validate-speedscope.mjs" "$TMP/calls/speedscope.json" >"$TMP/profiles" ||
	fail "calls: not a valid speedscope file"
cat "$TMP/profiles"
calls=$(awk '/^Traced functions/ { on = 1; next } on && ($1 == "traced_f" || $1 == "traced_g") { n += $2 }
	END { print n + 0 }' "$TMP/summary")
events=$(sed -n 's/^evented.*events=\([0-9]*\).*/\1/p' "$TMP/profiles")
[ "$calls" -eq 101000 ] && [ "$events" = $((2 * calls)) ] ||
	fail "calls: $events events for $calls traced calls (expected an open and a close each)"
grep -q '^evented.*max_depth=2' "$TMP/profiles" || fail "calls: traced_g is not nested in traced_f"
open_in_speedscope "$TMP/calls/speedscope.json" chrono "$TMP/dom"
grep -q "traced calls" "$TMP/dom" || grep -q "(1/2)\|(2/2)" "$TMP/dom" ||
	fail "speedscope does not show the two profiles of the traced run"
echo ok
