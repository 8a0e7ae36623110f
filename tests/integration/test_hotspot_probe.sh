#!/bin/sh
# HotSpot's frames walked without JVM flags (runtimes/jvm/hotspot_*.c,
# through build/jvm/hotspot_probe): a JVM's layout read from its vmStructs,
# its nmethods named as its own perf map (`jcmd PID Compiler.perfmap`)
# names them (95% at least), its main thread's Java frames walked from
# ptrace-stopped registers by the reference walker giving the call chain
# main -> caller -> hotMix with their lines (compiled, inlined or
# interpreted), and a -Xint JVM's the same chain in interpreted frames.
# For Debian's JDK 17 and, through build/jdks/run.sh, JDK 21 and 25 (skipped
# when missing).
. tests/integration/lib.sh
plain_suite_only "hotspot_probe is not built with ASan"
need_root
command -v java >/dev/null || skip "java missing (openjdk-17-jdk-headless)"
command -v javac >/dev/null || skip "javac missing (openjdk-17-jdk-headless)"
command -v jcmd >/dev/null || skip "jcmd missing (openjdk-17-jdk-headless)"
PROBE="$TOP/build/jvm/hotspot_probe"
[ -x "$PROBE" ] || fail "no $PROBE (make build/jvm/hotspot_probe)"

# the line numbers below are checked: keep them where they are
cat >"$TMP/Kestrel.java" <<'JAVA'
import java.util.*;
public class Kestrel {
    static long hotMix(long[] a, int n) {
        long x = 1;
        for (int r = 0; r < n; r++)
            for (int i = 0; i < a.length; i++) { x ^= a[i] + (x << 13); x ^= x >>> 7; a[i] = x; }
        return x;
    }
    static long caller(long[] a) {
        long t = 0;
        for (int k = 0; k < 4; k++)
            t += hotMix(a, 50);
        return t;
    }
    /* many methods of the class library compiled besides */
    static long churn(int n) {
        Map<String, Integer> m = new HashMap<>();
        List<String> l = new ArrayList<>();
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            String s = Integer.toHexString(i * 7919) + "-" + (i % 13);
            m.merge(s.substring(0, Math.min(3, s.length())), 1, Integer::sum);
            l.add(s);
            b.append(s.charAt(0));
        }
        Collections.sort(l);
        return m.size() + l.get(0).hashCode() + b.toString().chars().filter(c -> c > 'a').count()
            + l.stream().mapToInt(String::length).sum();
    }
    public static void main(String[] args) throws Exception {
        long end = System.nanoTime() + (long)(Double.parseDouble(args[0]) * 1e9);
        long[] a = new long[4096];
        long t = 0;
        while (System.nanoTime() < end) { t += caller(a); t += churn(200); }
        System.out.println(t != 0 ? "done" : "zero");
    }
}
JAVA
javac -d "$TMP" "$TMP/Kestrel.java" || fail "javac failed"
MAIN_LINE=34
HOT="long Kestrel.hotMix(long[], int) @ Kestrel.java:6 "
CALLER="long Kestrel.caller(long[]) @ Kestrel.java:12 "
MAIN="void Kestrel.main(java.lang.String[]) @ Kestrel.java:$MAIN_LINE "

JVMS=""
add_cleanup 'for p in $JVMS; do kill $p 2>/dev/null; rm -f /tmp/perf-$p.map; done; wait 2>/dev/null'

# chains FILE [KIND]: the thread blocks of the probe's stacks in which
# hotMix (line 6), caller (12) and main are consecutive frames, of KIND
# when given (interpreted)
chains() {
	awk -v hot="$HOT" -v caller="$CALLER" -v main="$MAIN" -v kind="$2" '
		function check() { for (i = 1; i + 2 <= n; i++)
			if (index(f[i], hot) && index(f[i + 1], caller) && index(f[i + 2], main) &&
			    (kind == "" || (index(f[i], kind) && index(f[i + 1], kind) &&
					    index(f[i + 2], kind)))) { c++; return } }
		/^thread / { check(); n = 0; next }
		/^  F / { f[++n] = $0 }
		END { check(); print c + 0 }' "$1"
}

# start LABEL RUN... -- JVM_ARGS: a JVM of Kestrel, running 60 s; sets JVM
start() {
	"$@" -cp "$TMP" Kestrel 60 >"$TMP/$label.out" 2>&1 &
	JVM=$!
	JVMS="$JVMS $JVM"
}

one_jdk() {
	label=$1
	shift
	# the launcher is RUN java: "java" or "build/jdks/run.sh N java"
	start "$@" java
	sleep 4
	kill -0 "$JVM" 2>/dev/null || { cat "$TMP/$label.out"; bad "$label: the JVM exited"; return; }
	"$PROBE" layout "$JVM" >"$TMP/$label.layout" 2>&1 || {
		cat "$TMP/$label.layout"; bad "$label: the layout does not read"; return; }
	head -n 1 "$TMP/$label.layout"
	# names: as jcmd's perf map gives them
	if "$@" jcmd "$JVM" Compiler.perfmap >"$TMP/$label.jcmd" 2>&1; then
		"$PROBE" names "$JVM" "/proc/$JVM/root/tmp/perf-$JVM.map" >"$TMP/$label.names" 2>&1
		grep "^nmethods" "$TMP/$label.names"
		agree=$(sed -n 's/^summary .*agree_pct=//p' "$TMP/$label.names")
		inmap=$(sed -n 's/^summary in_map=\([0-9]*\) .*/\1/p' "$TMP/$label.names")
		within "$agree" 95 100 || bad "$label: $agree% of the nmethods named as the perf map names them"
		[ "${inmap:-0}" -ge 20 ] || bad "$label: only ${inmap:-0} nmethods found in the perf map"
	else
		cat "$TMP/$label.jcmd"
		bad "$label: jcmd Compiler.perfmap failed"
	fi
	# stacks: 40 rounds of every thread
	"$PROBE" stacks "$JVM" -n 40 -i 25 >"$TMP/$label.stacks" 2>&1 || bad "$label: stacks failed"
	n=$(chains "$TMP/$label.stacks")
	echo "$label: main -> caller -> hotMix with their lines in $n of 40 rounds"
	[ "$n" -ge 4 ] || { grep -A6 "Kestrel" "$TMP/$label.stacks" | head -n 40; bad "$label: the chain is in $n rounds"; }
	wrong=$(grep -c "Kestrel.hotMix.*Kestrel.java:\([0-3]\|[89]\|[1-9][0-9][0-9]*\) " "$TMP/$label.stacks")
	[ "$wrong" -eq 0 ] || bad "$label: hotMix at a line outside its body $wrong times"
	kill "$JVM" 2>/dev/null
	# -Xint: every frame interpreted, with lines
	start "$@" java -Xint
	sleep 3
	"$PROBE" stacks "$JVM" -n 20 -i 25 >"$TMP/$label.xint" 2>&1 || bad "$label -Xint: stacks failed"
	n=$(chains "$TMP/$label.xint" "interpreted")
	echo "$label -Xint: the interpreted chain in $n of 20 rounds"
	[ "$n" -ge 4 ] || { grep -A6 "Kestrel" "$TMP/$label.xint" | head -n 40; bad "$label -Xint: the interpreted chain is in $n rounds"; }
	grep -q "F compiled" "$TMP/$label.xint" && bad "$label -Xint: a compiled frame"
	kill "$JVM" 2>/dev/null
}

one_jdk jdk17
for v in 21 25; do
	if [ ! -x "$TOP/build/jdks/run.sh" ]; then
		skipped "JDK $v: no $TOP/build/jdks/run.sh (scripts/fetch-jdks.sh unpacks JDK 21 and 25 there)"
	elif ! "$TOP/build/jdks/run.sh" "$v" java -version >/dev/null 2>&1; then
		skipped "JDK $v: not under build/jdks, or it does not run"
	else
		one_jdk "jdk$v" "$TOP/build/jdks/run.sh" "$v"
	fi
done
checks_done
