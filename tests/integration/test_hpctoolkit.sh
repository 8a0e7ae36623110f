# HPCToolkit database of a multithreaded workload with a known per-thread
# split (work_a: 0.4 CPU-s, work_b: 1.2 CPU-s, main: waits), in both layouts.
. tests/integration/lib.sh
need_root

for layout in released draft; do
	"$COLLECTOR" -q -o "$TMP/$layout" --hpctoolkit-layout=$layout -f hpctoolkit -- \
		"$WL/threads" 0.4 >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "$layout: exit $?"; }
	db="$TMP/$layout/hpctoolkit"
	for f in meta.db profile.db cct.db trace.db metrics/default.yaml; do
		[ -s "$db/$f" ] || fail "$layout: $f missing"
	done
	"$COLLECTOR" dump "$db" >"$TMP/dump-$layout" || fail "$layout: collector dump failed"
	grep -q "meta.db ($layout layout)" "$TMP/dump-$layout" || fail "$layout: not read as $layout"
	# the context ids of the two workers' function contexts: every one (a
	# sample whose stack was cut short puts a worker in a second context,
	# and which of the two is listed first is luck)
	ctx_a=$(sed -n 's/^ *#\([0-9]*\) -call-> \[function\] work_a\( .*\)\{0,1\}$/\1/p' "$TMP/dump-$layout" | tr '\n' ' ')
	ctx_b=$(sed -n 's/^ *#\([0-9]*\) -call-> \[function\] work_b\( .*\)\{0,1\}$/\1/p' "$TMP/dump-$layout" | tr '\n' ' ')
	[ -n "$ctx_a" ] && [ -n "$ctx_b" ] || fail "$layout: no function contexts for work_a/work_b"
	# execution (inclusive) seconds in each thread profile: of the root, and
	# of every context of each worker (they hold disjoint samples: work_a and
	# work_b are not recursive)
	awk -v a="$ctx_a" -v b="$ctx_b" '
		BEGIN { na = split(a, la, " "); for (i = 1; i <= na; i++) is_a["#" la[i] ":"] = 1
			nb = split(b, lb, " "); for (i = 1; i <= nb; i++) is_b["#" lb[i] ":"] = 1 }
		function m3(   i, v) { for (i = 3; i <= NF; i++) if ($i ~ /^m3=/) { v = $i; sub("m3=", "", v); return v } return "" }
		/^  profile [1-9][0-9]* / { p = $2 }
		/^  profile 0 / { p = "" }
		/^  trace/ { p = "" }
		p != "" && $1 == "ctx" && $2 == "#0:" && m3() != "" { root[p] = m3() }
		p != "" && $1 == "ctx" && ($2 in is_a) { wa[p] += m3() }
		p != "" && $1 == "ctx" && ($2 in is_b) { wb[p] += m3() }
		END { for (p in root) printf "%s %s %s %s\n", p, root[p], wa[p] + 0, wb[p] + 0 }
	' "$TMP/dump-$layout" | sort -k2 -n >"$TMP/threads-$layout"
	cat "$TMP/threads-$layout"
	profiles=$(grep -c '^  profile [1-9][0-9]* {' "$TMP/dump-$layout")
	[ "$profiles" -eq 3 ] || fail "$layout: $profiles thread profiles, expected 3"
	# the main thread only waits: no sample, or almost none
	[ "$(wc -l <"$TMP/threads-$layout")" -le 3 ] || fail "$layout: more threads with values than threads"
	set -- $(awk '$2 > 0.1' "$TMP/threads-$layout" | awk 'NR == 1 { print $2, $3 } NR == 2 { print $2, $4 }')
	within "$1" 0.3 0.5 || fail "$layout: work_a's thread has $1 s, expected 0.4"
	within "$2" 0.3 0.5 || fail "$layout: work_a has $2 s inclusive, expected 0.4"
	within "$3" 0.95 1.45 || fail "$layout: work_b's thread has $3 s, expected 1.2"
	within "$4" 0.95 1.45 || fail "$layout: work_b has $4 s inclusive, expected 1.2"
	# the traces: one line per thread, sorted, off-CPU zeros never twice in a row
	awk '/^  trace of profile/ { n++ } END { exit n != 3 }' "$TMP/dump-$layout" ||
		fail "$layout: expected a trace for each of the 3 threads"
	awk '/^  trace of profile/ { intrace = 1; last = 0; zero = 0; next }
	     /^  [^ ]/ { intrace = 0 }
	     intrace && $2 == "ctx" {
		if ($1 < last) { print "trace not sorted at " $1; bad = 1 }
		if ($3 == "#0" && zero) { print "two zeros in a row at " $1; bad = 1 }
		zero = ($3 == "#0"); last = $1; zeros += zero
	     }
	     END { if (!zeros) { print "no off-CPU zero anywhere"; bad = 1 } exit bad }' "$TMP/dump-$layout" ||
		fail "$layout: trace.db timelines are not sorted 0-separated lines"
done
echo ok
