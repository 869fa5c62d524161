# zkengine (engine/*.c + the nvcc-built fatbin of engine/kernels.cu) and simcuda
# (engine/simcuda/*.c -> build/simcuda/libcuda.so.1, found by zkengine next to itself).

ENGINE_CFLAGS := $(CFLAGS) -Iengine -I$(CUDA_HOME)/include $(if $(CUDA_TOOLKIT),,-DZK_NO_CUDA_TOOLKIT)
ENGINE_SRCS   := zkengine.c pipeline.c parts.c dispatcher.c workers.c finalizer.c waits.c truth.c \
		 gpu.c gpu_driver.c verify.c ref.c
ENGINE_OBJS   := $(patsubst %.c,$(BUILD)/engine/%.o,$(ENGINE_SRCS)) $(BUILD)/engine/fatbin.o
ENGINE_LIBS   := -ldl -lgmp

# sm_90 SASS for the H200, plus compute_90 PTX so a newer GPU can JIT it.
NVCC_FLAGS    := -O3 -std=c++17 -gencode arch=compute_90,code=[sm_90,compute_90] -Iengine
FATBIN        := $(BUILD)/engine/kernels.fatbin

SIMCUDA_SRCS  := $(wildcard engine/simcuda/*.c)
SIMCUDA_OBJS  := $(patsubst engine/simcuda/%.c,$(BUILD)/engine/simcuda/%.o,$(SIMCUDA_SRCS))
SIMCUDA_LIB   := $(BUILD)/simcuda/libcuda.so.1
# Hidden by default; only the API-marked driver functions are exported.
SIMCUDA_CFLAGS := $(ENGINE_CFLAGS) -fPIC -fvisibility=hidden -Iengine/simcuda

all: $(BUILD)/zkengine $(SIMCUDA_LIB)

ifneq ($(CUDA_TOOLKIT),)
$(FATBIN): engine/kernels.cu | $(BUILD)/engine/
	$(call msg,NVCC,$(notdir $@))
	$(Q)$(NVCC) $(NVCC_FLAGS) -MD -MF $@.d -MT $@ --fatbin $< -o $@
else
# No nvcc: a fatbin header with no kernels in it, which simcuda takes (it checks the magic and
# runs its CPU versions) and zkengine refuses for a real GPU (gpu.c, ZK_NO_CUDA_TOOLKIT).
$(FATBIN): | $(BUILD)/engine/
	$(call msg,GEN,$(notdir $@) (no kernels: simcuda only))
	$(Q)printf '\120\355\125\272\001\000\020\000\000\000\000\000\000\000\000\000' >$@
endif

$(BUILD)/engine/fatbin.o: engine/fatbin.S $(FATBIN) | $(BUILD)/engine/
	$(call msg,AS,$(notdir $@))
	$(Q)$(CC) -c -MMD -MP -DZK_FATBIN_PATH='"$(FATBIN)"' $< -o $@

ENGINE_COBJS  := $(patsubst %.c,$(BUILD)/engine/%.o,$(ENGINE_SRCS))
$(ENGINE_COBJS): $(BUILD)/engine/%.o: engine/%.c | $(BUILD)/engine/
	$(call msg,CC,$(notdir $@))
	$(Q)$(CC) $(ENGINE_CFLAGS) -c $< -o $@

$(BUILD)/zkengine: $(ENGINE_OBJS)
	$(call msg,LD,$(notdir $@))
	$(Q)$(CC) $(ENGINE_CFLAGS) $^ -o $@ $(LDFLAGS) $(ENGINE_LIBS)

# The same engine without frame pointers (whatever FP says), for DWARF unwinding's tests: found
# next to zkengine, it loads the same simcuda.
ENGINE_NOFP_OBJS := $(patsubst %.c,$(BUILD)/engine-nofp/%.o,$(ENGINE_SRCS))
ENGINE_NOFP_CFLAGS := $(filter-out -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer,\
	$(ENGINE_CFLAGS)) -fomit-frame-pointer
all: $(BUILD)/zkengine-nofp
$(ENGINE_NOFP_OBJS): $(BUILD)/engine-nofp/%.o: engine/%.c | $(BUILD)/engine-nofp/
	$(call msg,CC,engine-nofp/$(notdir $@))
	$(Q)$(CC) $(ENGINE_NOFP_CFLAGS) -c $< -o $@

$(BUILD)/zkengine-nofp: $(ENGINE_NOFP_OBJS) $(BUILD)/engine/fatbin.o
	$(call msg,LD,$(notdir $@))
	$(Q)$(CC) $(ENGINE_NOFP_CFLAGS) $^ -o $@ $(LDFLAGS) $(ENGINE_LIBS)

# For the GPU machine, which may lack GMP: GMP linked statically, glibc (and dlopen) dynamic.
.PHONY: zkengine-portable
zkengine-portable: $(BUILD)/zkengine-portable
$(BUILD)/zkengine-portable: $(ENGINE_OBJS)
	$(call msg,LD,$(notdir $@))
	$(Q)$(CC) $(ENGINE_CFLAGS) $^ -o $@ $(LDFLAGS) -ldl -Wl,-Bstatic -lgmp -Wl,-Bdynamic

$(SIMCUDA_OBJS): $(BUILD)/engine/simcuda/%.o: engine/simcuda/%.c | $(BUILD)/engine/simcuda/
	$(call msg,CC,simcuda/$(notdir $@))
	$(Q)$(CC) $(SIMCUDA_CFLAGS) -c $< -o $@

$(SIMCUDA_LIB): $(SIMCUDA_OBJS) | $(BUILD)/simcuda/
	$(call msg,LD,simcuda/$(notdir $@))
	$(Q)$(CC) $(SIMCUDA_CFLAGS) -shared -Wl,-soname,libcuda.so.1 -Wl,-z,defs $^ -o $@ \
		$(LDFLAGS)

# Unit tests of the engine.
$(BUILD)/tests/test_field: TEST_LIBS += -lgmp

# test_simcuda dlopens the built simcuda, as zkengine does.  Its own rule, not the generic one:
# TEST_CFLAGS has -Ibpf, and bpf/cuda.h (the probes' header) would shadow the toolkit's <cuda.h>.
$(BUILD)/tests/test_simcuda: tests/unit/test_simcuda.c | $(BUILD)/tests/ $(SIMCUDA_LIB)
	$(call msg,CC,tests/test_simcuda)
	$(Q)$(CC) $(ENGINE_CFLAGS) -Itests/unit $< -o $@ $(LDFLAGS) -ldl
