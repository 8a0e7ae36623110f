# --off-cpu: time switched out, by the stack where each thread left the CPU.
#  - offcpu: three times work() burns 1 s of CPU and wait_here() sleeps 1 s:
#    wait_here about 3 s off-CPU, work about 3 s on-CPU, and the wall-clock
#    view (on-CPU + off-CPU) adds up to the thread's lifetime, in Callgrind
#    (OffCpuNs, Ns, WallNs), pprof (off-cpu, wall sample types) and
#    HPCToolkit (off-cpu (sec), CPUTIME (sec), wall (sec) metrics of one
#    database); the summary's samples are cpu-clock's, off-CPU's sums
#    not among them;
#  - a pipe reader blocked in read: its off-CPU time under libc's read with
#    the kernel's frames of the read;
#  - a thread that sleeps in a library it dlopen'ed a moment before (no
#    table for it yet): its stacks unwound in user space, whole from
#    fresh_sleep to _start, the summary counting them;
#  - --off-cpu-min above every blocked interval: nothing attributed, every
#    switch counted as shorter.
. tests/integration/lib.sh
need_root
command -v go >/dev/null || fail "go missing (golang-go): go tool pprof reads the profiles"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod

cg_total() {
	awk -v col="$2" '/^events:/ { for (i = 2; i <= NF; i++) if ($i == col) c = i }
		/^totals:/ && c { print $c; exit }' "$1"
}
# near VALUE WANT PERCENT: |VALUE - WANT| <= PERCENT% of WANT
near() {
	[ -n "$1" ] && awk -v v="$1" -v w="$2" -v p="$3" \
		'BEGIN { d = v - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'
}

# --- on and off the CPU -----------------------------------------------------------
"$COLLECTOR" --off-cpu -f callgrind,pprof,hpctoolkit -o "$TMP/oc" -- "$WL/offcpu" "$TMP/lifetime" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "--off-cpu run failed"; }
cg=$(callgrind_of "$TMP/oc" offcpu)
[ -n "$cg" ] || fail "no Callgrind file of offcpu"
grep -q "^events: Samples Ns OffCpuNs WallNs$" "$cg" || { grep "^events" "$cg"; fail "$cg: columns"; }
annotate "$cg" "$TMP/off" --inclusive=yes --show=OffCpuNs --sort=OffCpuNs
annotate "$cg" "$TMP/on" --inclusive=yes --show=Ns --sort=Ns
off=$(annotated_count "$TMP/off" wait_here)
near "$off" 3000000000 5 || { cat "$TMP/off"; fail "wait_here: $off ns off-CPU, not about 3 s"; }
# on-CPU: 3000 samples at 999 Hz, some taken late on a loaded machine
on=$(annotated_count "$TMP/on" work)
near "$on" 3000000000 10 || { cat "$TMP/on"; fail "work: $on ns on-CPU, not about 3 s"; }
lifetime=$(cat "$TMP/lifetime")
wall=$(cg_total "$cg" WallNs)
near "$wall" "$lifetime" 5 || { cat "$TMP/summary"; fail "wall view: $wall ns, the thread lived $lifetime ns"; }
echo "offcpu: wait_here $off ns off-CPU, work $on ns on-CPU, wall $wall ns of $lifetime ns"
grep -q "wall view  *on-CPU" "$TMP/summary" || fail "the summary has no wall view"

go tool pprof -top -sample_index=off-cpu -cum -nodecount=1000 "$TMP/oc/profile.pb.gz" >"$TMP/top" 2>"$TMP/err" ||
	{ cat "$TMP/err"; fail "pprof -sample_index=off-cpu"; }
# -top's cum column has a unit: "3.01s", "3003.32ms"
cum=$(awk '$6 == "wait_here" { v = $4; f = 1e9
	if (v ~ /ms$/) f = 1e6; else if (v ~ /us$/) f = 1e3; else if (v ~ /ns$/) f = 1
	sub(/[mun]?s$/, "", v); printf "%.0f\n", v * f; exit }' "$TMP/top")
near "$cum" 3000000000 5 || { cat "$TMP/top"; fail "pprof: wait_here has $cum ns off-CPU"; }
go tool pprof -top -sample_index=wall -nodecount=3 "$TMP/oc/profile.pb.gz" >"$TMP/wall" 2>"$TMP/err" ||
	{ cat "$TMP/err"; fail "pprof -sample_index=wall"; }

"$COLLECTOR" dump "$TMP/oc/hpctoolkit" >"$TMP/hk" || fail "collector dump of the HPCToolkit database failed"
# seconds as ns
hk_ns() {
	hk_total "$TMP/hk" "$@" | awk '{ printf "%.0f\n", $1 * 1e9 }'
}
v=$(hk_ns "off-cpu (sec)" wait_here)
near "$v" 3000000000 5 || fail "HPCToolkit: wait_here has ${v:-no} ns off-CPU"
v=$(hk_ns "CPUTIME (sec)" work)
near "$v" 3000000000 10 || fail "HPCToolkit: work has ${v:-no} ns on-CPU"
v=$(hk_ns "wall (sec)")
near "$v" "$lifetime" 5 || fail "HPCToolkit: wall view ${v:-no} ns, the thread lived $lifetime ns"
echo "HPCToolkit: off-cpu, CPUTIME and wall metrics in one database (wall $v ns)"
# the summary's samples are cpu-clock's, as many as the traces' samples (an
# element other than 0 each) of the same run: off-CPU's sums are not samples
samples=$(awk '$1 == "samples" { print $2; exit }' "$TMP/summary")
sums=$(sed -n 's/^ *off-cpu .* in \([0-9]*\) stacks.*/\1/p' "$TMP/summary")
traced=$(awk '/^    [0-9]+ ctx #[0-9]+$/ && $3 != "#0" { n++ } END { print n + 0 }' "$TMP/hk")
[ -n "$sums" ] && [ "$sums" -gt 0 ] || { cat "$TMP/summary"; fail "the summary has no off-CPU sums"; }
[ "$samples" = "$traced" ] ||
	{ cat "$TMP/summary"; fail "summary: $samples samples, the traces $traced (off-CPU: $sums sums)"; }
echo "summary: $samples samples, as in the traces, beside $sums off-CPU sums"

# --- a pipe reader blocked in read -------------------------------------------------
"$COLLECTOR" -q --off-cpu -f callgrind -o "$TMP/pipe" -- sh -c 'sleep 1 | cat' || fail "pipe run failed"
# the exec'd cat: its process's last generation (callgrind.out.PID.N); the
# fork child before the exec (callgrind.out.PID) is sh's code, and is named
# cat too when its command line was read after the exec
cg=$(grep -l "^cmd: cat" "$TMP/pipe"/callgrind.out.* | sort -V | tail -n 1)
[ -n "$cg" ] || fail "no Callgrind file of cat"
annotate "$cg" "$TMP/pipe-off" --inclusive=yes --show=OffCpuNs --sort=OffCpuNs
for fn in __read vfs_read; do
	v=$(annotated_count "$TMP/pipe-off" $fn)
	[ -n "$v" ] && [ "$v" -ge 900000000 ] || { cat "$TMP/pipe-off"; fail "cat: $fn has ${v:-no} off-CPU time"; }
done
grep -Eq ":(anon_)?pipe_read " "$TMP/pipe-off" || { cat "$TMP/pipe-off"; fail "cat: no pipe_read frame"; }
echo "pipe reader: blocked in read, with the kernel's frames"

# --- a sleep in a library loaded a moment before: no table for it yet --------------
cc -g -O2 -fomit-frame-pointer -o "$TMP/dlopen_fresh" "$TOP/tests/workloads/dlopen_fresh.c" -ldl ||
	fail "cannot build dlopen_fresh"
mkdir "$TMP/lib"
"$COLLECTOR" -v --off-cpu -f callgrind -o "$TMP/dlw" -- "$TMP/dlopen_fresh" "$TMP/lib" 1 wait \
	2>"$TMP/dlw.sum" || { cat "$TMP/dlw.sum"; fail "dlopen wait: collector exited $?"; }
# the program's file (cc and the steps it ran have their own)
cg=$(grep -l "fresh_sleep" "$TMP/dlw"/callgrind.out.* | head -n 1)
[ -n "$cg" ] || { grep -v "^libbpf" "$TMP/dlw.sum"; fail "dlopen wait: no Callgrind file names fresh_sleep"; }
annotate "$cg" "$TMP/dlw-off" --inclusive=yes --show=OffCpuNs --sort=OffCpuNs
for fn in fresh_sleep fresh_wait wait_fresh main __libc_start_call_main; do
	v=$(annotated_count "$TMP/dlw-off" $fn)
	[ -n "$v" ] && [ "$v" -ge 900000000 ] ||
		{ cat "$TMP/dlw-off"; fail "dlopen wait: $fn has ${v:-no} off-CPU time"; }
done
grep -q "off-CPU intervals unwound in user space" "$TMP/dlw.sum" ||
	{ grep -v "^libbpf" "$TMP/dlw.sum"; fail "dlopen wait: no off-CPU interval unwound in user space"; }
echo "dlopen wait: the sleep in the fresh library whole, unwound in user space"

# --- a minimum above every blocked interval ----------------------------------------
"$COLLECTOR" --off-cpu --off-cpu-min 2s -f callgrind -o "$TMP/min" -- "$WL/offcpu" 2>"$TMP/summary" ||
	fail "--off-cpu-min run failed"
cg=$(callgrind_of "$TMP/min" offcpu)
[ "$(cg_total "$cg" OffCpuNs)" = "" ] || [ "$(cg_total "$cg" OffCpuNs)" = 0 ] ||
	fail "--off-cpu-min 2s: $(cg_total "$cg" OffCpuNs) ns attributed"
short=$(sed -n 's/.*; \([0-9]*\) shorter ones not attributed/\1/p' "$TMP/summary")
[ -n "$short" ] && [ "$short" -ge 3 ] || { cat "$TMP/summary"; fail "--off-cpu-min 2s: shorter switches not counted"; }
echo "--off-cpu-min 2s: $short switches counted, none attributed"
echo "PASS"
