// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind tables of the BPF unwinder (unwind/cfi_table.h), image by
 * image: rows and bytes before and after compaction, and the build time
 * with every FDE replayed row by row through libdw (the builder before
 * the interpreter) beside the interpreter's one pass, best of BENCH_RUNS.
 *
 *   make build/bench/cfi-rows && build/bench/cfi-rows /lib/x86_64-linux-gnu/libc.so.6 \
 *       /usr/bin/python3.11 /usr/bin/node /usr/lib/gcc/x86_64-linux-gnu/12/cc1
 *
 * Prints one line per image and a total; an image without an executable
 * segment or that does not open is said so and skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "unwind/cfi_table.h"

struct figures {
	uint64_t rows, bytes, fdes, fdes_libdw;
	double seconds;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The tables of every executable segment of f, built with flags: the
 * fastest of runs builds. */
static int build_all(const struct elf_file *f, unsigned int flags, int runs, struct figures *out)
{
	out->seconds = 1e9;
	for (int r = 0; r < runs; r++) {
		struct figures one = { 0 };
		double t0 = now();

		for (size_t i = 0; i < f->n_loads; i++) {
			struct cfi_table t;

			if (!(f->loads[i].flags & PF_X))
				continue;
			if (cfi_table_build_flags(&t, f, &f->loads[i], NULL, flags) != 0)
				return -1;
			one.rows += t.n_rows;
			one.bytes += t.n_rows * sizeof(*t.rows) + (t.n_pages + 1) * sizeof(*t.pages);
			one.fdes += t.n_fdes;
			one.fdes_libdw += t.n_fdes_libdw;
			cfi_table_free(&t);
		}
		one.seconds = now() - t0;
		if (one.seconds < out->seconds)
			*out = one;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("BENCH_RUNS");
	int runs = env && atoi(env) > 0 ? atoi(env) : 3;
	struct figures total[3] = { 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: %s ELF-FILE...\n", argv[0]);
		return 2;
	}
	printf("%-44s %8s %9s %9s %7s %10s %10s %9s %9s\n", "image", "FDEs", "rows", "compacted",
	       "saved", "bytes", "compacted", "libdw s", "interp s");
	for (int a = 1; a < argc; a++) {
		struct figures fig[3];
		struct elf_file f;

		if (elf_file_open(&f, argv[a]) != 0) {
			printf("%-44s does not open as an ELF file\n", argv[a]);
			continue;
		}
		/* [0] libdw row by row, uncompacted; [1] interpreter,
		 * uncompacted; [2] interpreter, compacted (the default) */
		if (build_all(&f, CFI_TABLE_LIBDW_ROWS | CFI_TABLE_KEEP_PADDING, runs, &fig[0]) ||
		    build_all(&f, CFI_TABLE_KEEP_PADDING, runs, &fig[1]) ||
		    build_all(&f, 0, runs, &fig[2])) {
			printf("%-44s has no table (no executable segment?)\n", argv[a]);
			elf_file_close(&f);
			continue;
		}
		if (fig[0].rows != fig[1].rows)
			printf("%-44s rows differ: %lu through libdw, %lu interpreted\n", argv[a],
			       (unsigned long)fig[0].rows, (unsigned long)fig[1].rows);
		printf("%-44s %8lu %9lu %9lu %6.1f%% %10lu %10lu %9.3f %9.3f\n", argv[a],
		       (unsigned long)fig[2].fdes, (unsigned long)fig[1].rows,
		       (unsigned long)fig[2].rows,
		       fig[1].rows ? 100.0 * (fig[1].rows - fig[2].rows) / fig[1].rows : 0.0,
		       (unsigned long)fig[1].bytes, (unsigned long)fig[2].bytes, fig[0].seconds,
		       fig[2].seconds);
		for (int i = 0; i < 3; i++) {
			total[i].rows += fig[i].rows;
			total[i].bytes += fig[i].bytes;
			total[i].seconds += fig[i].seconds;
		}
		elf_file_close(&f);
	}
	printf("%-44s %8s %9lu %9lu %6.1f%% %10lu %10lu %9.3f %9.3f\n", "total", "",
	       (unsigned long)total[1].rows, (unsigned long)total[2].rows,
	       total[1].rows ? 100.0 * (total[1].rows - total[2].rows) / total[1].rows : 0.0,
	       (unsigned long)total[1].bytes, (unsigned long)total[2].bytes, total[0].seconds,
	       total[2].seconds);
	return 0;
}
