#!/bin/sh
# Writes on stdout a C program with N functions (default 10000) named
# f_0000 ... f_9999, each non-leaf with a frame pointer, for the attach-time
# bench (`--trace BIN:f_0???` selects 1 000 of them, and so on).  main()
# prints CLOCK_MONOTONIC in ns as it starts: the probes are attached by then
# (collector -- CMD and bpftrace -c CMD start the command after attaching).
set -eu
n=${1:-10000}
cat <<'HEAD'
#include <stdint.h>
#include <stdio.h>
#include <time.h>
static volatile uint64_t sink;
__attribute__((noinline)) static void touch(uint64_t x) { sink += x; }
HEAD
awk -v n="$n" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "__attribute__((noinline, used)) void f_%04d(uint64_t x) { touch(x + %d); }\n", i, i
	printf "void (*const table[])(uint64_t) = {\n"
	for (i = 0; i < n; i++)
		printf "\tf_%04d,\n", i
	printf "};\n"
}'
cat <<'TAIL'
int main(int argc, char **argv)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("start_ns=%llu\n", (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec);
	/* call one function so the probes are not idle (argv keeps it live) */
	table[(unsigned)argc % (sizeof(table) / sizeof(table[0]))]((uint64_t)(uintptr_t)argv);
	return 0;
}
TAIL
