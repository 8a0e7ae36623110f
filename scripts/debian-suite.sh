# shellcheck shell=sh
# Sourced (not run) by the scripts that take packages of another Debian
# suite without installing them (fetch-pythons.sh, fetch-jdks.sh,
# build-otelcol.sh): this machine's own mirror, and apt-get on a private
# state of its own for that suite, which leaves the machine's untouched.

# debian_mirror: the first mirror of this machine's apt sources (deb822
# .sources files, then sources.list), or nothing
debian_mirror() {
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] && awk '/^URIs:/ { print $2; exit }' "$f"
		done | head -n 1
		grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{ print $2; exit }'
	} | head -n 1
}

# debian_apt_state DIR SUITE: DIR's private apt state for SUITE's main
# from this machine's mirror (DIR/sources.list, DIR/lists, DIR/cache), and
# APT_OPTS set to the options that make apt-get use it (update, download).
# 0, or 1 when the apt sources name no mirror.
debian_apt_state() {
	das_uri=$(debian_mirror)
	[ -n "$das_uri" ] || return 1
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial" || return 1
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $das_uri $2 main" \
		>"$1/sources.list"
	APT_OPTS="-o Dir::Etc::SourceList=$1/sources.list -o Dir::Etc::SourceParts=/dev/null"
	APT_OPTS="$APT_OPTS -o Dir::State::Lists=$1/lists -o Dir::Cache=$1/cache -o Debug::NoLocking=1"
}
