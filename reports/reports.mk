# gapscope script / report (reports/): linked into build/gapscope (see loader/loader.mk).

REPORTS_SRCS := $(wildcard reports/*.c)
REPORTS_OBJS := $(patsubst reports/%.c,$(BUILD)/reports/%.o,$(REPORTS_SRCS))

$(BUILD)/reports/%.o: reports/%.c | $(BUILD)/reports/ $(BPF_SKELS)
	$(call msg,CC,$(patsubst $(BUILD)/%,%,$@))
	$(Q)$(CC) $(GAPSCOPE_CFLAGS) -c $< -o $@

$(BUILD)/gapscope $(BUILD)/gapscope-portable: $(REPORTS_OBJS)
