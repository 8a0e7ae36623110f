# -e: events beyond cpu-clock, on this machine's software events.
#  - page-faults/1 on a workload that touches N new pages in touch_pages():
#    within 5% of N there in the Callgrind, HPCToolkit, DCPI and pprof files;
#  - cpu-clock, page-faults and context-switches at once: each event's total
#    equals its own single-event run within noise;
#  - a hardware event without a PMU: one clear line and exit 6; an unknown
#    event: exit 2 with the hint; -e list lists what is there.
. tests/integration/lib.sh
need_root
command -v go >/dev/null || fail "go missing (golang-go): go tool pprof reads the profiles"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod
PT="$WL/pagetouch"
N=3000

# cg_total FILE COLUMN: the Callgrind file's total of an event column
cg_total() {
	awk -v col="$2" '/^events:/ { for (i = 2; i <= NF; i++) if ($i == col) c = i }
		/^totals:/ && c { print $c; exit }' "$1"
}

# near VALUE WANT PERCENT [SLACK]: |VALUE - WANT| <= PERCENT% of WANT + SLACK
near() {
	[ -n "$1" ] && awk -v v="$1" -v w="$2" -v p="$3" -v s="${4:-0}" \
		'BEGIN { d = v - w; if (d < 0) d = -d; exit !(d <= w * p / 100 + s) }'
}

# --- errors first: they need no run -------------------------------------------
expect_exit 6 "$COLLECTOR" -e cycles -- true
grep -q "this machine has no hardware performance counters: cycles is not available; software events are" "$TMP/err" ||
	{ cat "$TMP/err"; fail "-e cycles: not the one clear line"; }
[ "$(wc -l <"$TMP/err")" -eq 1 ] || { cat "$TMP/err"; fail "-e cycles: more than one line"; }
expect_exit 2 "$COLLECTOR" -e nosuchevent -- true
grep -q "unknown event 'nosuchevent'.*-e list" "$TMP/err" || { cat "$TMP/err"; fail "-e nosuchevent: no hint"; }
expect_exit 2 "$COLLECTOR" -e page-faults/0 -- true
"$COLLECTOR" -e list >"$TMP/list" || fail "-e list failed"
grep -Eq "^page-faults +faults +available" "$TMP/list" || { cat "$TMP/list"; fail "-e list: page-faults"; }
grep -Eq "^cycles +cycles +unavailable" "$TMP/list" || { cat "$TMP/list"; fail "-e list: cycles"; }

# --- page-faults/1: N faults in touch_pages, in every format ---------------------
# (the spin keeps the process alive while its mappings are read)
"$COLLECTOR" -q -e page-faults/1 -o "$TMP/pf" -- "$PT" $N 0 500 || fail "page-faults run failed"
cg=$(callgrind_of "$TMP/pf" pagetouch)
[ -n "$cg" ] || fail "no Callgrind file of pagetouch"
grep -q "^events: Samples PageFaults$" "$cg" || fail "$cg: no PageFaults column"
grep -q "^event: PageFaults : page faults (faults, sampled)$" "$cg" || fail "$cg: no event: line with the unit"
annotate "$cg" "$TMP/cg" --show=PageFaults --sort=PageFaults
got=$(annotated_count "$TMP/cg" touch_pages)
near "$got" $N 5 || { cat "$TMP/cg"; fail "Callgrind: touch_pages has $got page faults, not about $N"; }
echo "Callgrind: touch_pages $got page faults of $N"

"$COLLECTOR" dump "$TMP/pf/hpctoolkit" >"$TMP/hk" || fail "collector dump of the HPCToolkit database failed"
grep -q 'metric "page-faults"' "$TMP/hk" || fail "HPCToolkit: no page-faults metric"
got=$(hk_total "$TMP/hk" page-faults touch_pages) || fail "HPCToolkit: no page-faults statistics"
near "$got" $N 5 || fail "HPCToolkit: touch_pages has $got page faults, not about $N"
echo "HPCToolkit: touch_pages $got page faults"

prof="$TMP/pf/dcpi/pagetouch.prof"
"$COLLECTOR" dump "$prof" >"$TMP/dcpi" || fail "collector dump $prof failed"
grep -q "^event page-faults faults$" "$TMP/dcpi" || fail "$prof: event header not page-faults"
grep -q "^period 1$" "$TMP/dcpi" || fail "$prof: period not 1"
set -- $(nm -S "$PT" | awk '$4 == "touch_pages" { print $1, $2 }')
lo=$((0x$1)) hi=$((0x$1 + 0x$2)) got=0
while read -r addr count; do
	case $addr in 0x*) [ $((addr)) -ge $lo ] && [ $((addr)) -lt $hi ] && got=$((got + count)) ;; esac
done <"$TMP/dcpi"
near "$got" $N 5 || { cat "$TMP/dcpi"; fail "DCPI: touch_pages has $got page faults, not about $N"; }
echo "DCPI: touch_pages $got page faults"

go tool pprof -top -sample_index=page-faults -nodecount=1000 "$TMP/pf/profile.pb.gz" >"$TMP/top" 2>"$TMP/err" ||
	{ cat "$TMP/err"; fail "pprof -top -sample_index=page-faults"; }
got=$(awk '$6 == "touch_pages" { print $1; exit }' "$TMP/top")
near "$got" $N 5 || { cat "$TMP/top"; fail "pprof: touch_pages has $got page faults, not about $N"; }
echo "pprof: touch_pages $got page faults"

# --- three events at once, each as in its own run -------------------------------
# N faults, 200 sleeps (a switch each), 600 ms of CPU: totals of the process
ARGS="$N 200 600"
"$COLLECTOR" -q -e cpu-clock,page-faults/1,context-switches/1 -f callgrind,hpctoolkit -o "$TMP/all" -- "$PT" $ARGS ||
	fail "three-event run failed"
"$COLLECTOR" -q -e cpu-clock -f callgrind -o "$TMP/clock" -- "$PT" $ARGS || fail "cpu-clock run failed"
"$COLLECTOR" -q -e page-faults/1 -f callgrind -o "$TMP/faults" -- "$PT" $ARGS || fail "page-faults run failed"
"$COLLECTOR" -q -e context-switches/1 -f callgrind -o "$TMP/switches" -- "$PT" $ARGS ||
	fail "context-switches run failed"
all=$(callgrind_of "$TMP/all" pagetouch)
grep -q "^events: Samples Ns PageFaults ContextSwitches$" "$all" ||
	{ grep "^events" "$all"; fail "$all: not a column per event"; }
# faults: the same program faults the same pages (a few of the loader's vary)
a=$(cg_total "$all" PageFaults) b=$(cg_total "$(callgrind_of "$TMP/faults" pagetouch)" PageFaults)
near "$a" "$b" 3 20 || fail "page-faults: $a together, $b alone"
# HPCToolkit: one database, a metric per event, as many faults as Callgrind
[ ! -e "$TMP/all/page-faults" ] || fail "HPCToolkit: a database per event"
"$COLLECTOR" dump "$TMP/all/hpctoolkit" >"$TMP/hk-all" || fail "collector dump of the three-event database failed"
for metric in "CPUTIME (sec)" page-faults context-switches; do
	hk_total "$TMP/hk-all" "$metric" >/dev/null || fail "HPCToolkit: no $metric metric in the one database"
done
a=$(hk_total "$TMP/hk-all" page-faults) b=$(cg_total "$all" PageFaults)
near "$a" "$b" 1 2 || fail "HPCToolkit: $a page faults, Callgrind $b in the same run"
echo "HPCToolkit: one database, $a page faults (Callgrind $b)"
# switches: one per sleep, under the kernel's do_nanosleep (libc's
# nanosleep has no frame pointer, which hides switch_often; the spin's
# preemptions depend on what else the machine runs: not compared)
annotate "$all" "$TMP/cg-all" --inclusive=yes --show=ContextSwitches --sort=ContextSwitches
annotate "$(callgrind_of "$TMP/switches" pagetouch)" "$TMP/cg-sw" --inclusive=yes
a=$(annotated_count "$TMP/cg-all" do_nanosleep) b=$(annotated_count "$TMP/cg-sw" do_nanosleep)
near "$a" 200 5 5 || { cat "$TMP/cg-all"; fail "context-switches: do_nanosleep has $a together, not 200"; }
near "$b" 200 5 5 || { cat "$TMP/cg-sw"; fail "context-switches: do_nanosleep has $b alone, not 200"; }
# CPU time: 600 ms of spin in both; sampled at 999 Hz, and a loaded machine
# takes some interrupts late
a=$(cg_total "$all" Ns) b=$(cg_total "$(callgrind_of "$TMP/clock" pagetouch)" Ns)
near "$a" "$b" 20 || fail "cpu-clock: $a ns together, $b ns alone"
echo "three events at once: totals as in their own runs"
echo "PASS"
