# The CUPTI activity collector (loader/cupti/): build/libgapscope-cupti.so, loaded into a target
# that `gapscope record` launches, through CUDA_INJECTION64_PATH. It loads libcupti with dlopen
# at run time, so it builds with the toolkit's headers alone and loads anywhere; the recorder
# finds it next to itself.

CUPTI_LIB    := $(BUILD)/libgapscope-cupti.so
CUPTI_SRCS   := loader/cupti/inject.c loader/cupti/convert.c
CUPTI_OBJS   := $(patsubst loader/cupti/%.c,$(BUILD)/loader/cupti/%.o,$(CUPTI_SRCS))
CUPTI_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden -Ilib -Iloader/cupti \
		-I$(CUDA_HOME)/include -DGS_CUPTI_DIR='"$(CUDA_HOME)/lib64"'

# Without the toolkit there are no CUPTI headers: no collector (the Makefile says so once), and
# record says, where it would inject one, that it cannot.
ifneq ($(CUDA_TOOLKIT),)
all: $(CUPTI_LIB)
endif

$(CUPTI_OBJS): $(BUILD)/loader/cupti/%.o: loader/cupti/%.c | $(BUILD)/loader/cupti/
	$(call msg,CC,loader/cupti/$(notdir $@))
	$(Q)$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(CUPTI_LIB): $(CUPTI_OBJS)
	$(call msg,LD,$(notdir $@))
	$(Q)$(CC) $(CUPTI_CFLAGS) -shared -Wl,-z,defs $^ -o $@ $(LDFLAGS) -ldl

# The unit test feeds hand-made CUPTI records through the conversion: its own rule, since
# TEST_CFLAGS has -Ibpf, whose cuda.h would shadow the toolkit's (which cupti_activity.h needs).
# Compiled and linked in one step, its .d file makes headers prerequisites: kept off the command
# line (reports/render/assets.mk says why).
$(BUILD)/tests/test_cupti_records: tests/unit/test_cupti_records.c loader/cupti/convert.c \
		| $(BUILD)/tests/
	$(call msg,CC,tests/test_cupti_records)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Ilib -Iloader/cupti -I$(CUDA_HOME)/include \
		$(filter-out %.h,$^) -o $@ $(LDFLAGS)
