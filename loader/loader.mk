# gapscope record (loader/), and the one binary build/gapscope that holds every subcommand.
#
#   build/gapscope           libbpf, libelf, zlib as shared libraries
#   build/gapscope-portable  the same with libbpf, libelf, libz (and what libelf needs) linked
#                            statically and glibc dynamically, to copy to production/GPU machines
#                            (a fully static binary could not dlopen NVML or CUPTI)
#
# reports/reports.mk adds its objects as prerequisites of both; the link recipes use $^.

LOADER_SRCS := $(wildcard loader/*.c loader/live/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(LOADER_SRCS))
# The recorder's stages without the command table's main(), for the unit tests.
LIBLOADER   := $(BUILD)/loader/libloader.a

GAPSCOPE_CFLAGS := $(CFLAGS) $(GAPSCOPE_INC) -I$(BUILD)/loader
# libzstd: stack snapshots are compressed (loader/consume.c). libiberty (static only): the
# demangler for C++ and Rust names (lib/demangle.c).
GAPSCOPE_LIBS   := -lbpf -ldw -lelf -lz -lzstd -liberty
# libelf.a (elfutils 0.188) decompresses zstd sections; libbpf.a needs libelf and zlib; libdw.a
# (reports/symbols/symfile.c) needs libelf, zlib, liblzma (.gnu_debugdata, .xz) and libbz2.
PORTABLE_LIBS   := -Wl,-Bstatic -lbpf -ldw -lelf -lz -lzstd -llzma -lbz2 -liberty -Wl,-Bdynamic

# Skeleton headers are generated: objects wait for them (the -MMD files track them afterwards).
$(BUILD)/loader/%.o: loader/%.c | $(BPF_SKELS)
	$(call msg,CC,$(patsubst $(BUILD)/%,%,$@))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(GAPSCOPE_CFLAGS) -c $< -o $@

$(LIBLOADER): $(filter-out $(BUILD)/loader/gapscope.o,$(LOADER_OBJS))
	$(call msg,AR,$(patsubst $(BUILD)/%,%,$@))
	$(Q)rm -f $@ && $(AR) rcs $@ $^

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


# libgapscope.a last: the objects before it take what they need from it.
$(BUILD)/gapscope: $(LOADER_OBJS) $(LIBGAPSCOPE)
	$(call msg,LINK,$(notdir $@))
	$(Q)$(CC) $(LDFLAGS) $(filter-out %.a,$^) $(filter %.a,$^) -o $@ $(GAPSCOPE_LIBS)

$(BUILD)/gapscope-portable: $(LOADER_OBJS) $(LIBGAPSCOPE)
	$(call msg,LINK,$(notdir $@))
	$(Q)$(CC) $(LDFLAGS) $(filter-out %.a,$^) $(filter %.a,$^) -o $@ $(PORTABLE_LIBS)

all: $(BUILD)/gapscope $(BUILD)/gapscope-portable
all: $(LIBLOADER)
