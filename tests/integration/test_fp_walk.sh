# The sampler's own frame-pointer walk (over a copy of the top of the user
# stack, frames past it read one by one) against the kernel's walker
# (bpf_get_stack, COLLECTOR_KERNEL_FP_WALK=1): on a chain of 24 frames of
# 1 KiB each, both must see every frame from the hot loop to main on every
# sample, so the two runs' shares agree.
. tests/integration/lib.sh
need_root
command -v callgrind_annotate >/dev/null || fail "callgrind_annotate missing (valgrind)"

for walker in program kernel; do
	if [ $walker = kernel ]; then
		export COLLECTOR_KERNEL_FP_WALK=1
	else
		unset COLLECTOR_KERNEL_FP_WALK
	fi
	"$COLLECTOR" -o "$TMP/out-$walker" -f callgrind --call-graph fp -- "$WL/bigframes" 1 \
		>"$TMP/stdout" 2>"$TMP/summary-$walker" ||
		{ cat "$TMP/summary-$walker"; fail "collector ($walker walk) exited $?"; }
	cat "$TMP/summary-$walker"
	spin=$(share "$TMP/summary-$walker" self spin)
	within "$spin" 90 100 || fail "$walker walk: spin self share '$spin' is not ~100"
	# every frame's inclusive share, from Callgrind: the summary lists the
	# top 20 only, and here more than 20 functions tie at about 100%
	annotate "$(callgrind_of "$TMP"/out-$walker bigframes)" "$TMP/incl-$walker" --inclusive=yes ||
		{ cat "$TMP/incl-$walker"; fail "$walker walk: callgrind_annotate failed"; }
	for i in $(seq 0 23); do
		i=$(printf %02d "$i")
		t=$(annotated_share "$TMP/incl-$walker" frame_$i)
		within "$t" 90 100 || fail "$walker walk: frame_$i inclusive share '$t' is not ~100"
	done
	pct=$(awk '$1 == "truncated" && $2 == "stacks" { sub("%", "", $3); print $3; exit }' \
		"$TMP/summary-$walker")
	within "$pct" 0 2 || fail "$walker walk: $pct% of stacks truncated"
done

# every call edge main -> frame_00 -> ... -> frame_23 -> spin in both
# Callgrind profiles, with the samples that carry it (calls=: samples with
# the call on the stack; names are compressed: "fn=(id) name" defines an id
# that later fn= and cfn= lines use alone)
edges() {
	awk '
	function name(s,   id) {
		id = s; sub(/\).*/, "", id); sub(/^\(/, "", id)
		if (s ~ /\) /) { n = s; sub(/^\([0-9]+\) /, "", n); names[id] = n }
		return names[id]
	}
	/^fn=/ { fn = name(substr($0, 4)) }
	/^cfn=/ { cfn = name(substr($0, 5)) }
	/^calls=/ { split(substr($0, 7), c, " "); on_stack[fn " -> " cfn] += c[1] }
	END { for (e in on_stack) print e, on_stack[e] }
	' "$1" | sort
}
# The edges of more than 10 samples (1%) must be the same for both walks.
# A sample taken in a prologue, before the frame pointer is set up, skips
# the caller (frame_15 -> frame_17) in either walker alike: one such sample
# in one run but not the other is luck, not a difference between walkers.
for walker in program kernel; do
	edges "$(callgrind_of "$TMP"/out-$walker bigframes)" |
		grep -E '^(main|frame_[0-9]+) -> (frame_[0-9]+|spin) [0-9]+$' >"$TMP/all-edges-$walker"
	cat "$TMP/all-edges-$walker"
	awk '$4 > 10 { print $1, $2, $3 }' "$TMP/all-edges-$walker" >"$TMP/edges-$walker"
done
grep -qx 'main -> frame_00' "$TMP/edges-program" || fail "program walk: no main -> frame_00"
grep -qx 'frame_23 -> spin' "$TMP/edges-program" || fail "program walk: no frame_23 -> spin"
for i in $(seq 0 22); do
	a=$(printf frame_%02d "$i")
	b=$(printf frame_%02d $((i + 1)))
	grep -qx "$a -> $b" "$TMP/edges-program" || fail "program walk: no $a -> $b"
done
cmp -s "$TMP/edges-program" "$TMP/edges-kernel" ||
	fail "the two walks give different call edges: $(diff "$TMP/edges-program" "$TMP/edges-kernel")"
echo ok
