# A workload built without frame pointers, walked with frame pointers: the
# truncated share is reported, with the advice to use --call-graph dwarf.
. tests/integration/lib.sh
need_root

"$COLLECTOR" --call-graph fp -o "$TMP/out" -- "$WL/split-nofp" 1 >"$TMP/stdout" 2>"$TMP/summary" ||
	{ cat "$TMP/summary"; fail "collector exited $?"; }
cat "$TMP/summary"
pct=$(awk '$1 == "truncated" && $2 == "stacks" { sub("%", "", $3); print $3; exit }' "$TMP/summary")
within "$pct" 50 100 || fail "truncated share '$pct' not reported high for a -fomit-frame-pointer build"
grep -q -- "--call-graph dwarf" "$TMP/summary" || fail "no advice on truncated stacks"
echo ok
