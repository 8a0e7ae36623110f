# Stripped executables have no _start symbol: a stack is whole when it ends
# in the program's entry function (the one that holds the ELF header's
# e_entry), named "IMAGE+0xENTRY" by its FDE or, for an entry written
# without CFI (musl's _start, a -nostartfiles program's), by the symbolizer.
# Both programs are built and stripped here, profiled with the default cfi
# call graph: at most 5% of the user stacks truncated, and the outermost
# frame of the hot stack is the entry function.
. tests/integration/lib.sh
need_root
command -v cc >/dev/null 2>&1 || skip "no cc to build the programs with"
command -v strip >/dev/null 2>&1 || skip "no strip"

cat >"$TMP/work.c" <<'EOF'
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void work(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}
__attribute__((noinline)) int run(int argc, char **argv)
{
	unsigned long s = argc > 1 ? strtoul(argv[1], 0, 10) : 1;

	for (unsigned long k = 0; k < s * 30; k++)
		work(10000000);
	return 0;
}
#ifdef OWN_ENTRY
/* the program's own entry, in assembly without CFI, as musl's _start */
__asm__(".text\n.globl _start\n.type _start, @function\n_start:\n"
	"\txor %ebp, %ebp\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall start_c\n\thlt\n");
__attribute__((noinline, used)) void start_c(long *sp)
{
	exit(run((int)sp[0], (char **)(sp + 1)));
}
#else
int main(int argc, char **argv)
{
	return run(argc, argv);
}
#endif
EOF

# check NAME: profile the stripped program NAME
check() {
	strip "$TMP/$1" || fail "strip $1 failed"
	entry=$(readelf -h "$TMP/$1" | awk '$1 == "Entry" { print $4 }')
	[ -n "$entry" ] || fail "no entry point in $1"
	entry=$(printf '%x' "$entry")
	"$COLLECTOR" -f folded -o "$TMP/out-$1" -- "$TMP/$1" 1 >"$TMP/stdout" 2>"$TMP/summary-$1" ||
		{ cat "$TMP/summary-$1"; fail "$1: collector exited $?"; }
	grep "truncated stacks" "$TMP/summary-$1"
	pct=$(awk '$1 == "truncated" && $2 == "stacks" { sub("%", "", $3); print $3; exit }' \
		"$TMP/summary-$1")
	within "$pct" 0 5 || fail "$1: truncated share '$pct' above 5%"
	# the hot stack (most samples), outermost frame first after the process
	hot=$(sort -t' ' -k2 -n "$TMP/out-$1/collector.folded" | tail -n 1)
	echo "$hot"
	outer=$(echo "$hot" | cut -d';' -f2)
	[ "$outer" = "$1+0x$entry" ] || fail "$1: outermost frame '$outer', not the entry $1+0x$entry"
}

cc -O2 -o "$TMP/crt" "$TMP/work.c" || fail "cc failed"
check crt
cc -O2 -DOWN_ENTRY -nostartfiles -o "$TMP/own" "$TMP/work.c" || fail "cc -nostartfiles failed"
check own
echo ok
