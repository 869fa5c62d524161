# The page assets (reports/render/assets/*) embedded into build/gapscope, and a small driver that
# renders generated reports through the renderers alone (tests/cases/render_*.sh).

REPORT_ASSETS := $(wildcard reports/render/assets/*)

# assets.c pulls the files in with .incbin, which -MMD does not see.
$(BUILD)/reports/render/assets.o: $(REPORT_ASSETS)

RENDER_OBJS := $(BUILD)/reports/analysis/folded_parse.o $(patsubst %,$(BUILD)/reports/render/%.o,flamegraph speedscope html assets)

# These two are compiled and linked in one step, so -MMD makes the headers prerequisites of the
# binary itself: once the .d file exists, $^ holds them too, and gcc compiles a header given on
# its command line alone, where it fails on what its includer brings (html.h's bool). Headers
# are left off the command line.
$(BUILD)/tests/render/render_gen: tests/render/render_gen.c $(RENDER_OBJS) $(LIBGAPSCOPE) | $(BUILD)/tests/render/
	$(call msg,CC,tests/render/render_gen)
	$(Q)$(CC) $(CFLAGS) $(GAPSCOPE_INC) $(filter-out %.h,$^) -o $@ $(LDFLAGS)

all: $(BUILD)/tests/render/render_gen

# Unit test of the folded stack sets, next to the other unit tests so tests/run.sh runs it.
$(BUILD)/tests/test_render_folded: tests/render/test_folded.c $(BUILD)/reports/analysis/folded_parse.o \
				  | $(BUILD)/tests/
	$(call msg,CC,tests/test_render_folded)
	$(Q)$(CC) $(CFLAGS) $(GAPSCOPE_INC) $(filter-out %.h,$^) -o $@ $(LDFLAGS)

all: $(BUILD)/tests/test_render_folded
