# pprof profiles of real runs, read by Go's pprof (go tool pprof, Debian's
# golang-go): -raw reads every profile; -top's top function and its share
# are the summary's; build-ids and source lines are there; -traces shows the
# workload's call chain; with --trace, the traced calls are a sample type
# with the summary's exact counts.
. tests/integration/lib.sh
need_root
command -v go >/dev/null || fail "go missing (golang-go): go tool pprof reads the profiles"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod
PPROF="go tool pprof"

# top_self SUMMARY: "COUNT FUNCTION" of the summary's first line by self samples
top_self() {
	awk '/^Top functions by self/ { getline; getline; print $2, $3; exit }' "$1"
}

# flat_of TOP FUNCTION: the function's flat value in `pprof -top` output
flat_of() {
	awk -v fn="$2" 'on && $6 == fn && NF == 6 { print $1; exit } /^ *flat  flat%/ { on = 1 }' "$1"
}

# check_profile DIR SUMMARY BINARY CHAIN...: the checks every run gets;
# CHAIN is the call chain leaf first that -traces must show
check_profile() {
	dir=$1 summary=$2 binary=$3
	shift 3
	chain="$*"
	prof="$dir/profile.pb.gz"
	[ -s "$prof" ] || fail "$dir: no profile.pb.gz"
	"$COLLECTOR" dump --check "$prof" >/dev/null || fail "$prof: collector dump --check rejects it"
	$PPROF -raw "$prof" >"$TMP/raw" 2>"$TMP/err" || { cat "$TMP/err"; fail "pprof -raw fails on $prof"; }
	# -noinlines: the summary counts a sample for the out-of-line function
	# that holds the address, where pprof gives it to the innermost inlined one
	$PPROF -top -noinlines -sample_index=samples -nodecount=1000 -nodefraction=0 "$prof" >"$TMP/top" 2>"$TMP/err" ||
		{ cat "$TMP/err"; fail "pprof -top fails on $prof"; }
	head -n 12 "$TMP/top"

	# the same total, and the summary's top function has the highest flat
	# count (a tie for the top is allowed: only counts are compared)
	total=$(summary_value "$summary" samples)
	ptotal=$(sed -n 's/.*Total samples = \([0-9]*\).*/\1/p' "$TMP/top")
	[ "$total" = "$ptotal" ] || fail "$prof: pprof counts $ptotal samples, the summary $total"
	set -- $(top_self "$summary")
	count=$1 fn=$2
	max=$(awk 'on && NF >= 6 { if ($1 + 0 > m) m = $1 + 0 } /^ *flat  flat%/ { on = 1 } END { print m }' "$TMP/top")
	[ "$(flat_of "$TMP/top" "$fn")" = "$count" ] ||
		fail "$prof: pprof gives $fn $(flat_of "$TMP/top" "$fn") samples, the summary $count"
	[ "$max" = "$count" ] || fail "$prof: pprof's top function has $max samples, the summary's $fn $count"
	pshare=$(awk -v fn="$fn" 'on && $6 == fn { sub("%", "", $2); print $2; exit } /^ *flat  flat%/ { on = 1 }' "$TMP/top")
	sshare=$(share "$summary" self "$fn")
	within "$(awk -v a="$pshare" -v b="$sshare" 'BEGIN { print a - b }')" -0.051 0.051 ||
		fail "$prof: $fn has $pshare% in pprof, $sshare% in the summary"

	# the binary's build-id on its mapping, and a source line for the top function
	id=$(readelf -n "$binary" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ] || fail "$binary has no build-id"
	grep -q "$(basename "$binary") $id" "$TMP/raw" || grep -q "$id" "$TMP/raw" ||
		fail "$prof: no mapping with $binary's build-id $id"
	grep -Eq " $fn [^ ]+\.c:[1-9][0-9]* s=[1-9]" "$TMP/raw" ||
		fail "$prof: no source line and start line for $fn"

	# -traces: the chain, leaf first, on consecutive lines of one trace
	$PPROF -traces "$prof" >"$TMP/traces" 2>"$TMP/err" || { cat "$TMP/err"; fail "pprof -traces"; }
	awk -v chain="$chain" 'BEGIN { n = split(chain, want, " ") }
		{ name = ($1 ~ /^[0-9.]+[mun]?s$/) ? $2 : $1 }
		{ if (name == want[k + 1]) { k++; if (k == n) { found = 1; exit } } else k = (name == want[1]) }
		END { exit !found }' "$TMP/traces" || {
		head -n 40 "$TMP/traces"
		fail "$prof: pprof -traces does not show the chain $chain"
	}
}

# --- an unknown format among the new ones: a clear message, exit 2 ----------
expect_exit 2 "$COLLECTOR" -f pprof,flamegraph,nosuch -- true
grep -q "unknown format 'nosuch'" "$TMP/err" || { cat "$TMP/err"; fail "-f nosuch: no clear message"; }
for name in pprof folded flamegraph speedscope; do
	grep -q "choose from .*$name" "$TMP/err" || { cat "$TMP/err"; fail "-f nosuch: $name not offered"; }
done

# --- split: hot_function through chain_c, chain_b, chain_a ---------------------
"$COLLECTOR" -f pprof -o "$TMP/split" -- "$WL/split" 1 >"$TMP/stdout" 2>"$TMP/s-split" ||
	{ cat "$TMP/s-split"; fail "split: collector exited $?"; }
check_profile "$TMP/split" "$TMP/s-split" "$WL/split" hot_function chain_c chain_b chain_a run main
# sample types and labels as pprof reads them
grep -q "^samples/count cpu/nanoseconds\[dflt\]" "$TMP/raw" || fail "split: sample types are not samples/count, cpu/nanoseconds (default)"
$PPROF -raw "$TMP/split/profile.pb.gz" 2>/dev/null | grep -q "PeriodType: cpu nanoseconds" ||
	fail "split: no period type cpu/nanoseconds"
grep -q "comm:\[split\]" "$TMP/raw" && grep -q "pid:\[[0-9]*\] tid:\[[0-9]*\]" "$TMP/raw" ||
	fail "split: samples lack the pid, tid and comm labels"

# --- threads: two workers, the labels tell the threads apart ----------------
"$COLLECTOR" -f pprof -o "$TMP/threads" -- "$WL/threads" 0.3 >"$TMP/stdout" 2>"$TMP/s-threads" ||
	{ cat "$TMP/s-threads"; fail "threads: collector exited $?"; }
check_profile "$TMP/threads" "$TMP/s-threads" "$WL/threads" spin_until
$PPROF -tags "$TMP/threads/profile.pb.gz" >"$TMP/tags" 2>&1 || fail "threads: pprof -tags"
tids=$(awk '/^ *tid:/ { on = 1; next } /^ *[a-z_]+:/ { on = 0 } on && /%\)/ { n++ } END { print n + 0 }' "$TMP/tags")
[ "$tids" -ge 2 ] || { cat "$TMP/tags"; fail "threads: pprof -tags shows $tids threads, expected the 2 workers"; }

# --- pie_lib: a PIE whose hot code is in a shared library --------------------
"$COLLECTOR" -f pprof -o "$TMP/pie" -- "$WL/pie_lib" 1 >"$TMP/stdout" 2>"$TMP/s-pie" ||
	{ cat "$TMP/s-pie"; fail "pie_lib: collector exited $?"; }
check_profile "$TMP/pie" "$TMP/s-pie" "$WL/libhot.so" lib_hot_function main

# --- calls with --trace: the traced calls are their own sample type ----------
"$COLLECTOR" -f pprof -o "$TMP/calls" --trace "$WL/calls:traced_*" -- "$WL/calls" 2 \
	>"$TMP/stdout" 2>"$TMP/s-calls" || { cat "$TMP/s-calls"; fail "calls: collector exited $?"; }
"$COLLECTOR" dump --check "$TMP/calls/profile.pb.gz" >/dev/null || fail "calls: dump --check"
$PPROF -raw "$TMP/calls/profile.pb.gz" >"$TMP/raw" 2>&1 || fail "calls: pprof -raw"
grep -q "^samples/count cpu/nanoseconds\[dflt\] traced_calls/count traced_time/nanoseconds" "$TMP/raw" ||
	fail "calls: no traced_calls and traced_time sample types"
$PPROF -top -sample_index=traced_calls "$TMP/calls/profile.pb.gz" >"$TMP/top" 2>&1 ||
	fail "calls: pprof -top -sample_index=traced_calls"
cat "$TMP/top"
for fn in traced_f traced_g; do
	want=$(awk -v fn="$fn" '/^Traced functions/ { on = 1; next } on && $1 == fn { print $2; exit }' "$TMP/s-calls")
	got=$(flat_of "$TMP/top" "$fn")
	[ -n "$want" ] && [ "$got" = "$want" ] || fail "calls: pprof counts $got calls of $fn, the summary $want"
done
[ "$(flat_of "$TMP/top" traced_g)" = 200000 ] || fail "calls: traced_g is not 200000 calls"
echo ok
