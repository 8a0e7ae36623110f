// SPDX-License-Identifier: GPL-2.0
/*
 * Test program for the CFI unwinder, built without frame pointers.
 *
 *   chain leaf        main -> f1 -> ... -> f16 captures its own registers
 *                     and stack at the bottom of the chain, once;
 *   chain signal      the same as leaf, but capture_here runs in a SIGUSR1
 *                     handler that f16 raises: the stack crosses a signal
 *                     frame;
 *   chain sample N    the chain runs in a loop and a SIGPROF handler
 *                     captures the interrupted registers and stack N times,
 *                     at whatever instruction each signal lands on;
 *   chain vdso N      the same, f16 calling clock_gettime (the vDSO);
 *   chain thread N    the same as sample, in a second thread (whose stack
 *                     ends in thread_main, start_thread and clone3).
 *
 * Writes the captures and /proc/self/maps on stdout (see capture.h).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "capture.h"

#define MAX_SAMPLES 2000

struct capture {
	uint64_t regs[8];
	uint64_t len;
	uint8_t stack[CAPTURE_STACK_MAX];
};

static struct capture *captures;
static volatile int n_captures, want_captures;
static uint64_t stack_lo, stack_hi;
static volatile int spin;
static volatile int leaf_mode, vdso_mode;
volatile uint64_t sink;

static void find_stack(void)
{
	uint64_t here = (uint64_t)(uintptr_t)&here;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		exit(2);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && here >= lo && here < hi) {
			stack_lo = lo;
			stack_hi = hi;
		}
	}
	fclose(f);
	if (!stack_hi)
		exit(2);
}

static uint64_t copy_len(uint64_t sp)
{
	if (sp < stack_lo || sp >= stack_hi)
		return 0;
	return stack_hi - sp < CAPTURE_STACK_MAX ? stack_hi - sp : CAPTURE_STACK_MAX;
}

/* The registers at label 1 and the stack from rsp at that instant, copied
 * in the same asm so the compiler cannot touch the frame in between. */
__attribute__((noinline)) static void capture_here(void)
{
	struct capture *c = &captures[0];
	uint8_t *dst = c->stack;

	/* copies min(CAPTURE_STACK_MAX, stack_hi - rsp) bytes from rsp */
	__asm__ volatile(
		"lea 1f(%%rip), %%rax\n\t"
		"mov %%rax, 0(%[r])\n\t"
		"mov %%rsp, 8(%[r])\n\t"
		"mov %%rbp, 16(%[r])\n\t"
		"mov %%rbx, 24(%[r])\n\t"
		"mov %%r12, 32(%[r])\n\t"
		"mov %%r13, 40(%[r])\n\t"
		"mov %%r14, 48(%[r])\n\t"
		"mov %%r15, 56(%[r])\n\t"
		"1:\n\t"
		"mov %[hi], %%rcx\n\t"
		"sub %%rsp, %%rcx\n\t"
		"cmp %[max], %%rcx\n\t"
		"jbe 2f\n\t"
		"mov %[max], %%rcx\n\t"
		"2:\n\t"
		"mov %%rsp, %%rsi\n\t"
		"rep movsb\n\t"
		: "+D"(dst)
		: [r] "r"(c->regs), [hi] "r"(stack_hi), [max] "i"(CAPTURE_STACK_MAX)
		: "rax", "rcx", "rsi", "memory", "cc");
	c->len = dst - c->stack;
	n_captures = 1;
}

static void on_sigusr1(int sig)
{
	(void)sig;
	capture_here();
	sink++; /* not a tail call: keep this frame */
}

static void on_sigprof(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	const greg_t *g = uc->uc_mcontext.gregs;
	struct capture *c;
	uint64_t len;

	(void)sig;
	(void)si;
	if (n_captures >= want_captures)
		return;
	c = &captures[n_captures];
	c->regs[0] = g[REG_RIP];
	c->regs[1] = g[REG_RSP];
	c->regs[2] = g[REG_RBP];
	c->regs[3] = g[REG_RBX];
	c->regs[4] = g[REG_R12];
	c->regs[5] = g[REG_R13];
	c->regs[6] = g[REG_R14];
	c->regs[7] = g[REG_R15];
	len = copy_len(g[REG_RSP]);
	memcpy(c->stack, (const void *)(uintptr_t)g[REG_RSP], len);
	c->len = len;
	n_captures++;
}

__attribute__((noinline)) static void burn(uint64_t x)
{
	for (int i = 0; i < spin; i++)
		sink += x * i;
}

/* Each level burns, calls the next, and uses its result so that no call is
 * a tail call; pads of different sizes give each frame its own layout. */
#define LEVEL(n, next)                                                    \
	__attribute__((noinline)) int f##n(int x)                         \
	{                                                                 \
		volatile char pad[8 * (n)];                               \
		int r;                                                    \
		pad[0] = (char)x;                                         \
		burn(x + n);                                              \
		r = next(x + pad[0]);                                     \
		burn(r);                                                  \
		return r * 3 + pad[0];                                    \
	}

__attribute__((noinline)) int f16(int x)
{
	volatile char pad[8 * 16];

	pad[0] = (char)x;
	if (leaf_mode == 2) {
		raise(SIGUSR1);
	} else if (leaf_mode) {
		capture_here();
	} else if (vdso_mode) {
		struct timespec ts;

		/* most of the time inside the vDSO's clock_gettime */
		for (int i = 0; i < 300; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += ts.tv_nsec;
		}
	} else {
		burn(x);
	}
	return pad[0] + 1;
}

LEVEL(15, f16)
LEVEL(14, f15)
LEVEL(13, f14)
LEVEL(12, f13)
LEVEL(11, f12)
LEVEL(10, f11)
LEVEL(9, f10)
LEVEL(8, f9)
LEVEL(7, f8)
LEVEL(6, f7)
LEVEL(5, f6)
LEVEL(4, f5)
LEVEL(3, f4)
LEVEL(2, f3)
LEVEL(1, f2)

static int sample_loop(void)
{
	int result = 0;

	for (int i = 0; n_captures < want_captures; i++)
		result += f1(i);
	return result;
}

/* The root of the second thread's chain: thread_main -> f1 -> ... */
__attribute__((noinline)) static void *thread_main(void *arg)
{
	pthread_attr_t attr;
	sigset_t set;
	void *lo;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0 ||
	    pthread_attr_getstack(&attr, &lo, &size) != 0)
		exit(2);
	pthread_attr_destroy(&attr);
	stack_lo = (uint64_t)(uintptr_t)lo;
	stack_hi = stack_lo + size;
	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	*(int *)arg = sample_loop();
	return arg;
}

static void write_all(const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(1, p, len);

		if (n <= 0)
			exit(3);
		p += n;
		len -= n;
	}
}

static void write_maps(void)
{
	struct capture_record rec = { .kind = CAPTURE_MAPS };
	static char text[1 << 20];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n;

	if (!f)
		exit(2);
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	rec.len = n;
	write_all(&rec, sizeof(rec));
	write_all(text, n);
}

int main(int argc, char **argv)
{
	int result = 0;

	if (argc < 2)
		return 1;
	captures = calloc(MAX_SAMPLES, sizeof(*captures));
	if (!captures)
		return 2;
	find_stack();
	if (strcmp(argv[1], "leaf") == 0) {
		leaf_mode = 1;
		want_captures = 1;
		result = f1(1);
	} else if (strcmp(argv[1], "signal") == 0) {
		signal(SIGUSR1, on_sigusr1);
		leaf_mode = 2;
		want_captures = 1;
		result = f1(1);
	} else if ((strcmp(argv[1], "sample") == 0 || strcmp(argv[1], "vdso") == 0 ||
		    strcmp(argv[1], "thread") == 0) && argc > 2) {
		struct sigaction sa = { .sa_sigaction = on_sigprof, .sa_flags = SA_SIGINFO };
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

		want_captures = atoi(argv[2]);
		if (want_captures < 1 || want_captures > MAX_SAMPLES)
			return 1;
		spin = 200;
		vdso_mode = argv[1][0] == 'v';
		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
		if (argv[1][0] == 't') {
			/* only the second thread takes the signals */
			pthread_t th;
			sigset_t set;

			sigemptyset(&set);
			sigaddset(&set, SIGPROF);
			pthread_sigmask(SIG_BLOCK, &set, NULL);
			if (pthread_create(&th, NULL, thread_main, &result) != 0 ||
			    pthread_join(th, NULL) != 0)
				return 2;
		} else {
			result = sample_loop();
		}
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_PROF, &it, NULL);
	} else {
		return 1;
	}
	for (int i = 0; i < n_captures; i++) {
		struct capture_record rec = { .kind = CAPTURE_STACK, .len = captures[i].len };

		memcpy(rec.regs, captures[i].regs, sizeof(rec.regs));
		write_all(&rec, sizeof(rec));
		write_all(captures[i].stack, captures[i].len);
	}
	write_maps();
	sink += result;
	return 0;
}
