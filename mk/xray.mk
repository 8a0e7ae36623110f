# Programs the XRay unit tests need (tests/xray/).
XRAY_BUILD := $(BUILD)/xray

# symbols and source lines for llvm-xray's reports: -O0 keeps every call
$(XRAY_BUILD)/calls: tests/xray/calls.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -o $@ $<

# LLVM's own XRay runtime writes a version-5 FDR trace
$(XRAY_BUILD)/fdr_v5: tests/xray/fdr_v5.c
	@mkdir -p $(dir $@)
	$(CLANG) -O1 -g -fxray-instrument -fxray-instruction-threshold=1 -o $@ $< -lpthread

UNIT_DEPS += $(XRAY_BUILD)/calls $(XRAY_BUILD)/fdr_v5
