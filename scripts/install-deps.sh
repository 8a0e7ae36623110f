#!/bin/sh
# Install, with apt-get, the Debian packages collector needs to build, test
# and run, or the packages named as arguments (bench/install-peers.sh).
# Only what is missing is installed, so a second run is quiet and quick.
# Runs the privileged step through sudo only when not already root.
set -eu

PACKAGES="clang llvm-14 libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
libcmocka-dev pkg-config valgrind gcc make binutils elfutils file linux-perf"
[ $# -gt 0 ] && PACKAGES="$*"

missing=""
for pkg in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	case "$status" in
	*"ok installed"*) ;;
	*) missing="$missing $pkg" ;;
	esac
done

[ -z "$missing" ] && exit 0

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
