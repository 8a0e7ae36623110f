# The shares test of CPython profiling (sourced after lib.sh):
# python_shares LABEL [COLLECTOR OPTION...] -- INTERPRETER_COMMAND...
# runs tests/workloads/pyshares.py (its calls of varying size) under the
# collector (-f pprof, 999 Hz: at 4 999 Hz the ASan build's runs had as
# few as 87% of their samples with Python frames, the interpreter met
# later) and checks its profile
# against the workload's own measure of its CPU time:
# each function's share of the samples under alpha, beta and gamma within
# 3 points of its share of their thread CPU time; at least 90% of the
# samples with Python frames; every sampled line of theirs inside the
# function; no entry (<shim>) frame taken for Python code; key_of sampled
# under gamma with a native frame (list.sort) between them.
python_shares() {
	label=$1
	shift
	opts=
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		opts="$opts $1"
		shift
	done
	shift
	out="$TMP/$label"
	# shellcheck disable=SC2086
	"$COLLECTOR" -q -f pprof $opts -o "$out" -- "$@" "$TOP/tests/workloads/pyshares.py" 3 \
		"$TMP/$label.truth" 2>"$TMP/$label.err" || { cat "$TMP/$label.err"; fail "$label: collector failed"; }
	[ -s "$TMP/$label.truth" ] || fail "$label: the workload wrote no measure"
	"$COLLECTOR" dump "$out/profile.pb.gz" >"$TMP/$label.dump" || fail "$label: dump failed"
	awk -f "$TOP/tests/integration/pyprofile.awk" "$TMP/$label.truth" "$TMP/$label.dump" \
		>"$TMP/$label.figures" 2>"$TMP/$label.bad" || fail "$label: analysis failed"
	sed "s/^/$label: /" "$TMP/$label.figures"
	samples=$(awk '$1 == "samples" { print $2 }' "$TMP/$label.figures")
	with_python=$(awk '$1 == "with_python" { print $2 }' "$TMP/$label.figures")
	[ "$samples" -ge 2000 ] || fail "$label: only $samples samples of 3 CPU-s at 999 Hz"
	[ $((100 * with_python)) -ge $((90 * samples)) ] ||
		fail "$label: $with_python of $samples samples with Python frames (< 90%)"
	for f in alpha beta gamma; do
		set -- $(awk -v f=$f '$1 == "share" && $2 == f { print $3, $4 }' "$TMP/$label.figures")
		awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= 3 && d >= -3) }' ||
			fail "$label: $f has $2% of the samples, its CPU time says $1%"
	done
	bad=$(awk '$1 == "bad_lines" { print $2 }' "$TMP/$label.figures")
	[ "$bad" -eq 0 ] || { cat "$TMP/$label.bad"; fail "$label: $bad frames with a line outside their function"; }
	shim=$(awk '$1 == "shim_frames" { print $2 }' "$TMP/$label.figures")
	[ "$shim" -eq 0 ] || fail "$label: $shim frames of the evaluator's entry (<shim>) taken for Python code"
	cb=$(awk '$1 == "callback" { print $2 }' "$TMP/$label.figures")
	[ "$cb" -ge 10 ] || fail "$label: key_of under gamma through a native frame in $cb samples"
}
