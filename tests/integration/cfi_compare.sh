# Comparing call stacks, for the tests of --call-graph cfi (sourced after
# lib.sh, POSIX sh).
#
# A stack is its user frames' function names, outermost first, joined by
# ";" (kernel frames left out: where an interrupt lands varies from run to
# run).  Names are made comparable between the collector and perf: perf
# shows glibc's internal aliases (__GI___clock_gettime,
# __libc_start_main_impl) where the collector shows the public name; and
# code without a symbol (the collector's "IMAGE+0xSTART", perf's
# "[unknown]") is left out of both.

# norm_frames: the awk function both sides use
NORM_FRAME='function norm(f) { sub(/^__GI_+/, "__", f); sub(/_impl$/, "", f); sub(/@.*/, "", f)
		if (f ~ /\+0x[0-9a-f]+$/ || f == "[unknown]" || f ~ /^\[/) return ""
		return f }'

# folded_stacks FOLDED OUT [COMM]: "count<TAB>stack" per distinct user
# stack of a collector.folded file (of the processes named COMM, if given),
# most samples first.
folded_stacks() {
	awk -v comm="${3:-}" "$NORM_FRAME"'
		{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
		  if (comm != "" && f[1] != comm) next
		  s = ""
		  for (i = 2; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/) continue
			g = norm(f[i]); if (g != "") s = s ";" g
		  }
		  sum[s] += n }
		END { for (s in sum) printf "%d\t%s\n", sum[s], s }' "$1" | sort -t "$(printf '\t')" -k1,1rn >"$2"
}

# fresh_whole FOLDED OUT: "N M" on stdout for tests/workloads/dlopen_fresh.c
# in a collector.folded file: N of its samples in the library it built (the
# stacks ending in fresh_c), M of them whole (from _start through the
# library); its stacks (folded_stacks) in OUT, the first three on stderr.
fresh_whole() {
	folded_stacks "$1" "$2" dlopen_fresh
	head -n 3 "$2" >&2
	awk -F '\t' -v s=";_start;__libc_start_main;__libc_start_call_main;main;run_fresh;fresh_a;fresh_b;fresh_c" \
		'$2 ~ /;fresh_c$/ { n += $1; if ($2 == s) m += $1 } END { printf "%d %d\n", n, m }' "$2"
}

# perf_stacks PERF_DATA OUT: the same from `perf record --call-graph dwarf`.
perf_stacks() {
	perf script -i "$1" -F ip,sym,dso 2>/dev/null | awk "$NORM_FRAME"'
		NF == 0 { if (seen) sum[s]++; s = ""; seen = 0; next }
		{ seen = 1 }
		$NF ~ /kernel\.kallsyms/ { next }
		{ g = norm($2); if (g != "") s = ";" g s }
		END { if (seen) sum[s]++; for (s in sum) printf "%d\t%s\n", sum[s], s }' |
		sort -t "$(printf '\t')" -k1,1rn >"$2"
}

# stacks_found_in A B: the share of A's samples (percent) whose stack B
# has too, whatever its share there: for programs with many rare stacks,
# where two runs' shares differ by chance more than by how they unwind.
stacks_found_in() {
	awk -F '\t' 'NR == FNR { b[$2] = 1; next } { n += $1; if ($2 in b) m += $1 }
		END { if (n) printf "%.1f\n", 100 * m / n; else print 0 }' "$2" "$1"
}

# same_top_stack A B TOLERANCE: the most common stack of A and of B are the
# same; or, where the two differ, each is a near-tie of the other's top
# (within TOLERANCE points of it in both), so that how ties fall decides
# nothing.  Prints what it compared.
same_top_stack() {
	awk -F '\t' -v tol="$3" '
		NR == FNR { a[$2] = $1; na += $1; if (FNR == 1) ta = $2; next }
		{ b[$2] = $1; nb += $1; if (FNR == 1) tb = $2 }
		END {
			printf "top of A (%.1f%%): %s\ntop of B (%.1f%%): %s\n",
				100 * a[ta] / na, ta, 100 * b[tb] / nb, tb
			if (ta == tb) exit 0
			if (100 * (b[tb] - b[ta]) / nb <= tol && 100 * (a[ta] - a[tb]) / na <= tol)
				exit 0
			exit 1
		}' "$1" "$2"
}

# complete_percent SUMMARY: 100 - the truncated share the summary prints
complete_percent() {
	awk '$1 == "truncated" && $2 == "stacks" { sub("%", "", $3); print 100 - $3; exit }' "$1"
}
