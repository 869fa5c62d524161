/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A set of folded stacks: each stack is a list of frames, root first, with a weight in
 * nanoseconds; equal stacks merge (their weights add). The text form is FlameGraph's,
 * one stack a line, "root;...;leaf N".
 *
 * Stored as a tree of frames (a prefix tree), the shape a flame graph draws: a node's weight is
 * the sum of the stacks that pass through it, its self weight that of the stacks that end there.
 * Children are kept sorted by name (byte order), so walks are deterministic.
 *
 * Frame names are stored as they will be written: a ';' inside a name (which would split the
 * frame when read back) becomes ':', and control characters (a newline would end the line)
 * become spaces. Synthetic frames keep their annotations ("[lock tracker_lock]",
 * "[woken by finalizer-2]", "--"), kernel frames their "_[k]" suffix.
 */
#ifndef GAPSCOPE_FOLDED_H
#define GAPSCOPE_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct folded;

/* One node of the tree, as walks see it (the tree's own storage stays private). */
struct folded_node {
	const char *name;   /* NUL-terminated, owned by the set */
	__u64 weight;	    /* this frame and everything above it */
	__u64 self;	    /* stacks that end at this frame */
	unsigned int depth; /* 0 for a root frame */
	unsigned int nchildren;
};

struct folded *folded__new(void);
void folded__free(struct folded *f);

/*
 * Parses FlameGraph text: "a;b;c 123" per line, the weight after the line's last space (frame
 * names may hold spaces). Empty lines and lines starting with '#' are skipped. Returns NULL
 * with errno set (EINVAL for a malformed line, ENOMEM) on failure.
 */
struct folded *folded__parse(const char *text, size_t len);
/* Reads a whole file (or stdin for "-") and parses it. */
struct folded *folded__read_file(const char *path);
/* The same, NAME under the directory DFD, never through a link at NAME. */
struct folded *folded__read_at(int dfd, const char *name);

/* Adds weight to the stack frames[0] (root) .. frames[n - 1] (leaf). 0 or -ENOMEM/-EINVAL. */
int folded__add(struct folded *f, const char *const *frames, size_t n, __u64 weight);
/* Adds every stack of src to dst. */
int folded__merge(struct folded *dst, const struct folded *src);

__u64 folded__total(const struct folded *f);		/* the sum of all weights */
size_t folded__nodes(const struct folded *f);		/* frames in the tree, roots included */
size_t folded__stacks(const struct folded *f);		/* distinct stacks */
unsigned int folded__max_depth(const struct folded *f); /* frames in the deepest stack */

/*
 * Walks the tree depth first, parents before children, children in name order. fn returns 0 to
 * go on, 1 to skip the node's children, anything else to stop the walk (and be returned).
 */
typedef int (*folded_node_fn)(const struct folded_node *node, void *ctx);
int folded__walk(const struct folded *f, folded_node_fn fn, void *ctx);

/* Calls fn for every distinct stack (frames root first) with its weight, in name order. */
typedef int (*folded_stack_fn)(const char *const *frames, size_t n, __u64 weight, void *ctx);
int folded__for_each_stack(const struct folded *f, folded_stack_fn fn, void *ctx);

/* Writes the FlameGraph text form. -1 on a write error. */
int folded__write(FILE *out, const struct folded *f);

/* What a frame is, from its name: drawn and coloured apart in the renderers. */
enum folded_kind {
	FOLDED_USER,
	FOLDED_KERNEL,	  /* "..._[k]" */
	FOLDED_SYNTHETIC, /* "[...]" annotations and the "--" separator */
};
enum folded_kind folded__kind(const char *name);

#endif /* GAPSCOPE_FOLDED_H */
