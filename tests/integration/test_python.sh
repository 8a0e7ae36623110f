#!/bin/sh
# Debian's /usr/bin/python3.11 (a stripped executable exporting _PyRuntime)
# with its Python frames walked in BPF: the shares of a workload that
# measures its own CPU time per function, summed in the kernel and
# streamed (python_shares.sh says what is checked); then every format of
# a default run reads back valid with the mixed stack in each: the flame
# graph's Python frames of their own kind, Callgrind's fl= and HPCToolkit's
# copied source the .py file, key_of under gamma through native frames in
# the folded stacks, speedscope's frames with the file and line.  A -p
# target that execs python3 after the run began is walked too.
. tests/integration/lib.sh
. tests/integration/python_shares.sh
need_root
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"

python_shares summed -- /usr/bin/python3.11
python_shares streamed --no-aggregate -- /usr/bin/python3.11

W=$TOP/tests/workloads/pyshares.py
"$COLLECTOR" -q -o "$TMP/all" -- /usr/bin/python3.11 "$W" 1 "$TMP/all.truth" 2>"$TMP/all.err" ||
	{ cat "$TMP/all.err"; fail "default formats: collector failed"; }
"$COLLECTOR" dump -c "$TMP/all" >"$TMP/check" 2>&1 || { cat "$TMP/check"; fail "an output does not read back"; }
"$COLLECTOR" dump "$TMP/all/flamegraph.html" | grep -q ' alpha \[python\]$' ||
	fail "flame graph: alpha is no Python frame (a runtime's)"
# (Callgrind names a file once, in whichever line comes first: fl=(N) then)
awk -v w="$W" '{ split($0, kv, "=") } kv[2] == "(" substr(kv[2], 2, index(kv[2], ")") - 2) ") " w {
		id = substr(kv[2], 1, index(kv[2], ")")) }
	/^fl=/ { fl[substr($0, 4, index($0, ")") - 3)] = 1 }
	END { exit !(id != "" && fl[id]) }' "$TMP"/all/callgrind.out.* || fail "callgrind: no fl= $W"
[ -f "$TMP/all/hpctoolkit/src$W" ] || fail "hpctoolkit: $W not copied as a source"
grep -q ';gamma;.*[^;];key_of ' "$TMP/all/collector.folded" || fail "folded: no key_of under gamma"
grep -q "\"name\":\"alpha\",\"file\":\"$W\",\"line\":[0-9]" "$TMP/all/speedscope.json" ||
	fail "speedscope: no frame alpha with $W"

# a -p target that becomes an interpreter once sampling runs (a shell that
# execs python3 when told): its Python frames are walked all the same (the
# walk is in every run's program)
sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; exec /usr/bin/python3.11 "$2"' \
	sh "$TMP/go" "$TOP/tests/workloads/pyloop.py" &
later=$!
add_cleanup "kill $later 2>/dev/null"
"$COLLECTOR" -p "$later" -d 20 -f folded -o "$TMP/later" >/dev/null 2>"$TMP/later.err" &
c=$!
wait_sampling "$c" || fail "the collector on the shell did not start sampling"
touch "$TMP/go"
wait "$c" || { cat "$TMP/later.err"; fail "collector -p on the shell that became python3 failed"; }
grep -q ';<module>;work' "$TMP/later/collector.folded" ||
	{ cat "$TMP/later.err"; fail "a shell that became python3 after -p began: no <module>;work stack"; }
echo ok
