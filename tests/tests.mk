# Unit tests: tests/unit/X.c -> build/tests/X, run by tests/run.sh (exit 0 pass, 77 skip).
# Each links the libraries of the rooms, top to bottom (loader, reports, lib): no test includes a
# .c file (tests/cases/layout.sh).

TEST_CFLAGS := $(CFLAGS) $(GAPSCOPE_INC) -Iengine
TEST_LIBS   := -lbpf -ldw -lelf -lz -lzstd -liberty -lprotobuf-c -ljansson
TEST_ARCHIVES := $(LIBLOADER) $(LIBREPORTS) $(LIBGAPSCOPE)

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
# Without the CUDA toolkit, no CUPTI headers for its collector's test (loader/cupti/cupti.mk).
UNIT_BINS := $(filter-out $(if $(CUDA_TOOLKIT),,$(BUILD)/tests/test_cupti_records),$(UNIT_BINS))

.PHONY: tests
tests: $(UNIT_BINS)
all: tests

$(BUILD)/tests/%: tests/unit/%.c $(TEST_ARCHIVES) | $(BUILD)/tests/
	$(call msg,CC,tests/$*)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(TEST_ARCHIVES) -o $@ $(LDFLAGS) $(TEST_LIBS)

# Tests that include a skeleton must wait for it.
$(BUILD)/tests/test_bpf_smoke: $(BUILD)/bpf/smoke.skel.h

# test_symbols maps a small shared object built with -g, and copies of it: stripped of every
# symbol table, with its DWARF moved to libsymtest.debug named by .gnu_debuglink (and that
# compressed, as Debian ships /usr/lib/debug: libsymtest-z.debug), and stripped with
# MiniDebugInfo (.gnu_debugdata) as Fedora ships its libraries.
SYMTEST_DIR := $(BUILD)/tests/symbols
$(SYMTEST_DIR)/libsymtest.so: tests/symbols/symtest.c | $(SYMTEST_DIR)/
	$(call msg,CC,tests/symbols/libsymtest.so)
	$(Q)$(CC) -O2 -g -fPIC -shared -Wl,--build-id $(FPFLAGS) -pthread $< -o $@
	$(Q)objcopy --only-keep-debug $@ $(@D)/libsymtest.debug
	$(Q)objcopy --compress-debug-sections=zlib $(@D)/libsymtest.debug $(@D)/libsymtest-z.debug
	$(Q)objcopy --strip-all $@ $(@D)/libsymtest-stripped.so
	$(Q)cd $(@D) && objcopy --strip-debug --add-gnu-debuglink=libsymtest.debug \
		libsymtest.so libsymtest-linked.so
	$(Q)tests/symbols/minidebuginfo.sh $@ $(@D)/libsymtest-mini.so
$(BUILD)/tests/test_symbols: $(SYMTEST_DIR)/libsymtest.so

# ... and a C++ one, for names as C++ programmers write them (demangled, inlined methods).
$(SYMTEST_DIR)/libsymcpp.so: tests/symbols/symcpp.cc | $(SYMTEST_DIR)/
	$(call msg,CXX,tests/symbols/libsymcpp.so)
	$(Q)$(CXX) -O2 -g -fPIC -shared $(FPFLAGS) $< -o $@
$(BUILD)/tests/test_symbols: $(SYMTEST_DIR)/libsymcpp.so

# A count-only uprobe, the baseline of the recorder's cost per probed call (tests/gpu/truth.sh):
# build/bench/trapcount, libbpf and libelf linked statically to run on the GPU machine too.
$(BUILD)/bench/trapcount.bpf.o: tests/bench/trapcount.bpf.c | $(BUILD)/bench/
	$(call msg,BPF,$(notdir $@))
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/bench/trapcount.skel.h: $(BUILD)/bench/trapcount.bpf.o
	$(call msg,GEN-SKEL,$(notdir $@))
	$(Q)$(BPFTOOL) gen skeleton $< > $@
$(BUILD)/bench/trapcount: tests/bench/trapcount.c $(BUILD)/bench/trapcount.skel.h
	$(call msg,CC,bench/trapcount)
	$(Q)$(CC) $(TEST_CFLAGS) -I$(BUILD)/bench $< -o $@ $(LDFLAGS) $(PORTABLE_LIBS)
all: $(BUILD)/bench/trapcount

# test_pyoffsets holds loader/pyoffsets.c's table to the structures of the local interpreter's
# version, from its own headers (python3-dev; the internal ones need Py_BUILD_CORE).
$(BUILD)/tests/test_pyoffsets: TEST_CFLAGS += $(shell /usr/bin/python3-config --includes 2>/dev/null)

# test_idlesplit names frames itself (names__user, names__kernel below its includes): it links
# the analysis files it tests, not libreports.a, whose names.o would name them from files.
IDLESPLIT_SRCS := reports/analysis/idlesplit.c reports/analysis/actionable.c \
		  reports/analysis/threads.c reports/analysis/stacktab.c reports/analysis/kinds.c \
		  reports/analysis/folded_parse.c
$(BUILD)/tests/test_idlesplit: tests/unit/test_idlesplit.c $(IDLESPLIT_SRCS) $(LIBGAPSCOPE) \
			       | $(BUILD)/tests/
	$(call msg,CC,tests/test_idlesplit)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(IDLESPLIT_SRCS) -o $@ $(LDFLAGS) $(LIBGAPSCOPE) $(TEST_LIBS)

# test_actionable names frames itself, as test_idlesplit does: actionable.c alone, not
# libreports.a, whose names.o would name them from files.
$(BUILD)/tests/test_actionable: tests/unit/test_actionable.c reports/analysis/actionable.c \
				$(LIBGAPSCOPE) | $(BUILD)/tests/
	$(call msg,CC,tests/test_actionable)
	$(Q)$(CC) $(TEST_CFLAGS) $< reports/analysis/actionable.c -o $@ $(LDFLAGS) $(LIBGAPSCOPE) \
		$(TEST_LIBS)
