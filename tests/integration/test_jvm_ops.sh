#!/bin/sh
# The JVM runtime's operations (runtimes/jvm/jvm_ops.c) on live JVMs,
# without the BPF walker, through build/jvm/hotspot_probe (its modes ops and
# early), on OpenJDK 17, 21 and 25 (for_each_java):
#  - JavaShares running: mapped() on its libjvm.so walks it (1), gives the
#    BPF side one record of kind COLLECTOR_FRAME_JAVA for its pid, sane and
#    the same the probe reads; the main thread's frames, walked by the
#    reference walker from ptrace-stopped registers and encoded as
#    bpf/hotspot.h says, are named by frame_name(): Shares.alpha, beta and
#    gamma as the perf map spells them, in Shares.java at the lines of
#    their // LINE: markers (mix inlined into alpha at mix's line), called
#    from JavaShares.main at its call-alpha/beta/gamma lines; every frame
#    named; every compiled frame stale (-ESTALE) under another compile id.
#  - The same under -Xint: the same methods, interpreted, the same lines.
#  - A JVM started by the probe: mapped() on its libjvm.so from the moment
#    it is mapped says 0 (waiting, and maps_later() asks to be asked again)
#    until its code cache and interpreter exist, then 1.
. tests/integration/lib.sh
plain_suite_only "hotspot_probe is not built with ASan"
need_root
PROBE="$TOP/build/jvm/hotspot_probe"
[ -x "$PROBE" ] || fail "no $PROBE (make build/jvm/hotspot_probe)"
if [ ! -e "$WL/java/JavaShares.class" ]; then
	if [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/javac ] || command -v javac >/dev/null; then
		fail "no $WL/java/JavaShares.class though there is a javac (make integration builds it)"
	fi
	skip "no javac: the Java workloads are not built (openjdk-17-jdk-headless)"
fi

# line FILE NAME: the line of tests/workloads/FILE marked // LINE:NAME
line() {
	grep -n "// LINE:$2\$" "tests/workloads/$1" | cut -d: -f1
}
ALPHA=$(line Shares.java alpha)
BETA=$(line Shares.java beta)
GAMMA=$(line Shares.java gamma)
MIX=$(line Shares.java mix)
CALL_ALPHA=$(line JavaShares.java call-alpha)
CALL_BETA=$(line JavaShares.java call-beta)
CALL_GAMMA=$(line JavaShares.java call-gamma)
MAIN="void JavaShares.main(java.lang.String[])"

# count FILE KIND TEXT: the J lines of a frame of KIND (an -E alternation)
# naming TEXT (fixed)
count() {
	grep -E "^  J ($2) " "$1" | grep -cF "$3"
}

# ops_check LABEL FILE KIND: KIND "compiled|inlined|interpreted" or
# "interpreted" (-Xint)
ops_check() {
	label=$1 f=$2 kind=$3
	grep -q "^mapped(.*libjvm.so): 1; has 1, known 1, live 1, owns_jit 0" "$f" ||
		{ head -n 5 "$f"; bad "$label: mapped() did not walk the JVM"; return; }
	grep -q "^record: set 1 time(s), kind 3, tgid " "$f" && ! grep -q "NOT SANE" "$f" ||
		{ head -n 5 "$f"; bad "$label: the record given to the BPF side"; return; }
	sed -n 's/^summary //p' "$f"
	failed=$(sed -n 's/^summary .*failed=\([0-9]*\).*/\1/p' "$f")
	stale=$(sed -n 's/^summary .*not_stale=\([0-9]*\).*/\1/p' "$f")
	named=$(sed -n 's/^summary .*named=\([0-9]*\).*/\1/p' "$f")
	[ "${failed:-1}" -eq 0 ] || bad "$label: $failed frames not named"
	[ "${stale:-1}" -eq 0 ] || bad "$label: $stale compiled frames named under another compile id"
	[ "${named:-0}" -ge 20 ] || bad "$label: only ${named:-0} frames named"
	# every method met is named at its line (below); alpha, at least half
	# of the main thread's time in every mode, is met in any 40 rounds,
	# where beta, at 9% under 17's -Xint, was missed in 1 run of 40
	for m in "alpha(long[], int) @ Shares.java:$ALPHA " "beta(long[], int) @ Shares.java:$BETA " \
		"gamma(long[], int) @ Shares.java:$GAMMA "; do
		n=$(count "$f" "$kind" " long Shares.$m")
		echo "$label: long Shares.$m$n"
		case $m in alpha*) [ "$n" -ge 1 ] || bad "$label: no frame of Shares.$m" ;; esac
	done
	wrong=$(grep -E "^  J .* long Shares\.(alpha|beta|gamma)\(" "$f" |
		grep -cvE "alpha.*:$ALPHA |beta.*:$BETA |gamma.*:$GAMMA ")
	[ "$wrong" -eq 0 ] || bad "$label: alpha, beta or gamma named at another line $wrong times"
	wrong=$(grep -E "^  J .* long Shares\.mix\(" "$f" | grep -cv "Shares.java:$MIX ")
	[ "$wrong" -eq 0 ] || bad "$label: mix at another line $wrong times"
	n=$(grep -F " $MAIN @ JavaShares.java:" "$f" |
		grep -cE ":($CALL_ALPHA|$CALL_BETA|$CALL_GAMMA) ")
	echo "$label: JavaShares.main at a call line: $n"
	[ "$n" -ge 1 ] || bad "$label: JavaShares.main never at its call lines"
}

one_java() {
	v=$1
	shift
	rm -f "$TMP/r$v"
	start_blocked "java$v" "$TMP/r$v" "$@" -cp "$WL/java" JavaShares 30 "$TMP/o$v" "$TMP/r$v"
	"$PROBE" ops "$BG" -n 40 -i 25 >"$TMP/ops$v" 2>&1 || bad "java$v: hotspot_probe ops failed"
	ops_check "java$v" "$TMP/ops$v" "compiled|inlined|interpreted"
	grep -q "^  J inlined long Shares.mix(long, long) @ Shares.java:$MIX " "$TMP/ops$v" ||
		echo "java$v: (mix not seen inlined in these rounds)"
	kill -KILL "$BG" 2>/dev/null
	rm -f "$TMP/x$v"
	start_blocked "java$v-Xint" "$TMP/x$v" "$@" -Xint -cp "$WL/java" JavaShares 30 \
		"$TMP/xo$v" "$TMP/x$v"
	"$PROBE" ops "$BG" -n 30 -i 25 >"$TMP/xops$v" 2>&1 ||
		bad "java$v -Xint: hotspot_probe ops failed"
	ops_check "java$v -Xint" "$TMP/xops$v" "interpreted"
	grep -q "^  J compiled" "$TMP/xops$v" && bad "java$v -Xint: a compiled frame"
	kill -KILL "$BG" 2>/dev/null
	"$PROBE" early "$@" -cp "$WL/java" JavaShares 1 "$TMP/eo$v" "$TMP/e$v" >"$TMP/early$v" 2>&1 ||
		{ cat "$TMP/early$v"; bad "java$v: mapped() from libjvm.so's mapping on"; return; }
	grep "^early:" "$TMP/early$v"
}

for_each_java one_java
checks_done
