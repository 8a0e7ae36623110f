# Comparison with perf on real programs (sourced after lib.sh, POSIX sh).
#
# compare_with_perf NAME FREQ COMMAND...: samples one run of COMMAND with
# the collector and with `perf record` at the same frequency, then compares the top 5
# self functions in user space of each with the other's share of the same
# function: every function in either top 5 has shares within
# SHARE_TOLERANCE points.  Shares are of the user-space samples: how many
# samples land in the kernel (interrupt returns, page faults) varies from
# run to run with the machine's load, for perf as for the collector, and
# would move every user share with it.  Functions are matched by name as
# `perf report -v` prints them (C++ demangled with parameters).  perf shows
# stripped code one row per address ("0x15be0"); those rows are summed per
# .eh_frame FDE (read with readelf) into the collector's "IMAGE+0xSTART".
# Ranks are not compared: near-ties may sort either way, their shares may
# not differ.
SHARE_TOLERANCE=${SHARE_TOLERANCE:-3}

# perf_shares REPORT OUT: "share<TAB>name" per function, summed, from
# `perf report -v --stdio --sort dso,sym`.  perf's address of unnamed code
# is a file offset; the FDEs (readelf) have link-time addresses: the
# PT_LOAD headers (readelf -l) translate.
perf_shares() {
	: >"$TMP/fdes"
	awk '$5 ~ /^\[/ && $6 ~ /^0x/ && $2 ~ /^\// { print $2 }' "$1" | sort -u |
	while read -r dso; do
		readelf -lW "$dso" 2>/dev/null |
			awk -v dso="$dso" '$1 == "LOAD" { print "L", dso, $2, $3, $5 }' >>"$TMP/fdes"
		readelf --debug-dump=frames "$dso" 2>/dev/null |
			awk -v dso="$dso" '/ FDE / { sub(".*pc=", ""); split($0, r, "\\.\\.");
				print "F", dso, r[1], r[2] }' >>"$TMP/fdes"
	done
	awk -v fdes="$TMP/fdes" '
		function hex(s,   v, i) { v = 0; sub("^0x", "", s); s = tolower(s)
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		BEGIN { while ((getline l < fdes) > 0) { split(l, f, " ")
			if (f[1] == "L") { nl++; ld[nl] = f[2]; loff[nl] = hex(f[3]); lva[nl] = hex(f[4])
				lsz[nl] = hex(f[5]) }
			else { n++; fd[n] = f[2]; lo[n] = hex(f[3]); hi[n] = hex(f[4]) } } }
		$1 ~ /%$/ && $5 ~ /^\[/ {
			share = $1; sub("%", "", share)
			name = $6; for (i = 7; i <= NF; i++) name = name " " $i
			if (name ~ /^0x[0-9a-f]+$/) {
				a = hex(name)
				for (k = 1; k <= nl; k++)
					if (ld[k] == $2 && a >= loff[k] && a < loff[k] + lsz[k]) {
						a = a - loff[k] + lva[k]; break
					}
				for (k = 1; k <= n; k++)
					if (fd[k] == $2 && a >= lo[k] && a < hi[k]) {
						base = $2; sub(".*/", "", base)
						name = sprintf("%s+0x%x", base, lo[k]); break
					}
			}
			if ($5 == "[k]") kernel += share
			else sum[name] += share
		}
		END { user = 100 - kernel
			for (nm in sum) printf "%.2f\t%s\n", 100 * sum[nm] / user, nm }' "$1" |
		sort -t "$(printf '\t')" -k1,1 -rn >"$2"
}

# collector_shares SUMMARY FOLDED OUT: "share<TAB>name" of the summary's
# top self functions in user space (names may hold spaces; the image is
# the last field), summed per name as for perf (a JIT function compiled
# twice is one function since JIT code is keyed by name; the sum stays for
# names alike in two images), as shares of the user-space samples: the
# kernel's share is that of the folded stacks whose leaf is a kernel frame
collector_shares() {
	kernel=$(awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";")
			all += n; if (f[k] ~ /_\[k\]$/) kern += n }
		END { if (all) printf "%.4f", 100 * kern / all; else print 0 }' "$2")
	awk -v kernel="$kernel" '
		/^Top functions by self/ { on = 1; getline; next } /^Top functions by total/ { on = 0 }
		on && $1 ~ /%$/ && $NF != "[kernel.kallsyms]" { share = $1; sub("%", "", share)
			name = $3; for (i = 4; i < NF; i++) name = name " " $i
			sum[name] += share }
		END { for (nm in sum) printf "%.2f\t%s\n", 100 * sum[nm] / (100 - kernel), nm }' \
		"$1" | sort -t "$(printf '\t')" -k1,1 -rn >"$3"
}

# share_in FILE NAME: the share of NAME, 0 when absent
share_in() {
	awk -F '\t' -v n="$2" '$2 == n { print $1; found = 1; exit } END { if (!found) print 0 }' "$1"
}

# run_both COMMAND...: one run of COMMAND sampled by both, over the same
# window (name and freq from compare_with_perf).  The collector starts a
# shell that waits on a FIFO and then execs COMMAND; perf attaches to that
# shell with its events disabled, is told to enable them and acknowledges
# (--control), and only then is the shell let go.  Both see COMMAND from
# its exec on, and perf sees the exec's mappings.  Attached to the
# collector's held child instead, perf raced the exec: it kept the old
# image's maps (19% of a cxx_shapes run as absolute addresses without a
# DSO), or missed the first iterations of a run the collector let go
# sooner (cxx_shapes' shares 3-6 points apart in 3 runs of 5).
run_both() {
	rm -rf "$TMP/$name.out" "$TMP/$name.go" "$TMP/$name.ctl" "$TMP/$name.ack"
	mkfifo "$TMP/$name.go" "$TMP/$name.ctl" "$TMP/$name.ack" || fail "$name: mkfifo failed"
	"$COLLECTOR" -F "$freq" -f folded,callgrind -o "$TMP/$name.out" -- \
		sh -c 'read go <"$0" && exec "$@"' "$TMP/$name.go" "$@" >/dev/null \
		2>"$TMP/$name.summary" &
	cpid=$!
	target=""
	for i in $(seq 1 300); do
		target=$(pgrep -P $cpid | head -n 1)
		[ -n "$target" ] && break
		sleep 0.01
	done
	[ -n "$target" ] || { wait $cpid; cat "$TMP/$name.summary"; fail "$name: no command started"; }
	perf record -q -D -1 --control "fifo:$TMP/$name.ctl,$TMP/$name.ack" -F "$freq" \
		-p "$target" -o "$TMP/$name.data" >/dev/null 2>"$TMP/$name.perf-err" &
	ppid=$!
	timeout 30 sh -c 'echo enable >"$1" && head -n 1 "$2"' sh "$TMP/$name.ctl" \
		"$TMP/$name.ack" >"$TMP/$name.acked" && grep -q ack "$TMP/$name.acked" ||
		{ cat "$TMP/$name.perf-err"; kill $cpid $ppid; fail "$name: perf did not start"; }
	timeout 30 sh -c 'echo go >"$1"' sh "$TMP/$name.go" ||
		{ cat "$TMP/$name.summary"; kill $cpid $ppid; fail "$name: the command was not let go"; }
	wait $cpid || { cat "$TMP/$name.summary"; fail "$name: collector failed"; }
	wait $ppid
	[ -s "$TMP/$name.data" ] || { cat "$TMP/$name.perf-err"; fail "$name: perf record failed"; }
	perf report -v -i "$TMP/$name.data" --stdio --sort dso,sym >"$TMP/$name.perf" 2>/dev/null ||
		fail "$name: perf report failed"
}

compare_with_perf() {
	name=$1 freq=$2
	shift 2
	command -v perf >/dev/null || fail "perf missing (linux-perf)"
	run_both "$@"
	perf_shares "$TMP/$name.perf" "$TMP/$name.pshares"
	collector_shares "$TMP/$name.summary" "$TMP/$name.out/collector.folded" \
		"$TMP/$name.cshares"
	echo "== $name: top 5 self in user space (% of user samples), perf | collector" \
		"(-F $freq: $*)"
	paste "$TMP/$name.pshares" "$TMP/$name.cshares" | head -n 5 |
		awk -F '\t' '{ printf "  %6s%%  %-50s | %6s%%  %s\n", $1, $2, $3, $4 }'
	{ head -n 5 "$TMP/$name.pshares"; head -n 5 "$TMP/$name.cshares"; } | cut -f 2 | sort -u |
	while IFS= read -r fn; do
		p=$(share_in "$TMP/$name.pshares" "$fn")
		c=$(share_in "$TMP/$name.cshares" "$fn")
		awk -v p="$p" -v c="$c" -v t="$SHARE_TOLERANCE" \
			'BEGIN { d = p - c; if (d < 0) d = -d; exit !(d <= t) }' ||
			fail "$name: $fn has $p% in perf, $c% in the collector"
	done || exit 1
	[ "$(head -n 1 "$TMP/$name.cshares" | cut -f 1 | cut -d. -f1)" -ge 5 ] ||
		fail "$name: the collector's top function has under 5% of the samples"
}
