// SPDX-License-Identifier: GPL-2.0
/*
 * A call chain whose frames hold 1 KiB of locals each:
 *   main -> frame_00 -> frame_01 -> ... -> frame_23 -> spin
 * 24 KiB of stack between the hot loop and main, far more than the 4 KiB
 * the sampler copies for its frame-pointer walk: the outer frames are read
 * one by one from the target.  Built with frame pointers.
 * Usage: bigframes [SECONDS of CPU time, default 1]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile unsigned long sink;

NOINLINE static void keep(unsigned long x)
{
	sink += x;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static void spin(double seconds)
{
	double end = cpu_seconds() + seconds;
	unsigned long x = sink;

	while (cpu_seconds() < end) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		keep(x);
	}
}

/* Each level fills its buffer and reads it after the call, so the buffer
 * (and the frame) cannot be optimised away. */
#define LEVEL(name, next)                                              \
	NOINLINE static unsigned long name(double seconds)             \
	{                                                              \
		volatile unsigned char buf[1024];                      \
		unsigned long r;                                       \
								       \
		memset((void *)buf, (int)(seconds * 7), sizeof(buf));  \
		next;                                                  \
		r = buf[0] + buf[sizeof(buf) - 1];                     \
		return r;                                              \
	}

LEVEL(frame_23, spin(seconds))
LEVEL(frame_22, frame_23(seconds))
LEVEL(frame_21, frame_22(seconds))
LEVEL(frame_20, frame_21(seconds))
LEVEL(frame_19, frame_20(seconds))
LEVEL(frame_18, frame_19(seconds))
LEVEL(frame_17, frame_18(seconds))
LEVEL(frame_16, frame_17(seconds))
LEVEL(frame_15, frame_16(seconds))
LEVEL(frame_14, frame_15(seconds))
LEVEL(frame_13, frame_14(seconds))
LEVEL(frame_12, frame_13(seconds))
LEVEL(frame_11, frame_12(seconds))
LEVEL(frame_10, frame_11(seconds))
LEVEL(frame_09, frame_10(seconds))
LEVEL(frame_08, frame_09(seconds))
LEVEL(frame_07, frame_08(seconds))
LEVEL(frame_06, frame_07(seconds))
LEVEL(frame_05, frame_06(seconds))
LEVEL(frame_04, frame_05(seconds))
LEVEL(frame_03, frame_04(seconds))
LEVEL(frame_02, frame_03(seconds))
LEVEL(frame_01, frame_02(seconds))
LEVEL(frame_00, frame_01(seconds))

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;

	printf("bigframes: %lu\n", frame_00(seconds));
	return 0;
}
