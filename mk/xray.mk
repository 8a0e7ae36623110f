# XRay exporter tests: a workload with known call counts (its symbols and
# debug info make the map ELF of a model "as if traced"), and a program
# built with LLVM XRay that writes a version-5 FDR trace with LLVM's runtime.
XRAY_TEST_BINS := $(BUILD)/xray/calls $(BUILD)/xray/fdr_v5

$(BUILD)/xray/calls: tests/xray/calls.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -o $@ $<

$(BUILD)/xray/fdr_v5: tests/xray/fdr_v5.c
	@mkdir -p $(dir $@)
	$(CLANG) -O0 -g -fxray-instrument -fxray-instruction-threshold=1 -o $@ $< -lpthread

UNIT_DEPS += $(XRAY_TEST_BINS)
