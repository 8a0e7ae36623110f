# Headless Chromium for the tests that open a page (sourced after lib.sh):
# the flame graph page and speedscope's offline build.  No network: every
# host name resolves to nothing and Chromium's own background traffic
# (updates, metrics, safe browsing) is off; a profile directory of its own
# under $TMP.
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	fail "chromium missing (Debian's chromium): it opens the pages"
JS="$PWD/tests/js"

# chromium_run ARG...: headless, offline, with the test's own profile
chromium_run() {
	"$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/chromium" --host-resolver-rules="MAP * ~NOTFOUND" \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-default-apps --disable-domain-reliability --no-pings \
		--window-size=1400,900 --virtual-time-budget=5000 "$@" 2>>"$TMP/chromium.log"
}

# dump_dom URL OUT: the page's DOM once its scripts have run
dump_dom() {
	chromium_run --dump-dom "$1" >"$2" || { tail -n 20 "$TMP/chromium.log"; fail "chromium could not open $1"; }
	[ -s "$2" ] || fail "chromium dumped no DOM for $1"
}

need_node_modules() {
	command -v node >/dev/null || fail "node missing: tests/js needs it"
	[ -d "$JS/node_modules/speedscope" ] && [ -d "$JS/node_modules/ajv" ] ||
		fail "tests/js/node_modules is missing: run scripts/install-deps.sh (npm ci)"
}
