# HotSpot stack walking's development probe (tests/jvm/hotspot_probe.c):
# reads a live JVM's layout, stops its threads one at a time and walks
# their Java frames with the reference walker (runtimes/jvm/hotspot_walk.c).
JVM_BUILD := $(BUILD)/jvm

$(JVM_BUILD)/hotspot_probe: tests/jvm/hotspot_probe.c $(BUILD)/libcollector.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libcollector.a $(LDLIBS)

INTEGRATION_DEPS += $(JVM_BUILD)/hotspot_probe
