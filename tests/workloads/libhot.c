// SPDX-License-Identifier: GPL-2.0
/* The hot code of the pie_lib workload, in a shared library. */
static volatile unsigned long lib_sink;

__attribute__((noinline)) void lib_keep(unsigned long x)
{
	lib_sink += x;
}

__attribute__((noinline)) void lib_hot_function(unsigned long n)
{
	unsigned long x = lib_sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	lib_keep(x);
	__asm__ volatile("" ::: "memory");
}
