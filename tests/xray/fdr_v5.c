// SPDX-License-Identifier: GPL-2.0
/*
 * Writes an FDR trace with LLVM's own XRay runtime (built with
 * clang -fxray-instrument), for testing collector's reader against it.
 *
 * The runtime writes an FDR file only when the program selects and
 * initializes the mode, patches the sleds, then finalizes and flushes; the
 * environment sets where: XRAY_OPTIONS="patch_premain=false
 * xray_logfile_base=DIR/prefix-".
 *
 * Calls: main -> top() 3 times; top -> mid(i) 4 times; mid -> leaf(i, j)
 * 5 times (leaf is logged with its arguments); a second thread runs top once.
 */
#include <pthread.h>
#include <stdio.h>

/* The XRay runtime's C entry points (its headers are C++ only). */
int __xray_log_select_mode(const char *mode);
int __xray_log_init_mode(const char *mode, const char *config);
int __xray_patch(void);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);

#define XRAY_LOG_INITIALIZED 2
#define XRAY_LOG_FINALIZED 4
#define XRAY_LOG_FLUSHED 2

static volatile long sink;

__attribute__((noinline, xray_always_instrument, xray_log_args(1)))
void leaf(long i)
{
	sink += i;
}

__attribute__((noinline, xray_always_instrument)) void mid(long i)
{
	for (long j = 0; j < 5; j++)
		leaf(i * 10 + j);
}

__attribute__((noinline, xray_always_instrument)) void top(void)
{
	for (long i = 0; i < 4; i++)
		mid(i);
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

	if (__xray_log_select_mode("xray-fdr") != 0) {
		fprintf(stderr, "fdr_v5: xray-fdr mode not registered\n");
		return 1;
	}
	/* keep every call, however short */
	if (__xray_log_init_mode("xray-fdr", "func_duration_threshold_us=0:buffer_size=16384:"
				 "buffer_max=64") != XRAY_LOG_INITIALIZED) {
		fprintf(stderr, "fdr_v5: cannot initialize xray-fdr\n");
		return 1;
	}
	__xray_patch();
	for (int i = 0; i < 3; i++)
		top();
	if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	if (__xray_log_finalize() != XRAY_LOG_FINALIZED) {
		fprintf(stderr, "fdr_v5: cannot finalize\n");
		return 1;
	}
	if (__xray_log_flushLog() != XRAY_LOG_FLUSHED) {
		fprintf(stderr, "fdr_v5: cannot flush\n");
		return 1;
	}
	return 0;
}
