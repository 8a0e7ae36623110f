# Readers given truncated, corrupted and hostile files: a clear message and
# exit code 7, never a crash; and a full disk while writing.
. tests/integration/lib.sh
need_root

"$COLLECTOR" -q -o "$TMP/out" --trace "$WL/calls:traced_*" -- "$WL/calls" >/dev/null 2>"$TMP/err" ||
	{ cat "$TMP/err"; fail "collector exited $?"; }
files=$(find "$TMP/out" -type f ! -path '*/src/*' ! -name '*.yaml' ! -name '*.map.*' | sort)
[ -n "$files" ] || fail "no output files"
n=0
for f in $files; do
	size=$(stat -c %s "$f")
	for cut in 1 7 31 $((size / 3)) $((size / 2)) $((size - 1)); do
		[ "$cut" -lt "$size" ] && [ "$cut" -gt 0 ] || continue
		head -c "$cut" "$f" >"$TMP/cut"
		# keep the name: some formats are recognized by it within a directory
		"$COLLECTOR" dump --check "$TMP/cut" >/dev/null 2>"$TMP/msg"
		rc=$?
		case "$f:$cut" in
		# a stream of lines or records (Callgrind, XRay) cut between two
		# of them in its body may still be a whole, smaller profile; cut
		# in its header or mid-record it is not
		*callgrind.out.*:$((size / 3)) | *callgrind.out.*:$((size / 2)) | \
		*.xray:$((size / 3)) | *.xray:$((size / 2)))
			[ $rc -eq 0 ] || [ $rc -eq 7 ] || fail "$f cut to $cut bytes: exit $rc"
			continue ;;
		# folded stacks cut right after a line are whole, fewer stacks;
		# cut inside a line they are not
		*.folded:*)
			if [ "$(tail -c 1 "$TMP/cut" | od -An -tx1 | tr -d ' ')" = 0a ]; then
				[ $rc -eq 0 ] || [ $rc -eq 7 ] || fail "$f cut after a line: exit $rc"
			else
				[ $rc -eq 7 ] || { cat "$TMP/msg"; fail "$f cut to $cut bytes: exit $rc, expected 7"; }
			fi
			continue ;;
		# a JSON text (speedscope) cut in the newline after its value is whole
		*speedscope.json:$((size - 1)))
			[ $rc -eq 0 ] || fail "$f without its last newline: exit $rc"
			continue ;;
		esac
		[ $rc -eq 7 ] || { cat "$TMP/msg"; fail "$f cut to $cut bytes: exit $rc, expected 7"; }
		[ -s "$TMP/msg" ] || fail "$f cut to $cut bytes: no message"
		n=$((n + 1))
	done
	# corrupted bytes: valid or rejected, but answered (no signal, no hang)
	for seed in 1 2 3 4 5; do
		cp "$f" "$TMP/bad"
		off=$(( (seed * 7919) % size ))
		printf '\377\377\377\377' | dd of="$TMP/bad" bs=1 seek="$off" conv=notrunc 2>/dev/null
		timeout 20 "$COLLECTOR" dump "$TMP/bad" >/dev/null 2>&1
		rc=$?
		[ $rc -eq 0 ] || [ $rc -eq 7 ] || fail "$f corrupted at $off: exit $rc"
		n=$((n + 1))
	done
done
echo "$n damaged files answered"

# hostile: huge counts in tiny files, for every format's magic
printf 'image 00000000000000000000\nversion 0.07\nsamples\n\377\377\377\377' >"$TMP/h1"
printf '# callgrind format\nevents: A\nfn=x\n0x1 99999999999999999999999\n' >"$TMP/h2"
printf 'HPCTOOLKITmeta\4\0\377\377\377\377\377\377\377\377' >"$TMP/h3"
printf '\1\0\1\0\3\0\0\0\0\312\232\73\0\0\0\0\377\377\377\377\377\377\377\377\0\0\0\0\0\0\0\0\17' >"$TMP/h4"
for h in h1 h2 h3 h4; do
	timeout 20 "$COLLECTOR" dump --check "$TMP/$h" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 7 ] || fail "hostile file $h: exit $rc, expected 7"
done

# a full disk: the writers say so, exit 1, and leave no temporary file
mkdir -p "$TMP/tiny"
mount -t tmpfs -o size=16k tmpfs "$TMP/tiny" || skip "cannot mount a tmpfs"
"$COLLECTOR" -q -o "$TMP/tiny/out" -- "$WL/split" 0.3 >/dev/null 2>"$TMP/err"
rc=$?
left=$(find "$TMP/tiny" -name '*.tmp' | head -n 3)
umount "$TMP/tiny"
cat "$TMP/err"
[ $rc -eq 1 ] || fail "full disk: exit $rc, expected 1"
grep -q "No space left on device" "$TMP/err" || fail "full disk: no message"
[ -z "$left" ] || fail "full disk left temporary files: $left"
echo ok
