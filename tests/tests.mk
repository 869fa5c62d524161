# Unit tests: tests/unit/X.c -> build/tests/X, run by tests/run.sh (exit 0 pass, 77 skip).

TEST_CFLAGS := $(CFLAGS) -I$(BUILD)/bpf -Ibpf -Iloader -Ireports -Iengine
TEST_LIBS   := -lbpf -ldw -lelf -lz

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: tests
tests: $(UNIT_BINS)
all: tests

$(BUILD)/tests/%: tests/unit/%.c | $(BUILD)/tests/
	$(call msg,CC,tests/$*)
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ $(LDFLAGS) $(TEST_LIBS)

# Tests that include a skeleton must wait for it.
$(BUILD)/tests/test_bpf_smoke: $(BUILD)/bpf/smoke.skel.h
