#!/bin/sh
# An OpenTelemetry Collector for the integration tests (tests/otelcol: the
# OTLP receiver and a jsonfile exporter), built from Debian's own packages:
# Debian unstable ("sid") packages the collector as Go sources
# (golang-opentelemetry-collector-dev) with what it imports as other
# golang-*-dev packages, and a Go toolchain new enough for them
# (golang-1.27-go).  They are downloaded, not installed (sid's Go does not
# install on Debian 12), unpacked under the cache and built offline in
# GOPATH mode, the way Debian builds Go.  The mirror is this machine's own
# apt source.
#
# Cache: ${COLLECTOR_DEPS_CACHE:-/var/cache/collector-deps}/otelcol, root's
# (re-run through sudo when not root):
#   debs/       the packages, downloaded once and kept
#   apt/        the private apt lists of sid
#   root/       the packages unpacked (remade when the debs change)
#   gopath/     this tree's tests/otelcol copied as package "otelcol"
#   gocache/    Go's build cache: a rebuild after an edit takes seconds
#   bin/otelcol-HASH  the collector, HASH of the Go sources and the package
#               list: an unchanged tree reuses it, an edited one rebuilds
# Idempotent.  One line per step on stderr, nothing else unless a step
# fails.  Cold: about 130 MB to download and a few minutes to build
# (go build -p 1, about 600 MB of memory).
# Usage: build-otelcol.sh          build when needed
#        build-otelcol.sh --path   print the binary of the current sources
#                                  (exit 1 when it is not built)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/debian-suite.sh"
src=$top/tests/otelcol
cache=${COLLECTOR_DEPS_CACHE:-/var/cache/collector-deps}/otelcol
suite=sid
goversion=1.27

# The packages (58): the toolchain and the dependency closure of what
# tests/otelcol compiles.  Found by downloading the collector package and
# its 55 Depends, then adding, for each import path that
# `go list -e -deps otelcol` said it could not find, the package named after
# it (11 more: golang-golang-x-crypto-dev and the 10 at the end of the list,
# imported by testify, grpc, the prometheus client and gopsutil), then
# keeping only the packages a directory of `go list -deps otelcol` comes
# from (11 of the collector's Depends are not compiled: doublestar, backoff
# v1, go-json-experiment, goccy-go-json, go-cmp, go-tpm-tools, mergo,
# automemlimit, go-grpc-compression, cron, goleak).  About 125 MB.
PACKAGES="golang-$goversion-go golang-$goversion-src
golang-opentelemetry-collector-dev golang-opentelemetry-contrib-dev
golang-opentelemetry-otel-dev golang-opentelemetry-proto-dev
golang-google-grpc-dev golang-google-protobuf-dev golang-google-genproto-dev
golang-golang-x-crypto-dev golang-golang-x-exp-dev golang-golang-x-net-dev
golang-golang-x-sys-dev golang-golang-x-text-dev
golang-go.uber-multierr-dev golang-go.uber-zap-dev
golang-gopkg-yaml.v3-dev golang-gonum-v1-gonum-dev
golang-github-knadh-koanf-dev golang-github-spf13-cobra-dev
golang-github-spf13-pflag-dev golang-github-prometheus-client-golang-dev
golang-github-prometheus-client-model-dev golang-github-prometheus-common-dev
golang-github-prometheus-procfs-dev golang-github-klauspost-compress-dev
golang-github-felixge-httpsnoop-dev golang-github-foxboron-go-tpm-keyfiles-dev
golang-github-fsnotify-fsnotify-dev golang-github-go-logr-logr-dev
golang-github-go-logr-stdr-dev golang-github-go-viper-mapstructure-dev
golang-github-gobwas-glob-dev golang-github-golang-snappy-dev
golang-github-google-go-tpm-dev golang-github-google-uuid-dev
golang-github-grpc-ecosystem-grpc-gateway-dev
golang-github-hashicorp-go-version-dev golang-github-hashicorp-golang-lru-v2-dev
golang-github-json-iterator-go-dev golang-github-mitchellh-copystructure-dev
golang-github-mitchellh-reflectwalk-dev golang-github-modern-go-reflect2-dev
golang-github-munnerz-goautoneg-dev golang-github-pierrec-lz4-dev
golang-github-rs-cors-dev golang-github-shirou-gopsutil-dev
golang-github-stretchr-testify-dev
golang-github-davecgh-go-spew-dev golang-github-pmezard-go-difflib-dev
golang-github-beorn7-perks-dev golang-github-cenkalti-backoff-v5-dev
golang-github-cespare-xxhash-v2-dev golang-github-golang-protobuf-1-5-dev
golang-github-modern-go-concurrent-dev golang-github-prometheus-otlptranslator-dev
golang-github-tklauser-go-sysconf-dev golang-github-tklauser-numcpus-dev"

say() {
	echo "build-otelcol: $*" >&2
}

die() {
	say "$*"
	exit 1
}

# LOG's last lines on stderr (what a failed step said)
tail_log() {
	tail -n 30 "$1" | sed 's/^/  /' >&2
}

# the binary's name: a hash of the Go sources (names and contents) and of
# the package list
hash=$( {
	echo "$PACKAGES"
	for f in "$src"/*.go; do
		echo "== ${f##*/}"
		cat "$f"
	done
} | sha256sum | cut -c1-16)
bin=$cache/bin/otelcol-$hash

if [ "${1:-}" = "--path" ]; then
	[ -x "$bin" ] || die "not built for these sources: run scripts/build-otelcol.sh"
	echo "$bin"
	exit 0
fi
[ $# -eq 0 ] || die "usage: build-otelcol.sh [--path]"
ls "$src"/*.go >/dev/null 2>&1 || die "no Go sources in $src"

if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 ||
		die "the cache $cache is root's: run this script as root, or install sudo"
	exec sudo COLLECTOR_DEPS_CACHE="${COLLECTOR_DEPS_CACHE:-/var/cache/collector-deps}" sh "$0"
fi

if [ -x "$bin" ]; then
	say "up to date: $bin"
	exit 0
fi
mkdir -p "$cache/debs" "$cache/bin" || die "cannot make $cache"
# one build at a time (a second waits, then finds the binary made)
exec 9>"$cache/.lock"
flock 9 || die "cannot lock $cache/.lock"
if [ -x "$bin" ]; then
	say "up to date: $bin"
	exit 0
fi

# deb PACKAGE: its downloaded file, or nothing
deb() {
	last=""
	for f in "$cache/debs/$1"_*.deb; do
		[ -e "$f" ] && last=$f
	done
	echo "$last"
}

missing=""
for p in $PACKAGES; do
	[ -n "$(deb "$p")" ] || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt=$cache/apt
	debian_apt_state "$apt" "$suite" || die "no Debian mirror in the apt sources, or cannot make $apt"
	mkdir -p "$cache/debs.partial" || die "cannot make $cache/debs.partial"
	say "apt-get update of $suite from $(debian_mirror)"
	# shellcheck disable=SC2086
	apt-get $APT_OPTS -q update >"$apt/log" 2>&1 || {
		tail_log "$apt/log"
		die "apt-get update of $suite failed"
	}
	n=$(echo "$missing" | wc -w)
	say "downloading $n packages"
	# apt downloads as _apt: the folder is his until the files are moved
	rm -f "$cache/debs.partial"/*
	chown _apt "$cache/debs.partial" 2>/dev/null
	# shellcheck disable=SC2086
	(cd "$cache/debs.partial" && apt-get $APT_OPTS -q download $missing) >"$apt/log" 2>&1 || {
		tail_log "$apt/log"
		die "apt-get download failed (of:$missing)"
	}
	mv "$cache/debs.partial"/*.deb "$cache/debs/" || die "cannot move the packages into $cache/debs"
	rmdir "$cache/debs.partial"
	for p in $missing; do
		[ -n "$(deb "$p")" ] || die "$p was not downloaded"
	done
fi

# root/: the packages unpacked, remade when their files are not the ones
# unpacked there last (its .debs)
debs=$(for p in $PACKAGES; do deb "$p"; done)
root=$cache/root
if [ "$(cat "$root/.debs" 2>/dev/null)" != "$debs" ]; then
	say "unpacking $(echo "$debs" | wc -l) packages"
	rm -rf "$root.new" "$root"
	mkdir -p "$root.new" || die "cannot make $root.new"
	for d in $debs; do
		dpkg-deb -x "$d" "$root.new" || die "cannot unpack $d"
	done
	echo "$debs" >"$root.new/.debs"
	mv "$root.new" "$root" || die "cannot move $root.new to $root"
fi
goroot=$root/usr/lib/go-$goversion
[ -x "$goroot/bin/go" ] || die "no go in $goroot"

# the program: package "otelcol" of a GOPATH of its own, before Debian's
rm -rf "$cache/gopath"
if ! mkdir -p "$cache/gopath/src/otelcol" || ! cp "$src"/*.go "$cache/gopath/src/otelcol/"; then
	die "cannot copy $src to $cache/gopath"
fi
say "go build of tests/otelcol (minutes when cold, seconds after)"
log=$cache/build.log
(
	cd "$cache/gopath/src/otelcol" &&
		env GO111MODULE=off GOPROXY=off GOTOOLCHAIN=local GOENV=off GOWORK=off \
			CGO_ENABLED=0 GOFLAGS=-trimpath GOGC=50 \
			GOROOT="$goroot" GOPATH="$cache/gopath:$root/usr/share/gocode" \
			GOCACHE="$cache/gocache" \
			"$goroot/bin/go" build -p 1 -buildvcs=false -o "$bin.tmp" otelcol
) >"$log" 2>&1 || {
	tail_log "$log"
	rm -f "$bin.tmp"
	die "go build failed (the whole log: $log)"
}
"$bin.tmp" --version >"$log" 2>&1 || {
	tail_log "$log"
	rm -f "$bin.tmp"
	die "the collector built does not run"
}
mv "$bin.tmp" "$bin" || die "cannot move $bin.tmp to $bin"
# the three newest binaries kept (other trees' sources), older ones removed
find "$cache/bin" -name 'otelcol-*' -printf '%T@ %p\n' | sort -rn | tail -n +4 |
	cut -d' ' -f2- | while read -r old; do
		rm -f "$old"
	done
say "built $bin"
