#!/bin/sh
# A Go program under the default --call-graph cfi: every goroutine's stack
# ends at runtime.goexit, a thread's system stack at runtime.mstart, whose
# CFI does not say they are outermost; the stacks are whole all the same
# (at most 5% truncated: the rest end where the runtime switches stacks,
# runtime.systemstack, mcall, morestack, or at Go's signal trampoline,
# which has no CFI).  Built at test time with Debian's golang-go.
. tests/integration/lib.sh
. tests/integration/cfi_compare.sh
need_root
command -v go >/dev/null 2>&1 || skip "go missing (Debian's golang-go): no Go program to profile"

GOCACHE="$TMP/gocache" GO111MODULE=off GOFLAGS= \
	go build -o "$TMP/goload" "$TOP/tests/workloads/goload.go" >"$TMP/build.log" 2>&1 ||
	{ cat "$TMP/build.log"; fail "go build failed"; }

"$COLLECTOR" -o "$TMP/run" -f folded -- "$TMP/goload" 1 >/dev/null 2>"$TMP/run.sum" ||
	{ cat "$TMP/run.sum"; fail "collector exited $?"; }
grep -A2 "truncated" "$TMP/run.sum"
grep -q "call graph: cfi" "$TMP/run.sum" || fail "cfi is not the default"
c=$(complete_percent "$TMP/run.sum")
within "$c" 95 100 || fail "$c% of the stacks complete, expected >= 95%"

# the goroutines' samples: main.worker under runtime.goexit, on nearly all
folded_stacks "$TMP/run/collector.folded" "$TMP/run.st" goload
head -n 5 "$TMP/run.st"
p=$(awk -F '\t' '$2 ~ /;main\.worker;main\.spin$/ { n += $1; if ($2 ~ /^;runtime\.goexit[.a-z0-9]*;/) m += $1 }
	END { if (n) printf "%.1f", 100 * m / n }' "$TMP/run.st")
echo "main.worker;main.spin under runtime.goexit on $p% of its samples"
within "$p" 95 100 || fail "main.worker's samples end at runtime.goexit on $p% only"
