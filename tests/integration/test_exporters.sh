# DCPI, sampler and Callgrind files of real runs, read back by the
# project's readers and by callgrind_annotate and addr2line.
. tests/integration/lib.sh
need_root
command -v callgrind_annotate >/dev/null || fail "callgrind_annotate missing (valgrind)"

# --- a single-threaded run with a known split --------------------------------
"$COLLECTOR" -o "$TMP/one" -- "$WL/split" 1.5 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "collector exited $?"; }
"$COLLECTOR" dump --check "$TMP/one" >/dev/null || fail "dump --check rejects the output"

# Callgrind: callgrind_annotate puts hot_function first, with ~75% of the
# work of hot_function and cold_function (of all samples it may have less:
# see percent_of)
cg=$(callgrind_of "$TMP"/one split)
annotate "$cg" "$TMP/annotate" || { cat "$TMP/annotate"; fail "callgrind_annotate failed"; }
first=$(awk '/file:function/ { getline; getline; print; exit }' "$TMP/annotate")
echo "first: $first"
case "$first" in *:hot_function*) ;; *) fail "callgrind_annotate's first function is not hot_function" ;; esac
hot=$(annotated_count "$TMP/annotate" hot_function)
cold=$(annotated_count "$TMP/annotate" cold_function)
pct=$(percent_of "$hot" "$cold")
echo "callgrind_annotate: hot_function $hot, cold_function $cold samples: $pct%"
within "$pct" 65 85 || fail "hot_function has $pct% of hot_function + cold_function in callgrind_annotate"

# DCPI: the counts of the workload's image sum to its samples, which
# Callgrind lists function by function (every one: the summary has 20)
dcpi_total=$("$COLLECTOR" dump "$TMP/one/dcpi/split.prof" | awk '$1 == "total_samples" { print $2 }')
cg_split=$(awk '$NF ~ /\/split\]$/ && $1 != "." { gsub(",", "", $1); n += $1 } END { print n + 0 }' \
	"$TMP/annotate")
[ -n "$dcpi_total" ] && [ "$cg_split" -gt 0 ] && [ "$dcpi_total" -eq "$cg_split" ] ||
	fail "DCPI counts $dcpi_total samples in split, Callgrind $cg_split"

# inclusive costs follow the call chain up to the thread's root
annotate "$cg" "$TMP/incl" --inclusive=yes
p=$(annotated_share "$TMP/incl" main)
within "$p" 95 100 || fail "main inclusive $p%"
p=$(annotated_share "$TMP/incl" chain_a)
within "$p" 65 85 || fail "chain_a inclusive $p%"

# --- three threads: the sampler file lists them, cputime never decreases ----
"$COLLECTOR" -q -o "$TMP/three" -- "$WL/split" 0.7 3 2>"$TMP/err" || { cat "$TMP/err"; fail "3 threads"; }
prof=$(ls "$TMP"/three/sampler/split.*.prof)
pid=${prof##*/split.}
pid=${pid%%.*}
"$COLLECTOR" dump "$prof" >"$TMP/sampler.txt" || fail "sampler dump failed"
tids=$(awk '$1 == "tid" { print $2 }' "$TMP/sampler.txt" | sort -u)
[ "$(echo "$tids" | wc -l)" -eq 3 ] || fail "sampler lists threads '$tids', expected 3"
echo "$tids" | grep -qx "$pid" || fail "the main thread $pid is not in the sampler file"
awk '$1 == "tid" { if ($6 + 0 < last[$2]) { print "tid " $2 " cputime decreased"; bad = 1 } last[$2] = $6 + 0 }
     END { exit bad }' "$TMP/sampler.txt" || fail "a thread's cputime decreased"

# --- a PIE whose hot code is in a shared library -----------------------------
"$COLLECTOR" -q -o "$TMP/pie" -- "$WL/pie_lib" 1.5 2>"$TMP/err" || { cat "$TMP/err"; fail "pie_lib"; }
"$COLLECTOR" dump "$TMP/pie/dcpi/libhot.so.prof" | grep -q "^total_samples [1-9]" ||
	fail "no DCPI profile with samples for libhot.so"
callgrind_annotate "$(callgrind_of "$TMP"/pie pie_lib)" >"$TMP/annotate" 2>&1
first=$(awk '/file:function/ { getline; getline; print; exit }' "$TMP/annotate")
case "$first" in *lib_hot_function*libhot.so*) ;; *) fail "Callgrind: '$first' is not lib_hot_function" ;; esac
# sampler: the reference reader resolves PC - VMMap address with addr2line
"$COLLECTOR" dump "$TMP"/pie/sampler/pie_lib.*.prof >"$TMP/sampler.txt"
# (user addresses stay below 2^53: exact in awk's doubles)
awk 'function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
     $1 == "vmmap" { base[$2] = hex($4); size[$2] = hex($6); label[$2] = $8 }
     $1 == "tid" && $4 != "0x0" {
	pc = hex($4)
	for (m in base) if (pc >= base[m] && pc < base[m] + size[m])
		printf "%s 0x%x\n", label[m], pc - base[m]
     }' "$TMP/sampler.txt" >"$TMP/pcs"
lib=$(awk '$1 ~ /libhot.so$/ { print $1; exit }' "$TMP/pcs")
[ -n "$lib" ] || fail "no sampled PC falls in libhot.so's VMMap"
total=$(wc -l <"$TMP/pcs")
hot=$(awk -v lib="$lib" '$1 == lib { print $2 }' "$TMP/pcs" | addr2line -f -e "$lib" | grep -c '^lib_hot_function$')
echo "sampler PCs: $total, in lib_hot_function through PC - address: $hot"
within "$(awk -v h="$hot" -v t="$total" 'BEGIN { print 100 * h / t }')" 65 95 ||
	fail "only $hot of $total sampler PCs resolve to lib_hot_function"
# --- RAPL energy counters (a powercap tree made here: this VM has none) ------
pc="$TMP/powercap/intel-rapl:0"
mkdir -p "$pc"
echo 262143328850 >"$pc/max_energy_range_uj"
echo 0 >"$pc/energy_uj"
# a package drawing 10 W: the counter follows the clock (10 µJ a µs), so the
# power stays 10 W however seldom a loaded machine lets this loop run
( t0=$(date +%s%N); while [ -d "$pc" ]; do uj=$((($(date +%s%N) - t0) / 100))
	echo $uj >"$pc/energy_uj.new"; mv "$pc/energy_uj.new" "$pc/energy_uj"; sleep 0.01; done ) &
ticker=$!
COLLECTOR_POWERCAP_ROOT="$TMP/powercap" "$COLLECTOR" -q -o "$TMP/power" -f sampler -- \
	"$WL/split" 0.5 >/dev/null 2>"$TMP/err" || { kill $ticker; cat "$TMP/err"; fail "power run"; }
kill $ticker
"$COLLECTOR" dump "$TMP"/power/sampler/split.*.prof >"$TMP/power.txt" || fail "power dump"
grep -q "^magic 3 (power)" "$TMP/power.txt" || fail "no power magic with RAPL counters"
watts=$(awk '$1 == "sample" && $3 == "pmu" { n++; w += $4 } END { if (n) print w / n }' "$TMP/power.txt")
echo "mean power: $watts W"
within "$watts" 2 30 || fail "mean power $watts W from a 10 W counter"
echo ok
