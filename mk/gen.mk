# Sources generated at build time into build/gen/ (never committed):
#
#   build/gen/formats/pprof/profile.pb-c.[ch]   protoc-c from formats/pprof/profile.proto
#   build/gen/formats/otlp/proto/opentelemetry/proto/.../*.pb-c.[ch]
#                                                protoc-c from the vendored OTLP messages
#                                                (formats/otlp/proto/); they include each
#                                                other by their own paths, hence the -I
#   build/gen/formats/flamegraph/assets.h        the flame graph page's JavaScript and CSS
#                                                (formats/flamegraph/flamegraph.{js,css}),
#                                                as C arrays by xxd -i
#
# Every object may include them (spelled "formats/pprof/profile.pb-c.h"),
# so they are made before any object is compiled.

GEN        := $(BUILD)/gen
PPROF_PB_C := $(GEN)/formats/pprof/profile.pb-c.c
PPROF_PB_H := $(GEN)/formats/pprof/profile.pb-c.h
FG_ASSETS  := $(GEN)/formats/flamegraph/assets.h
OTLP_PROTO_DIR := formats/otlp/proto
OTLP_PROTOS := $(patsubst $(OTLP_PROTO_DIR)/%,%,$(shell find $(OTLP_PROTO_DIR) -name '*.proto' | sort))
OTLP_GEN    := $(GEN)/$(OTLP_PROTO_DIR)
OTLP_PB_C   := $(patsubst %.proto,$(OTLP_GEN)/%.pb-c.c,$(OTLP_PROTOS))
OTLP_PB_H   := $(OTLP_PB_C:.c=.h)
GEN_HEADERS := $(PPROF_PB_H) $(FG_ASSETS) $(OTLP_PB_H)

CFLAGS += -I$(GEN) -I$(OTLP_GEN)
LDLIBS += -lprotobuf-c -ljson-c

$(PPROF_PB_C) $(PPROF_PB_H) &: formats/pprof/profile.proto
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) $<

$(OTLP_PB_C) $(OTLP_PB_H) &: $(addprefix $(OTLP_PROTO_DIR)/,$(OTLP_PROTOS))
	@mkdir -p $(OTLP_GEN)
	protoc-c -I$(OTLP_PROTO_DIR) --c_out=$(OTLP_GEN) $(OTLP_PROTOS)

# xxd -i names the arrays after the file's path; the names are set here so
# that the C code does not depend on where the tree is.
$(FG_ASSETS): formats/flamegraph/flamegraph.js formats/flamegraph/flamegraph.css
	@mkdir -p $(dir $@)
	{ echo "/* Generated from $^ by mk/gen.mk: do not edit. */"; \
	  for f in $^; do \
		n=fg_$$(basename $$f | tr . _); \
		echo "static const unsigned char $${n}[] = {"; \
		xxd -i < $$f; \
		echo "};"; \
	  done; } > $@.tmp && mv $@.tmp $@

# The generated protobuf code is part of the library like any source.
PPROF_PB_OBJ := $(BUILD)/obj/gen/profile.pb-c.o
PPROF_PB_SAN := $(BUILD)/san/gen/profile.pb-c.o
$(PPROF_PB_OBJ): $(PPROF_PB_C) $(PPROF_PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(PPROF_PB_SAN): $(PPROF_PB_C) $(PPROF_PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -c $< -o $@
$(BUILD)/libcollector.a: $(PPROF_PB_OBJ)
$(BUILD)/libcollector-san.a: $(PPROF_PB_SAN)

# The OTLP messages' objects, named otlp-<message file> (the archive keeps
# members by base name).
OTLP_PB_OBJ := $(foreach c,$(OTLP_PB_C),$(BUILD)/obj/gen/otlp-$(notdir $(c:.pb-c.c=)).o)
OTLP_PB_SAN := $(foreach c,$(OTLP_PB_C),$(BUILD)/san/gen/otlp-$(notdir $(c:.pb-c.c=)).o)
define otlp_pb_rule
$(BUILD)/obj/gen/otlp-$(notdir $(1:.pb-c.c=)).o: $(1) $(OTLP_PB_H)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -c $$< -o $$@
$(BUILD)/san/gen/otlp-$(notdir $(1:.pb-c.c=)).o: $(1) $(OTLP_PB_H)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $$(SANFLAGS) -c $$< -o $$@
endef
$(foreach c,$(OTLP_PB_C),$(eval $(call otlp_pb_rule,$(c))))
$(BUILD)/libcollector.a: $(OTLP_PB_OBJ)
$(BUILD)/libcollector-san.a: $(OTLP_PB_SAN)

$(LIB_OBJS) $(SAN_OBJS) $(BUILD)/obj/cli/main.o $(BUILD)/san/cli/main.o: | $(GEN_HEADERS)
