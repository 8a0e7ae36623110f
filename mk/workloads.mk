# Workloads for the integration tests and the demo (tests/workloads/).
WL := $(BUILD)/workloads
WL_CFLAGS := -g -O2 -Wall -Wextra -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer

$(WL)/split: tests/workloads/split.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -o $@ $< -lpthread

# the same, built the way most code is: no frame pointers
$(WL)/split-nofp: tests/workloads/split.c
	@mkdir -p $(dir $@)
	$(CC) -g -O2 -fomit-frame-pointer -o $@ $< -lpthread

$(WL)/demo: $(WL)/split
	cp $< $@

WORKLOADS := $(WL)/split $(WL)/split-nofp $(WL)/demo
INTEGRATION_DEPS += $(WORKLOADS)
DEMO_DEPS += $(WL)/demo
