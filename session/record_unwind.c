// SPDX-License-Identifier: GPL-2.0
/* --call-graph cfi's part of a run (session/record_unwind.h). */
#include "session/record_unwind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decode/kernel_counters.h"
#include "decode/tracker.h"
#include "lib/maps_store.h"
#include "lib/mmap_records.h"
#include "loader/unwind_tables.h"
#include "unwind/table_cache.h"
#include "unwind/table_service.h"

int record_unwind_open(struct record_unwind *ru, struct bpf_session *bpf, uint32_t max_rows,
		       struct tracker *t)
{
	struct unwind_maps maps;
	int err = unwind_tables_open(&ru->tables, bpf, max_rows);

	if (err) {
		fprintf(stderr, "collector: cannot map the unwind tables: %s\n", strerror(-err));
		return err;
	}
	unwind_tables_maps(ru->tables, &maps);
	ru->service = unwind_service_new(&maps, table_cache_open());
	if (!ru->service) {
		fprintf(stderr, "collector: out of memory\n");
		return -ENOMEM;
	}
	/* the service's readings of maps, for processes gone before their
	 * stacks are decoded */
	if ((ru->shared_maps = maps_store_new())) {
		unwind_service_share_maps(ru->service, ru->shared_maps);
		tracker_share_maps(t, ru->shared_maps);
	}
	return 0;
}

void record_unwind_follow_mmaps(struct record_unwind *ru, struct tracker *t)
{
	int err;

	if (!ru->shared_maps)
		return;
	err = mmap_records_open(ru->shared_maps, &ru->records);
	if (err)
		fprintf(stderr, "collector: cannot open the kernel's mmap records (%s); "
			"reading each process's maps from /proc instead\n", strerror(-err));
	else
		tracker_defer_maps(t);
}

void record_unwind_refresh(struct record_unwind *ru)
{
	maps_store_refresh(ru->shared_maps);
}

void record_unwind_finish(struct record_unwind *ru, struct model *m, bool verbose)
{
	struct unwind_service_stats st;
	struct mmap_records_counts rc;
	uint64_t maps_read, maps_reused, maps_followed;

	if (!ru->service)
		return;
	unwind_service_stop(ru->service);
	unwind_service_get_stats(ru->service, &st);
	maps_store_counts(ru->shared_maps, &maps_read, &maps_reused, &maps_followed);
	mmap_records_counts(ru->records, &rc);
	/* the tables' figures in the summary with -v only */
	if (verbose)
		decode_cfi_tables(m, &(struct decode_cfi_figures){
			.images = st.images, .rows = st.rows, .index_entries = st.index_entries,
			.build_ns = st.build_ns,
			.map_bytes = st.map_bytes, .loader_bytes = st.loader_bytes,
			.images_evicted = st.images_evicted, .rows_evicted = st.rows_evicted,
			.images_no_space = st.images_no_space, .debug_files = st.debug_files,
			.built = st.images_built, .cache_hits = st.cache_hits,
			.cache_refused = st.cache_refused,
			.served_exec = st.served_exec, .served_first = st.served_first,
			.maps_read = maps_read, .maps_reused = maps_reused,
			.maps_followed = maps_followed, .mmap_records = rc.mmaps,
			.mmap_records_lost = rc.lost,
			.open_failed = st.open_failed });
}

void record_unwind_close(struct record_unwind *ru)
{
	unwind_service_free(ru->service);
	unwind_tables_close(ru->tables);
	mmap_records_close(ru->records);
	maps_store_free(ru->shared_maps);
	*ru = (struct record_unwind){ 0 };
}
