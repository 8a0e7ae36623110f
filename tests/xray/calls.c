// SPDX-License-Identifier: GPL-2.0
/*
 * A workload whose call counts are known exactly: main calls f 1000 times and
 * each f calls g 100 times.  The XRay unit test uses its symbols and debug
 * information (built with -O0 -g) as the traced image of a model.
 */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) void g(unsigned long i)
{
	sink += i;
}

__attribute__((noinline)) void f(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		g(i);
}

int main(void)
{
	for (int i = 0; i < 1000; i++)
		f(100);
	printf("%lu\n", sink);
	return 0;
}
