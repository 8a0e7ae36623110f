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

$(WL)/libhot.so: tests/workloads/libhot.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -fPIC -shared -o $@ $<

# a PIE whose hot code is in libhot.so, found next to it through $$ORIGIN
$(WL)/pie_lib: tests/workloads/pie_lib.c $(WL)/libhot.so
	$(CC) $(WL_CFLAGS) -fPIE -pie -o $@ $< -L$(WL) -lhot -Wl,-rpath,'$$ORIGIN'

$(WL)/threads: tests/workloads/threads.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -o $@ $< -lpthread

# programs built alike (frame pointers, libc only): fork and exec (forkexec),
# known call counts (calls), calls that longjmp out or tail-call (escapes),
# 24 frames of 1 KiB, a stack deeper than the sampler's copy (bigframes), events of
# known counts (pagetouch), on and off the CPU (offcpu)
PLAIN_WORKLOADS := $(WL)/forkexec $(WL)/calls $(WL)/escapes $(WL)/bigframes $(WL)/pagetouch \
	$(WL)/offcpu
$(PLAIN_WORKLOADS): $(WL)/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -o $@ $<

# the way most code is built: -O2, no frame pointers
$(WL)/deep: tests/workloads/deep.c
	@mkdir -p $(dir $@)
	$(CC) -g -O2 -fomit-frame-pointer -o $@ $<

# C++ with namespaces and templates, for the comparison with perf
$(WL)/cxx_shapes: tests/workloads/cxx_shapes.cpp
	@mkdir -p $(dir $@)
	$(CXX) -g -O2 -fno-omit-frame-pointer -o $@ $<

# the unwinder in BPF: chains through PLT calls, a signal handler, deep
# recursion, dlopen (tests/workloads/cfi_chains.c), all without frame
# pointers; cfi_chains links libcfi_lib.so (and dlopens it, given its path)
$(WL)/libcfi_lib.so: tests/workloads/cfi_lib.c
	@mkdir -p $(dir $@)
	$(CC) -g -O2 -fomit-frame-pointer -fPIC -shared -o $@ $<

$(WL)/cfi_chains: tests/workloads/cfi_chains.c $(WL)/libcfi_lib.so
	$(CC) -g -O2 -fomit-frame-pointer -o $@ $< -L$(WL) -lcfi_lib -ldl -Wl,-rpath,'$$ORIGIN'

WORKLOADS := $(WL)/cfi_chains $(WL)/split $(WL)/split-nofp $(WL)/demo $(WL)/forkexec $(WL)/calls \
	$(WL)/pie_lib $(WL)/threads $(WL)/deep $(WL)/bigframes $(WL)/escapes $(WL)/cxx_shapes \
	$(WL)/pagetouch $(WL)/offcpu
INTEGRATION_DEPS += $(WORKLOADS)
DEMO_DEPS += $(WL)/demo
UNIT_DEPS += $(WL)/split $(WL)/split-nofp $(WL)/bigframes

# The Java workloads (tests/workloads/*.java: JavaShares and the Shares it
# measures), for the JVM walker's tests: Java 17 class files (--release 17),
# which OpenJDK 17, 21 and 25 all run (build/jdks/run.sh N java), made by
# Debian 12's javac (any JDK's on the PATH otherwise).  Without a javac
# they are not built and the Java tests skip.
JAVAC ?= $(firstword $(wildcard /usr/lib/jvm/java-17-openjdk-amd64/bin/javac) \
	$(shell command -v javac 2>/dev/null))
JAVA_SRCS := $(wildcard tests/workloads/*.java)
$(WL)/java/JavaShares.class: $(JAVA_SRCS)
	@mkdir -p $(dir $@)
	$(JAVAC) --release 17 -Xlint:all -d $(dir $@) $(JAVA_SRCS)
# the native half of ChainCorrupt.java, against the JDK's jni.h
JNI_INCLUDE = $(dir $(JAVAC))../include
$(WL)/java/libchain_corrupt.so: tests/workloads/chain_corrupt.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -fPIC -shared -I$(JNI_INCLUDE) -I$(JNI_INCLUDE)/linux -o $@ $<
ifneq ($(JAVAC),)
WORKLOADS += $(WL)/java/JavaShares.class $(WL)/java/libchain_corrupt.so
endif
