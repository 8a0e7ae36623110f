// SPDX-License-Identifier: GPL-2.0
/*
 * A library that no profiler has seen before it runs: main spins for a
 * while, then writes a library's source into DIR, builds it with cc
 * (-O2, no frame pointers), dlopen()s it and spins in it for the rest
 * (main -> run_fresh -> fresh_a -> fresh_b -> fresh_c, the last three in
 * the library).  Its first samples there come before the profiler has a
 * table for it.  With "wait", it sleeps SECONDS in the library instead, as
 * soon as it is loaded (main -> wait_fresh -> fresh_wait -> fresh_sleep ->
 * nanosleep): switched out before the profiler has a table for it.
 * Usage: dlopen_fresh DIR [SECONDS of CPU time in the library, default 1]
 *        dlopen_fresh DIR SECONDS wait
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static const char source[] =
	"#include <time.h>\n"
	"static volatile unsigned long lib_sink;\n"
	"__attribute__((noinline)) void fresh_c(unsigned long n)\n"
	"{\n"
	"	unsigned long x = lib_sink;\n"
	"	for (unsigned long i = 0; i < n; i++)\n"
	"		x = x * 6364136223846793005UL + 1442695040888963407UL;\n"
	"	lib_sink = x;\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n"
	"__attribute__((noinline)) void fresh_b(unsigned long n)\n"
	"{\n"
	"	fresh_c(n);\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n"
	"__attribute__((noinline)) void fresh_a(unsigned long n)\n"
	"{\n"
	"	fresh_b(n);\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n"
	"__attribute__((noinline)) void fresh_sleep(unsigned long ms)\n"
	"{\n"
	"	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };\n"
	"	nanosleep(&ts, 0);\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n"
	"__attribute__((noinline)) void fresh_wait(unsigned long ms)\n"
	"{\n"
	"	fresh_sleep(ms);\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n";

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static void spin_main(double seconds)
{
	double end = cpu_seconds() + seconds;
	unsigned long x = sink;

	while (cpu_seconds() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1;
	sink = x;
}

NOINLINE static void run_fresh(void (*fresh_a)(unsigned long), double seconds)
{
	double end = cpu_seconds() + seconds;

	while (cpu_seconds() < end)
		fresh_a(100000);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void wait_fresh(void (*fresh_wait)(unsigned long), double seconds)
{
	fresh_wait((unsigned long)(seconds * 1000));
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	char src[4096], lib[4096], cmd[3 * 4096];
	double seconds = argc > 2 ? atof(argv[2]) : 1;
	void (*fresh_a)(unsigned long);
	int wait;
	FILE *f;
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: dlopen_fresh DIR [SECONDS]\n");
		return 2;
	}
	snprintf(src, sizeof(src), "%s/fresh.c", argv[1]);
	snprintf(lib, sizeof(lib), "%s/libfresh.so", argv[1]);
	spin_main(0.2);
	f = fopen(src, "w");
	if (!f || fputs(source, f) < 0 || fclose(f) != 0) {
		perror(src);
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "cc -O2 -fomit-frame-pointer -fPIC -shared -o '%s' '%s'", lib,
		 src);
	if (system(cmd) != 0) {
		fprintf(stderr, "dlopen_fresh: %s failed\n", cmd);
		return 1;
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen_fresh: %s\n", dlerror());
		return 1;
	}
	wait = argc > 3 && !strcmp(argv[3], "wait");
	fresh_a = (void (*)(unsigned long))dlsym(h, wait ? "fresh_wait" : "fresh_a");
	if (!fresh_a) {
		fprintf(stderr, "dlopen_fresh: %s\n", dlerror());
		return 1;
	}
	if (wait)
		wait_fresh(fresh_a, seconds);
	else
		run_fresh(fresh_a, seconds);
	return 0;
}
