// SPDX-License-Identifier: GPL-2.0
/*
 * The program the XRay unit tests describe: main calls f, f calls g.  Its
 * symbols and source lines name the functions in llvm-xray's reports; the
 * traces are written by the tests from models.
 */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) void g(unsigned long i)
{
	sink += i;
}

__attribute__((noinline)) void f(void)
{
	for (unsigned long i = 0; i < 100; i++)
		g(i);
}

int main(void)
{
	for (int i = 0; i < 1000; i++)
		f();
	printf("%lu\n", sink);
	return 0;
}
