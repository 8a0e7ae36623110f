#!/bin/sh
# The JVM walker (bpf/hotspot_walk.bpf.h in the kernel, runtimes/jvm/
# hotspot_walk.c for the stacks copied to user space) on frame chains
# corrupted on purpose, on OpenJDK 17, 21 and 25: ChainCorrupt
# (tests/workloads/ChainCorrupt.java, chain_corrupt.c) runs interpreted with
# two threads in native methods that each overwrite a slot of their own
# interpreter frame with an address no process maps, main's Method* while
# it spins on the CPU, chain-sleep's saved link while it sleeps.
# `collector -p PID --off-cpu -d 1` on it:
# - exits 0, and the JVM, its frames put back, exits 0 after it;
# - every walk through main's corrupted frame stops there and is counted
#   as "a bad frame or a read failed": at least once per sample of the
#   spin the kernel walked (all but those unwound in user space, before
#   their tables); the spin's samples keep the native frames above it
#   (chain_spin_work, Java_ChainCorrupt_spinCorrupted) and nothing below
#   it, none of ChainCorrupt.main;
# - chain-sleep's off-CPU stacks (walked in user space from the copy
#   taken when the run found it blocked, and in the kernel at each of its
#   naps) keep its named frame, ChainCorrupt.sleepCorrupted, and nothing
#   of the lambda or Thread.run below its corrupted link;
# - no Java frame is left unnamed.
. tests/integration/lib.sh
need_root
WLJ=$TOP/build/workloads/java
[ -f "$WLJ/ChainCorrupt.class" ] && [ -f "$WLJ/libchain_corrupt.so" ] ||
	skip "no $WLJ/ChainCorrupt.class or libchain_corrupt.so (make builds them when there is a javac)"

version() { # N JAVA...
	label=java$1
	shift
	rm -f "$TMP/$label.ready" "$TMP/$label.stop"
	# nothing in the JVM walks the stacks meanwhile: no compiler, no
	# collector, no periodic safepoint (Epsilon's warnings on stdout: none)
	start_blocked "$label" "$TMP/$label.ready" "$@" -Xint -Xlog:disable -XX:+UnlockExperimentalVMOptions \
		-XX:+UseEpsilonGC -XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=0 \
		-cp "$WLJ" ChainCorrupt "$WLJ/libchain_corrupt.so" "$TMP/$label.ready" "$TMP/$label.stop"
	jbg=$BG
	jpid=$(awk '{ print $2 }' "$TMP/$label.ready")
	"$COLLECTOR" -p "$jpid" --off-cpu -d 1 -f pprof -o "$TMP/$label.out" \
		>"$TMP/$label.summary" 2>&1 || { cat "$TMP/$label.summary"; fail "$label: collector failed"; }
	touch "$TMP/$label.stop"
	wait "$jbg" || fail "$label: the JVM did not exit 0: $(cat "$TMP/$label.stderr")"
	"$COLLECTOR" dump "$TMP/$label.out/profile.pb.gz" >"$TMP/$label.dump" ||
		fail "$label: the profile does not read back"
	# per stack (a "sample" line and its frames): CPU samples of the spin, those with
	# a frame below the corrupted one, sleeper stacks, those with a frame
	# below its corrupted link, unnamed Java frames
	awk '
	function done_stack() {
		if (spin) { spins += count; if (!native || below) spin_bad += count }
		if (sleeper) { sleeps++; if (below_link) sleep_bad++ }
	}
	# the CPU samples of a stack: its cpu-clock time over the period (the
	# count adds its off-CPU intervals)
	/^period / { period = $2 }
	/^sample / {
		done_stack()
		count = period ? int($3 / period + 0.5) : 0
		spin = native = below = sleeper = below_link = 0
		next
	}
	/ chain_spin_work / { spin = 1 }
	/ Java_ChainCorrupt_spinCorrupted / { native = 1 }
	/ChainCorrupt\.main/ { below = 1 }
	/ChainCorrupt\.sleepCorrupted\(/ { sleeper = 1 }
	/lambda\$main|java\.lang\.Thread\.run/ { below_link = 1 }
	/^    #[0-9]+ 0x8[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] \?$/ { unnamed++ }
	END {
		done_stack()
		printf "spin %d spin_bad %d sleeps %d sleep_bad %d unnamed %d\n",
			spins, spin_bad, sleeps, sleep_bad, unnamed
	}' "$TMP/$label.dump" >"$TMP/$label.fig"
	in_user=$(sed -n 's/^ *\([0-9]*\) samples unwound in user space.*/\1/p' "$TMP/$label.summary")
	echo "$label: $(cat "$TMP/$label.fig") in_user ${in_user:-0}; $(grep -o '[0-9]* walks, [0-9]* stopped early ([^)]*)' "$TMP/$label.summary")"
	set -- $(cat "$TMP/$label.fig")
	spins=$2 spin_bad=$4 sleeps=$6 sleep_bad=$8 unnamed=${10}
	stopped=$(sed -n 's/.* \([0-9]*\) a bad frame or a read failed.*/\1/p' "$TMP/$label.summary")
	[ "$spins" -ge 300 ] || bad "$label: $spins samples of chain_spin_work in 1 s at 999 Hz"
	[ "$spin_bad" -eq 0 ] ||
		bad "$label: $spin_bad samples of the spin with a frame below the corrupted one, or without the native method"
	[ "${stopped:-0}" -ge 1 ] && [ "${stopped:-0}" -ge $((spins - ${in_user:-0})) ] ||
		bad "$label: ${stopped:-no} Java walks counted as stopped at a bad frame, for $spins samples of the spin (${in_user:-0} samples unwound in user space)"
	[ "$sleeps" -ge 1 ] || bad "$label: no off-CPU stack of chain-sleep in ChainCorrupt.sleepCorrupted"
	[ "$sleep_bad" -eq 0 ] || bad "$label: $sleep_bad stacks of chain-sleep go on below its corrupted link"
	[ "$unnamed" -eq 0 ] || bad "$label: $unnamed Java frames unnamed"
}

for_each_java version
checks_done
