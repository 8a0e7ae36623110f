#!/bin/sh
# -a --call-graph cfi takes the mappings of the processes it sees exec
# from the kernel's mmap records (lib/mmap_records.h), not from /proc: a
# program started after sampling began, which builds a library mid-run,
# dlopen()s it and spins in it, has every sample in the library whole
# (its exec, ld.so's libraries and the dlopen all came as records), and
# the summary counts the readings the records kept current.  Ten programs
# of a few milliseconds each run beside it: the records are what is left
# of their maps when their stacks are decoded.  And an awk that runs while
# the collector is stopped (its records wait in the rings: it is gone when
# they are read) is named with its whole command line, which the exec's
# program read (bpf/collector.h's collector_exec_event), not just "awk",
# and its stacks reach _start, unwound from its maps as the records gave
# them.
. tests/integration/lib.sh
. tests/integration/cfi_compare.sh
need_root
# the ASan build builds the tables of everything on the machine ten times
# slower (test_cfi_system_wide): the plain suite runs it
plain_suite_only "tables take seconds under ASan"
command -v cc >/dev/null 2>&1 || skip "no cc to build the library with"

cc -g -O2 -fomit-frame-pointer -o "$TMP/dlopen_fresh" "$TOP/tests/workloads/dlopen_fresh.c" -ldl ||
	fail "cannot build dlopen_fresh"
mkdir "$TMP/lib"
"$COLLECTOR" -a -v -f folded,callgrind -o "$TMP/out" >/dev/null 2>"$TMP/summary" &
cpid=$!
wait_sampling "$cpid" || { cat "$TMP/summary"; fail "collector -a did not start sampling"; }
"$TMP/dlopen_fresh" "$TMP/lib" 0.5 >/dev/null || fail "dlopen_fresh failed"
for _ in 1 2 3 4 5 6 7 8 9 10; do
	/bin/true
done
# the collector stopped: the awk's records wait in the rings until it is gone
kill -STOP "$cpid"
awk -v n=3000000 'BEGIN { for (i = 0; i < n; i++) x += i }' /dev/null gone_before_its_exec_is_read
kill -CONT "$cpid"
kill -INT "$cpid"
wait "$cpid" || { cat "$TMP/summary"; fail "collector exited $?"; }
[ -f "$TMP/lib/libfresh.so" ] || fail "the program built no library"
grep -A4 "truncated" "$TMP/summary"
grep "process maps" "$TMP/summary"

fresh_whole "$TMP/out/collector.folded" "$TMP/st" >"$TMP/count"
read -r n m <"$TMP/count"
echo "$m of $n samples in the library whole"
[ "$n" -ge 20 ] || fail "$n samples in the library, expected >= 20 (0.5 s of CPU in it)"
[ "$m" -eq "$n" ] || fail "$((n - m)) of $n samples in the library not whole"

# "kept current by the kernel's mmap records N times (M mappings recorded, ...)"
kept=$(sed -n "s/.*kept current by the kernel's mmap records \([0-9]*\) times (\([0-9]*\) mappings.*/\1 \2/p" \
	"$TMP/summary")
set -- $kept
[ -n "${1:-}" ] || fail "the summary does not count the readings kept by mmap records"
[ "$1" -gt 0 ] || fail "no reading of maps was kept current by the mmap records"
# dlopen_fresh alone maps 5 or more: its executable, ld.so, [vdso], libc, the library
[ "$2" -ge 5 ] || fail "$2 mappings recorded, expected >= 5"

f=$(grep -l "^cmd: awk" "$TMP"/out/callgrind.out.* | head -n 1)
[ -n "$f" ] || fail "no Callgrind file of the awk"
grep "^cmd:" "$f"
grep -q "^cmd: awk -v n=3000000 .* /dev/null gone_before_its_exec_is_read$" "$f" ||
	fail "the awk's command line is not whole in $f"
# its Callgrind file counts the stacks that do not reach a known root
# (mawk is stripped: its frames are [mawk], its entry point the root)
grep "^desc: TruncatedStacks:" "$f"
set -- $(awk '/^desc: TruncatedStacks:/ { print $3, $5 }' "$f")
[ -n "${2:-}" ] || fail "awk: no count of truncated stacks in $f"
echo "awk: $1 of $2 samples truncated"
[ "$2" -ge 20 ] || fail "awk: $2 samples, expected >= 20"
[ $(($1 * 100)) -le $(($2 * 10)) ] || fail "awk: $1 of $2 samples truncated, expected <= 10%"
echo ok
