# gapscope record (loader/), and the one binary build/gapscope that holds every subcommand.
#
#   build/gapscope           libbpf, libelf, zlib as shared libraries
#   build/gapscope-portable  the same with libbpf, libelf, libz (and what libelf needs) linked
#                            statically and glibc dynamically, to copy to production/GPU machines
#                            (a fully static binary could not dlopen NVML or CUPTI)
#
# reports/reports.mk adds its objects as prerequisites of both; the link recipes use $^.

LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(LOADER_SRCS))

GAPSCOPE_CFLAGS := $(CFLAGS) -I$(BUILD)/bpf -I$(BUILD)/loader -Ibpf -Iloader -Ireports
# libzstd: stack snapshots are compressed (loader/consume.c). libiberty (static only): the
# demangler for C++ and Rust names (reports/demangle.c).
GAPSCOPE_LIBS   := -lbpf -ldw -lelf -lz -lzstd -liberty
# libelf.a (elfutils 0.188) decompresses zstd sections; libbpf.a needs libelf and zlib; libdw.a
# (reports/symfile.c) needs libelf, zlib, liblzma (.gnu_debugdata, .xz) and libbz2.
PORTABLE_LIBS   := -Wl,-Bstatic -lbpf -ldw -lelf -lz -lzstd -llzma -lbz2 -liberty -Wl,-Bdynamic

# Skeleton headers are generated: objects wait for them (the -MMD files track them afterwards).
$(BUILD)/loader/%.o: loader/%.c | $(BUILD)/loader/ $(BPF_SKELS)
	$(call msg,CC,$(patsubst $(BUILD)/%,%,$@))
	$(Q)$(CC) $(GAPSCOPE_CFLAGS) -c $< -o $@

# gapscope --version: the release and the commit built (git describe; "-dirty" with changes not
# committed). The header is rewritten only when they change, so a new commit relinks and nothing
# else does.
GS_RELEASE := 0.1
GS_COMMIT   = $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
$(BUILD)/loader/version.h: FORCE | $(BUILD)/loader/
	$(Q)printf '#define GS_VERSION "%s"\n#define GS_COMMIT "%s"\n' '$(GS_RELEASE)' \
		'$(GS_COMMIT)' >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/loader/gapscope.o: $(BUILD)/loader/version.h
.PHONY: FORCE
FORCE:

$(BUILD)/gapscope: $(LOADER_OBJS)
	$(call msg,LINK,$(notdir $@))
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(GAPSCOPE_LIBS)

$(BUILD)/gapscope-portable: $(LOADER_OBJS)
	$(call msg,LINK,$(notdir $@))
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(PORTABLE_LIBS)

all: $(BUILD)/gapscope $(BUILD)/gapscope-portable
