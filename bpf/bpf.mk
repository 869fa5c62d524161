# BPF programs: bpf/X.bpf.c -> build/bpf/X.bpf.o -> build/bpf/X.skel.h (never committed).

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.skel.h,$(BPF_SRCS))

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wno-unused-function \
	      -Ivmlinux/$(ARCH) -Ibpf -MMD -MP

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c | $(BUILD)/bpf/
	$(call msg,BPF,$(notdir $@))
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$(notdir $@))
	$(Q)$(BPFTOOL) gen skeleton $< > $@

all: $(BPF_SKELS)
