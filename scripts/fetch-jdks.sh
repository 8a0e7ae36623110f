#!/bin/sh
# OpenJDK 21 and 25 for the Java profiling tests, from Debian's own
# packages (Debian 13 "trixie" ships 21, unstable "sid" 25): downloaded, not
# installed, and unpacked into build/jdks/SUITE/root with the C and C++
# libraries that came with them; nothing outside build/jdks changes.  The
# mirror is this machine's own apt source.  Idempotent: a suite whose JDK
# runs is left alone.  Run one of their tools, or Debian 12's own JDK 17,
# with build/jdks/run.sh N TOOL ARGS... (N: 17, 21 or 25; TOOL: java,
# javac, jcmd...).
# Usage: fetch-jdks.sh [DIR]   (default: build/jdks of this tree)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-$top/build/jdks}

. "$top/scripts/debian-suite.sh"

# relink ROOT N: Debian keeps the JDK's configuration in /etc/java-N-openjdk
# and makes <jdk>/conf/* (and a few files of <jdk>/lib) absolute links to
# it, which on this machine lead nowhere (or to another version's files):
# java then fails with "Error loading java.security file" as soon as a
# program touches security or management, and so does javac itself.
# Each such link is pointed at the same file in the unpacked root instead,
# by a relative link, which holds when the tree is moved or copied.
relink() {
	jdk=$1/usr/lib/jvm/java-$2-openjdk-amd64
	find "$jdk" -type l | while read -r l; do
		t=$(readlink "$l")
		case $t in
		/etc/java-$2-openjdk/*)
			# one ".." for each folder between the root and the link
			up=$(dirname "${l#"$1"/}" | sed 's|[^/][^/]*|..|g')
			ln -sfn "$up$t" "$l"
			;;
		esac
	done
}

# fetch SUITE N: OpenJDK N of that suite
fetch() {
	suite=$1 n=$2
	dir=$base/$suite
	# runs, compiles, and finds its configuration (a link left pointing
	# at /etc would not stop java -version)
	[ -e "$dir/root/usr/lib/jvm/java-$n-openjdk-amd64/conf/security/java.security" ] &&
		"$base/run.sh" "$n" java -version >/dev/null 2>&1 &&
		"$base/run.sh" "$n" javac -version >/dev/null 2>&1 && return 0
	debian_apt_state "$dir" "$suite" ||
		{ echo "fetch-jdks: no Debian mirror in the apt sources" >&2; return 1; }
	mkdir -p "$dir/debs" "$dir/root"
	# shellcheck disable=SC2086
	apt-get $APT_OPTS -qq update >/dev/null || { echo "fetch-jdks: apt-get update of $suite failed" >&2; return 1; }
	# what the JVM, javac and jcmd link: libjvm.so libstdc++ and libgcc_s,
	# libzip.so zlib (the suite's ld.so --list of every tool and .so of
	# the JDK).  The AWT, font, sound and smart-card libraries' own (libpng,
	# libfreetype, libasound, libpcsclite...) are not fetched: the tests'
	# programs load none of them (ld.so would take Debian 12's)
	pkgs="libc6 libstdc++6 libgcc-s1 zlib1g openjdk-$n-jre-headless openjdk-$n-jdk-headless"
	for p in $pkgs; do
		# shellcheck disable=SC2086
		(cd "$dir/debs" && apt-get $APT_OPTS -qq download "$p" >/dev/null 2>&1) ||
			echo "fetch-jdks: $suite has no package $p" >&2
	done
	for d in "$dir"/debs/*.deb; do
		[ -e "$d" ] && dpkg -x "$d" "$dir/root"
	done
	relink "$dir/root" "$n"
	"$base/run.sh" "$n" java -version >/dev/null 2>&1 ||
		{ echo "fetch-jdks: OpenJDK $n of $suite does not run" >&2; return 1; }
}

mkdir -p "$base"
cat >"$base/run.sh" <<'RUN'
#!/bin/sh
# run.sh N TOOL ARGS...: the JDK tool TOOL (java, javac, jcmd...) of
# OpenJDK N.  17 is Debian 12's own, run as it is; 21 (trixie) and 25 (sid)
# are unpacked under this folder and run with their suite's own ld.so and
# libraries (the process's executable is then ld.so; libjvm.so is a mapped
# library).
n=$1 tool=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
case $n in
17) exec "/usr/lib/jvm/java-17-openjdk-amd64/bin/$tool" "$@" ;;
21) suite=trixie ;;
25) suite=sid ;;
*) echo "run.sh: no OpenJDK $n (17, 21 or 25)" >&2; exit 127 ;;
esac
r=$here/$suite/root
jdk=$r/usr/lib/jvm/java-$n-openjdk-amd64
if [ ! -x "$jdk/bin/$tool" ] || [ ! -x "$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" ]; then
	echo "run.sh: no $tool of OpenJDK $n under $here/$suite" >&2
	exit 127
fi
exec "$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
	--library-path "$r/usr/lib/x86_64-linux-gnu:$jdk/lib:$jdk/lib/server" "$jdk/bin/$tool" "$@"
RUN
chmod +x "$base/run.sh"
rc=0
fetch trixie 21 || rc=1
fetch sid 25 || rc=1
exit $rc
