# gapscope script / report (reports/): linked into build/gapscope (see loader/loader.mk).
#
# The readers need the trace format (loader/trace.h, bpf/*.h event layouts) and nothing of the
# recorder: no BPF skeleton, no probe table, so they build without waiting for either.

REPORTS_SRCS := $(wildcard reports/*.c)
REPORTS_OBJS := $(patsubst reports/%.c,$(BUILD)/reports/%.o,$(REPORTS_SRCS))

$(BUILD)/reports/%.o: reports/%.c | $(BUILD)/reports/
	$(call msg,CC,$(patsubst $(BUILD)/%,%,$@))
	$(Q)$(CC) $(GAPSCOPE_CFLAGS) -c $< -o $@

$(BUILD)/gapscope $(BUILD)/gapscope-portable: $(REPORTS_OBJS)
