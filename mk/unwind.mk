# Test programs for the CFI unwinder (tests/unwind/), all without frame
# pointers:
#   chain-eh      .eh_frame only, no debug info (plain -O2, as distributions build)
#   chain-g       .eh_frame and DWARF debug info (-g)
#   chain-debug   .debug_frame only: no .eh_frame for the program's own code
#   chain-split   chain-debug with its debug info split off into
#                 chain-split.debug (found by .gnu_debuglink): its CFI is there
UNWIND_DIR := $(BUILD)/unwind
UNWIND_CFLAGS := -D_GNU_SOURCE -O2 -fomit-frame-pointer -Wall -Wextra -Itests/unwind

$(UNWIND_DIR)/chain-eh: tests/unwind/chain.c tests/unwind/capture.h
	@mkdir -p $(dir $@)
	$(CC) $(UNWIND_CFLAGS) -o $@ $< -pthread

$(UNWIND_DIR)/chain-g: tests/unwind/chain.c tests/unwind/capture.h
	@mkdir -p $(dir $@)
	$(CC) $(UNWIND_CFLAGS) -g -o $@ $< -pthread

$(UNWIND_DIR)/chain-debug: tests/unwind/chain.c tests/unwind/capture.h
	@mkdir -p $(dir $@)
	$(CC) $(UNWIND_CFLAGS) -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o $@ $< -pthread

# objcopy writes the debuglink's CRC from the debug file it is given
$(UNWIND_DIR)/chain-split: $(UNWIND_DIR)/chain-debug
	objcopy --only-keep-debug $< $@.debug
	objcopy --strip-debug --add-gnu-debuglink=$@.debug $< $@

UNWIND_PROGS := $(UNWIND_DIR)/chain-eh $(UNWIND_DIR)/chain-g $(UNWIND_DIR)/chain-debug \
		$(UNWIND_DIR)/chain-split
UNIT_DEPS += $(UNWIND_PROGS)
# so that `make build/tests/test_unwind` alone builds them too
$(BUILD)/tests/test_unwind $(BUILD)/tests/test_unwind_sampled $(BUILD)/tests/test_cfi_table: $(UNWIND_PROGS) \
		tests/unwind/capture.h tests/unit/unwind_run.h

# The sampled tests without sanitizers, for the unwinding cost a real build
# has: make build/unwind/test_unwind_sampled-optimized &&
# ./build/unwind/test_unwind_sampled-optimized
$(UNWIND_DIR)/test_unwind_sampled-optimized: tests/unit/test_unwind_sampled.c \
		tests/unit/unwind_run.h tests/unwind/capture.h $(BUILD)/libcollector.a $(UNWIND_PROGS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(BUILD)/libcollector.a $(LDLIBS) -lcmocka
