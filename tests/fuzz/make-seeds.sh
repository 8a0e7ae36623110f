#!/bin/sh
# Regenerates the seed corpora in tests/fuzz/corpus/ (run as root from the
# repository root, after `make collector build/workloads/split build/xray/fdr_v5`;
# `make fuzz-seeds` does all three).  Seeds are small valid files:
#  - two short runs of ./collector on build/workloads/split, one in the
#    default layouts (sampler reference, HPCToolkit released) with traced
#    functions and arguments (XRay), one in the other layouts (sampler spec,
#    HPCToolkit draft), one thread and no switches;
#  - a version-5 XRay trace written by LLVM's own runtime (build/xray/fdr_v5),
#    and hpcprof's databases from tests/fixtures;
#  - small ELF files built here from tests/symtest/ (DWARF, inlining, a
#    shared library, a stripped file with a debuglink and its debug file);
#  - /proc/PID/maps texts.
set -eu

C=tests/fuzz/corpus
FIX=${COLLECTOR_FIXTURES:-tests/fixtures}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for h in dcpi sampler callgrind xray hpctoolkit-meta hpctoolkit-profile hpctoolkit-cct \
	 hpctoolkit-trace elf procmaps pprof otlp folded flamegraph speedscope; do
	rm -rf "${C:?}/$h"
	mkdir -p "$C/$h"
done

./collector -q -F 499 -o "$TMP/a" -- build/workloads/split 0.2 2 >/dev/null
# XRay: few events, so that the per-thread buffers stay at their 4 KiB minimum
./collector -q -F 99 -f xray -o "$TMP/x" -t build/workloads/split:cold_function \
	-t build/workloads/split:chain_c --args=2 -- build/workloads/split 0.01 2 >/dev/null
./collector -q -F 299 -o "$TMP/b" --sampler-layout=spec --hpctoolkit-layout=draft \
	--no-switches -- build/workloads/split 0.1 1 >/dev/null

for r in a b; do
	for f in "$TMP/$r"/dcpi/*.prof; do
		[ -f "$f" ] && cp "$f" "$C/dcpi/$r-$(basename "$f")"
	done
	cp "$TMP/$r"/sampler/*.prof "$C/sampler/$r.prof"
	cp "$TMP/$r"/callgrind.out.* "$C/callgrind/$r.out"
	for db in meta profile cct trace; do
		cp "$TMP/$r/hpctoolkit/$db.db" "$C/hpctoolkit-$db/$r.db"
	done
done
cp "$TMP"/x/xray/*.xray "$C/xray/collector-v1.xray"

# the stack-shaped formats: a short run, the pprof protobuf also unzipped
# (mutations then reach protobuf-c without inflate), the flame graph page's
# data element alone (the reader skips the rest), a traced timeline by hand
./collector -q -F 199 -f pprof,otlp,folded,flamegraph,speedscope -o "$TMP/s" -- \
	build/workloads/split 0.2 2 >/dev/null
cp "$TMP/s/profile.pb.gz" "$C/pprof/split.pb.gz"
gzip -dc "$TMP/s/profile.pb.gz" >"$C/pprof/split.pb"
cp "$TMP/s/profiles.otlp.pb" "$C/otlp/split.otlp.pb"
gzip -c "$TMP/s/profiles.otlp.pb" >"$C/otlp/split.otlp.pb.gz"
cp "$TMP/s/collector.folded" "$C/folded/split.folded"
cp "$TMP/s/speedscope.json" "$C/speedscope/split.json"
sed -n '/<script type="application\/json" id="flamegraph-data">/,/<\/script>/p' \
	"$TMP/s/flamegraph.html" >"$C/flamegraph/split.html"
# (two runtimes' frames, their kinds naming them: by hand)
printf '%s\n' '<script type="application/json" id="flamegraph-data">{"version":1,"title":"t",'\
'"subtitle":"s","samples":3,"names":["p","main","handle","hot"],"kinds":[8,0,48,80],'\
'"runtimes":["python","java"],"nodes":[-1,3,1,0,3,1,1,3,2,2,1,0,3,2,0]}</script></html>' \
	>"$C/flamegraph/runtimes.html"
printf '%s\n' '{"$schema":"https://www.speedscope.app/file-format-schema.json","name":"t",'\
'"exporter":"collector","activeProfileIndex":0,"profiles":[{"type":"evented",'\
'"name":"w 1/2: traced calls","unit":"nanoseconds","startValue":1000,"endValue":7000,'\
'"events":[{"type":"O","frame":0,"at":1000},{"type":"O","frame":1,"at":2000},'\
'{"type":"C","frame":1,"at":3000},{"type":"C","frame":0,"at":5000}]}],"shared":{"frames":'\
'[{"name":"f","file":"/src/a.c","line":3},{"name":"g"}]}}' >"$C/speedscope/evented.json"
cp "$TMP"/x/xray/*.map.elf "$C/elf/xray-map.elf"

# files the formats' own tools wrote
mkdir "$TMP/fdr"
XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr xray_logfile_base=$TMP/fdr/fdr-" \
	build/xray/fdr_v5 2>/dev/null
cp "$TMP"/fdr/fdr-* "$C/xray/llvm-runtime-fdr-v5.xray"
for d in loops-cputime-t.d loops-cputime-t.nostruct.d; do
	for db in meta profile cct trace; do
		cp "$FIX/hpctoolkit/$d/$db.db" "$C/hpctoolkit-$db/hpcprof-${d%.d}.db"
	done
done

# ELF files: -O2 with inlined chains, a USDT note (--trace py:), a shared
# library with versioned symbols, a stripped file with .gnu_debuglink and
# its debug-only file
gcc -g -O2 -fPIE -pie -o "$C/elf/inline" tests/symtest/inline.c
gcc -O2 -s -o "$C/elf/usdt-note" tests/symtest/usdt_note.c
gcc -g -O0 -fPIC -shared -Wl,-Ttext-segment=0x10000000 \
	-Wl,--version-script=tests/symtest/lib.map -o "$C/elf/libsymtest.so" tests/symtest/lib.c
gcc -g -O0 -no-pie -fno-pie -DSYMTEST_VARIANT='"nopie"' -o "$TMP/nopie" tests/symtest/prog.c
objcopy --only-keep-debug "$TMP/nopie" "$TMP/nopie.debug"
strip --strip-all -o "$TMP/nopie.stripped" "$TMP/nopie"
(cd "$TMP" && objcopy --add-gnu-debuglink=nopie.debug nopie.stripped)
cp "$TMP/nopie.debug" "$TMP/nopie.stripped" "$C/elf/"
chmod a-x,u+w "$C"/elf/* "$C"/*/hpcprof-* "$C"/xray/llvm-runtime-*

# /proc/PID/maps: a real one, and the kernel's odd cases by hand
cat /proc/self/maps >"$C/procmaps/self"
printf '%s\n' \
	'55d0c4a00000-55d0c4a01000 r--p 00000000 fd:01 1234567                    /usr/bin/with space' \
	'55d0c4a01000-55d0c4a02000 r-xp 00001000 fd:01 1234567                    /tmp/gone (deleted)' \
	'7f1c2e600000-7f1c2e800000 rw-s 00000000 00:05 42                         /SYSV00000000 (deleted)' \
	'7f1c2e800000-7f1c2e900000 rw-p 00000000 00:00 0                          [anon:glibc malloc]' \
	'7ffd4a1e0000-7ffd4a201000 rw-p 00000000 00:00 0                          [stack]' \
	'7ffd4a3f6000-7ffd4a3f8000 r-xp 00000000 00:00 0                          [vdso]' \
	'ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]' \
	>"$C/procmaps/odd"
printf '00400000-00401000 r-xp 00000000 103:02 7 /a\n00401000-00402000 rw-p 00001000 103:02 7 /a' \
	>"$C/procmaps/no-final-newline"

du -sh "$C"/*
