# Benchmarks (bench/, README there): collector side by side with perf,
# bpftrace, uftrace and BPF floors.
#
#   make bench             every section below but the soak (BENCH_SOAK=1 adds it)
#   make bench-sampling    sampling cost at 999 and 9999 Hz
#   make bench-dwarf       --call-graph dwarf beside fp and perf --call-graph dwarf
#   make bench-cfi         --call-graph cfi (the unwinder in BPF) beside fp, dwarf,
#                          perf --call-graph dwarf and bpftrace; its tables' cost
#   make bench-tracing     cost per traced call, drain rate, attach time
#   make bench-exporters   MB/s and peak RSS of every writer (10^6 and 10^7)
#   make bench-soak        collector -a RSS minute by minute (10 minutes)
#   make bench-high-rate   -F 10000/50000/100000 -- true beside perf record
#   make bench-offcpu      --off-cpu at ~100 k context switches/s beside an empty
#                          tp_btf/sched_switch program
#   make bench-continuous  collector -a -F 99 --interval 10 -f pprof beside perf
#                          record -a -g -F 99, both under the build loop, for
#                          BENCH_SECONDS (1800): CPU + BPF, RSS per interval
#   make bench-busy        collector -a -F 499 -d BENCH_BUSY_SECONDS (8) under the
#                          build loop beside perf record: truncated stacks, CPU, tables
#   make bench-short       whole cost of 1 s and 10 s collector -p runs beside bpftrace
#   make bench-java-busy   Java frames unnamed with -a under javac and the build loop
#   make bench-java-deep   the JVM walk on a 60-deep Java stack (BENCH_BASE: an older build beside)
#   make bench-otlp-outage the --otlp receiver down BENCH_OUTAGE_SECONDS (600) mid-run
#                          under the build loop: RSS, spool, every interval delivered
#
# BENCH_RUNS=N repeats each measurement N times (default 3); BENCH_SIZES
# lists the exporter model sizes (default "1000000 10000000").
# The sections run one after the other from one recipe: never in parallel.

BENCH       := $(BUILD)/bench
BENCH_RUNS  ?= 3
BENCH_SIZES ?= 1000000 10000000
BENCH_SOAK  ?= 0
BENCH_SECONDS ?= 1800
BENCH_BUSY_SECONDS ?= 8
# frame pointers set up first thing in every function, no tail calls
BENCH_WL_CFLAGS := -g -O2 -Wall -Wextra -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		   -fno-shrink-wrap -fno-optimize-sibling-calls

BENCH_BINS := $(BENCH)/sample-floor $(BENCH)/uprobe-floor $(BENCH)/deep $(BENCH)/deep-nofp \
	      $(BENCH)/hot $(BENCH)/switch-floor $(BENCH)/pingpong \
	      $(BENCH)/hot-pg $(BENCH)/funcs10k $(BENCH)/exporters-bench $(BENCH)/cfi-rows

.PHONY: bench bench-peers bench-sampling bench-dwarf bench-cfi bench-tracing bench-exporters bench-soak bench-python bench-java \
	bench-continuous bench-high-rate bench-bins bench-offcpu bench-busy bench-short bench-java-busy bench-java-deep \
	bench-otlp-outage

bench-peers:
	@./bench/install-peers.sh

# deps first, as make check does: a fresh machine has no protoc-c, no clang
bench-bins: deps
	@$(MAKE) --no-print-directory collector $(BENCH_BINS)

$(BENCH)/%.bpf.o: bench/floor/%.bpf.c vmlinux/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH)/%.skel.h: $(BENCH)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BENCH)/sample-floor: bench/floor/sample_floor.c bench/floor/floor_common.h \
		       $(BENCH)/sample_floor.skel.h
	$(CC) $(CFLAGS) -I$(BENCH) -o $@ $< $(LDLIBS)

$(BENCH)/uprobe-floor: bench/floor/uprobe_floor.c bench/floor/floor_common.h \
		       $(BENCH)/uprobe_floor.skel.h
	$(CC) $(CFLAGS) -I$(BENCH) -o $@ $< $(LDLIBS)

$(BENCH)/switch-floor: bench/floor/switch_floor.c bench/floor/floor_common.h \
		       $(BENCH)/switch_floor.skel.h
	$(CC) $(CFLAGS) -I$(BENCH) -o $@ $< $(LDLIBS)

$(BENCH)/pingpong: bench/workloads/pingpong.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_WL_CFLAGS) -o $@ $< -lpthread

$(BENCH)/deep: bench/workloads/deep.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_WL_CFLAGS) -o $@ $<

# the same chain built the way most code is (no frame pointers), for the
# dwarf call-graph section
$(BENCH)/deep-nofp: bench/workloads/deep.c
	@mkdir -p $(dir $@)
	$(CC) -g -O2 -fomit-frame-pointer -fno-shrink-wrap -o $@ $<

$(BENCH)/hot: bench/workloads/hot.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_WL_CFLAGS) -o $@ $<

# the same, with mcount calls for uftrace (which needs -pg or
# -finstrument-functions to trace a program)
$(BENCH)/hot-pg: bench/workloads/hot.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_WL_CFLAGS) -pg -o $@ $<

$(BENCH)/funcs10k.c: bench/workloads/gen-funcs.sh
	@mkdir -p $(dir $@)
	./bench/workloads/gen-funcs.sh 10000 > $@.tmp && mv $@.tmp $@

$(BENCH)/funcs10k: $(BENCH)/funcs10k.c
	$(CC) -g -O1 -fno-omit-frame-pointer -o $@ $<

$(BENCH)/exporters-bench: bench/exporters.c $(BUILD)/libcollector.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libcollector.a $(LDLIBS)

# unwind tables image by image: rows before and after compaction, build
# time through libdw row by row and interpreted (bench/cfi_rows.c)
$(BENCH)/cfi-rows: bench/cfi_rows.c $(BUILD)/libcollector.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libcollector.a $(LDLIBS)

BENCH_ENV := BENCH_RUNS='$(BENCH_RUNS)' BENCH_SIZES='$(BENCH_SIZES)' BENCH_BUILD='$(BENCH)'

bench: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) python3 bench/bench.py sampling dwarf cfi tracing exporters high-rate \
		$(if $(filter 1,$(BENCH_SOAK)),soak)

bench-sampling: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) python3 bench/bench.py sampling

bench-dwarf: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) python3 bench/bench.py dwarf

bench-cfi: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) python3 bench/bench.py cfi

bench-tracing: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) python3 bench/bench.py tracing

bench-exporters: bench-bins
	@env $(BENCH_ENV) python3 bench/bench.py exporters

bench-offcpu: bench-bins
	@$(SUDO) env $(BENCH_ENV) python3 bench/bench.py offcpu

bench-soak: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) python3 bench/bench.py soak

bench-continuous: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) BENCH_SECONDS='$(BENCH_SECONDS)' \
		python3 bench/bench.py continuous

bench-busy: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) BENCH_BUSY_SECONDS='$(BENCH_BUSY_SECONDS)' \
		python3 bench/bench.py busy

bench-short: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) BENCH_SHORT_BASE='$(BENCH_SHORT_BASE)' python3 bench/bench.py short

bench-otlp-outage: bench-peers bench-bins
	@$(SUDO) env $(BENCH_ENV) BENCH_OUTAGE_SECONDS='$(or $(BENCH_OUTAGE_SECONDS),600)' \
		python3 bench/bench.py otlp-outage

bench-high-rate: bench-peers collector
	@$(SUDO) env $(BENCH_ENV) python3 bench/bench.py high-rate

# The Python walk's cost beside native frames only (bench/python.sh).
bench-python: collector
	@$(SUDO) ./bench/python.sh $(BENCH_RUNS)

# Java frames named with -a on a busy machine (javac and a build loop),
# BENCH_JAVA_BUSY: other collectors run side by side (an older build).
bench-java-busy: collector
	@$(SUDO) ./bench/java_busy.sh $(BENCH_RUNS) ./collector $(BENCH_JAVA_BUSY)

# The JVM walk on a deep Java stack (bench/java_deep.sh); BENCH_BASE: an
# older build run back to back with this one.
$(BENCH)/java/DeepJ.class: bench/workloads/DeepJ.java
	@mkdir -p $(dir $@)
	$(JAVAC) --release 17 -Xlint:all -d $(dir $@) $<

bench-java-deep: collector $(BENCH)/java/DeepJ.class
	@$(SUDO) ./bench/java_deep.sh $(BENCH_RUNS) $(BENCH_BASE)

# The Java walk's cost beside a native stack of the same depth (bench/java.sh);
# BENCH_JAVA: another JDK's java ("build/jdks/run.sh 25 java").
bench-java: collector $(BENCH)/deep $(BUILD)/workloads/java/JavaShares.class
	@$(SUDO) ./bench/java.sh $(BENCH_RUNS) "$(or $(BENCH_JAVA),java)"
