// SPDX-License-Identifier: GPL-2.0
/*
 * The library half of cfi_chains (built -O2 -fomit-frame-pointer -fPIC):
 * lib_a -> lib_b -> lib_c, exported, so that each call goes through the
 * library's PLT (default visibility: calls may be interposed), and lib_c
 * spins.  Also dlopen'ed by cfi_chains' "dlopen" mode.
 */
#define NOINLINE __attribute__((noinline))

static volatile unsigned long lib_sink;

NOINLINE void lib_c(void)
{
	unsigned long x = lib_sink;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	lib_sink = x;
}

NOINLINE void lib_b(void)
{
	lib_c();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void lib_a(void)
{
	lib_b();
	__asm__ volatile("" ::: "memory");
}
