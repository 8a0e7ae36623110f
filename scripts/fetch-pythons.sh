#!/bin/sh
# CPython 3.13, 3.14 and 3.15 for the Python profiling tests, from Debian's
# own packages (Debian 13 "trixie" ships 3.13, unstable "sid" 3.14 and
# 3.15): downloaded, not installed, and unpacked into build/pythons/SUITE/root
# with the C library that came with them; nothing outside build/pythons
# changes.  The mirror is this machine's own apt source.  Idempotent: a
# suite whose interpreters run is left alone.  Run one of them with
# build/pythons/run.sh 3.X ARGS...
# Usage: fetch-pythons.sh [DIR]   (default: build/pythons of this tree)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-$top/build/pythons}

. "$top/scripts/debian-suite.sh"

# fetch SUITE MINOR...: the interpreters of those minor versions
fetch() {
	suite=$1
	shift
	dir=$base/$suite
	ok=1
	for v in "$@"; do
		"$base/run.sh" "3.$v" -c 'pass' >/dev/null 2>&1 || ok=0
	done
	[ $ok -eq 1 ] && return 0
	debian_apt_state "$dir" "$suite" ||
		{ echo "fetch-pythons: no Debian mirror in the apt sources" >&2; return 1; }
	mkdir -p "$dir/debs" "$dir/root"
	# shellcheck disable=SC2086
	apt-get $APT_OPTS -qq update >/dev/null || { echo "fetch-pythons: apt-get update of $suite failed" >&2; return 1; }
	pkgs="libc6 libexpat1 zlib1g libffi8 libssl3t64 libzstd1"
	for v in "$@"; do
		pkgs="$pkgs python3.$v-minimal libpython3.$v-minimal libpython3.$v-stdlib"
	done
	for p in $pkgs; do
		# shellcheck disable=SC2086
		(cd "$dir/debs" && apt-get $APT_OPTS -qq download "$p" >/dev/null 2>&1) ||
			echo "fetch-pythons: $suite has no package $p" >&2
	done
	for d in "$dir"/debs/*.deb; do
		[ -e "$d" ] && dpkg -x "$d" "$dir/root"
	done
}

mkdir -p "$base"
cat >"$base/run.sh" <<'RUN'
#!/bin/sh
# run.sh 3.X ARGS...: Debian's CPython 3.X unpacked under this folder, run
# with the C library of its own suite.
v=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
for suite in trixie sid; do
	r=$here/$suite/root
	[ -x "$r/usr/bin/python$v" ] || continue
	PYTHONHOME=$r/usr exec "$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
		--library-path "$r/usr/lib/x86_64-linux-gnu" "$r/usr/bin/python$v" "$@"
done
echo "run.sh: no python$v under $here" >&2
exit 127
RUN
chmod +x "$base/run.sh"
fetch trixie 13
fetch sid 14 15
