# --otlp against an endpoint that misbehaves (otlp_fake_receiver.py), and
# bad input:
#   1. an endpoint answering 400: each interval tried once, counted refused,
#      said once with the backend's message, the next intervals sent;
#   2. an endpoint that takes the connection and never answers: the
#      timeout, the retry, every interval delivered once it answers, the
#      local files written all along;
#   3. headers from OTEL_EXPORTER_OTLP_HEADERS reach the endpoint and appear
#      in no output, -v included;
#   4. a spool over its cap drops its oldest interval, counted;
#   5. intervals spooled while no endpoint listened are sent, in order, by
#      the next run;
#   6. bad endpoints, headers, spool directories: a message and exit 2 or 5.
. tests/integration/lib.sh
need_root
[ -x "$WL/split" ] || fail "build/workloads/split missing"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fake=$TMP/fake
mkdir -p "$fake"
python3 tests/integration/otlp_fake_receiver.py "$port" "$fake" 2>"$TMP/fake.log" &
fake_pid=$!
add_cleanup "kill $fake_pid 2>/dev/null"
for _ in $(seq 1 100); do
	[ -e "$fake/ready" ] && break
	sleep 0.1
done
[ -e "$fake/ready" ] || { cat "$TMP/fake.log"; fail "the fake receiver did not start"; }
url=http://127.0.0.1:$port

# reset MODE: the fake's requests forgotten, its mode set
reset() {
	rm -f "$fake"/*.body "$fake"/*.headers
	echo "$1" >"$fake/mode"
}

# starts SEQ_FILE: the start time of each request the fake recorded, in the
# order received (collector dump of each body)
starts() {
	: >"$1"
	req=1
	while [ -e "$fake/$req.body" ]; do
		cp "$fake/$req.body" "$TMP/req.otlp.pb"
		"$COLLECTOR" dump "$TMP/req.otlp.pb" 2>/dev/null |
			sed -n 's/^  profile [^ ]*: [0-9]* samples, start \([0-9]*\) ns.*/\1/p' |
			head -n 1 >>"$1"
		req=$((req + 1))
	done
}

# intervals DIR: how many interval directories a run wrote
intervals() {
	ls "$1" | grep -Ec '^[0-9]{8}T[0-9]{6}Z$'
}

# 1. 400
reset status:400
"$COLLECTOR" --interval 1 -d 3.5 --otlp="$url" --otlp-spool "$TMP/spool1" -f pprof \
	-o "$TMP/out1" -- "$WL/split" 5 >/dev/null 2>"$TMP/err1" ||
	{ cat "$TMP/err1"; fail "collector exited $? against a 400 endpoint"; }
cat "$TMP/err1"
n=$(intervals "$TMP/out1")
[ "$n" -ge 2 ] || fail "$n intervals written"
[ -e "$fake/$n.body" ] && [ ! -e "$fake/$((n + 1)).body" ] ||
	fail "$(ls "$fake" | grep -c body) requests for $n intervals: each should be tried once"
[ "$(grep -c 'refused an interval: HTTP 400: fake receiver says 400; not retried' "$TMP/err1")" -eq 1 ] ||
	fail "the refusal is not said once with the backend's message"
grep -q "OTLP push       0 of $n intervals accepted" "$TMP/err1" || fail "the summary's count"
grep -q " 0 retries, $n refused, 0 dropped, 0 waiting" "$TMP/err1" ||
	fail "the summary does not count $n refused and 0 retried"

# 2. no answer: a second's timeout, retried, delivered once the endpoint
# answers (at the latest by the attempt at the run's end)
reset hang
(sleep 2.5; echo ok >"$fake/mode") &
answers=$!
OTEL_EXPORTER_OTLP_TIMEOUT=1000 "$COLLECTOR" --interval 1 -d 5 --otlp="$url" \
	--otlp-spool "$TMP/spool2" -f pprof -o "$TMP/out2" -- "$WL/split" 6 >/dev/null \
	2>"$TMP/err2" || { cat "$TMP/err2"; fail "collector exited $? against a silent endpoint"; }
wait "$answers"
cat "$TMP/err2"
n=$(intervals "$TMP/out2")
# (5 on time; a cut late past the next one's time, under ASan and load,
# makes one interval of two: what is checked is that each arrives)
[ "$n" -ge 3 ] || fail "$n intervals written while the endpoint did not answer"
grep -q "unavailable (.*timed out" "$TMP/err2" || fail "the timeout is not said"
grep -q "OTLP push       $n of $n intervals accepted" "$TMP/err2" ||
	fail "not every interval was delivered once the endpoint answered"
grep -Eq ' [1-9][0-9]* retries, 0 refused, 0 dropped, 0 waiting' "$TMP/err2" ||
	fail "no retry counted"
starts "$TMP/starts2"
[ "$(wc -l <"$TMP/starts2")" -eq "$n" ] || fail "$(wc -l <"$TMP/starts2") requests for $n intervals"
sort -n -u "$TMP/starts2" | cmp -s - "$TMP/starts2" ||
	fail "the intervals arrived out of order or twice: $(tr '\n' ' ' <"$TMP/starts2")"

# 3. headers: sent, never shown
reset ok
OTEL_EXPORTER_OTLP_HEADERS="x-collector-token=s3cr3t%2Dvalue, tenant = blue" \
	"$COLLECTOR" -v --otlp="$url" --otlp-spool "$TMP/spool3" -f pprof -o "$TMP/out3" \
	-- "$WL/split" 0.5 >"$TMP/out3.stdout" 2>"$TMP/err3" ||
	{ cat "$TMP/err3"; fail "collector exited $? with headers"; }
grep -qx "x-collector-token: s3cr3t-value" "$fake/1.headers" ||
	{ cat "$fake/1.headers"; fail "the header did not reach the endpoint"; }
grep -qx "tenant: blue" "$fake/1.headers" || fail "the second header did not reach the endpoint"
grep -qx "content-type: application/x-protobuf" "$fake/1.headers" || fail "content type"
grep -qx "content-encoding: gzip" "$fake/1.headers" || fail "not gzip'd by default"
grep -qx "POST /v1development/profiles" "$fake/1.headers" || fail "not the profiles path"
! grep -rq "s3cr3t" "$TMP/err3" "$TMP/out3.stdout" "$TMP/out3" "$TMP/spool3" ||
	fail "the header's value shows in an output"
OTEL_EXPORTER_OTLP_HEADERS="x-collector-token=s3cr3t%zz" "$COLLECTOR" --otlp="$url" \
	--otlp-spool "$TMP/spool3" -- "$WL/split" 0.1 >/dev/null 2>"$TMP/err3b"
rc=$?
[ "$rc" -eq 2 ] || fail "a malformed header exited $rc, not 2"
grep -q "OTEL_EXPORTER_OTLP_HEADERS" "$TMP/err3b" || fail "the message does not name the variable"
! grep -q "s3cr3t" "$TMP/err3b" || fail "the malformed header's value is printed"
OTEL_EXPORTER_OTLP_COMPRESSION=none "$COLLECTOR" --otlp="$url" --otlp-spool "$TMP/spool3" \
	-- "$WL/split" 0.3 >/dev/null 2>"$TMP/err3c" || fail "compression none exited $?"
! grep -q "content-encoding" "$fake/2.headers" || fail "compression none still gzip'd"

# 4. a full spool: two intervals of 500 KiB already waiting, a cap of 1 MiB,
# no endpoint: this run's interval takes the place of the oldest
dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -m 0700 "$TMP/spool4"
head -c 520000 /dev/urandom >"$TMP/spool4/00000000000000000001.otlp"
head -c 520000 /dev/urandom >"$TMP/spool4/00000000000000000002.otlp"
"$COLLECTOR" -a -d 2 --otlp="http://127.0.0.1:$dead" --otlp-spool "$TMP/spool4" \
	--otlp-spool-size 1 >/dev/null 2>"$TMP/err4" || { cat "$TMP/err4"; fail "collector exited $?"; }
cat "$TMP/err4"
[ ! -e "$TMP/spool4/00000000000000000001.otlp" ] || fail "the oldest interval was not dropped"
[ -e "$TMP/spool4/00000000000000000002.otlp" ] || fail "the second oldest was dropped too"
[ -e "$TMP/spool4/00000000000000000003.otlp.gz" ] || fail "this run's interval is not spooled"
grep -q " 1 dropped, 2 waiting in $TMP/spool4" "$TMP/err4" || fail "the summary does not count the drop"

# 5. spooled with no endpoint, sent in order by the next run
"$COLLECTOR" -a --interval 1 -d 3 --otlp="http://127.0.0.1:$dead" --otlp-spool "$TMP/spool5" \
	>/dev/null 2>"$TMP/err5a" || { cat "$TMP/err5a"; fail "collector exited $?"; }
k=$(ls "$TMP/spool5" | grep -c '\.otlp\.gz$')
[ "$k" -ge 2 ] || fail "$k intervals spooled"
grep -q "$k waiting in $TMP/spool5 .*, sent at the next start" "$TMP/err5a" || fail "the summary's waiting count"
mkdir "$TMP/kept"
for f in "$TMP"/spool5/*.otlp.gz; do
	gzip -dc "$f" >"$TMP/kept/$(basename "$f" .gz)"
done
reset ok
sleep 30 &
idle=$!
"$COLLECTOR" -p "$idle" -d 1 --otlp="$url" --otlp-spool "$TMP/spool5" >/dev/null 2>"$TMP/err5b" ||
	{ cat "$TMP/err5b"; fail "collector exited $?"; }
kill "$idle"
i=1
for f in "$TMP"/kept/*; do
	cmp -s "$f" "$fake/$i.body" || fail "request $i is not the spooled interval $(basename "$f")"
	i=$((i + 1))
done
[ ! -e "$fake/$i.body" ] || fail "more requests than intervals spooled"
[ -z "$(ls "$TMP/spool5")" ] || fail "the spool is not empty after delivery"

# 6. bad input
expect_exit() { # CODE TEXT ENV... -- ARGS...
	code=$1 text=$2
	shift 2
	env "$@" >/dev/null 2>"$TMP/bad"
	rc=$?
	[ "$rc" -eq "$code" ] || { cat "$TMP/bad"; fail "$* exited $rc, not $code"; }
	grep -q "$text" "$TMP/bad" || { cat "$TMP/bad"; fail "$*: the message does not say '$text'"; }
}
expect_exit 2 "http:// or https://" "$COLLECTOR" --otlp=ftp://127.0.0.1 -d 1 -p 1
expect_exit 2 "OTEL_EXPORTER_OTLP_COMPRESSION" OTEL_EXPORTER_OTLP_COMPRESSION=brotli \
	"$COLLECTOR" --otlp="$url" -d 1 -p 1
expect_exit 2 "OTEL_EXPORTER_OTLP_TIMEOUT" OTEL_EXPORTER_OTLP_TIMEOUT=soon \
	"$COLLECTOR" --otlp="$url" -d 1 -p 1
expect_exit 2 "OTEL_RESOURCE_ATTRIBUTES" OTEL_RESOURCE_ATTRIBUTES=novalue \
	"$COLLECTOR" --otlp="$url" -d 1 -p 1
expect_exit 2 "go with --otlp" "$COLLECTOR" --otlp-spool /tmp -d 1 -p 1
expect_exit 2 "not an absolute path" "$COLLECTOR" --otlp="$url" --otlp-spool rel -d 1 -p 1
mkdir -m 0777 "$TMP/open"
expect_exit 5 "writable by group or others" "$COLLECTOR" --otlp="$url" --otlp-spool "$TMP/open" -d 1 -p 1
ln -s "$TMP/spool5" "$TMP/link"
expect_exit 5 "symlink" "$COLLECTOR" --otlp="$url" --otlp-spool "$TMP/link" -d 1 -p 1
echo "OK: refused, silent, headers, full spool, restart and bad input"
