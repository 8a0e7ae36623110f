#!/bin/sh
# Install, with apt-get, the Debian packages collector needs to build, test
# and run, or the packages named as arguments (bench/install-peers.sh).
# Only what is missing is installed, so a second run is quiet and quick.
# Runs the privileged step through sudo only when not already root.
#
# Without arguments it also installs the npm packages the tests read
# speedscope files with (tests/js: speedscope, ajv), at the versions
# tests/js/package-lock.json pins, with `npm ci` (from npm's cache when it
# has them), again only when node_modules does not match the lock.
set -eu

# protobuf-c, json-c, xxd: the pprof writer and the readers, the flame graph
# page's assets; golang-go (go tool pprof), chromium (headless, the flame
# graph and speedscope pages): the tests' readers of the new formats;
# libcap2-bin (setcap), util-linux (setpriv), passwd (useradd): make
# install-caps and the tests that run collector as a user with capabilities;
# libiberty-dev: the C++ and Rust demangler; libdebuginfod-dev: debug files
# from debuginfod servers (debuginfod: the server its test starts); xz-utils,
# python3, g++, nodejs: the real programs the tests profile beside perf;
# openjdk-17-jdk-headless: the JVM asked for its perf map by attach;
# libcurl4-openssl-dev: HTTP and TLS for --otlp's pushes (transport/);
# curl, openssl: the OTLP tests' requests and their test CA
PACKAGES="clang llvm-14 libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
libcmocka-dev pkg-config valgrind gcc make binutils elfutils file linux-perf
libcap2-bin util-linux passwd
protobuf-c-compiler libprotobuf-c-dev libjson-c-dev xxd golang-go chromium
libiberty-dev libdebuginfod-dev debuginfod xz-utils python3 g++ nodejs
openjdk-17-jdk-headless libcurl4-openssl-dev curl openssl"
NPM_DIR=$(cd "$(dirname "$0")/.." && pwd)/tests/js
if [ $# -gt 0 ]; then
	PACKAGES="$*"
	NPM_DIR=""
fi

# npm packages: `npm ci` leaves a copy of the lock in node_modules; when it
# is the same, nothing is to do.
install_npm() {
	[ -n "$NPM_DIR" ] || return 0
	if cmp -s "$NPM_DIR/package-lock.json" "$NPM_DIR/node_modules/.package-lock.json.ci" \
		2>/dev/null; then
		return 0
	fi
	if ! command -v npm >/dev/null 2>&1; then
		echo "install-deps: npm is missing: installing Debian's nodejs and npm" >&2
		install_debian nodejs npm
	fi
	echo "install-deps: npm ci in $NPM_DIR" >&2
	(cd "$NPM_DIR" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null) &&
		cp "$NPM_DIR/package-lock.json" "$NPM_DIR/node_modules/.package-lock.json.ci"
}

# install_debian PACKAGE...: the ones not installed yet, through apt-get
install_debian() {
	missing=""
	for pkg in "$@"; do
		status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
		case "$status" in
		*"ok installed"*) ;;
		*) missing="$missing $pkg" ;;
		esac
	done
	[ -z "$missing" ] && return 0

	if [ "$(id -u)" -eq 0 ]; then
		SUDO=""
	elif command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-deps: missing packages:$missing" >&2
		echo "install-deps: run this script as root, or install sudo" >&2
		exit 1
	fi

	echo "install-deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# shellcheck disable=SC2086
install_debian $PACKAGES
install_npm
# CPython 3.13, 3.14 and 3.15 for the Python tests, unpacked under build/
# (scripts/fetch-pythons.sh; without them those tests skip), OpenJDK 21
# and 25 for the Java tests, likewise (scripts/fetch-jdks.sh), and an
# OpenTelemetry Collector built from Debian sid's Go packages, for the OTLP
# tests (scripts/build-otelcol.sh; without it those tests skip)
# The three at once (each with an apt state and cache of its own, they
# download side by side): a fresh clone's check waits for the longest
# only, not for the three one after the other.
#
# fetch_cached NAME SCRIPT: SCRIPT (fetch-pythons.sh, fetch-jdks.sh)
# unpacks into the machine's cache, COLLECTOR_DEPS_CACHE/NAME (where
# build-otelcol.sh keeps its build), under a lock against another
# checkout's run, and build/NAME links there: a fresh clone's check does
# not download and unpack them again (32 s and 36 s here, side by side).
# Not root, or build/NAME a folder of its own: into build/NAME, as before.
fetch_cached() {
	fc_dest=$top/build/$1
	fc_cache=${COLLECTOR_DEPS_CACHE:-/var/cache/collector-deps}
	if [ "$(id -u)" -ne 0 ] || { [ -d "$fc_dest" ] && [ ! -L "$fc_dest" ]; } ||
		! mkdir -p "$fc_cache/$1" "$top/build"; then
		"$2"
		return
	fi
	ln -sfn "$fc_cache/$1" "$fc_dest" || return 1
	(flock 9 && "$2" "$fc_cache/$1") 9>"$fc_cache/$1.lock"
}
top=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
	(fetch_cached pythons "$top/scripts/fetch-pythons.sh" ||
		echo "install-deps: CPython 3.13+ not fetched" >&2) &
	py=$!
	(fetch_cached jdks "$top/scripts/fetch-jdks.sh" ||
		echo "install-deps: OpenJDK 21/25 not fetched" >&2) &
	jdk=$!
	"$(dirname "$0")/build-otelcol.sh" || echo "install-deps: OpenTelemetry Collector not built" >&2
	wait "$py" "$jdk"
fi
