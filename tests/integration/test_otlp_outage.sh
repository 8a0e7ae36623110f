# --otlp while the real OpenTelemetry Collector (tests/integration/otelcol.sh)
# goes away and comes back:
#   1. stopped for several seconds in the middle of an -a --interval 2 run,
#      then started again on its port: every interval arrives, in order,
#      none twice, its samples those of the interval's local pprof;
#   2. TLS: a receiver with a certificate from a CA made here; the push
#      accepted with OTEL_EXPORTER_OTLP_CERTIFICATE naming the CA, and not
#      without it (the interval stays spooled, the reason said).
. tests/integration/lib.sh
. tests/integration/otelcol.sh
need_root
otelcol_need
command -v openssl >/dev/null || fail "openssl missing (scripts/install-deps.sh installs it)"
command -v go >/dev/null || fail "go missing (golang-go): go tool pprof reads the local profiles"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod
[ -x "$WL/split" ] || fail "build/workloads/split missing"

port=$(otelcol_free_port)
recv=$TMP/recv.jsonl
otelcol_start "$port" "$recv"

# 1. the receiver down from about 3 s to 9 s of a 14 s run: the intervals
# cut meanwhile wait in the spool (the backoff's next try, or the try at the
# run's end, sends them)
"$WL/split" 15 >/dev/null &
busy=$!
"$COLLECTOR" -a -F 299 --interval 2 -d 14 --otlp="http://127.0.0.1:$port" \
	--otlp-spool "$TMP/spool" -f pprof -o "$TMP/out" >/dev/null 2>"$TMP/err" &
coll=$!
sleep 3
otelcol_stop
sleep 6
otelcol_start "$port" "$recv"
wait "$coll" || { cat "$TMP/err"; fail "collector exited $? through the outage"; }
kill "$busy" 2>/dev/null
grep -v '^ ' "$TMP/err"
grep -q "unavailable (" "$TMP/err" || fail "the outage is not said"
grep -q "accepts intervals again" "$TMP/err" || fail "the end of the outage is not said"
n=$(ls "$TMP/out" | grep -cE '^[0-9]{8}T[0-9]{6}Z$')
[ "$n" -ge 5 ] || fail "$n intervals written"
python3 tests/integration/otlp_json.py requests "$recv" >"$TMP/requests"
otlp_pushed_as_written "$TMP/out" "$TMP/requests" 2
grep -q "OTLP push       $n of $n intervals accepted" "$TMP/err" || fail "the summary's count"
grep -Eq ' [1-9][0-9]* retries, 0 refused, 0 dropped, 0 waiting' "$TMP/err" ||
	fail "no retry counted through the outage"
otelcol_stop

# 2. TLS, with a CA and a certificate for 127.0.0.1 made here
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=collector test CA" \
	-keyout "$TMP/ca.key" -out "$TMP/ca.pem" 2>/dev/null || fail "cannot make the test CA"
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$TMP/srv.key" \
	-out "$TMP/srv.csr" 2>/dev/null || fail "cannot make the server's key"
printf 'subjectAltName=IP:127.0.0.1\n' >"$TMP/san"
openssl x509 -req -in "$TMP/srv.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial \
	-days 2 -extfile "$TMP/san" -out "$TMP/srv.pem" 2>/dev/null || fail "cannot sign the server's certificate"
tport=$(otelcol_free_port)
trecv=$TMP/tls.jsonl
otelcol_start "$tport" "$trecv" "$TMP/srv.pem" "$TMP/srv.key"
OTEL_SERVICE_NAME=otlp-tls OTEL_EXPORTER_OTLP_CERTIFICATE="$TMP/ca.pem" \
	"$COLLECTOR" --otlp="https://127.0.0.1:$tport" --otlp-spool "$TMP/spool-tls" \
	-- "$WL/split" 0.5 >/dev/null 2>"$TMP/err-tls" || { cat "$TMP/err-tls"; fail "collector exited $? over TLS"; }
grep -q "OTLP push       1 of 1 intervals accepted" "$TMP/err-tls" ||
	{ grep -v '^ ' "$TMP/err-tls"; fail "the push over TLS with the CA was not accepted"; }
python3 tests/integration/otlp_json.py frames "$trecv" '*' | grep -Eq '^[0-9]+ hot_function native$' ||
	fail "the receiver did not get the run over TLS"
OTEL_EXPORTER_OTLP_TIMEOUT=2000 "$COLLECTOR" --otlp="https://127.0.0.1:$tport" \
	--otlp-spool "$TMP/spool-tls2" -- "$WL/split" 0.5 >/dev/null 2>"$TMP/err-tls2" ||
	{ cat "$TMP/err-tls2"; fail "collector exited $?"; }
grep -q "OTLP push       0 of 1 intervals accepted" "$TMP/err-tls2" ||
	fail "a certificate from an unknown CA was accepted"
grep -qi "certificate" "$TMP/err-tls2" || { grep -v '^ ' "$TMP/err-tls2"; fail "the reason (the certificate) is not said"; }
[ "$(wc -l <"$trecv")" -eq 1 ] || fail "the receiver got the push made without the CA"
[ -n "$(ls "$TMP/spool-tls2")" ] || fail "the interval refused by TLS is not kept in the spool"
echo "OK: $n intervals through an outage, each once and in order; TLS with and without the CA"
