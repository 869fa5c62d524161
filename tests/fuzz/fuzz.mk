# libFuzzer targets for the trace readers (tests/fuzz/README.md): build/fuzz/fuzz_{trace,script,
# report}, each from the readers' sources built again with clang's fuzzer, address and undefined
# behaviour sanitizers (any undefined behaviour aborts, so it counts as a crash).
#
#   make fuzz                      build the targets and run each for FUZZ_SECONDS (default 60)
#   make fuzz-build                only build them
#   make fuzz FUZZ_SECONDS=600 FUZZ_TARGETS=report
#
# A run starts from the checked-in corpus tests/fuzz/corpus/TARGET (read only) and keeps what it
# finds in build/fuzz/corpus/TARGET; a crash is written to build/fuzz/crash-TARGET-*.

FUZZ_DIR      := $(BUILD)/fuzz
FUZZ_SECONDS  ?= 60
FUZZ_TARGETS  ?= trace script report
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS   := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -DGAPSCOPE_FUZZ $(WARN) \
		 -D_GNU_SOURCE -pthread -MMD -MP -Ibpf -Iloader -Ireports
FUZZ_LIBS     := -ldw -lelf -lz -lzstd
# Everything `script` and `report` run on: the trace reader (trace.c), kernel symbols (ksyms.c)
# and the async runtimes' table (runtimes.c).
FUZZ_SRCS     := $(wildcard reports/*.c) loader/trace.c loader/ksyms.c loader/runtimes.c
FUZZ_OBJS     := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRCS))

$(FUZZ_DIR)/obj/%.o: %.c
	$(call msg,FUZZ-CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/obj/reports/assets.o: $(REPORT_ASSETS)

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJS)
	$(call msg,FUZZ-LD,$(notdir $@))
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) -o $@ $(FUZZ_LIBS)

.PHONY: fuzz fuzz-build
fuzz-build: $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_TARGETS))

fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
