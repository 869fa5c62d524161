# gapscope — top-level build.
#
#   make            build everything into build/
#   make deps       install missing Debian packages (apt-get update first)
#   make demo       the main job: zkengine under gapscope, then a report
#   make check      every test; the runner ends with "N passed, N failed, N skipped"
#   make check-soak the soaks and the fuzzers' timed runs (tests/soak), apart: minutes each
#   make check-asan the unit tests, the report/script end-to-end tests, the fuzz corpora and a
#                   mutated-trace corpus under ASan + UBSan (tests/check_asan.sh)
#   make bench      benchmarks (ratios measured side by side in one run)
#   make stress-scenarios  the scenario test 10 times beside two CPU-bound processes
#   make vmlinux    regenerate vmlinux/<arch>/vmlinux.h from this kernel's BTF
#   make format     format every C source with the repository's .clang-format
#   make install    PREFIX=/usr/local DESTDIR=: gapscope, its CUPTI collector, man pages,
#                   bash completion (dist/dist.mk); make uninstall removes exactly those
#   V=1             show full commands
#
# Each directory owns a fragment (engine/engine.mk, bpf/bpf.mk, ...) included below.

.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:
.DEFAULT_GOAL := all

BUILD     ?= build
CUDA_HOME ?= /usr/local/cuda
CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
NVCC      ?= $(CUDA_HOME)/bin/nvcc
# The CUDA toolkit at $(CUDA_HOME) gives the engine its real-GPU kernels (nvcc) and builds the
# CUPTI collector. Without it (Debian 12 has none in main, and non-free's nvidia-cuda-toolkit,
# 11.8, predates driver calls used here: NVIDIA's repository has it) everything else builds and
# runs on simcuda: the engine declares the driver API it uses (engine/cuda_api.h). Said once.
CUDA_TOOLKIT := $(if $(wildcard $(NVCC)),yes)
ifeq ($(CUDA_TOOLKIT)$(MAKELEVEL),0)
ifneq ($(filter-out clean format vmlinux uninstall,$(or $(MAKECMDGOALS),all)),)
$(info gapscope: no CUDA toolkit at $(CUDA_HOME): building for simcuda only, without the \
	real-GPU kernels and the CUPTI collector (cuda-toolkit-13-0 from NVIDIA's Debian 12 \
	repository, https://developer.nvidia.com/cuda-downloads, or set CUDA_HOME))
endif
endif
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-9s %s\n' "$(1)" "$(2)"
endif

# Frame pointers everywhere by default; FP=0 builds the engine without them (stacks issue).
FP ?= 1
ifeq ($(FP),1)
FPFLAGS := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
else
FPFLAGS := -fomit-frame-pointer
endif

WARN     := -Wall -Wextra -Wno-unused-parameter
CFLAGS   ?= -O2 -g
# override: flags the build needs stay when CFLAGS is given on the command line (sanitizers)
override CFLAGS += $(WARN) $(FPFLAGS) -MMD -MP -D_GNU_SOURCE -pthread
override LDFLAGS += -pthread

# Packages the project needs from Debian; CUDA comes from the toolkit at $(CUDA_HOME). libiberty:
# the demangler; libdebuginfod1: what libdwfl loads to ask debuginfod servers (DEBUGINFOD_URLS);
# xz-utils: tests make MiniDebugInfo; valgrind: record_errors holds a refusal to freeing all;
# libjansson-dev: gapscope diff reads summary.json (its libjansson.a for gapscope-portable).
DEB_PKGS = build-essential clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev \
	   libzstd-dev liblzma-dev libbz2-dev libgmp-dev pkg-config python3 python3-dev util-linux clang-format \
	   libiberty-dev libdebuginfod1 xz-utils valgrind python3-protobuf \
	   help2man protobuf-c-compiler libprotobuf-c-dev libjansson-dev golang-go prometheus \
	   $(TOKIO_DEB_PKGS) $(BROWSER_DEB_PKGS)

all:

include engine/engine.mk
include engine/tokio/tokio.mk
include bpf/bpf.mk
include lib/lib.mk
include loader/loader.mk
include loader/cupti/cupti.mk
include reports/reports.mk
include cmd/cmd.mk
include tests/tests.mk
include tests/fuzz/fuzz.mk
include reports/render/assets.mk
include tests/browser/deps.mk
include dist/dist.mk

$(BUILD)/%/:
	$(Q)mkdir -p $@

.PHONY: all deps check check-soak check-asan demo bench vmlinux clean install uninstall man stress-scenarios format

deps:
	$(Q)missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "  DEPS      installing:" $$missing; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi
	$(Q)$(MAKE) --no-print-directory browser-deps

# The main job: build, run the engine under the recorder (real GPU when present, else simcuda),
# and write a report.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/demo.sh $(BUILD)

check: deps
	$(Q)$(MAKE) --no-print-directory all tests
	$(Q)tests/run.sh $(BUILD)

# The soaks and the fuzzers' timed runs (tests/soak: a minute or more each), apart from check.
check-soak: deps
	$(Q)$(MAKE) --no-print-directory all tests
	$(Q)CASES=tests/soak tests/run.sh $(BUILD)

# A second build with the sanitizers, into $(BUILD)/check-asan: gapscope and the unit tests but
# test_simcuda; the engine and simcuda are the plain build's (a sanitized library cannot load
# into plain programs).
ASAN_BUILD := $(BUILD)/check-asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
ASAN_UNITS := $(patsubst $(BUILD)/%,$(ASAN_BUILD)/%,$(filter-out %/test_simcuda,$(UNIT_BINS)))
check-asan: deps
	$(Q)$(MAKE) --no-print-directory all fuzz-build
	$(Q)$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) CFLAGS="-O1 -g $(ASAN_FLAGS)" \
		LDFLAGS="$(ASAN_FLAGS)" $(ASAN_BUILD)/gapscope $(ASAN_UNITS)
	$(Q)tests/check_asan.sh $(BUILD) $(ASAN_BUILD)

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/run.sh $(BUILD)
	$(Q)tests/bench/launch_cost.sh $(BUILD)
	$(Q)tests/bench/pyframes_cost.sh $(BUILD)
	$(Q)tests/bench/fault_cost.sh $(BUILD)
	$(Q)tests/bench/flight_soak.sh $(BUILD)
	$(Q)tests/bench/rss_libs.sh $(BUILD)
	$(Q)tests/bench/rss_bigsyms.sh $(BUILD)
	$(Q)tests/report/bench.sh $(BUILD)

stress-scenarios: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/stress_scenarios.sh $(BUILD) | tee tests/bench/stress-scenarios.txt

format:
	$(Q)git ls-files '*.c' '*.h' | grep -v '^vmlinux/' | xargs clang-format --style=file -i

vmlinux:
	$(call msg,GEN,vmlinux/$(ARCH)/vmlinux.h)
	$(Q)mkdir -p vmlinux/$(ARCH)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

clean:
	$(Q)rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
