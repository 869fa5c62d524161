# libgapscope.a (lib/): what the recorder and the report share, below both: the trace format
# (writer, reader, record names), kernel symbols, the async runtimes' table, the demangler,
# strings, id and string maps, escaping, numbers. It includes nothing from loader/ or reports/
# (tests/cases/layout.sh). The recorder, the CUPTI collector's tests and every unit test link it.

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
LIBGAPSCOPE := $(BUILD)/lib/libgapscope.a

# Every room's headers by bare name: names are unique in the tree, and layout.sh holds the
# includes to the rooms' order.
GAPSCOPE_INC := -I$(BUILD)/bpf -Ibpf -Ilib -Iloader -Iloader/live -Ireports -Ireports/render \
		-Ireports/analysis -Ireports/symbols -Icmd

$(BUILD)/lib/%.o: lib/%.c | $(BUILD)/lib/
	$(call msg,CC,$(patsubst $(BUILD)/%,%,$@))
	$(Q)$(CC) $(CFLAGS) -Ibpf -Ilib -c $< -o $@

$(LIBGAPSCOPE): $(LIB_OBJS)
	$(call msg,AR,$(patsubst $(BUILD)/%,%,$@))
	$(Q)rm -f $@ && $(AR) rcs $@ $^

all: $(LIBGAPSCOPE)
