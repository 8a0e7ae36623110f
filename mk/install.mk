# Installing collector.
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc]
#       installs the collector into $(DESTDIR)$(PREFIX)/bin, mode 0755, as
#       packaging expects (no root needed; DESTDIR is the staging root).
#       SYSCONFDIR is where it reads the administrator's policy,
#       SYSCONFDIR/collector.conf (session/policy.h): compiled in, so that no
#       user can point it elsewhere.
#   make install-caps [same variables] [CAPS_GROUP=collector]
#       (root) then makes the installed copy root:CAPS_GROUP, mode 0750,
#       with the file capabilities below: the members of CAPS_GROUP can
#       profile their own processes without sudo.  The group must exist
#       (groupadd --system collector).  A package does this in its
#       postinst, after dpkg has unpacked the file.
#
# The capabilities, the smallest set with which `-- CMD`, `-p PID` of the
# user's own process and `--trace` work in full (found by taking each one
# away; README.md, "Privileges"):
#   cap_bpf      load the BPF programs and create their maps
#   cap_perfmon  open the sampling perf events on every CPU, attach the
#                tracing programs (tp_btf) and the uprobes through
#                multi-uprobe links; with cap_bpf, lets the programs read
#                kernel memory (stacks).  Single uprobes (perf events: kernels
#                before 6.6, COLLECTOR_SINGLE_UPROBES) are refused without
#                cap_sys_admin, which is not granted: there --trace needs sudo
#   cap_syslog   read the kernel's symbol addresses in /proc/kallsyms
#                (zeros without it while kptr_restrict or perf_event_paranoid
#                hide them): kernel frames would stay unnamed
#   cap_checkpoint_restore  open /proc/PID/map_files/, the targets' mapped
#                files as the process sees them, also once deleted or
#                replaced (a library upgraded while the program runs), and
#                in another mount namespace; without it the files are opened
#                by their path, /proc/PID/root/PATH
# Not granted, on purpose: cap_sys_admin (everything), cap_dac_override and
# cap_dac_read_search (files the user may not read: user-named paths are
# opened with the user's rights anyway, lib/userfs.h), cap_sys_ptrace (other
# users' processes: their maps, hence their symbols, stay unreadable),
# cap_sys_resource (the memlock limit: kernels since 5.11 charge BPF memory
# to the cgroup instead, and libbpf then leaves the limit alone).

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
CAPS_GROUP ?= collector
CAPS       := cap_bpf,cap_perfmon,cap_syslog,cap_checkpoint_restore

.PHONY: install install-caps FORCE

# The installed binary is linked again with SYSCONFDIR compiled into
# cli/main.c (the one file that names the policy's path).
$(BUILD)/install/collector: $(BUILD)/libcollector.a FORCE
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DCOLLECTOR_SYSCONFDIR='"$(SYSCONFDIR)"' -c cli/main.c \
		-o $(BUILD)/install/main.o
	$(CC) $(CFLAGS) -o $@ $(BUILD)/install/main.o $(BUILD)/libcollector.a $(LDLIBS)

install: $(BUILD)/install/collector
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(BUILD)/install/collector $(DESTDIR)$(BINDIR)/collector

# chown and chmod clear file capabilities: setcap comes last.
install-caps: install
	chown root:$(CAPS_GROUP) $(DESTDIR)$(BINDIR)/collector
	chmod 0750 $(DESTDIR)$(BINDIR)/collector
	setcap $(CAPS)=ep $(DESTDIR)$(BINDIR)/collector
