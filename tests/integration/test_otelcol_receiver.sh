# The OpenTelemetry Collector the OTLP tests send profiles to
# (tests/integration/otelcol.sh, built by scripts/build-otelcol.sh), tested
# on its own: an ExportProfilesServiceRequest POSTed as protobuf is written
# out as one JSON line saying what the request said, a second request as a
# second line, a body that does not parse is answered 400 and writes
# nothing; over HTTPS too when openssl is here to make a certificate.
. tests/integration/lib.sh
. tests/integration/otelcol.sh
otelcol_need
command -v curl >/dev/null || fail "curl missing"
command -v python3 >/dev/null || fail "python3 missing"

# the request, protobuf encoded by hand (opentelemetry-proto 1.11.0,
# collector/profiles/v1development): one resource (service.name), one
# profile of one sample of 7 at a stack of one location in
# otelcol_test_function; entry 0 of each dictionary table is the empty one
python3 - "$TMP/request.pb" <<'EOF' || fail "cannot encode the request"
import struct, sys

def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def field(num, wire, payload):
    return varint(num << 3 | wire) + payload

def vint(num, n):  # int32/int64/uint64, not negative here
    return field(num, 0, varint(n))

def msg(num, body):  # a message, string or bytes
    if isinstance(body, str):
        body = body.encode()
    return field(num, 2, varint(len(body)) + body)

def fixed64(num, n):
    return field(num, 1, struct.pack("<Q", n))

strings = ["", "samples", "count", "cpu", "nanoseconds", "otelcol_test_function",
           "otelcol_test.c", "/usr/bin/otelcol-test"]
s = strings.index
dictionary = b"".join([
    msg(1, b""),                                                 # mapping 0
    msg(1, vint(1, 0x400000) + vint(2, 0x500000) + vint(4, s("/usr/bin/otelcol-test"))),
    msg(2, b""),                                                 # location 0
    msg(2, vint(1, 1) + vint(2, 0x401234) + msg(3, vint(1, 1) + vint(2, 42))),
    msg(3, b""),                                                 # function 0
    msg(3, vint(1, s("otelcol_test_function")) + vint(2, s("otelcol_test_function"))
        + vint(3, s("otelcol_test.c")) + vint(4, 40)),
    msg(4, b""),                                                 # link 0
    *[msg(5, x) for x in strings],
    msg(6, b""),                                                 # attribute 0
    msg(7, b""),                                                 # stack 0
    msg(7, msg(1, varint(1))),                                   # stack 1: [1]
])
profile = b"".join([
    msg(1, vint(1, s("samples")) + vint(2, s("count"))),         # sample_type
    msg(2, vint(1, 1) + msg(4, varint(7))),                      # stack 1, [7]
    fixed64(3, 1764300000000000000),
    vint(4, 1000000000),
    msg(5, vint(1, s("cpu")) + vint(2, s("nanoseconds"))),       # period_type
    vint(6, 10000000),
    msg(7, bytes(range(1, 17))),                                 # profile_id
])
attribute = msg(1, "service.name") + msg(2, msg(1, "otelcol-receiver-test"))
resource_profiles = b"".join([
    msg(1, msg(1, attribute)),                                   # resource
    msg(2, msg(1, msg(1, "collector-tests") + msg(2, "1")) + msg(2, profile)),
])
request = msg(1, resource_profiles) + msg(2, dictionary)
open(sys.argv[1], "wb").write(request)
EOF

# post URL FILE [CURL_OPTION...]: the HTTP status of FILE POSTed as protobuf
post() {
	post_url=$1 post_file=$2
	shift 2
	curl -s -o "$TMP/response" -w '%{http_code}' --max-time 10 "$@" \
		-H 'Content-Type: application/x-protobuf' --data-binary @"$post_file" "$post_url"
}

# check OUT N: OUT has N lines, each the request's JSON
check() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
want = int(sys.argv[2])
if lines[-1] != "":
    sys.exit("the last line is not whole")
lines = lines[:-1]
if len(lines) != want:
    sys.exit("%d lines, expected %d" % (len(lines), want))
for i, line in enumerate(lines):
    d = json.loads(line)
    rp = d["resourceProfiles"]
    if len(rp) != 1:
        sys.exit("line %d: %d resourceProfiles" % (i + 1, len(rp)))
    strings = d["dictionary"]["stringTable"]
    # pdata's JSON names the attributes' strings by their index in the
    # dictionary's string table (keyStrindex, stringValueStrindex)
    attrs = {}
    for a in rp[0]["resource"]["attributes"]:
        key = a["key"] if "key" in a else strings[a["keyStrindex"]]
        v = a["value"]
        attrs[key] = v["stringValue"] if "stringValue" in v else strings[v["stringValueStrindex"]]
    if attrs.get("service.name") != "otelcol-receiver-test":
        sys.exit("line %d: service.name is %r" % (i + 1, attrs.get("service.name")))
    if "otelcol_test_function" not in strings:
        sys.exit("line %d: no otelcol_test_function in %r" % (i + 1, strings))
    profiles = rp[0]["scopeProfiles"][0]["profiles"]
    sample = profiles[0]["samples"][0]
    if [int(v) for v in sample["values"]] != [7] or sample.get("stackIndex") != 1:
        sys.exit("line %d: the sample is %r" % (i + 1, sample))
    stack = d["dictionary"]["stackTable"][1]
    loc = d["dictionary"]["locationTable"][stack["locationIndices"][0]]
    fn = d["dictionary"]["functionTable"][loc["lines"][0]["functionIndex"]]
    if strings[fn["nameStrindex"]] != "otelcol_test_function":
        sys.exit("line %d: the sample's function is %r" % (i + 1, fn))
EOF
}

port=$(otelcol_free_port) || fail "no free port"
out=$TMP/profiles.jsonl
otelcol_start "$port" "$out"
url=http://127.0.0.1:$port/v1development/profiles

code=$(post "$url" "$TMP/request.pb")
[ "$code" = 200 ] || { cat "$OTELCOL_LOG"; fail "the request was answered $code, not 200"; }
# the exporter writes its line before the request is answered
check "$out" 1 || { head -c 2000 "$out"; fail "the collector's output after one request"; }
echo "one request: one line of $(wc -c <"$out") bytes"
head -c 400 "$out"
echo

code=$(post "$url" "$TMP/request.pb")
[ "$code" = 200 ] || fail "the second request was answered $code, not 200"
check "$out" 2 || fail "the collector's output after two requests"

printf 'this is not a protobuf message \377\377\377' >"$TMP/bad.pb"
code=$(post "$url" "$TMP/bad.pb")
[ "$code" = 400 ] || fail "a body that does not parse was answered $code, not 400"
check "$out" 2 || fail "the collector's output after a body that does not parse"
echo "a body that does not parse: 400, nothing written"
otelcol_stop

# HTTPS, with a certificate of 127.0.0.1 made here
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >"$TMP/openssl.log" 2>&1 ||
		{ cat "$TMP/openssl.log"; fail "openssl could not make a certificate"; }
	port=$(otelcol_free_port) || fail "no free port"
	out=$TMP/tls.jsonl
	otelcol_start "$port" "$out" "$TMP/cert.pem" "$TMP/key.pem"
	code=$(post "https://127.0.0.1:$port/v1development/profiles" "$TMP/request.pb" \
		--cacert "$TMP/cert.pem")
	[ "$code" = 200 ] || { cat "$OTELCOL_LOG"; fail "the HTTPS request was answered $code, not 200"; }
	check "$out" 1 || fail "the collector's output after one HTTPS request"
	echo "HTTPS: one line"
	otelcol_stop
else
	echo "no openssl: HTTPS not tested"
fi
echo "PASS"
