// SPDX-License-Identifier: GPL-2.0
/*
 * Writes an FDR trace with LLVM's own XRay runtime, for the reader's tests:
 * main calls top 3 times and a thread calls it once; top calls mid 4 times,
 * mid calls leaf 5 times with one logged argument.  The environment alone
 * writes no FDR file: the program must select the mode, patch the sleds,
 * then finalize and flush the log itself.  The output directory comes from
 * XRAY_OPTIONS=xray_logfile_base=...
 */
#include <pthread.h>
#include <stdio.h>

/* compiler-rt's C interface (xray/xray_log_interface.h is C++ only) */
int __xray_log_init_mode(const char *mode, const char *config);
int __xray_patch(void);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);

#define XRAY_LOG_INITIALIZED 2
#define XRAY_LOG_FLUSHED 2

static volatile int sink;

__attribute__((xray_always_instrument, xray_log_args(1), noinline)) void leaf(int x)
{
	sink += x;
}

__attribute__((xray_always_instrument, noinline)) void mid(void)
{
	for (int i = 0; i < 5; i++)
		leaf(i);
}

__attribute__((xray_always_instrument, noinline)) void top(void)
{
	for (int i = 0; i < 4; i++)
		mid();
}

static void *thread_main(void *arg)
{
	(void)arg;
	top();
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (__xray_log_init_mode("xray-fdr", "buffer_size=16384:buffer_max=8") !=
	    XRAY_LOG_INITIALIZED) {
		fprintf(stderr, "fdr_v5: cannot initialize XRay's FDR mode\n");
		return 1;
	}
	__xray_patch();
	for (int i = 0; i < 3; i++)
		top();
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_join(t, NULL);
	__xray_log_finalize();
	if (__xray_log_flushLog() != XRAY_LOG_FLUSHED) {
		fprintf(stderr, "fdr_v5: cannot flush the XRay log\n");
		return 1;
	}
	return 0;
}
