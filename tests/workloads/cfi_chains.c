// SPDX-License-Identifier: GPL-2.0
/*
 * Call chains for the unwinder in BPF, built -O2 -fomit-frame-pointer:
 *   plt      main -> c1 -> c2 -> c3 -> lib_a -> lib_b -> lib_c, through PLT
 *            calls into libcfi_lib.so (linked at start)
 *   signal   main -> s1 .. s8 spinning, interrupted every 2 ms of CPU by
 *            SIGPROF, whose handler spins in handler -> h1 -> h2
 *   recurse  main -> rec 200 deep -> spin
 *   dlopen   main spins in s1 .. s8 for a quarter of the time, then
 *            dlopen()s libcfi_lib.so and calls its lib_a for the rest
 * Usage: cfi_chains MODE [SECONDS of CPU time, default 1] [LIBRARY for dlopen]
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define CALL(f) do { f(); __asm__ volatile("" ::: "memory"); } while (0)

void lib_a(void);

static volatile unsigned long sink;
static volatile int in_handler;

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE void spin(int n)
{
	unsigned long x = sink;

	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

NOINLINE void c3(void) { lib_a(); __asm__ volatile("" ::: "memory"); }
NOINLINE void c2(void) { CALL(c3); }
NOINLINE void c1(void) { CALL(c2); }

NOINLINE void s8(void) { spin(200000); __asm__ volatile("" ::: "memory"); }
NOINLINE void s7(void) { CALL(s8); }
NOINLINE void s6(void) { CALL(s7); }
NOINLINE void s5(void) { CALL(s6); }
NOINLINE void s4(void) { CALL(s5); }
NOINLINE void s3(void) { CALL(s4); }
NOINLINE void s2(void) { CALL(s3); }
NOINLINE void s1(void) { CALL(s2); }

NOINLINE void h2(void) { spin(400000); __asm__ volatile("" ::: "memory"); }
NOINLINE void h1(void) { CALL(h2); }

static void handler(int sig)
{
	(void)sig;
	CALL(h1);
}

NOINLINE int rec(int n)
{
	if (n <= 1) {
		spin(200000);
		return 1;
	}
	return rec(n - 1) + (int)(sink & 1) + 1; /* not a tail call */
}

static void run_signal(double seconds)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	while (cpu_seconds() < seconds)
		CALL(s1);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
}

static int run_dlopen(double seconds, const char *lib)
{
	void (*fn)(void);
	void *h;

	while (cpu_seconds() < seconds / 4)
		CALL(s1);
	h = dlopen(lib, RTLD_NOW);
	if (!h || !(fn = (void (*)(void))dlsym(h, "lib_a"))) {
		fprintf(stderr, "cfi_chains: %s\n", dlerror());
		return 1;
	}
	while (cpu_seconds() < seconds)
		fn();
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plt";
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	int r = 0;

	if (!strcmp(mode, "plt")) {
		while (cpu_seconds() < seconds)
			CALL(c1);
	} else if (!strcmp(mode, "signal")) {
		run_signal(seconds);
	} else if (!strcmp(mode, "recurse")) {
		while (cpu_seconds() < seconds)
			r += rec(200);
	} else if (!strcmp(mode, "dlopen")) {
		r = run_dlopen(seconds, argc > 3 ? argv[3] : "libcfi_lib.so");
	} else {
		fprintf(stderr, "cfi_chains: unknown mode %s\n", mode);
		return 2;
	}
	printf("cfi_chains: done (%d)\n", r & 1);
	return 0;
}
