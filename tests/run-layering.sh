#!/bin/sh
# The layering suite: scripts/check-layering.sh passes on the tree, and
# fails on copies of it with one wrong include planted each.
cd "$(dirname "$0")/.." || exit 1
passed=0
failed=0
mkdir -p build
tmp=$(mktemp -d /tmp/collector-layering.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

check() { # NAME WANT(pass|fail) DIR
	if ./scripts/check-layering.sh "$3" >"$tmp/out" 2>&1; then got=pass; else got=fail; fi
	if [ "$got" = "$2" ]; then
		passed=$((passed + 1))
		echo "PASS $1"
	else
		failed=$((failed + 1))
		echo "FAIL $1 (check said $got, expected $2)"
		sed 's/^/    /' "$tmp/out"
	fi
}

# plant NAME FILE LINE: a copy of the layers with LINE added to FILE
plant() {
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree"
	cp -r lib model symbols unwind formats transport runtimes decode loader session cli "$tmp/tree/"
	printf '%s\n' "$3" >>"$tmp/tree/$2"
	check "$1" fail "$tmp/tree"
}

check "the tree's includes go down the layers only" pass .
plant "model including symbols fails" model/model.c '#include "symbols/symbolize.h"'
plant "loader including the model fails" loader/waiter.c '#include "model/model.h"'
plant "formats including decode fails" formats/registry.c '#include "decode/tracker.h"'
plant "libbpf outside loader fails" decode/tracker.c '#include <bpf/libbpf.h>'
plant "a skeleton outside loader fails" session/session.c '#include "sample.skel.h"'
plant "the session including the front end fails" session/session.c '#include "cli/summary.h"'
plant "an include without its folder fails" lib/proc.c '#include "proc.h"'
plant "transport including the model fails" transport/spool.c '#include "model/model.h"'
rm -rf "$tmp/tree"
mkdir -p "$tmp/tree"
cp -r lib model symbols unwind formats transport runtimes decode loader session cli "$tmp/tree/"
cp lib/proc.c "$tmp/tree/cli/proc.c"
check "two sources with one base name fail" fail "$tmp/tree"

echo "layering: $passed passed, $failed failed"
echo "$passed $failed 0" > build/layering-results
[ "$failed" -eq 0 ]
