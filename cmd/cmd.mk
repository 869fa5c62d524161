# The commands (cmd/), on top of every room: the one binary's table and `help`/`--version`
# (gapscope.c), record (record.c: its lifecycle; options.c: its command line), report, script
# (script_meta.c: its '#' lines), diff, and what every command's argp has (cli.c). They link into
# build/gapscope and build/gapscope-portable (loader/loader.mk); nothing below includes them
# (tests/cases/layout.sh).

CMD_SRCS := $(wildcard cmd/*.c)
CMD_OBJS := $(patsubst cmd/%.c,$(BUILD)/cmd/%.o,$(CMD_SRCS))

# record.c includes the BPF skeleton: objects wait for the generated headers.
$(BUILD)/cmd/%.o: cmd/%.c | $(BPF_SKELS)
	$(call msg,CC,$(patsubst $(BUILD)/%,%,$@))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(GAPSCOPE_CFLAGS) -I$(BUILD)/cmd -c $< -o $@

# gapscope --version: the release and the commit built (git describe; "-dirty" with changes not
# committed). The header is rewritten only when they change, so a new commit relinks and nothing
# else does.
GS_RELEASE := 0.1
GS_COMMIT   = $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
$(BUILD)/cmd/version.h: FORCE | $(BUILD)/cmd/
	$(Q)printf '#define GS_VERSION "%s"\n#define GS_COMMIT "%s"\n' '$(GS_RELEASE)' \
		'$(GS_COMMIT)' >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/cmd/gapscope.o: $(BUILD)/cmd/version.h
.PHONY: FORCE
FORCE:

$(BUILD)/gapscope $(BUILD)/gapscope-portable: $(CMD_OBJS)
