# tokengine (engine/tokio/): zkengine's pipeline on tokio, a test target for task-aware blame.
# Rust from Debian's packages alone: Debian's cargo and rustc, the crates Debian ships under
# /usr/share/cargo/registry used as cargo's offline directory source (no other registry).  The
# GPU layer is zkengine's (engine/gpu.c, gpu_driver.c and its fatbin) behind engine/tokio/shim.c,
# linked in as a static library; the binary sits in $(BUILD) so it finds simcuda as zkengine does.

TOKIO_DEB_PKGS := cargo rustc librust-tokio-dev librust-libc-dev
CARGO          ?= /usr/bin/cargo
DEB_RUSTC      ?= /usr/bin/rustc
CARGO_REGISTRY ?= /usr/share/cargo/registry
TOKIO_DIR      := $(BUILD)/tokio
TOKIO_SRCS     := engine/tokio/Cargo.toml $(wildcard engine/tokio/src/*.rs)
TOKIO_LIB      := $(TOKIO_DIR)/libzkgpu.a
# Frame pointers in every crate (the runtime's too), as the C engine has them.
TOKIO_RUSTFLAGS := -C force-frame-pointers=yes

all: $(BUILD)/tokengine

$(BUILD)/engine/tokio_shim.o: engine/tokio/shim.c | $(BUILD)/engine/
	$(call msg,CC,tokio_shim.o)
	$(Q)$(CC) $(ENGINE_CFLAGS) -c $< -o $@

$(TOKIO_LIB): $(BUILD)/engine/tokio_shim.o $(BUILD)/engine/gpu.o $(BUILD)/engine/gpu_driver.o \
		$(BUILD)/engine/fatbin.o | $(TOKIO_DIR)/
	$(call msg,AR,$(notdir $@))
	$(Q)rm -f $@ && ar rcs $@ $^

# cargo's configuration: crates-io replaced by the directory of Debian's crates, offline.
$(TOKIO_DIR)/cargo-home/config.toml: engine/tokio/tokio.mk | $(TOKIO_DIR)/cargo-home/
	$(call msg,GEN,$@)
	$(Q)printf '%s\n' '[source.crates-io]' 'replace-with = "debian"' '[source.debian]' \
		'directory = "$(CARGO_REGISTRY)"' '[net]' 'offline = true' > $@

# The crate is copied into the build directory: cargo writes Cargo.lock next to the manifest.
$(BUILD)/tokengine: $(TOKIO_SRCS) $(TOKIO_LIB) $(TOKIO_DIR)/cargo-home/config.toml
	$(call msg,CARGO,$(notdir $@))
	$(Q)rm -rf $(TOKIO_DIR)/crate && mkdir -p $(TOKIO_DIR)/crate && \
		cp -r engine/tokio/Cargo.toml engine/tokio/src $(TOKIO_DIR)/crate/
	$(Q)cd $(TOKIO_DIR)/crate && CARGO_HOME=$(abspath $(TOKIO_DIR))/cargo-home \
		RUSTC=$(DEB_RUSTC) RUSTFLAGS="$(TOKIO_RUSTFLAGS)" $(CARGO) rustc --release \
		--offline --quiet --target-dir $(abspath $(TOKIO_DIR))/target -- \
		-L native=$(abspath $(TOKIO_DIR)) -l static=zkgpu -l dylib=dl
	$(Q)cp $(TOKIO_DIR)/target/release/tokengine $@
