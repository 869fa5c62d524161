# The recorder's stages (loader/, loader/live/): what `gapscope record` (cmd/record.c) runs, and
# the one binary build/gapscope that holds every command (its objects are cmd/cmd.mk's):
#
#   build/gapscope           libbpf, libelf, zlib as shared libraries
#   build/gapscope-portable  the same with libbpf, libelf, libz (and what libelf needs) linked
#                            statically and glibc dynamically, to copy to production/GPU machines
#                            (a fully static binary could not dlopen NVML or CUPTI)
#
# reports/reports.mk and cmd/cmd.mk add their objects as prerequisites of both; the link recipes
# use $^.

LOADER_SRCS := $(wildcard loader/*.c loader/live/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(LOADER_SRCS))
# The recorder's stages, for the binary and the unit tests.
LIBLOADER   := $(BUILD)/loader/libloader.a

GAPSCOPE_CFLAGS := $(CFLAGS) $(GAPSCOPE_INC)
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

$(LIBLOADER): $(LOADER_OBJS)
	$(call msg,AR,$(patsubst $(BUILD)/%,%,$@))
	$(Q)rm -f $@ && $(AR) rcs $@ $^


# libgapscope.a last: the objects before it take what they need from it.
$(BUILD)/gapscope: $(LOADER_OBJS) $(LIBGAPSCOPE)
	$(call msg,LINK,$(notdir $@))
	$(Q)$(CC) $(LDFLAGS) $(filter-out %.a,$^) $(filter %.a,$^) -o $@ $(GAPSCOPE_LIBS)

$(BUILD)/gapscope-portable: $(LOADER_OBJS) $(LIBGAPSCOPE)
	$(call msg,LINK,$(notdir $@))
	$(Q)$(CC) $(LDFLAGS) $(filter-out %.a,$^) $(filter %.a,$^) -o $@ $(PORTABLE_LIBS)

all: $(BUILD)/gapscope $(BUILD)/gapscope-portable
all: $(LIBLOADER)
