# make install / make uninstall (dist/): the binary, the CUPTI collector, a man page per command,
# bash completion.
#
#   $(PREFIX)/bin/gapscope                                   build/gapscope, or gapscope-portable
#                                                            where the shared libraries it links
#                                                            are not all there (ldd), or PORTABLE=1
#   $(PREFIX)/lib/gapscope/libgapscope-cupti.so              record looks for it there
#                                                            (loader/cupti_recv.c)
#   $(PREFIX)/share/man/man1/gapscope{,-record,-report,-script,-diff}.1 help2man, from each --help
#   $(PREFIX)/share/bash-completion/completions/gapscope     dist/gapscope.bash

PREFIX    ?= /usr/local
PORTABLE  ?=
LDD       ?= ldd
HELP2MAN  ?= help2man
GS_VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

MAN_CMDS  := record report script diff
MAN_PAGES := $(BUILD)/man/gapscope.1 $(patsubst %,$(BUILD)/man/gapscope-%.1,$(MAN_CMDS))
man_name_gapscope := find the host-side causes of GPU idle time
man_name_record   := record a program or a running process into a trace file
man_name_script   := print a trace, one event per line
man_name_report   := find GPU idle gaps and the chains of waits behind them
man_name_diff     := compare two recordings by the gap time of each root cause

BINDIR   = $(DESTDIR)$(PREFIX)/bin
LIBDIR   = $(DESTDIR)$(PREFIX)/lib/gapscope
MANDIR   = $(DESTDIR)$(PREFIX)/share/man/man1
COMPDIR  = $(DESTDIR)$(PREFIX)/share/bash-completion/completions

$(BUILD)/man/gapscope.1: $(BUILD)/gapscope | $(BUILD)/man/
	$(call msg,MAN,$(notdir $@))
	$(Q)$(HELP2MAN) -N --version-string='$(GS_VERSION)' -n '$(man_name_gapscope)' -o $@ $<

# help2man runs a program with --help: a two-line one per command.
$(BUILD)/man/gapscope-%.1: $(BUILD)/gapscope | $(BUILD)/man/
	$(call msg,MAN,$(notdir $@))
	$(Q)printf '#!/bin/sh\nexec %s %s "$$@"\n' '$(abspath $<)' '$*' >$(BUILD)/man/gapscope-$*
	$(Q)chmod +x $(BUILD)/man/gapscope-$*
	$(Q)$(HELP2MAN) -N --version-string='$(GS_VERSION)' -n '$(man_name_$*)' -o $@ \
		$(BUILD)/man/gapscope-$*

man: $(MAN_PAGES)

install: all $(MAN_PAGES)
	$(Q)bin=gapscope; \
	if [ "$(PORTABLE)" = 1 ] || $(LDD) $(BUILD)/gapscope | grep -q 'not found'; then \
		bin=gapscope-portable; \
	fi; \
	echo "  INSTALL   $$bin -> $(BINDIR)/gapscope"; \
	install -D -m 0755 $(BUILD)/$$bin $(BINDIR)/gapscope
	$(Q)$(if $(CUDA_TOOLKIT),install -D -m 0755 $(BUILD)/libgapscope-cupti.so \
		$(LIBDIR)/libgapscope-cupti.so,install -d $(LIBDIR))
	$(Q)install -d $(MANDIR)
	$(Q)install -m 0644 $(MAN_PAGES) $(MANDIR)/
	$(Q)install -D -m 0644 dist/gapscope.bash $(COMPDIR)/gapscope

uninstall:
	$(Q)rm -f $(BINDIR)/gapscope $(LIBDIR)/libgapscope-cupti.so $(COMPDIR)/gapscope \
		$(patsubst $(BUILD)/man/%,$(MANDIR)/%,$(MAN_PAGES))
	$(Q)if [ -d $(LIBDIR) ]; then rmdir $(LIBDIR); fi
