# ELF files for the symbolizer unit tests (tests/unit/test_symbolize*.c),
# built into build/symtest/ from tests/symtest/:
#
#   pie                 PIE executable with symbols and DWARF
#   nopie               ET_EXEC executable (-no-pie)
#   libsymtest.so       shared library linked at a non-zero base
#   inline              -O2 program with a two-level inlined call chain
#   stripped-buildid    stripped; debug file under debug/.build-id/xx/rest.debug
#   stripped-debuglink  stripped; .gnu_debuglink to stripped-debuglink.debug beside it
#   stripped-dotdebug   stripped; .gnu_debuglink to .debug/stripped-dotdebug.debug
#   stripped-badcrc     stripped; .gnu_debuglink whose CRC does not match
#   nobuildid           no build-id (for the dev+inode image cache)
#   stripped-gz         stripped; .gnu_debuglink to stripped-gz.debug, whose
#                       DWARF sections are compressed (as Debian's -dbgsym)
#
# Every stripped variant keeps its unstripped original as NAME.full, which
# the test reads to know the true symbol addresses.

SYMTEST        := $(BUILD)/symtest
SYMTEST_CC     ?= gcc
SYMTEST_CFLAGS := -g -O0 -fno-omit-frame-pointer -fno-inline
SYMTEST_FILES  := $(addprefix $(SYMTEST)/,pie nopie libsymtest.so inline stripped-buildid \
		    stripped-debuglink stripped-dotdebug stripped-badcrc nobuildid stripped-gz)

UNIT_DEPS += $(SYMTEST_FILES)

# The unit test binaries read them (and dlopen() the library): make them
# prerequisites too.
$(BUILD)/tests/test_symbolize $(BUILD)/tests/test_symbolize_llvm $(BUILD)/tests/test_debug_copies: \
	$(SYMTEST_FILES)

$(SYMTEST)/pie: tests/symtest/prog.c
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -fPIE -pie -DSYMTEST_VARIANT='"pie"' -o $@ $<

$(SYMTEST)/nopie: tests/symtest/prog.c
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -fno-pie -no-pie -DSYMTEST_VARIANT='"nopie"' -o $@ $<

$(SYMTEST)/libsymtest.so: tests/symtest/lib.c tests/symtest/lib.map
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -fPIC -shared -Wl,-Ttext-segment=0x10000000 \
		-Wl,--version-script=tests/symtest/lib.map -o $@ $<

$(SYMTEST)/inline: tests/symtest/inline.c
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) -g -O2 -fPIE -pie -o $@ $<

$(SYMTEST)/nobuildid: tests/symtest/prog.c
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -DSYMTEST_VARIANT='"nobuildid"' -Wl,--build-id=none -o $@ $<

$(SYMTEST)/stripped-buildid: tests/symtest/prog.c
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -DSYMTEST_VARIANT='"buildid"' -o $@.full $<
	id=$$(readelf -n $@.full | sed -n 's/.*Build ID: *//p') && \
		test -n "$$id" && \
		mkdir -p $(SYMTEST)/debug/.build-id/$$(echo $$id | cut -c1-2) && \
		objcopy --only-keep-debug $@.full \
			$(SYMTEST)/debug/.build-id/$$(echo $$id | cut -c1-2)/$$(echo $$id | cut -c3-).debug
	strip --strip-all -o $@ $@.full

$(SYMTEST)/stripped-debuglink: tests/symtest/prog.c
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -DSYMTEST_VARIANT='"debuglink"' -o $@.full $<
	objcopy --only-keep-debug $@.full $@.debug
	strip --strip-all -o $@.tmp $@.full
	cd $(dir $@) && objcopy --add-gnu-debuglink=$(notdir $@).debug $(notdir $@).tmp
	mv $@.tmp $@

$(SYMTEST)/stripped-gz: tests/symtest/prog.c
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -DSYMTEST_VARIANT='"gz"' -o $@.full $<
	objcopy --only-keep-debug --compress-debug-sections=zlib $@.full $@.debug
	strip --strip-all -o $@.tmp $@.full
	cd $(dir $@) && objcopy --add-gnu-debuglink=$(notdir $@).debug $(notdir $@).tmp
	mv $@.tmp $@

$(SYMTEST)/stripped-dotdebug: tests/symtest/prog.c
	@mkdir -p $(dir $@)/.debug
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -DSYMTEST_VARIANT='"dotdebug"' -o $@.full $<
	objcopy --only-keep-debug $@.full $(dir $@).debug/$(notdir $@).debug
	strip --strip-all -o $@.tmp $@.full
	objcopy --add-gnu-debuglink=$(dir $@).debug/$(notdir $@).debug $@.tmp
	mv $@.tmp $@

# The debuglink names a file whose contents change afterwards: its CRC no
# longer matches, so it must not be used.
$(SYMTEST)/stripped-badcrc: tests/symtest/prog.c
	@mkdir -p $(dir $@)
	$(SYMTEST_CC) $(SYMTEST_CFLAGS) -DSYMTEST_VARIANT='"badcrc"' -o $@.full $<
	objcopy --only-keep-debug $@.full $@.debug
	strip --strip-all -o $@.tmp $@.full
	cd $(dir $@) && objcopy --add-gnu-debuglink=$(notdir $@).debug $(notdir $@).tmp
	printf 'changed' >> $@.debug
	mv $@.tmp $@
