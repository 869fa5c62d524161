# BPF programs: bpf/X.bpf.c -> build/bpf/X.bpf.o -> build/bpf/X.skel.h (never committed).

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
# Skeletons: the recorder's linked object (below), the pid namespace translator (loaded on its
# own, where the recorder runs in a pid namespace: its kfuncs need Linux 6.13) and the tool-chain
# smoke test.
BPF_SKELS := $(BUILD)/bpf/smoke.skel.h $(BUILD)/bpf/nspid.skel.h

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wno-unused-function \
	      -Ivmlinux/$(ARCH) -Ibpf -MMD -MP
# The launch caches' folds only: atomic exchange. For every object, v3's 32-bit ALU code made
# the kernel's verifier take 2.7 s instead of 0.8 s to load the recorder's programs (every
# record, every attach); for the CUDA probes' alone, 0.35 s more.
$(BUILD)/bpf/launchfold.bpf.o: BPF_CFLAGS += -mcpu=v3

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c | $(BUILD)/bpf/
	$(call msg,BPF,$(notdir $@))
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$(notdir $@))
	$(Q)$(BPFTOOL) gen skeleton $< > $@

all: $(BPF_SKELS)

# The recorder loads every probe family as one object: the families (all but smoke) linked by
# bpftool into build/bpf/record.bpf.o, skeleton struct record_bpf. One object means one parse of
# the kernel's BTF at load (libbpf parses it per object: ~50 ms each) and no map fd sharing.
# The shared maps are weak in gapscope.bpf.h; other map names must differ between families.
# Linked in this order (the order of the kernel probes in a trace), any new family last.
RECORD_BPF_FIRST := $(patsubst %,$(BUILD)/bpf/%.bpf.o,proc futex offcpu sample probe cuda)
RECORD_BPF_OBJS := $(RECORD_BPF_FIRST) \
		   $(filter-out $(RECORD_BPF_FIRST) $(BUILD)/bpf/smoke.bpf.o \
				$(BUILD)/bpf/nspid.bpf.o,$(BPF_OBJS))

$(BUILD)/bpf/record.bpf.o: $(RECORD_BPF_OBJS) | $(BUILD)/bpf/
	$(call msg,BPF-LINK,$(notdir $@))
	$(Q)$(BPFTOOL) gen object $@ $^

$(BUILD)/bpf/record.skel.h: $(BUILD)/bpf/record.bpf.o
	$(call msg,GEN-SKEL,$(notdir $@))
	$(Q)$(BPFTOOL) gen skeleton $< name record_bpf > $@

BPF_SKELS += $(BUILD)/bpf/record.skel.h
all: $(BUILD)/bpf/record.skel.h
