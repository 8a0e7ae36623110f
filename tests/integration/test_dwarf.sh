# Whole stacks from a binary built without frame pointers: --call-graph dwarf
# carries the 16-deep chain to main in at least 95% of the samples (the
# Callgrind file's inclusive costs, read by callgrind_annotate, say so), as
# perf --call-graph dwarf does; fp mode reports them truncated.
. tests/integration/lib.sh
need_root
command -v callgrind_annotate >/dev/null || fail "callgrind_annotate missing (valgrind)"

"$COLLECTOR" --call-graph auto -o "$TMP/dwarf" -- "$WL/deep" 1.5 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "collector exited $?"; }
cat "$TMP/summary"
grep -q "call graph: dwarf" "$TMP/summary" || fail "auto mode did not choose dwarf for a no-frame-pointer binary"
# every function's inclusive share, from Callgrind: the summary lists the
# top 20 only, and the chain, main and libc's start make 20 at about 100%
cg=$(callgrind_of "$TMP"/dwarf deep)
annotate "$cg" "$TMP/incl" --inclusive=yes || { cat "$TMP/incl"; fail "callgrind_annotate failed"; }
for fn in d16 d12 d8 d4 d1 main; do
	t=$(annotated_share "$TMP/incl" $fn)
	within "$t" 95 100 || fail "$fn is on $t% of the stacks, expected >= 95%"
done
pct=$(awk '$1 == "truncated" && $2 == "stacks" { sub("%", "", $3); print $3; exit }' "$TMP/summary")
within "$pct" 0 5 || fail "dwarf mode: $pct% of the stacks truncated"
grep -q "unwinding .* us per sample" "$TMP/summary" || fail "no unwinding time in the summary"


# fp mode: the kernel's walk stops at the leaf
"$COLLECTOR" --call-graph fp -o "$TMP/fp" -- "$WL/deep" 0.5 >"$TMP/summary-fp" 2>&1 ||
	fail "fp mode failed"
pct=$(awk '$1 == "truncated" && $2 == "stacks" { sub("%", "", $3); print $3; exit }' "$TMP/summary-fp")
within "$pct" 50 100 || fail "fp mode: only $pct% truncated for a no-frame-pointer binary"

# the same chain as perf --call-graph dwarf
if command -v perf >/dev/null; then
	perf record -q --call-graph dwarf -o "$TMP/perf.data" -- "$WL/deep" 0.5 >/dev/null 2>&1 ||
		fail "perf record failed"
	perf script -i "$TMP/perf.data" -F ip,sym 2>/dev/null |
		awk 'NF == 0 { if (s != "") print s; s = ""; next } { s = s " " $2 } END { if (s != "") print s }' |
		sort | uniq -c | sort -rn | head -n 1 >"$TMP/perf-top"
	cat "$TMP/perf-top"
	# perf's most common stack, leaf first, up to main
	chain=$(sed 's/^ *[0-9]* //' "$TMP/perf-top" | tr ' ' '\n' | sed -n '/^d16$/,/^main$/p' | tr '\n' ' ')
	want="d16 d15 d14 d13 d12 d11 d10 d9 d8 d7 d6 d5 d4 d3 d2 d1 main "
	[ "$chain" = "$want" ] || fail "perf's chain '$chain' is not '$want'"
	# and ours: the Callgrind calls from each caller to its callee
	for i in $(seq 1 15); do
		awk -v caller="d$i" -v callee="d$((i + 1))" '
			# fn= and cfn= share one name compression: (id) name, then (id)
			function name(s,  id) {
				if (match(s, /^\([0-9]+\)/)) {
					id = substr(s, 2, RLENGTH - 2)
					s = substr(s, RLENGTH + 1); sub(/^ /, "", s)
					if (s != "") names[id] = s
					return names[id]
				}
				return s
			}
			/^fn=/ { fn = name(substr($0, 4)) }
			/^cfn=/ { cfn = name(substr($0, 5)) }
			/^calls=/ && fn == caller && cfn == callee { found = 1 }
			END { exit !found }' "$cg" || fail "no call d$i -> d$((i + 1)) in our Callgrind file"
	done
fi
echo ok
