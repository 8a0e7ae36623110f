#!/bin/sh
# The unwind tables' cache on disk (unwind/table_cache.h): Debian's xz
# (its time in liblzma) run again and again with one COLLECTOR_CACHE_DIR.
# The first run builds every image's tables and writes a file each; the
# second reads them all (-v: "N read from the cache", nothing built but the
# vDSO's) and its stacks are as whole; xz run from a shell gets its mapping
# table at exec from them.  Then every file in turn is
# corrupted, truncated, given to another user, and replaced by a symlink
# to a valid copy outside: each time every file is refused with a message
# naming why, rebuilt and written over (a regular file of root's again,
# read by the next run without a word), never read.  A cache directory of
# another user, or writable by others, is refused as a whole: the tables
# are built as without a cache and nothing is written there.
. tests/integration/lib.sh
plain_suite_only "its files, good and bad, run under ASan in test_table_cache"
. tests/integration/cfi_compare.sh
need_root
command -v xz >/dev/null || fail "xz missing (xz-utils)"

seq 1 40000 | awk '{ print $1, $1 * 7919 % 1000003, "line of text for xz to chew on" }' \
	>"$TMP/input"
export COLLECTOR_CACHE_DIR="$TMP/cache"
run=0

# xz under the collector; the summary in $TMP/$run.sum
profile() {
	run=$((run + 1))
	"$COLLECTOR" -v -o "$TMP/out$run" -- xz -6 -c "$TMP/input" >/dev/null 2>"$TMP/$run.sum" ||
		{ cat "$TMP/$run.sum"; fail "run $run: collector exited $?"; }
	c=$(complete_percent "$TMP/$run.sum")
	within "$c" 90 100 || { cat "$TMP/$run.sum"; fail "run $run: $c% of the stacks complete"; }
	set -- $(sed -n 's/.*unwind tables built: \([0-9]*\) images from their CFI, \([0-9]*\) read from the cache on disk (\([0-9]*\) cache.*/\1 \2 \3/p' "$TMP/$run.sum")
	built=$1 hits=$2 refused=$3
	[ -n "$refused" ] || { cat "$TMP/$run.sum"; fail "run $run: no cache figures with -v"; }
	echo "run $run: $built built, $hits read from the cache, $refused refused; $c% complete"
}

cache_files() { find "$COLLECTOR_CACHE_DIR" -mindepth 1 -maxdepth 1 -name '[bf]*' | sort; }

# every cache file regular, root's, 0644, and no temporary one left (the
# debug/ folder, root's 0755, holds the decompressed debug files:
# symbols/debug_copies.h)
check_files() {
	for f in $(find "$COLLECTOR_CACHE_DIR" -mindepth 1); do
		case $f in */.tmp.* | */debug/.*) fail "$1: temporary file $f left" ;; esac
		if [ "$f" = "$COLLECTOR_CACHE_DIR/debug" ]; then
			[ -d "$f" ] && [ ! -L "$f" ] && [ "$(stat -c %u:%a "$f")" = "0:755" ] ||
				fail "$1: $f is not root's 0755 folder"
			continue
		fi
		[ -f "$f" ] && [ ! -L "$f" ] || fail "$1: $f is not a regular file"
		[ "$(stat -c %u:%a "$f")" = "0:644" ] || fail "$1: $f is $(stat -c %u:%a "$f")"
	done
}

profile
first_built=$built
[ "$hits" -eq 0 ] || fail "run 1: $hits read from an empty cache"
[ "$first_built" -ge 4 ] || fail "run 1: $first_built images built (xz, liblzma, libc, ld.so)"
[ "$(stat -c %u:%a "$COLLECTOR_CACHE_DIR")" = "0:755" ] || fail "cache directory $(stat -c %u:%a "$COLLECTOR_CACHE_DIR")"
n=$(cache_files | wc -l)
# the vDSO's tables are not kept (no file holds it: rebuilt each run)
[ "$n" -eq $((first_built - 1)) ] || { ls -la "$COLLECTOR_CACHE_DIR"; fail "$n files for $first_built images"; }
check_files "run 1"

profile
[ "$hits" -eq "$n" ] && [ "$built" -le 1 ] && [ "$refused" -eq 0 ] ||
	fail "run 2: $hits of $n read from the cache, $built built, $refused refused"

# spoil SCENARIO WHY: every cache file spoiled by scenario, then one run
# refuses each (a message naming WHY) and rebuilds it; the next reads them
spoil() {
	mkdir -p "$TMP/saved"
	for f in $(cache_files); do
		case $1 in
		corrupt) printf 'XXXXXXXX' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc 2>/dev/null ;;
		truncate) truncate -s $(($(stat -c %s "$f") / 2)) "$f" ;;
		chown) chown nobody "$f" ;;
		symlink) cp "$f" "$TMP/saved/" && rm "$f" && ln -s "$TMP/saved/${f##*/}" "$f" ;;
		esac
	done
	profile
	m=$(grep -c "unwind table cache $COLLECTOR_CACHE_DIR/.* refused ($2): rebuilt" "$TMP/$run.sum")
	[ "$m" -eq "$n" ] && [ "$refused" -eq "$n" ] && [ "$hits" -eq 0 ] || {
		grep "table cache" "$TMP/$run.sum"
		fail "$1: $m messages and $refused refused of $n files, $hits read"
	}
	check_files "$1"
	profile
	[ "$hits" -eq "$n" ] && [ "$refused" -eq 0 ] || fail "after $1: $hits of $n read, $refused refused"
	! grep -q "table cache" "$TMP/$run.sum" || fail "after $1: a message on a good cache"
}
spoil corrupt "checksum mismatch"
spoil truncate "[0-9]* bytes, its header says [0-9]*"
spoil chown "owned by another user"
spoil symlink "a symlink"

# processes exec'd by a shell get their mapping tables at exec, from the
# tables cached (-v counts them: one per xz and one for the shell)
"$COLLECTOR" -v -o "$TMP/shell" -- sh -c 'for i in 1 2 3 4 5; do xz -1 -c "$0" >/dev/null; done' \
	"$TMP/input" >/dev/null 2>"$TMP/shell.sum" || { cat "$TMP/shell.sum"; fail "shell run failed"; }
served=$(sed -n 's/.*mapping tables from them written at exec \([0-9]*\),.*/\1/p' "$TMP/shell.sum")
grep "before their" "$TMP/shell.sum"
echo "5 xz from a shell: $served mapping tables written at exec"
[ "${served:-0}" -ge 6 ] || { cat "$TMP/shell.sum"; fail "$served mapping tables at exec for sh and 5 xz"; }

# a directory of another user, or one others may write: not used at all
for how in owner mode; do
	d="$TMP/$how"
	mkdir -m 755 "$d"
	case $how in
	owner) chown nobody "$d" ;;
	mode) chmod 777 "$d" ;;
	esac
	COLLECTOR_CACHE_DIR=$d profile
	grep -q "unwind table cache $d refused" "$TMP/$run.sum" || { cat "$TMP/$run.sum"; fail "$how: no message"; }
	[ "$hits" -eq 0 ] && [ "$built" -ge 4 ] || fail "$how: $hits read, $built built"
	[ -z "$(ls -A "$d")" ] || fail "$how: written to a directory it refused"
done
echo ok
