#!/bin/sh
# Non-ASCII names through every format: function names, source files and
# binaries spelt in UTF-8 reach each file whole, byte for byte, or escaped
# the way the format says (JSON's \uXXXX, HTML's entities: decoded before
# comparing), and each file stays valid for its reader.
#  1. A Python program written here as $TMP/wörk_ß.py: a thread sleeping
#     2 s in schläfer() (off-CPU) and the main thread computing 2 s in 計算()
#     (CPU), run as `collector --off-cpu -- /usr/bin/python3.11 FILE`
#     without -f (every format that applies).  The names must be whole in:
#     folded (collector.folded: 計算, off-cpu/collector.folded: schläfer:
#     frames compared byte for byte); flame graph (the page's JSON names and
#     title, parsed; the DOM Chromium draws, data-name="...", when Chromium
#     is there); speedscope (JSON parsed: frame names and files; and
#     tests/js/validate-speedscope.mjs when its node modules are there);
#     pprof (its string table, parsed here; `collector dump`; `go tool pprof
#     -raw` when go is there); OTLP (profiles.otlp.pb is among the defaults:
#     its dictionary's string table, parsed here, and `collector dump`);
#     Callgrind (its fn=/fl= lines and callgrind_annotate's report);
#     HPCToolkit (`collector dump` of the database, meta.db's NUL-ended
#     strings, and the copy of the source under src/, byte for byte).
#     DCPI and sampler files carry no function name by their specs (DCPI
#     0.07: an image's header, then PC counts; sampler: PCs, thread ids and
#     the mappings' labels), and Python code has no image: their files must
#     be valid for `collector dump --check`, and their non-ASCII path is
#     checked in 2.  XRay applies to --trace runs only (no samples): it is
#     checked in 3, not here.
#  2. A C program written here as $TMP/rechnen_ß.c, built as
#     $TMP/wörk_ßßßßß with functions schläfer() (a thread sleeping 2 s) and
#     計算() (2 s of CPU) (GCC takes UTF-8 identifiers): the same formats,
#     names from the ELF symbols and files from the DWARF; the binary's path
#     whole in DCPI's `path` header and in the sampler's mapping label (the
#     files' own names may be made portable: they are not checked).  Its
#     name is 16 bytes: the kernel's comm keeps 15, "wörk_ßßßß" and half of
#     the last ß, not UTF-8.  Every string of the formats whose strings must
#     be UTF-8 (pprof and OTLP protobuf strings, JSON) must be valid, the
#     comm as its valid part with at most one replacement character ('?'
#     or U+FFFD); folded stacks and Callgrind hold paths and symbols as
#     bytes (formats/text.h): which files hold the cut comm as it is, its
#     lone byte included, is printed, not checked.
#  3. The same binary with --trace 'BIN:*' -f xray: `llvm-xray convert
#     -symbolize` reads the trace with the ELF map and names schläfer and
#     計算 (計算's entry and exit); the YAML map holds the names, and is
#     valid UTF-8 and read by llvm-xray (-m map.yaml), though its first
#     comment names the process by the cut comm.  Not `llvm-xray
#     account`: llvm-xray 14 accounts the records unsorted and refuses
#     (without -k) any record older than the first it meets, so with two
#     threads it takes the trace or not depending on the order its loader
#     puts the threads in, which varies from run to run, whatever the names.
# A name a format mangles is reported with what the format wrote in its
# place (Python's repr of the strings that come closest), the other checks
# still run, and the test fails at the end.
. tests/integration/lib.sh
need_root
PY=/usr/bin/python3.11
HELPER_PY=/usr/bin/python3
[ -x "$PY" ] || skip "no $PY"
[ -x "$HELPER_PY" ] || fail "no $HELPER_PY: it parses the files"
command -v cc >/dev/null || fail "no cc: the C program is built at test time"
command -v callgrind_annotate >/dev/null || fail "callgrind_annotate missing (valgrind)"


N_SLEEP='schläfer'
N_CALC='計算'

# --- the parser: names.py KIND FILE [WANT...] ------------------------------------
# Prints every string KIND finds in FILE, decoded as its format says, as
# Python's repr, one a line, to FILE.strings; exits 1 when a WANT is not
# among them (exactly, byte for byte once decoded), saying what comes
# closest; 2 when FILE is not valid as KIND (JSON that does not parse,
# protobuf that does not decode, strings that must be UTF-8 and are not).
# KIND: folded (frames), flamegraph (the page's JSON strings and its
# <title>), json (every string), pprof (the string table), otlp (the
# dictionary's string table and its attributes' string values), nul (NUL-ended strings of a binary file).
cat >"$TMP/names.py" <<'EOF'
import gzip, html, json, re, sys

kind, path, want = sys.argv[1], sys.argv[2], sys.argv[3:]
raw = open(path, "rb").read()
strings = []  # str, or bytes when a format may carry bytes that are not UTF-8


def invalid(why):
    print("%s: not valid %s: %s" % (path, kind, why))
    sys.exit(2)


def varint(b, i):
    v = s = 0
    while True:
        if i >= len(b):
            raise ValueError("varint past the end")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("field %d: %d bytes past the end" % (num, n))
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def utf8(b, what):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        invalid("%s %r is not UTF-8 (%s)" % (what, b, e))


def walk(v):
    if isinstance(v, str):
        strings.append(v)
    elif isinstance(v, list):
        for x in v:
            walk(x)
    elif isinstance(v, dict):
        for x in v.values():
            walk(x)


try:
    if kind == "folded":
        for line in raw.split(b"\n"):
            if line:
                for f in re.sub(rb" [0-9]+$", b"", line).split(b";"):
                    try:
                        strings.append(f.decode("utf-8"))
                    except UnicodeDecodeError:
                        strings.append(f)
    elif kind == "flamegraph":
        text = utf8(raw, "the page")
        m = re.search(r'<script type="application/json" id="flamegraph-data">(.*?)</script>', text, re.S)
        if not m:
            invalid("no flamegraph-data script element")
        walk(json.loads(m.group(1)))
        t = re.search(r"<title>(.*?)</title>", text, re.S)
        if t:
            strings.append(html.unescape(t.group(1)))
    elif kind == "json":
        walk(json.loads(utf8(raw, "the file")))
    elif kind == "pprof":
        for num, wt, v in fields(gzip.decompress(raw)):
            if num == 6 and wt == 2:
                strings.append(utf8(v, "string_table entry"))
    elif kind == "otlp":
        for num, wt, v in fields(raw):
            if num == 2 and wt == 2:
                for n2, w2, v2 in fields(v):
                    if n2 == 5 and w2 == 2:
                        strings.append(utf8(v2, "string_table entry"))
                    elif n2 == 6 and w2 == 2:  # attribute_table: KeyValueAndUnit
                        for n3, w3, v3 in fields(v2):
                            if n3 == 2 and w3 == 2:  # its AnyValue
                                for n4, w4, v4 in fields(v3):
                                    if n4 == 1 and w4 == 2:
                                        strings.append(utf8(v4, "attribute string_value"))
    elif kind == "nul":
        for s in raw.split(b"\0"):
            try:
                strings.append(s.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    else:
        invalid("unknown kind")
except (ValueError, OSError, EOFError, json.JSONDecodeError) as e:
    invalid(str(e))

with open(path + ".strings", "w", encoding="utf-8", errors="backslashreplace") as out:
    for s in strings:
        out.write(repr(s) + "\n")
have = set(strings)
missing = [w for w in want if w not in have]
for w in missing:
    # what came closest: strings that share a piece of it, or that hold
    # escapes or replacement characters
    pieces = [p for p in re.split(r"[^A-Za-z]+", w) if len(p) >= 3] + list(w[:2])
    near = []
    for s in strings:
        t = s if isinstance(s, str) else s.decode("latin-1")
        if any(p in t for p in pieces) or "\\u" in t or "&#" in t or "\ufffd" in t or \
                (("?" in t or not isinstance(s, str)) and len(t) < 40):
            if s not in near:
                near.append(s)
    print("%s: no string %r (%s) among its %d; closest: %s" % (
        path, w, w.encode("utf-8").hex(" "), len(strings),
        ", ".join(repr(s) for s in near[:8]) or "none"))
sys.exit(1 if missing else 0)
EOF

# has KIND FILE LABEL WANT...: the strings of FILE hold every WANT
has() {
	h_kind=$1 h_file=$2 h_label=$3
	shift 3
	if [ ! -s "$h_file" ]; then
		bad "$h_label: no file $h_file"
		return
	fi
	"$HELPER_PY" "$TMP/names.py" "$h_kind" "$h_file" "$@" >"$TMP/names.out" 2>&1
	case $? in
	0) echo "$h_label: $(basename "$h_file"): $* whole" ;;
	1) bad "$h_label: mangled or missing in $h_file: $(cat "$TMP/names.out")" ;;
	*) bad "$h_label: $(cat "$TMP/names.out")" ;;
	esac
}

# text_has FILE LABEL STRING...: a reader's report FILE holds every STRING
# (fixed strings, byte for byte)
text_has() {
	th_file=$1 th_label=$2
	shift 2
	for th_s in "$@"; do
		if grep -qF -- "$th_s" "$th_file"; then
			echo "$th_label: '$th_s' whole"
		else
			bad "$th_label: no '$th_s' in its output; what it has near it: $(grep -n -e 'schl' -e 'rk_' -e '\\u' -e '&#' -e '?' "$th_file" | head -n 5 | tr '\n' '|')"
		fi
	done
}

# dump_ok FILE OUT LABEL: `collector dump FILE` into OUT, exit 0
dump_ok() {
	if "$COLLECTOR" dump "$1" >"$2" 2>"$2.err"; then
		return 0
	fi
	bad "$3: collector dump $1 failed: $(head -c 300 "$2.err")"
	return 1
}

# check_run LABEL DIR SRC: the sampled formats of DIR hold $N_CALC (CPU) and
# $N_SLEEP (off-CPU) whole, and the source file SRC where they carry files
check_run() {
	l=$1 d=$2 src=$3
	"$COLLECTOR" dump --check "$d" >"$TMP/$l.check" 2>&1 ||
		bad "$l: collector dump --check rejects an output: $(grep -v ': valid ' "$TMP/$l.check" | head -n 5)"
	for f in collector.folded flamegraph.html speedscope.json off-cpu/collector.folded \
		off-cpu/flamegraph.html off-cpu/speedscope.json profile.pb.gz profiles.otlp.pb hpctoolkit; do
		[ -e "$d/$f" ] || bad "$l: no $f among the formats written without -f"
	done

	# folded: frames byte for byte
	has folded "$d/collector.folded" "$l folded" "$N_CALC"
	has folded "$d/off-cpu/collector.folded" "$l folded off-cpu" "$N_SLEEP"

	# flame graph: the page's data and title; the DOM Chromium draws
	has flamegraph "$d/flamegraph.html" "$l flamegraph" "$N_CALC"
	has flamegraph "$d/off-cpu/flamegraph.html" "$l flamegraph off-cpu" "$N_SLEEP"
	if [ -n "$CHROMIUM" ]; then
		dump_dom "file://$d/flamegraph.html" "$TMP/$l.dom"
		text_has "$TMP/$l.dom" "$l flamegraph in Chromium" "data-name=\"$N_CALC\""
		dump_dom "file://$d/off-cpu/flamegraph.html" "$TMP/$l.offdom"
		text_has "$TMP/$l.offdom" "$l flamegraph off-cpu in Chromium" "data-name=\"$N_SLEEP\""
	fi

	# speedscope: names and files of the frames
	has json "$d/speedscope.json" "$l speedscope" "$N_CALC" "$src"
	has json "$d/off-cpu/speedscope.json" "$l speedscope off-cpu" "$N_SLEEP" "$src"
	if [ -n "$SPEEDSCOPE_JS" ]; then
		for f in "$d/speedscope.json" "$d/off-cpu/speedscope.json"; do
			node "$SPEEDSCOPE_JS" "$f" >"$TMP/$l.ss" 2>&1 ||
				bad "$l: $f is not valid for speedscope's schema: $(head -n 5 "$TMP/$l.ss")"
		done
	fi

	# pprof: the string table; collector dump; go tool pprof -raw
	has pprof "$d/profile.pb.gz" "$l pprof" "$N_CALC" "$N_SLEEP" "$src"
	if dump_ok "$d/profile.pb.gz" "$TMP/$l.pprof.txt" "$l pprof"; then
		text_has "$TMP/$l.pprof.txt" "$l pprof (collector dump)" " $N_CALC $src:" " $N_SLEEP $src:"
	fi
	if [ -n "$GO" ]; then
		if go tool pprof -raw "$d/profile.pb.gz" >"$TMP/$l.raw" 2>"$TMP/$l.raw.err"; then
			text_has "$TMP/$l.raw" "$l pprof (go tool pprof -raw)" " $N_CALC $src:" " $N_SLEEP $src:"
		else
			bad "$l: go tool pprof -raw rejects profile.pb.gz: $(head -n 3 "$TMP/$l.raw.err")"
		fi
	fi

	# OTLP: the dictionary's string table; collector dump
	has otlp "$d/profiles.otlp.pb" "$l OTLP" "$N_CALC" "$N_SLEEP" "$src"
	if dump_ok "$d/profiles.otlp.pb" "$TMP/$l.otlp.txt" "$l OTLP"; then
		text_has "$TMP/$l.otlp.txt" "$l OTLP (collector dump)" " $N_CALC $src:" " $N_SLEEP $src:"
	fi

	# Callgrind: fn= and fl= lines (names compressed: "(id) name" the
	# first time), and callgrind_annotate's FILE:FUNCTION lines
	cg=$(ls "$d"/callgrind.out.* 2>/dev/null | head -n 1)
	if [ -z "$cg" ]; then
		bad "$l: no callgrind.out.*"
	else
		sed -n 's/^c\{0,1\}fn=([0-9]*) \(.*\)$/\1/p; s/^c\{0,1\}f[ile]=([0-9]*) \(.*\)$/\1/p' "$cg" >"$TMP/$l.cgnames"
		for n in "$N_CALC" "$N_SLEEP" "$src"; do
			grep -qxF -- "$n" "$TMP/$l.cgnames" && echo "$l callgrind: '$n' whole in its fn=/fl= lines" ||
				bad "$l callgrind: no fn=/fl= line names '$n'; near: $(grep -e schl -e rk_ -e '?' "$TMP/$l.cgnames" | head -n 5 | tr '\n' '|')"
		done
		if annotate "$cg" "$TMP/$l.annotate"; then
			text_has "$TMP/$l.annotate" "$l callgrind_annotate" "$src:$N_CALC " "$src:$N_SLEEP "
		else
			bad "$l: callgrind_annotate rejects $cg: $(head -n 3 "$TMP/$l.annotate")"
		fi
	fi

	# HPCToolkit: the database through collector dump, meta.db's strings,
	# the source copied under src/ byte for byte
	if dump_ok "$d/hpctoolkit" "$TMP/$l.hk.txt" "$l HPCToolkit"; then
		text_has "$TMP/$l.hk.txt" "$l HPCToolkit (collector dump)" "] $N_CALC " "] $N_SLEEP " "src$src"
	fi
	has nul "$d/hpctoolkit/meta.db" "$l HPCToolkit meta.db" "$N_CALC" "$N_SLEEP"
	if cmp -s "$src" "$d/hpctoolkit/src$src"; then
		echo "$l HPCToolkit: src$src is the source, byte for byte"
	else
		bad "$l HPCToolkit: no copy of $src as src$src: $(cd "$d/hpctoolkit/src" && find . -type f | head -n 5 | tr '\n' ' ')"
	fi
}

GO=$(command -v go) || skipped "go tool pprof: no go (golang-go)"
CHROMIUM=""
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
	. tests/integration/chromium.sh
else
	skipped "the flame graph in Chromium: no chromium"
fi
SPEEDSCOPE_JS=""
if command -v node >/dev/null && [ -d "$TOP/tests/js/node_modules/ajv" ] && [ -d "$TOP/tests/js/node_modules/speedscope" ]; then
	SPEEDSCOPE_JS=$TOP/tests/js/validate-speedscope.mjs
else
	skipped "speedscope's schema: no node or tests/js/node_modules (scripts/install-deps.sh)"
fi

# --- 1. Python ---------------------------------------------------------------------
W="$TMP/wörk_ß.py"
cat >"$W" <<EOF
# The thread in $N_SLEEP sleeps 2 s (off its CPU), the main thread computes
# 2 s in $N_CALC (on it).
import threading
import time


def $N_SLEEP():
    time.sleep(2)


def $N_CALC(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(1000):
            x += i
    return x


t = threading.Thread(target=$N_SLEEP)
t.start()
$N_CALC(2)
t.join()
EOF
"$COLLECTOR" --off-cpu -o "$TMP/py" -- "$PY" "$W" >"$TMP/py.stdout" 2>"$TMP/py.sum" ||
	{ cat "$TMP/py.sum"; fail "python: collector --off-cpu -- $PY $W exited $?"; }
check_run python "$TMP/py" "$W"
for f in "$TMP"/py/dcpi/*/*.prof "$TMP"/py/sampler/*.prof "$TMP"/py/off-cpu/sampler/*.prof; do
	[ -e "$f" ] || { bad "python: no $f"; continue; }
done
echo "python: DCPI and sampler files, which name no function, valid for collector dump --check (above)"

# --- 2. C: names from ELF symbols and DWARF, a binary's path, a cut comm ---------
S="$TMP/rechnen_ß.c"
BIN="$TMP/wörk_ßßßßß"
cat >"$S" <<EOF
#include <pthread.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void *$N_SLEEP(void *arg)
{
	sleep(2);
	return arg;
}

__attribute__((noinline)) unsigned long $N_CALC(double seconds)
{
	struct timespec t0, t;
	unsigned long x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += i ^ x;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return x;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, $N_SLEEP, NULL);
	$N_CALC(2);
	pthread_join(t, NULL);
	return 0;
}
EOF
cc -g -O0 -fno-omit-frame-pointer -pthread -o "$BIN" "$S" 2>"$TMP/cc.err" ||
	{ cat "$TMP/cc.err"; fail "cannot build $S (GCC 10 or later takes UTF-8 identifiers)"; }
nm "$BIN" | grep -q " T $N_CALC\$" || fail "$BIN: no symbol $N_CALC"
[ "$(printf %s "$(basename "$BIN")" | wc -c)" -eq 16 ] || fail "$BIN: its name is not 16 bytes"
"$COLLECTOR" --off-cpu -o "$TMP/c" -- "$BIN" >"$TMP/c.stdout" 2>"$TMP/c.sum" ||
	{ cat "$TMP/c.sum"; fail "C: collector --off-cpu -- $BIN exited $?"; }
check_run C "$TMP/c" "$S"

# the binary's path: DCPI's header, the sampler's mapping label, pprof's mapping
found=""
for f in "$TMP"/c/dcpi/cpu-clock/*.prof; do
	"$COLLECTOR" dump "$f" 2>/dev/null | grep -qxF "path $BIN" && found=$f
done
[ -n "$found" ] && echo "C DCPI: 'path $BIN' whole in $(basename "$found")" ||
	bad "C DCPI: no cpu-clock profile with the header 'path $BIN': $(for f in "$TMP"/c/dcpi/cpu-clock/*.prof; do "$COLLECTOR" dump "$f" | grep '^path '; done | tr '\n' '|')"
for f in "$TMP"/c/sampler/*.prof; do
	if dump_ok "$f" "$TMP/c.sampler.txt" "C sampler"; then
		text_has "$TMP/c.sampler.txt" "C sampler" " label $BIN"
	fi
done
has pprof "$TMP/c/profile.pb.gz" "C pprof mapping" "$BIN"

# the comm the kernel cut inside a character: valid UTF-8 wherever strings
# must be (the parser above says "not valid" otherwise), and what each holds
comm=$(printf %s "$(basename "$BIN")" | head -c 15)
prefix="wörk_ßßßß"
"$HELPER_PY" - "$TMP" "$prefix" >"$TMP/comm.out" 2>&1 <<'EOF'
import ast, sys
tmp, prefix = sys.argv[1], sys.argv[2]
bad = 0
for name, f in (("pprof", "c/profile.pb.gz"), ("OTLP", "c/profiles.otlp.pb"),
                ("speedscope", "c/speedscope.json"), ("flamegraph", "c/flamegraph.html")):
    try:
        strings = [ast.literal_eval(l) for l in open("%s/%s.strings" % (tmp, f), encoding="utf-8")]
    except OSError:
        print("%s: its strings were not read (see above)" % name)
        bad = 1
        continue
    comms = sorted({s for s in strings if isinstance(s, str) and s.startswith(prefix)})
    ok = [s for s in comms if s in (prefix, prefix + "?", prefix + "\ufffd") or
          s.startswith((prefix + " ", prefix + "? ", prefix + "\ufffd "))]
    print("%s: the cut comm as %s" % (name, ", ".join(repr(s) for s in comms) or "nothing"))
    if not ok:
        print("FAIL: %s does not hold the cut comm as %r with at most one replacement character" % (name, prefix))
        bad = 1
sys.exit(bad)
EOF
rc=$?
cat "$TMP/comm.out"
[ "$rc" -eq 0 ] || bad "C: the comm cut inside a character: $(grep FAIL "$TMP/comm.out" | tr '\n' ' ')"
echo "C: the kernel's comm is $(printf %s "$comm" | od -An -tx1 | tr -s ' \n' ' ')"
"$HELPER_PY" - "$TMP/c" "$comm" <<'EOF'
import gzip, os, re, sys
cut = re.compile(re.escape(os.fsencode(sys.argv[2])) + rb"(?![\x80-\xbf])")
for d, _, files in sorted(os.walk(sys.argv[1])):
    for f in sorted(files):
        p = os.path.join(d, f)
        b = open(p, "rb").read()
        if b[:2] == b"\x1f\x8b":
            b = gzip.decompress(b)
        n = len(cut.findall(b))
        if n:
            print("C: %s holds the cut comm as it is, its lone byte included, %d times"
                  % (os.path.relpath(p, sys.argv[1]), n))
EOF

# --- 3. XRay: a --trace run of the same binary --------------------------------------
XRAY=$(command -v llvm-xray-14 || command -v llvm-xray)
if [ -z "$XRAY" ]; then
	skipped "XRay: no llvm-xray (llvm-14)"
elif "$COLLECTOR" -o "$TMP/xray" -f xray --trace "$BIN:*" -- "$BIN" >"$TMP/xray.stdout" 2>"$TMP/xray.sum"; then
	trace=$(ls "$TMP"/xray/xray/*.xray 2>/dev/null | head -n 1)
	if [ -z "$trace" ]; then
		bad "XRay: no trace written"
	else
		if "$XRAY" convert -symbolize -sort -f yaml -m "${trace%.xray}.map.elf" "$trace" >"$TMP/xray.yaml" 2>&1; then
			text_has "$TMP/xray.yaml" "XRay (llvm-xray convert -symbolize)" \
				"function: \"$N_CALC\", cpu: " "function: \"$N_SLEEP\", cpu: "
			n=$(grep -cF "function: \"$N_CALC\", " "$TMP/xray.yaml")
			[ "$n" -eq 2 ] || bad "XRay: $n records of $N_CALC, not its entry and its exit"
		else
			bad "XRay: llvm-xray convert rejects the trace: $(head -n 3 "$TMP/xray.yaml")"
		fi
		text_has "${trace%.xray}.map.yaml" "XRay YAML map" "function-name: '$N_CALC'" "function-name: '$N_SLEEP'"
		# the YAML map read by llvm-xray (YAML streams are Unicode: a byte
		# that is not UTF-8, even in a comment, makes it no YAML)
		if "$XRAY" convert -f yaml -m "${trace%.xray}.map.yaml" "$trace" >"$TMP/xray2.yaml" 2>&1; then
			echo "XRay: llvm-xray reads the YAML map"
		else
			bad "XRay: llvm-xray cannot read the YAML map ($(grep -m1 -a 'YAML:' "$TMP/xray2.yaml")): its first line: $("$HELPER_PY" -c 'import sys; print(repr(open(sys.argv[1], "rb").readline()[:72]))' "${trace%.xray}.map.yaml")"
		fi
		"$HELPER_PY" -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "${trace%.xray}.map.yaml" 2>"$TMP/yaml.err" ||
			bad "XRay: the YAML map is not UTF-8: $(tail -n 1 "$TMP/yaml.err")"
		"$COLLECTOR" dump --check "$trace" >/dev/null 2>&1 || bad "XRay: collector dump --check rejects $trace"
	fi
else
	cat "$TMP/xray.sum"
	bad "XRay: collector --trace '$BIN:*' -f xray exited $?"
fi

checks_done
