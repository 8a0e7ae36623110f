# A real OpenTelemetry Collector for the tests (sourced after lib.sh, POSIX
# sh): built by scripts/build-otelcol.sh from tests/otelcol, it receives
# OTLP profiles over HTTP on 127.0.0.1 and appends each request to a file,
# one line of OTLP/JSON (pdata's pprofile.JSONMarshaler) per request, written
# before the request is answered.
#
#   otelcol_need                       OTELCOL: the binary, or the test skips
#   otelcol_free_port                  prints a free TCP port of 127.0.0.1
#   otelcol_start PORT OUTFILE [CERT KEY]
#                                      starts it (HTTPS with CERT and KEY),
#                                      OTELCOL_PID; returns once PORT accepts
#                                      connections (10 s at most, or fails);
#                                      its log: OTELCOL_LOG (under $TMP)
#   otelcol_stop                       stops it (also at the test's exit)
#   otlp_pushed_as_written OUTDIR REQUESTS SECONDS
#                                      the requests (otlp_json.py requests)
#                                      are OUTDIR's intervals, each once and
#                                      in order (see below)
#
# One collector at a time.

OTELCOL_PID=""
OTELCOL_CLEANUP=""

otelcol_need() {
	OTELCOL=$("${TOP:-$PWD}/scripts/build-otelcol.sh" --path 2>"$TMP/otelcol-path.err") ||
		skip "OpenTelemetry Collector not built (scripts/build-otelcol.sh): $(cat "$TMP/otelcol-path.err")"
}

otelcol_free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# otelcol_connects PORT: true when 127.0.0.1:PORT accepts a connection (curl
# fails with 7 only when it cannot connect; a TLS port answers plain HTTP
# with 400)
otelcol_connects() {
	curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$1/"
	otelcol_curl=$?
	[ "$otelcol_curl" -ne 7 ] && [ "$otelcol_curl" -ne 28 ]
}

otelcol_start() {
	[ $# -eq 2 ] || [ $# -eq 4 ] || fail "usage: otelcol_start PORT OUTFILE [CERT KEY]"
	[ -z "$OTELCOL_PID" ] || fail "otelcol_start: a collector runs already (pid $OTELCOL_PID)"
	[ -n "${OTELCOL:-}" ] || otelcol_need
	otelcol_cfg=$TMP/otelcol-$1.yaml
	OTELCOL_LOG=$TMP/otelcol-$1.log
	otelcol_log=$OTELCOL_LOG
	: >"$otelcol_log"
	{
		echo "receivers:"
		echo "  otlp:"
		echo "    protocols:"
		echo "      http:"
		echo "        endpoint: \"127.0.0.1:$1\""
		if [ $# -eq 4 ]; then
			echo "        tls:"
			echo "          cert_file: \"$3\""
			echo "          key_file: \"$4\""
		fi
		echo "exporters:"
		echo "  jsonfile:"
		echo "    path: \"$2\""
		echo "service:"
		echo "  telemetry:"
		echo "    metrics:"
		echo "      level: none"
		echo "    logs:"
		echo "      output_paths: [\"$otelcol_log\"]"
		echo "      error_output_paths: [\"$otelcol_log\"]"
		echo "  pipelines:"
		echo "    profiles:"
		echo "      receivers: [otlp]"
		echo "      exporters: [jsonfile]"
	} >"$otelcol_cfg"
	if [ -z "$OTELCOL_CLEANUP" ]; then
		add_cleanup otelcol_stop
		OTELCOL_CLEANUP=1
	fi
	"$OTELCOL" --config="$otelcol_cfg" --feature-gates=service.profilesSupport \
		>>"$otelcol_log" 2>&1 &
	OTELCOL_PID=$!
	otelcol_end=$(($(date +%s) + 10))
	while [ "$(date +%s)" -lt "$otelcol_end" ]; do
		if ! kill -0 "$OTELCOL_PID" 2>/dev/null; then
			wait "$OTELCOL_PID"
			otelcol_rc=$?
			OTELCOL_PID=""
			tail -n 20 "$otelcol_log" >&2
			fail "the OpenTelemetry Collector exited $otelcol_rc at its start (port $1)"
		fi
		# ready: it says so (its receiver has bound the port: not another
		# program's) and the port connects
		if grep -q 'Everything is ready' "$otelcol_log" 2>/dev/null && otelcol_connects "$1"; then
			return 0
		fi
		sleep 0.1
	done
	tail -n 20 "$otelcol_log" >&2
	otelcol_stop
	fail "the OpenTelemetry Collector does not accept connections on 127.0.0.1:$1 after 10 s"
}

otelcol_stop() {
	[ -n "$OTELCOL_PID" ] || return 0
	kill -TERM "$OTELCOL_PID" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$OTELCOL_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$OTELCOL_PID" 2>/dev/null
	wait "$OTELCOL_PID" 2>/dev/null
	OTELCOL_PID=""
}

# otlp_pushed_as_written OUTDIR REQUESTS SECONDS: the pushed intervals
# (REQUESTS: otlp_json.py requests) are the ones written to OUTDIR by an
# --interval SECONDS run with -f pprof, each once and in order: request k
# starts when the k-th directory's profile.pb.gz does (its time_nanos), in
# the slot the directory is named by (lib.sh's in_slot), with as many
# samples; needs go (go tool pprof)
otlp_pushed_as_written() {
	ls "$1" | grep -E '^[0-9]{8}T[0-9]{6}Z$' >"$TMP/written"
	[ "$(wc -l <"$TMP/written")" -eq "$(wc -l <"$2")" ] ||
		fail "$(wc -l <"$2") intervals pushed ($(awk '{ print $1 }' "$2" | tr '\n' ' ')), $(wc -l <"$TMP/written") written ($(tr '\n' ' ' <"$TMP/written"))"
	paste -d ' ' "$TMP/written" "$2" | while read -r dir _ _ samples start; do
		t=$(pprof_start_ns "$1/$dir/profile.pb.gz") || fail "$dir: go tool pprof reads no Time"
		[ "$start" = "$t" ] ||
			fail "the interval pushed in the place of $dir starts at $start ns, the one written at $t ns: not each once, in order"
		in_slot "$dir" "$t" "$3" || fail "$dir: its interval starts at $t ns, outside its slot"
		local_n=$(pprof_samples "$1/$dir/profile.pb.gz")
		[ "$samples" -gt 0 ] || fail "interval $dir pushed no sample"
		[ "$samples" = "$local_n" ] || fail "interval $dir: $samples samples pushed, $local_n in its pprof"
	done || exit 1
}
