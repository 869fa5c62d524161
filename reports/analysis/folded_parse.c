// SPDX-License-Identifier: GPL-2.0
/*
 * Folded stack sets (folded.h): FlameGraph's "root;...;leaf N" text in and out, and the prefix
 * tree the renderers walk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "folded.h"

struct fnode {
	char *name;
	__u64 weight, self;
	struct fnode *parent; /* NULL for the root */
	struct fnode **kids;  /* sorted by name */
	unsigned int nkids, capkids;
};

/*
 * A stack's depth is the input's to choose (a line of a million ';'), so nothing here recurses
 * over the tree or keeps a frame per level on the C stack: walks go by parent pointers and
 * each child's place among its siblings.
 */

struct folded {
	struct fnode root; /* nameless; its weight is the total */
	size_t nodes, stacks;
	unsigned int max_depth;
};

struct folded *folded__new(void)
{
	return calloc(1, sizeof(struct folded));
}

/* Frees every node below n (not n): leaves first, climbing back by parent pointers. */
static void fnode__free_kids(struct fnode *n)
{
	struct fnode *k = n, *up;

	while (k) {
		if (k->nkids) {
			k = k->kids[--k->nkids]; /* the last child: taken off its parent */
			continue;
		}
		if (k == n)
			break;
		up = k->parent;
		free(k->kids);
		free(k->name);
		free(k);
		k = up;
	}
	free(n->kids);
}

void folded__free(struct folded *f)
{
	if (!f)
		return;
	fnode__free_kids(&f->root);
	free(f);
}

/* The index of name among n's children, or where it would go (*found false). */
static unsigned int fnode__find(const struct fnode *n, const char *name, size_t len, bool *found)
{
	unsigned int lo = 0, hi = n->nkids;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const char *k = n->kids[mid]->name;
		int c = strncmp(k, name, len);

		if (!c)
			c = k[len] ? 1 : 0;
		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* A copy of the name as the text form can carry it (see folded.h). */
static char *name__dup(const char *name, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = name[i];

		s[i] = c == ';' ? ':' : c < 0x20 || c == 0x7f ? ' ' : c;
	}
	s[len] = '\0';
	return s;
}

static bool name__needs_clean(const char *name, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = name[i];

		if (c == ';' || c < 0x20 || c == 0x7f)
			return true;
	}
	return false;
}

static struct fnode *fnode__child(struct folded *f, struct fnode *n, const char *name, size_t len)
{
	struct fnode *k;
	unsigned int at;
	bool found;
	char *s = NULL;

	/* Look the name up as it will be stored, so "a;b" and "a:b" are one frame. */
	if (name__needs_clean(name, len)) {
		s = name__dup(name, len);
		if (!s)
			return NULL;
		name = s;
	}
	at = fnode__find(n, name, len, &found);
	if (found) {
		free(s);
		return n->kids[at];
	}
	if (n->nkids == n->capkids) {
		unsigned int cap = n->capkids ? 2 * n->capkids : 2;
		struct fnode **kids = realloc(n->kids, cap * sizeof(*kids));

		if (!kids)
			goto nomem;
		n->kids = kids;
		n->capkids = cap;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		goto nomem;
	k->parent = n;
	k->name = s ? s : name__dup(name, len);
	if (!k->name) {
		free(k);
		return NULL;
	}
	memmove(n->kids + at + 1, n->kids + at, (n->nkids - at) * sizeof(*n->kids));
	n->kids[at] = k;
	n->nkids++;
	f->nodes++;
	return k;
nomem:
	free(s);
	return NULL;
}

/* frames as (pointer, length) pairs; lens NULL means NUL-terminated. */
static int folded__add_n(struct folded *f, const char *const *frames, const size_t *lens, size_t n,
			 __u64 weight)
{
	struct fnode *node = &f->root;

	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const char *name = frames[i] ? frames[i] : "";

		node = fnode__child(f, node, name, lens ? lens[i] : strlen(name));
		if (!node)
			return -ENOMEM;
	}
	if (!node->self && weight)
		f->stacks++;
	node->self += weight;
	for (; node; node = node->parent) /* the root's weight is the total */
		node->weight += weight;
	if (n > f->max_depth)
		f->max_depth = n;
	return 0;
}

int folded__add(struct folded *f, const char *const *frames, size_t n, __u64 weight)
{
	return folded__add_n(f, frames, NULL, n, weight);
}

/* One line without its newline. 0, 1 for a line to skip, -EINVAL, -ENOMEM. */
static int folded__parse_line(struct folded *f, const char *s, size_t len, const char ***frames,
			      size_t **lens, size_t *cap)
{
	const char *sp, *p, *end;
	unsigned long long w = 0;
	size_t n = 0;

	while (len && (s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	if (!len || s[0] == '#')
		return 1;
	/*
	 * The last space, found by hand: memrchr() is a GNU extension, and a build without
	 * _GNU_SOURCE (CFLAGS given on make's command line) took it as returning int, the
	 * pointer cut to 32 bits.
	 */
	for (sp = s + len - 1; sp > s && *sp != ' '; sp--)
		;
	if (*sp != ' ' || sp == s || sp + 1 == s + len)
		return -EINVAL;
	for (p = sp + 1; p < s + len; p++) {
		if (*p < '0' || *p > '9' || w > (~0ull - 9) / 10)
			return -EINVAL;
		w = w * 10 + (*p - '0');
	}
	for (p = s, end = sp; p <= end;) {
		const char *semi = memchr(p, ';', end - p);
		const char *e = semi ? semi : end;

		if (n == *cap) {
			size_t c = *cap ? 2 * *cap : 64;
			const char **nf = realloc(*frames, c * sizeof(**frames));
			size_t *nl;

			if (!nf)
				return -ENOMEM;
			*frames = nf;
			nl = realloc(*lens, c * sizeof(**lens));
			if (!nl)
				return -ENOMEM;
			*lens = nl;
			*cap = c;
		}
		(*frames)[n] = p;
		(*lens)[n++] = e - p;
		p = e + 1;
	}
	return folded__add_n(f, *frames, *lens, n, w);
}

struct folded *folded__parse(const char *text, size_t len)
{
	struct folded *f = folded__new();
	const char **frames = NULL;
	size_t *lens = NULL, cap = 0;
	const char *p = text, *end = text + len;
	int err = 0;

	if (!f)
		return NULL;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *e = nl ? nl : end;

		err = folded__parse_line(f, p, e - p, &frames, &lens, &cap);
		if (err < 0)
			break;
		err = 0;
		p = e + 1;
	}
	free(frames);
	free(lens);
	if (err) {
		folded__free(f);
		errno = -err;
		return NULL;
	}
	return f;
}

static struct folded *read_stream(FILE *in)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	struct folded *f = NULL;

	do {
		if (cap - len < 65536) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 1 << 20);

			if (!nb)
				goto out;
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, in);
		len += got;
	} while (got);
	if (!ferror(in))
		f = folded__parse(buf, len);
	else
		errno = EIO;
out:
	free(buf);
	return f;
}

struct folded *folded__read_file(const char *path)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "re") : stdin;
	struct folded *f;

	if (!in)
		return NULL;
	f = read_stream(in);
	if (in != stdin)
		fclose(in);
	return f;
}

struct folded *folded__read_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), err;
	FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;
	struct folded *f;

	if (!in) {
		err = errno;
		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	f = read_stream(in);
	err = errno;
	fclose(in);
	errno = err;
	return f;
}

__u64 folded__total(const struct folded *f)
{
	return f->root.weight;
}

size_t folded__nodes(const struct folded *f)
{
	return f->nodes;
}

size_t folded__stacks(const struct folded *f)
{
	return f->stacks;
}

unsigned int folded__max_depth(const struct folded *f)
{
	return f->max_depth;
}

/*
 * Depth first, parents before children, children in name order, without recursion: at[d] is the
 * index of the child being visited at depth d. visit(node, depth, path, ctx, &skip): non-zero
 * stops the walk (and is returned); *skip set, the node's children are not visited. path[0..depth]
 * names the frames down to the node (NULL: not kept).
 */
typedef int (*fnode_visit)(const struct fnode *k, unsigned int depth, const char **path, void *ctx,
			   bool *skip);

static int fnode__each(const struct folded *f, const char **path, fnode_visit visit, void *ctx)
{
	unsigned int *at = calloc(f->max_depth + 1, sizeof(*at)), d = 0;
	const struct fnode *n = &f->root;
	int ret = 0;

	if (!at)
		return -ENOMEM;
	while (n && !ret) {
		const struct fnode *k;
		bool skip = false;

		if (at[d] == n->nkids) { /* every child done: back to the parent's next */
			n = n->parent;
			if (n)
				at[--d]++;
			continue;
		}
		k = n->kids[at[d]];
		if (path)
			path[d] = k->name;
		ret = visit(k, d, path, ctx, &skip);
		if (ret || skip || !k->nkids || d + 1 > f->max_depth) {
			at[d]++;
			continue;
		}
		n = k;
		at[++d] = 0;
	}
	free(at);
	return ret;
}

struct walk_ctx {
	folded_node_fn node;
	folded_stack_fn stack;
	void *ctx;
};

static int visit_node(const struct fnode *k, unsigned int depth, const char **path, void *ctx,
		      bool *skip)
{
	const struct walk_ctx *w = ctx;
	struct folded_node v = {
		.name = k->name,
		.weight = k->weight,
		.self = k->self,
		.depth = depth,
		.nchildren = k->nkids,
	};
	int ret = w->node(&v, w->ctx);

	*skip = ret == 1;
	return ret == 1 ? 0 : ret;
}

int folded__walk(const struct folded *f, folded_node_fn fn, void *ctx)
{
	struct walk_ctx w = { .node = fn, .ctx = ctx };

	return fnode__each(f, NULL, visit_node, &w);
}

static int visit_stack(const struct fnode *k, unsigned int depth, const char **path, void *ctx,
		       bool *skip)
{
	const struct walk_ctx *w = ctx;

	return k->self ? w->stack(path, depth + 1, k->self, w->ctx) : 0;
}

int folded__for_each_stack(const struct folded *f, folded_stack_fn fn, void *ctx)
{
	const char **path = malloc((f->max_depth + 1) * sizeof(*path));
	struct walk_ctx w = { .stack = fn, .ctx = ctx };
	int ret;

	if (!path)
		return -ENOMEM;
	ret = fnode__each(f, path, visit_stack, &w);
	free(path);
	return ret;
}

static int merge_one(const char *const *frames, size_t n, __u64 weight, void *ctx)
{
	return folded__add(ctx, frames, n, weight);
}

int folded__merge(struct folded *dst, const struct folded *src)
{
	return folded__for_each_stack(src, merge_one, dst);
}

static int write_one(const char *const *frames, size_t n, __u64 weight, void *ctx)
{
	FILE *out = ctx;

	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(';', out);
		fputs(frames[i], out);
	}
	return fprintf(out, " %llu\n", (unsigned long long)weight) < 0 ? -1 : 0;
}

int folded__write(FILE *out, const struct folded *f)
{
	if (folded__for_each_stack(f, write_one, out))
		return -1;
	return ferror(out) ? -1 : 0;
}

enum folded_kind folded__kind(const char *name)
{
	size_t len = strlen(name);

	if (len >= 4 && !strcmp(name + len - 4, "_[k]"))
		return FOLDED_KERNEL;
	if (!strcmp(name, "--") || (len >= 2 && name[0] == '[' && name[len - 1] == ']'))
		return FOLDED_SYNTHETIC;
	return FOLDED_USER;
}
