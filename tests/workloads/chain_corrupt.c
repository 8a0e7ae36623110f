// SPDX-License-Identifier: GPL-2.0
/*
 * The native half of ChainCorrupt.java: each method overwrites one slot of
 * the interpreter frame that called it (the JVM runs -Xint: a native
 * method is called from the template interpreter's native entry, whose
 * frame rbp points to) with an address no process maps, runs until STOP
 * exists, and puts the slot back before it returns.  x86-64 HotSpot's
 * interpreter frame (frame_x86.hpp, the same in JDK 17 to 25): at fp the
 * caller's saved rbp (the link), at fp - 3 words the Method*.
 */
#include <errno.h>
#include <jni.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define LINK_SLOT 0
#define METHOD_SLOT (-3)
#define UNMAPPED ((uintptr_t)0x10)
#define MAX_MS 60000

static atomic_int sleeper_corrupted;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The hot loop the profile finds on top of the corrupted frame. */
__attribute__((noinline)) long chain_spin_work(long turns)
{
	volatile unsigned long x = (unsigned long)turns;

	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return (long)(x & 1) + turns + 1;
}

/* "pid PID" into path, whole, by a rename. */
static int write_ready(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "pid %d\n", (int)getpid());
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

JNIEXPORT jlong JNICALL Java_ChainCorrupt_spinCorrupted(JNIEnv *env, jclass cls, jstring ready,
							jstring stop)
{
	/* the interpreter frame's fp: the rbp this function's prologue pushed */
	uintptr_t *fp = (uintptr_t *)((uintptr_t *)__builtin_frame_address(0))[0];
	const char *ready_path = (*env)->GetStringUTFChars(env, ready, NULL);
	const char *stop_path = (*env)->GetStringUTFChars(env, stop, NULL);
	long start = now_ms(), turns = -1;
	uintptr_t saved;

	(void)cls;
	if (!ready_path || !stop_path)
		goto out;
	while (!atomic_load(&sleeper_corrupted) && now_ms() - start < MAX_MS)
		usleep(1000);
	saved = fp[METHOD_SLOT];
	fp[METHOD_SLOT] = UNMAPPED;
	if (atomic_load(&sleeper_corrupted) && write_ready(ready_path) == 0) {
		turns = 0;
		while (!exists(stop_path) && now_ms() - start < MAX_MS)
			turns = chain_spin_work(turns);
	}
	fp[METHOD_SLOT] = saved;
out:
	if (ready_path)
		(*env)->ReleaseStringUTFChars(env, ready, ready_path);
	if (stop_path)
		(*env)->ReleaseStringUTFChars(env, stop, stop_path);
	return turns;
}

JNIEXPORT void JNICALL Java_ChainCorrupt_sleepCorrupted(JNIEnv *env, jclass cls, jstring stop)
{
	uintptr_t *fp = (uintptr_t *)((uintptr_t *)__builtin_frame_address(0))[0];
	const char *stop_path = (*env)->GetStringUTFChars(env, stop, NULL);
	struct timespec nap = { 0, 50 * 1000000L };
	long start = now_ms();
	uintptr_t saved;

	(void)cls;
	if (!stop_path)
		return;
	saved = fp[LINK_SLOT];
	fp[LINK_SLOT] = UNMAPPED;
	atomic_store(&sleeper_corrupted, 1);
	while (!exists(stop_path) && now_ms() - start < MAX_MS)
		while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
			;
	fp[LINK_SLOT] = saved;
	(*env)->ReleaseStringUTFChars(env, stop, stop_path);
}
