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

$(WL)/forkexec: tests/workloads/forkexec.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -o $@ $<

$(WL)/calls: tests/workloads/calls.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -o $@ $<

WORKLOADS := $(WL)/split $(WL)/split-nofp $(WL)/demo $(WL)/forkexec $(WL)/calls
INTEGRATION_DEPS += $(WORKLOADS)
DEMO_DEPS += $(WL)/demo
