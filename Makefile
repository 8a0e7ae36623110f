# collector: build, test and demo.
#
#   make          build ./collector
#   make demo     install dependencies, build, profile the demo workload
#   make check    install dependencies, build, run every test
#
# Privileged steps (installing packages, loading BPF) run through sudo only
# when make itself is not running as root.

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
BUILD    := build
SUDO     := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

VERSION  := 0.1.0
CFLAGS   ?= -O2 -g
# Includes are spelled with their folder ("model/model.h") from the top of
# the tree; `make layering` checks that each folder includes only the
# folders below it (scripts/check-layering.sh).
CFLAGS   += -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -DCOLLECTOR_VERSION='"$(VERSION)"' -I. \
	    -MMD -MP
LDLIBS   := -lbpf -lelf -ldw -lz -lpthread -lm -liberty -ldebuginfod -lcurl
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

ARCH     := x86
BPF_CFLAGS := -target bpf -g -O2 -D__TARGET_ARCH_$(ARCH) -Wall -Ivmlinux \
	      -I/usr/include/$(shell $(CC) -print-multiarch)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS    := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

# The layers, lowest first: lib, model, symbols, unwind, formats, transport,
# runtimes, decode, loader, session, cli.  Only loader/ sees libbpf and the
# skeletons.
LAYERS    := lib model symbols unwind formats transport runtimes decode loader session cli
SRCS      := $(foreach d,$(LAYERS),$(wildcard $(d)/*.c $(d)/*/*.c))
LIB_SRCS  := $(filter-out cli/main.c,$(SRCS))
LIB_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
SAN_OBJS  := $(patsubst %.c,$(BUILD)/san/%.o,$(LIB_SRCS))
HEADERS   := $(foreach d,$(LAYERS) bpf,$(wildcard $(d)/*.h $(d)/*/*.h))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
# The longest binaries first: run-unit.sh starts them in this order, as
# many at once as there are CPUs, and one started last alone sets the
# suite's end (bench/README.md, "CI's time").
UNIT_FIRST := $(patsubst %,$(BUILD)/tests/%,test_unwind_sampled test_callgrind_traced test_cfi_table)
UNIT_BINS := $(UNIT_FIRST) \
	     $(filter-out $(UNIT_FIRST),$(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS)))

.PHONY: all deps demo check unit integration integration-san layering print-ldlibs clean
.DEFAULT_GOAL := all

all: collector

deps:
	@./scripts/install-deps.sh

# Generated from the running kernel's BTF, not committed.
vmlinux/vmlinux.h:
	@mkdir -p vmlinux
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c vmlinux/vmlinux.h $(wildcard bpf/*.h) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# trace_python.bpf.h takes ids with an atomic fetch-and-add (BPF v3)
$(BUILD)/trace.bpf.o: BPF_CFLAGS += -mcpu=v3

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD):
	mkdir -p $@

# Header dependencies come from the compiler (-MMD); only the loader's
# objects see the skeletons, so only they are rebuilt when a BPF program
# changes.
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -c $< -o $@

LOADER_OBJS := $(filter $(BUILD)/obj/loader/% $(BUILD)/san/loader/%,$(LIB_OBJS) $(SAN_OBJS))
$(LOADER_OBJS): CFLAGS += -I$(BUILD)
$(LOADER_OBJS): $(SKELS)

-include $(LIB_OBJS:.o=.d) $(SAN_OBJS:.o=.d) $(BUILD)/obj/cli/main.d $(BUILD)/san/cli/main.d

$(BUILD)/libcollector.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libcollector-san.a: $(SAN_OBJS)
	rm -f $@ && ar rcs $@ $^

collector: $(BUILD)/obj/cli/main.o $(BUILD)/libcollector.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The same collector with AddressSanitizer and UBSan, for the integration
# suite's second pass.
$(BUILD)/collector-san: $(BUILD)/san/cli/main.o $(BUILD)/libcollector-san.a
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $^ $(LDLIBS)

# The libraries the collector links, for tools that link its library
# (tests/compare/compare-outputs.sh).
print-ldlibs:
	@echo $(LDLIBS)

# Fails when a file includes from a folder above its own, or when anything
# outside loader/ includes libbpf or a skeleton.
layering:
	@./tests/run-layering.sh

# Unit tests (cmocka) are built with AddressSanitizer and UBSan.
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libcollector-san.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -Itests/unit -o $@ $< $(BUILD)/libcollector-san.a \
		$(LDLIBS) -lcmocka

-include $(patsubst %,%.d,$(UNIT_BINS))

# Suites `make check` runs, in order; mk/ fragments may add their own.
CHECK_SUITES := layering unit integration integration-san
# Everything the suites run is built first, on every core (-j: 3 minutes
# less of a fresh clone's check on 2 cores); the suites then run their
# tests one at a time, as timing and shares need.  mk/ fragments add theirs.
CHECK_BUILD = all $(UNIT_BINS) $(UNIT_DEPS) $(BUILD)/collector-san $(INTEGRATION_DEPS)

# Extra rules (test ELF files, workloads, fuzzers, benchmarks) live in mk/.
include $(wildcard mk/*.mk)

unit: $(UNIT_BINS) $(UNIT_DEPS)
	@./tests/run-unit.sh $(UNIT_BINS)

integration: collector $(INTEGRATION_DEPS)
	@$(SUDO) ./tests/run-integration.sh

# The integration suite again, on the ASan+UBSan build of the collector,
# with its leak suppressions (tests/integration/lsan.supp: libdw's own).
integration-san: $(BUILD)/collector-san $(INTEGRATION_DEPS)
	@$(SUDO) env COLLECTOR=$(CURDIR)/$(BUILD)/collector-san SUITE=integration-san \
		ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/integration/lsan.supp \
		./tests/run-integration.sh

# Every suite runs even when an earlier one fails; the last line adds up.
check: deps
	@rm -f $(patsubst %,$(BUILD)/%-results,$(CHECK_SUITES))
	-@$(MAKE) --no-print-directory -j$(shell nproc) $(CHECK_BUILD)
	@$(MAKE) --no-print-directory all
	-@for suite in $(CHECK_SUITES); do $(MAKE) --no-print-directory $$suite; done
	@./tests/summarize.sh $(CHECK_SUITES)

demo: deps
	@$(MAKE) --no-print-directory all $(DEMO_DEPS)
	@rm -rf demo-out
	$(SUDO) ./collector -o demo-out --trace './$(BUILD)/workloads/demo:chain_*' \
		-- ./$(BUILD)/workloads/demo 2
	@echo "demo: every format is in demo-out/; read them with ./collector dump demo-out"

clean:
	rm -rf $(BUILD) collector demo-out
