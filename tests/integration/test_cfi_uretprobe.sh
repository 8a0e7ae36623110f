#!/bin/sh
# --trace puts a uretprobe on each traced call: while it is pending, the
# call's return address on the stack is the kernel's trampoline.  The cfi
# walk takes the original back from the task's return instances, so the
# sampled stacks under the traced call keep it and reach _start, built
# with frame pointers (split) and without (split-nofp, where the
# frame-pointer walk that --trace once fell back to kept only the leaf).
# So do --call-graph dwarf's stack copies (and cfi's of samples before
# their image's table), in which the sampler puts the return addresses
# back.  Checked in the folded output (in-kernel sums off: --trace
# streams).
. tests/integration/lib.sh
. tests/integration/cfi_compare.sh
need_root

# calls_of SUMMARY FUNCTION: calls in the traced-functions table
calls_of() {
	awk -v fn="$2" '/^Traced functions/ { on = 1; next } on && $1 == fn { print $2; exit }' "$1"
}

WHOLE=";_start;__libc_start_main;__libc_start_call_main;main;run;chain_a;chain_b;chain_c;hot_function"

for run in split split-nofp dwarf:split dwarf:split-nofp; do
	prog=${run#dwarf:}
	cg=cfi
	[ "$prog" = "$run" ] || cg=dwarf
	# cfi: the default
	opt=
	[ $cg = cfi ] || opt="--call-graph $cg"
	prog=$cg-$prog
	# shellcheck disable=SC2086
	"$COLLECTOR" $opt -o "$TMP/$prog" -f folded --trace "$WL/${run#dwarf:}:chain_b" -- \
		"$WL/${run#dwarf:}" 1 >/dev/null 2>"$TMP/$prog.sum" ||
		{ cat "$TMP/$prog.sum"; fail "$prog: collector exited $?"; }
	grep -q "call graph: $cg" "$TMP/$prog.sum" || fail "$prog: not call graph $cg"
	calls=$(calls_of "$TMP/$prog.sum" chain_b)
	[ -n "$calls" ] && [ "$calls" -gt 0 ] || fail "$prog: chain_b not traced"
	folded_stacks "$TMP/$prog/collector.folded" "$TMP/$prog.st" "${run#dwarf:}"
	echo "== $prog: chain_b traced, $calls calls"
	head -n 3 "$TMP/$prog.st"
	# hot_function runs only under chain_b, whose uretprobe is pending
	# the whole time: its samples with the whole chain, over all of them
	p=$(awk -F '\t' -v s="$WHOLE" '$2 ~ /;hot_function$/ { n += $1; if ($2 == s) m += $1 }
		END { if (n) printf "%.1f", 100 * m / n }' "$TMP/$prog.st")
	echo "$prog: the whole chain through chain_b on $p% of hot_function's samples"
	within "$p" 95 100 || fail "$prog: the whole chain through chain_b on $p% of hot_function's samples only"
	c=$(complete_percent "$TMP/$prog.sum")
	within "$c" 95 100 || fail "$prog: $c% of the stacks complete, expected >= 95%"
done
