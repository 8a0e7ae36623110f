/* SPDX-License-Identifier: GPL-2.0 */
/* The one 64-bit mixer the hash tables share. */
#ifndef COLLECTOR_HASHMIX_H
#define COLLECTOR_HASHMIX_H

#include <stdint.h>

/* splitmix64's finalizer: every input bit moves every output bit, which
 * pids, addresses and small ids (far from random) need before masking. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif /* COLLECTOR_HASHMIX_H */
