# libFuzzer harnesses (tests/fuzz/): one per file reader, one for the ELF
# and DWARF side of the symbolizer, one for the /proc/PID/maps parser.
#
#   make fuzz          run each harness FUZZ_SECONDS (default 60) over its
#                      committed corpus; new inputs go to build/fuzz/corpus-NAME/
#   make fuzz-smoke    every harness for FUZZ_SMOKE_SECONDS (default 1); writes
#                      build/fuzz-smoke-results and build/fuzz-results
#                      (part of `make check`)
#   make fuzz-update   merge build/fuzz/corpus-NAME/ into tests/fuzz/corpus/NAME/
#                      (libFuzzer -merge=1: only inputs that add coverage)
#   make fuzz-seeds    regenerate the writer-made seeds (needs root: runs ./collector)
#
# FUZZ_HARNESSES=... limits any of them to some harnesses.  Crashes are saved
# as build/fuzz/artifacts/NAME-crash-*; replay one with
# `build/fuzz/fuzz-NAME FILE`.
#
# The sources each harness needs are compiled again with clang and the
# fuzzer's instrumentation into build/fuzz/obj/ (the gcc-built archives
# cannot take libFuzzer's coverage callbacks).

FUZZ_CC        ?= clang
FUZZ_DIR       := $(BUILD)/fuzz
FUZZ_SECONDS   ?= 60
FUZZ_SMOKE_SECONDS ?= 1
FUZZ_CFLAGS    := -g -O1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer \
		  -fno-sanitize-recover=undefined -std=gnu11 -Wall -Wextra -D_GNU_SOURCE \
		  -DCOLLECTOR_VERSION='"$(VERSION)"' -I. -I$(BUILD)/gen -I$(BUILD)/gen/formats/otlp/proto -Itests/fuzz
FUZZ_LDLIBS    := -lelf -ldw -lz -lprotobuf-c -ljson-c -liberty -ldebuginfod

FUZZ_ALL       := dcpi sampler callgrind xray hpctoolkit-meta hpctoolkit-profile \
		  hpctoolkit-cct hpctoolkit-trace elf procmaps pprof otlp folded flamegraph speedscope \
		  python
FUZZ_HARNESSES ?= $(FUZZ_ALL)
FUZZ_BINS      := $(patsubst %,$(FUZZ_DIR)/fuzz-%,$(FUZZ_HARNESSES))

# Sources under test, per harness.
FUZZ_SRCS_dcpi      := formats/dcpi/dcpi_reader.c
FUZZ_SRCS_sampler   := formats/sampler/sampler_reader.c
FUZZ_SRCS_callgrind := formats/callgrind/callgrind_reader.c formats/callgrind/callgrind_tokens.c \
		       formats/callgrind/callgrind_dump.c
FUZZ_SRCS_xray      := formats/xray/xray_reader.c
FUZZ_SRCS_hpctoolkit := formats/hpctoolkit/hpctoolkit_reader.c formats/hpctoolkit/hpctoolkit_read_meta.c \
			formats/hpctoolkit/hpctoolkit_read_data.c formats/hpctoolkit/hpctoolkit_dump.c
FUZZ_SRCS_elf       := symbols/symbolize.c symbols/debug_files.c symbols/debug_copies.c symbols/dwarf_lines.c \
		       symbols/symbol_match.c symbols/elfinfo.c symbols/elf_symbols.c \
		       symbols/kallsyms.c symbols/demangle.c \
		       symbols/fde_functions.c symbols/cfi_entries.c symbols/debuginfod.c \
		       symbols/location_cache.c lib/fdio.c lib/safedir.c lib/procmaps.c lib/proc.c lib/userfs.c model/model.c model/tasks.c model/counters.c \
		       model/events.c runtimes/python/python_trace.c lib/path.c
FUZZ_SRCS_procmaps  := lib/procmaps.c lib/proc.c
FUZZ_SRCS_python    := runtimes/python/python_code.c runtimes/python/python_layouts.c lib/procmem.c
# (the protobuf code protoc-c generates: mk/gen.mk)
FUZZ_SRCS_pprof     := formats/pprof/pprof_reader.c \
		       $(BUILD)/gen/formats/pprof/profile.pb-c.c
FUZZ_OTLP_GEN       := $(BUILD)/gen/formats/otlp/proto/opentelemetry/proto
FUZZ_SRCS_otlp      := formats/otlp/otlp_reader.c \
		       $(FUZZ_OTLP_GEN)/collector/profiles/v1development/profiles_service.pb-c.c \
		       $(FUZZ_OTLP_GEN)/profiles/v1development/profiles.pb-c.c \
		       $(FUZZ_OTLP_GEN)/resource/v1/resource.pb-c.c $(FUZZ_OTLP_GEN)/common/v1/common.pb-c.c
FUZZ_SRCS_folded    := formats/folded/folded_reader.c
FUZZ_SRCS_flamegraph := formats/flamegraph/flamegraph_reader.c formats/jsonin.c
FUZZ_SRCS_speedscope := formats/speedscope/speedscope_reader.c formats/jsonin.c
# (the readers' shared input files and errors: linked into every harness)
FUZZ_SRCS_common    := formats/infile.c
fuzz_objs = $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRCS_$(1)) $(FUZZ_SRCS_common))

# The format tag (bytes 10-13 of the file) of each HPCToolkit harness.
FUZZ_HK_TAG_meta    := meta
FUZZ_HK_TAG_profile := prof
FUZZ_HK_TAG_cct     := ctxt
FUZZ_HK_TAG_trace   := trce

.PHONY: fuzz fuzz-smoke fuzz-update fuzz-seeds fuzz-build

$(FUZZ_DIR)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

# One HPCToolkit harness per database file, told apart by -DHKR_TAG.
define fuzz_hk_rule
$(FUZZ_DIR)/fuzz-hpctoolkit-$(1): tests/fuzz/fuzz_hpctoolkit.c tests/fuzz/fuzz_common.h \
		$(call fuzz_objs,hpctoolkit)
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) -DHKR_TAG='"$(FUZZ_HK_TAG_$(1))"' -o $$@ $$< \
		$(call fuzz_objs,hpctoolkit) $$(FUZZ_LDLIBS)
endef
$(foreach f,meta profile cct trace,$(eval $(call fuzz_hk_rule,$(f))))

# The other harnesses: fuzz-NAME from tests/fuzz/fuzz_NAME.c and its sources.
define fuzz_rule
$(FUZZ_DIR)/fuzz-$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/fuzz_common.h $(call fuzz_objs,$(1))
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) -o $$@ $$< $(call fuzz_objs,$(1)) $$(FUZZ_LDLIBS)
endef
$(foreach h,dcpi sampler callgrind xray elf procmaps pprof otlp folded flamegraph speedscope python,\
	$(eval $(call fuzz_rule,$(h))))

# the generated protobuf code, before what includes it
$(call fuzz_objs,pprof): $(BUILD)/gen/formats/pprof/profile.pb-c.h
$(call fuzz_objs,otlp): $(patsubst %.c,%.h,$(filter $(BUILD)/%,$(FUZZ_SRCS_otlp)))

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@./tests/fuzz/run-fuzz.sh fuzz $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

fuzz-smoke: $(FUZZ_BINS)
	@./tests/fuzz/run-fuzz.sh smoke $(FUZZ_SMOKE_SECONDS) $(FUZZ_HARNESSES)

fuzz-update: $(FUZZ_BINS)
	@./tests/fuzz/run-fuzz.sh merge 0 $(FUZZ_HARNESSES)

fuzz-seeds: collector $(BUILD)/workloads/split $(BUILD)/xray/fdr_v5
	@$(SUDO) ./tests/fuzz/make-seeds.sh

CHECK_SUITES += fuzz-smoke
CHECK_BUILD += $(FUZZ_BINS)
