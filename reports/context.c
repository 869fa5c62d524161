// SPDX-License-Identifier: GPL-2.0
/*
 * The trace context (context.h): what the records so far say about threads, processes, probes,
 * kernels and the recorder. Strings live in an arena freed with the context; lookups by id go
 * through open-addressing tables, so feeding a record costs no allocation but when it adds a
 * name or a mapping.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "decode.h"

/* ---- strings: an arena, freed at once ---------------------------------------------------- */

#define ARENA_BLOCK (64u << 10)

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

static char *arena__strndup(struct arena_block **head, const char *s, size_t n)
{
	struct arena_block *b = *head;
	char *p;

	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > ARENA_BLOCK ? n + 1 : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = *head;
		b->used = 0;
		b->cap = cap;
		*head = b;
	}
	p = b->data + b->used;
	memcpy(p, s, n);
	p[n] = 0;
	b->used += n + 1;
	return p;
}

/* ---- u64 -> index tables (index + 1 stored: 0 is a free slot) ----------------------------- */

struct idmap {
	__u64 *keys;
	__u32 *vals;
	size_t cap, n;
};

static size_t idmap__slot(const struct idmap *m, __u64 key)
{
	size_t i = (key * 0x9e3779b97f4a7c15ull >> 17) & (m->cap - 1);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* The index stored for key, or -1. */
static long idmap__get(const struct idmap *m, __u64 key)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = idmap__slot(m, key);
	return m->vals[i] ? (long)m->vals[i] - 1 : -1;
}

static int idmap__set(struct idmap *m, __u64 key, __u32 val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct idmap big = { .cap = m->cap ? m->cap * 2 : 64 };

		big.keys = calloc(big.cap, sizeof(*big.keys));
		big.vals = calloc(big.cap, sizeof(*big.vals));
		if (!big.keys || !big.vals) {
			free(big.keys);
			free(big.vals);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->vals[j])
				continue;
			i = idmap__slot(&big, m->keys[j]);
			big.keys[i] = m->keys[j];
			big.vals[i] = m->vals[j];
			big.n++;
		}
		free(m->keys);
		free(m->vals);
		*m = big;
	}
	i = idmap__slot(m, key);
	if (!m->vals[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val + 1;
	return 0;
}

static void idmap__free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
}

/* Grows a vector of elements of size sz to hold n + 1. */
static int vec__reserve(void **v, size_t *cap, size_t n, size_t sz)
{
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, (*cap ? *cap * 2 : 16) * sz);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = *cap ? *cap * 2 : 16;
	return 0;
}

/* ---- the context ----------------------------------------------------------------------------- */

struct comm {
	char name[GS_COMM_LEN + 1];
};

/* The mappings of one process: sorted by start, never overlapping (a later one cuts earlier). */
struct proc_maps {
	struct ctx_map *v;
	size_t n, cap;
};

#define CTX_MAX_COUNTERS 64

struct gs_ctx {
	struct arena_block *arena;

	struct idmap comm_ids;		/* tid -> comms[] */
	struct comm *comms;
	size_t ncomms, comms_cap;

	struct idmap probe_ids;		/* probe id -> probes[] */
	struct ctx_probe *probes;
	size_t nprobes, probes_cap;

	/* Kernel names by handle: from lookups, and (trusted libraries only) from handles. */
	struct idmap kernel_ids, hkernel_ids;	/* handle -> names[] */
	const char **names;
	size_t nnames, names_cap;

	/* Libraries whose handle names a lookup contradicted; any: one whose library is unknown. */
	const char **distrust;
	size_t ndistrust, distrust_cap;
	bool distrust_any;

	struct idmap proc_ids;		/* tgid -> procs[] */
	struct proc_maps *procs;
	size_t nprocs, procs_cap;

	struct ctx_ksym *ksyms;
	size_t nksyms, ksyms_cap;
	bool ksyms_sorted;

	struct ctx_target target;

	struct gs_rec_clock clock;
	struct gs_rec_sampler sampler;
	struct gs_rec_cu_handles cu_handles;
	struct gs_rec_exit exit;
	struct gs_rec_end end;
	bool has_clock, has_sampler, has_cu_handles, has_exit, has_end;

	__u64 losses[CTX_MAX_COUNTERS], lost_types[CTX_MAX_COUNTERS];
	__u32 nlosses, nlost_types;
	bool has_losses, has_lost_types;
};

struct gs_ctx *ctx__new(void)
{
	struct gs_ctx *ctx = calloc(1, sizeof(*ctx));

	if (ctx)
		ctx->ksyms_sorted = true;
	return ctx;
}

void ctx__free(struct gs_ctx *ctx)
{
	struct arena_block *b, *next;

	if (!ctx)
		return;
	for (b = ctx->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	idmap__free(&ctx->comm_ids);
	idmap__free(&ctx->probe_ids);
	idmap__free(&ctx->kernel_ids);
	idmap__free(&ctx->hkernel_ids);
	idmap__free(&ctx->proc_ids);
	for (size_t i = 0; i < ctx->nprocs; i++)
		free(ctx->procs[i].v);
	free(ctx->procs);
	free(ctx->comms);
	free(ctx->probes);
	free(ctx->names);
	free(ctx->distrust);
	free(ctx->ksyms);
	free((void *)ctx->target.argv);
	free(ctx);
}

static const char *ctx__str(struct gs_ctx *ctx, const char *s, size_t n)
{
	return arena__strndup(&ctx->arena, s, n);
}

/* ---- thread names ---------------------------------------------------------------------------- */

static void set_comm(struct gs_ctx *ctx, __u32 tid, const char *name, size_t len)
{
	long i = idmap__get(&ctx->comm_ids, tid);

	if (i < 0) {
		if (vec__reserve((void **)&ctx->comms, &ctx->comms_cap, ctx->ncomms,
				 sizeof(*ctx->comms)) ||
		    idmap__set(&ctx->comm_ids, tid, ctx->ncomms))
			return;
		i = ctx->ncomms++;
	}
	if (len > GS_COMM_LEN)
		len = GS_COMM_LEN;
	memcpy(ctx->comms[i].name, name, len);
	ctx->comms[i].name[len] = 0;
}

const char *ctx__comm(const struct gs_ctx *ctx, __u32 tid)
{
	long i = idmap__get(&ctx->comm_ids, tid);

	return i < 0 ? NULL : ctx->comms[i].name;
}

/* ---- probes and kernel names ----------------------------------------------------------------- */

const struct ctx_probe *ctx__probe(const struct gs_ctx *ctx, __u32 id)
{
	long i = idmap__get(&ctx->probe_ids, id);

	return i < 0 ? NULL : &ctx->probes[i];
}

static void note_probe(struct gs_ctx *ctx, const struct gs_rec_probe *p)
{
	const struct gs_hdr *h = &p->h;
	size_t ll = gs_rec_strlen(h, p->names);
	const char *sym = p->names + ll + 1;
	struct ctx_probe cp = {
		.id = p->id,
		.family = p->family,
		.kind = p->kind,
		.flags = p->flags,
		.err = p->err,
		.live_ns = h->ts,
		.offset = p->offset,
	};
	long i;

	cp.lib = ctx__str(ctx, p->names, ll);
	cp.sym = ctx__str(ctx, sym, gs_rec_strlen(h, sym));
	if (!cp.lib || !cp.sym)
		return;
	i = idmap__get(&ctx->probe_ids, p->id);
	if (i < 0) {
		if (vec__reserve((void **)&ctx->probes, &ctx->probes_cap, ctx->nprobes,
				 sizeof(*ctx->probes)) ||
		    idmap__set(&ctx->probe_ids, p->id, ctx->nprobes))
			return;
		i = ctx->nprobes++;
	}
	ctx->probes[i] = cp;
}

static void set_name(struct gs_ctx *ctx, struct idmap *ids, __u64 handle, const char *name)
{
	long i = idmap__get(ids, handle);

	if (i >= 0) {
		ctx->names[i] = name;
		return;
	}
	if (vec__reserve((void **)&ctx->names, &ctx->names_cap, ctx->nnames,
			 sizeof(*ctx->names)) ||
	    idmap__set(ids, handle, ctx->nnames))
		return;
	ctx->names[ctx->nnames++] = name;
}

static const char *get_name(const struct gs_ctx *ctx, const struct idmap *ids, __u64 handle)
{
	long i = idmap__get(ids, handle);

	return i < 0 ? NULL : ctx->names[i];
}

const char *ctx__kernel_name(const struct gs_ctx *ctx, __u64 handle, bool *by_handle)
{
	const char *name = get_name(ctx, &ctx->kernel_ids, handle);

	if (by_handle)
		*by_handle = false;
	if (name)
		return name;
	name = get_name(ctx, &ctx->hkernel_ids, handle);
	if (name && by_handle)
		*by_handle = true;
	return name;
}

static bool distrusted(const struct gs_ctx *ctx, const char *lib)
{
	for (size_t i = 0; i < ctx->ndistrust; i++)
		if (!strcmp(ctx->distrust[i], lib))
			return true;
	return false;
}

/* A lookup contradicted the name behind a handle of fn's library (of probes: which ones know). */
static void distrust(struct gs_ctx *ctx, const struct gs_ctx *probes, __u32 fn)
{
	const struct ctx_probe *p = ctx__probe(probes, fn);
	const char *lib;

	if (!p) {
		ctx->distrust_any = true;	/* which library is unknown: trust none */
		return;
	}
	if (distrusted(ctx, p->lib))
		return;
	lib = ctx__str(ctx, p->lib, strlen(p->lib));
	if (!lib || vec__reserve((void **)&ctx->distrust, &ctx->distrust_cap, ctx->ndistrust,
				 sizeof(*ctx->distrust)))
		return;
	ctx->distrust[ctx->ndistrust++] = lib;
}

bool ctx__handle_names_trusted(const struct gs_ctx *ctx, __u32 fn)
{
	const struct ctx_probe *p = ctx__probe(ctx, fn);

	return p && !ctx->distrust_any && !distrusted(ctx, p->lib);
}

/* The calibration flags of a name event, or of the event of cuKernelGetFunction. */
static bool disagrees(const struct gs_hdr *h, __u32 *fn)
{
	const struct cu_name_event *n;
	const struct cu_event *e;

	if (!(h->flags & CU_NF_CAL_DISAGREE))
		return false;
	if ((n = gs_cu_name(h)))
		*fn = n->fn;
	else if ((e = gs_cuda(h)))
		*fn = e->fn;
	else
		return false;
	return true;
}

static void note_cu_name(struct gs_ctx *ctx, const struct cu_name_event *e)
{
	size_t len = strnlen(e->name, CU_NAME_LEN);
	const char *name;

	if (e->h.flags & CU_NF_BY_HANDLE) {
		/* Read from the handle at its first use (record -p: the lookup was before). */
		if (!e->handle || !ctx__handle_names_trusted(ctx, e->fn))
			return;
		name = ctx__str(ctx, e->name, len);
		if (name)
			set_name(ctx, &ctx->hkernel_ids, e->handle, name);
		return;
	}
	if (e->ret || !e->handle)
		return;
	name = ctx__str(ctx, e->name, len);
	if (name)
		set_name(ctx, &ctx->kernel_ids, e->handle, name);
}

/* cuKernelGetFunction: the CUfunction of a CUkernel gets the CUkernel's name. */
static void note_kernel_function(struct gs_ctx *ctx, const struct cu_event *e)
{
	const char *name = get_name(ctx, &ctx->kernel_ids, e->aux);

	if (e->handle == e->aux)
		return;
	if (name)
		set_name(ctx, &ctx->kernel_ids, e->handle, name);
	else if ((name = get_name(ctx, &ctx->hkernel_ids, e->aux)))
		set_name(ctx, &ctx->hkernel_ids, e->handle, name);
}

int ctx__prescan(struct gs_ctx *ctx, const char *path)
{
	struct gs_ctx *probes = ctx__new();
	struct trace_reader *r;
	const struct gs_hdr *h;
	char err[512];
	__u32 fn;

	if (!probes)
		return -ENOMEM;
	r = trace__open(path, err, sizeof(err));
	if (!r) {
		ctx__free(probes);
		return -EINVAL;
	}
	while (trace__next(r, &h) > 0) {
		const struct gs_rec_probe *p = gs_probe_rec(h);

		if (p)
			note_probe(probes, p);
		else if (disagrees(h, &fn))
			distrust(ctx, probes, fn);
	}
	trace__close(r);
	ctx__free(probes);
	return 0;
}

/* ---- maps -------------------------------------------------------------------------------- */

static struct proc_maps *proc_of(struct gs_ctx *ctx, __u32 tgid, bool create)
{
	long i = idmap__get(&ctx->proc_ids, tgid);

	if (i >= 0)
		return &ctx->procs[i];
	if (!create ||
	    vec__reserve((void **)&ctx->procs, &ctx->procs_cap, ctx->nprocs,
			 sizeof(*ctx->procs)) ||
	    idmap__set(&ctx->proc_ids, tgid, ctx->nprocs))
		return NULL;
	ctx->procs[ctx->nprocs] = (struct proc_maps){};
	return &ctx->procs[ctx->nprocs++];
}

/* The first mapping that ends after addr (the one holding it, if any holds it). */
static size_t maps__lower(const struct proc_maps *pm, __u64 addr)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Puts m in place: what it overlaps of earlier mappings is cut away, as mmap replaces them. */
static void maps__insert(struct proc_maps *pm, const struct ctx_map *m)
{
	size_t i = maps__lower(pm, m->start), j = i;
	struct ctx_map head = {}, tail = {};
	bool has_head = false, has_tail = false;
	size_t add;

	/* [i, j): the mappings that overlap m. */
	while (j < pm->n && pm->v[j].start < m->end)
		j++;
	if (i < j && pm->v[i].start < m->start) {
		head = pm->v[i];
		head.end = m->start;
		has_head = true;
	}
	if (i < j && pm->v[j - 1].end > m->end) {
		tail = pm->v[j - 1];
		tail.pgoff += m->end - tail.start;
		tail.start = m->end;
		has_tail = true;
	}
	add = 1 + has_head + has_tail;
	if (pm->n - (j - i) + add > pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 32;
		struct ctx_map *nv = realloc(pm->v, cap * sizeof(*nv));

		if (!nv)
			return;
		pm->v = nv;
		pm->cap = cap;
	}
	memmove(&pm->v[i + add], &pm->v[j], (pm->n - j) * sizeof(*pm->v));
	pm->n = pm->n - (j - i) + add;
	if (has_head)
		pm->v[i++] = head;
	pm->v[i++] = *m;
	if (has_tail)
		pm->v[i] = tail;
}

static void note_map(struct gs_ctx *ctx, const struct gs_rec_map *r)
{
	struct proc_maps *pm = proc_of(ctx, r->h.tgid, true);
	struct ctx_map m = {
		.start = r->start,
		.end = r->end,
		.pgoff = r->pgoff,
		.ino = r->ino,
		.prot = r->prot,
	};

	if (!pm || r->end <= r->start)
		return;
	m.path = ctx__str(ctx, r->path, gs_rec_strlen(&r->h, r->path));
	if (r->build_id_len && r->build_id_len <= sizeof(r->build_id)) {
		m.build_id = (const __u8 *)ctx__str(ctx, (const char *)r->build_id,
						    r->build_id_len);
		m.build_id_len = m.build_id ? r->build_id_len : 0;
	}
	if (m.path)
		maps__insert(pm, &m);
}

static void note_mmap(struct gs_ctx *ctx, const struct mmap_event *e)
{
	struct proc_maps *pm = proc_of(ctx, e->h.tgid, true);
	struct ctx_map m = {
		.start = e->addr,
		.end = e->addr + e->len,
		.pgoff = e->pgoff,
		.ino = e->ino,
		.from_mmap = true,
	};
	size_t i;

	if (!pm || m.end <= m.start)
		return;
	/* The same mapping already recorded from /proc (a full path): keep that one. */
	i = maps__lower(pm, m.start);
	if (i < pm->n && pm->v[i].start == m.start && pm->v[i].end == m.end &&
	    pm->v[i].pgoff == m.pgoff && pm->v[i].ino == m.ino)
		return;
	m.path = ctx__str(ctx, e->name, strnlen(e->name, PROC_NAME_LEN));
	if (m.path)
		maps__insert(pm, &m);
}

const struct ctx_map *ctx__map(struct gs_ctx *ctx, __u32 tgid, __u64 addr)
{
	const struct proc_maps *pm = proc_of(ctx, tgid, false);
	size_t i;

	if (!pm)
		return NULL;
	i = maps__lower(pm, addr);
	return i < pm->n && pm->v[i].start <= addr ? &pm->v[i] : NULL;
}

/* ---- kernel symbols ---------------------------------------------------------------------------- */

static int cmp_ksym(const void *a, const void *b)
{
	const struct ctx_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void note_ksym(struct gs_ctx *ctx, const struct gs_rec_ksym *k)
{
	const char *name = ctx__str(ctx, k->name, gs_rec_strlen(&k->h, k->name));

	if (!name || vec__reserve((void **)&ctx->ksyms, &ctx->ksyms_cap, ctx->nksyms,
				  sizeof(*ctx->ksyms)))
		return;
	if (ctx->nksyms && ctx->ksyms[ctx->nksyms - 1].addr > k->addr)
		ctx->ksyms_sorted = false;
	ctx->ksyms[ctx->nksyms++] = (struct ctx_ksym){ k->addr, name };
}

const struct ctx_ksym *ctx__ksym(struct gs_ctx *ctx, __u64 addr)
{
	size_t lo = 0, hi = ctx->nksyms;

	if (!ctx->ksyms_sorted) {
		qsort(ctx->ksyms, ctx->nksyms, sizeof(*ctx->ksyms), cmp_ksym);
		ctx->ksyms_sorted = true;
	}
	if (!ctx->nksyms || addr < ctx->ksyms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ctx->ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &ctx->ksyms[lo];
}

/* ---- the target and the recorder's records ----------------------------------------------- */

static void note_target(struct gs_ctx *ctx, const struct gs_rec_target *t)
{
	const char *a = t->argv, *end = gs_rec_tail_end(&t->h), *base;
	const char **argv;
	__u32 n = 0;

	argv = calloc(t->argc < 4096 ? t->argc + 1 : 4097, sizeof(*argv));
	if (!argv)
		return;
	while (n < t->argc && n < 4096 && a < end) {
		size_t len = gs_rec_strlen(&t->h, a);

		argv[n] = ctx__str(ctx, a, len);
		if (!argv[n])
			break;
		n++;
		a += len + 1;
	}
	free((void *)ctx->target.argv);
	ctx->target = (struct ctx_target){ t->h.tgid, t->mode, n, argv };
	/* Named by its program until the trace says otherwise (exec, comm). */
	if (n && !ctx__comm(ctx, t->h.tgid)) {
		base = strrchr(argv[0], '/');
		base = base ? base + 1 : argv[0];
		set_comm(ctx, t->h.tgid, base, strlen(base));
	}
}

static void copy_counters(__u64 *dst, __u32 *n, const struct gs_hdr *h, __u32 count,
			  const __u64 *src)
{
	__u32 have = gs_rec_counters(h, count, src);

	*n = have < CTX_MAX_COUNTERS ? have : CTX_MAX_COUNTERS;
	memcpy(dst, src, *n * sizeof(*dst));
}

const struct ctx_target *ctx__target(const struct gs_ctx *ctx)
{
	return &ctx->target;
}

const struct gs_rec_clock *ctx__clock(const struct gs_ctx *ctx)
{
	return ctx->has_clock ? &ctx->clock : NULL;
}

const struct gs_rec_sampler *ctx__sampler(const struct gs_ctx *ctx)
{
	return ctx->has_sampler ? &ctx->sampler : NULL;
}

const struct gs_rec_cu_handles *ctx__cu_handles(const struct gs_ctx *ctx)
{
	return ctx->has_cu_handles ? &ctx->cu_handles : NULL;
}

const struct gs_rec_exit *ctx__exit(const struct gs_ctx *ctx)
{
	return ctx->has_exit ? &ctx->exit : NULL;
}

const struct gs_rec_end *ctx__end(const struct gs_ctx *ctx)
{
	return ctx->has_end ? &ctx->end : NULL;
}

const __u64 *ctx__losses(const struct gs_ctx *ctx, __u32 *n)
{
	*n = ctx->nlosses;
	return ctx->has_losses ? ctx->losses : NULL;
}

__u64 ctx__lost_total(const struct gs_ctx *ctx)
{
	__u64 sum = 0;

	for (__u32 i = 0; i < ctx->nlosses; i++)
		sum += ctx->losses[i];
	return sum;
}

const __u64 *ctx__lost_types(const struct gs_ctx *ctx, __u32 *n)
{
	*n = ctx->nlost_types;
	return ctx->has_lost_types ? ctx->lost_types : NULL;
}

/* ---- feeding ------------------------------------------------------------------------------ */

#define COPY(field, T, dec)                              \
	do {                                             \
		const T *_r = dec(h);                    \
		if (_r) {                                \
			ctx->field = *_r;                \
			ctx->has_##field = true;         \
		}                                        \
	} while (0)

void ctx__note(struct gs_ctx *ctx, const struct gs_hdr *h)
{
	__u32 fn;

	if (disagrees(h, &fn))
		distrust(ctx, ctx, fn);
	switch (h->type) {
	case GS_EV_CUDA: {
		const struct cu_event *e = gs_cuda(h);

		if (e && e->kind == CU_K_KERNEL_FUNCTION)
			note_kernel_function(ctx, e);
		break;
	}
	case GS_EV_CU_NAME: {
		const struct cu_name_event *e = gs_cu_name(h);

		if (e)
			note_cu_name(ctx, e);
		break;
	}
	case GS_EV_FORK: {
		const struct fork_event *e = gs_fork(h);

		if (e)
			set_comm(ctx, e->child_tid, e->comm, strnlen(e->comm, GS_COMM_LEN));
		break;
	}
	case GS_EV_COMM: {
		const struct comm_event *e = gs_comm(h);

		if (e)
			set_comm(ctx, h->tid, e->comm, strnlen(e->comm, GS_COMM_LEN));
		break;
	}
	case GS_EV_EXEC: {
		const struct exec_event *e = gs_exec(h);

		if (e)
			set_comm(ctx, h->tid, e->comm, strnlen(e->comm, GS_COMM_LEN));
		break;
	}
	case GS_EV_MMAP: {
		const struct mmap_event *e = gs_mmap(h);

		if (e)
			note_mmap(ctx, e);
		break;
	}
	case GS_REC_TARGET: {
		const struct gs_rec_target *t = gs_target(h);

		if (t)
			note_target(ctx, t);
		break;
	}
	case GS_REC_PROBE: {
		const struct gs_rec_probe *p = gs_probe_rec(h);

		if (p)
			note_probe(ctx, p);
		break;
	}
	case GS_REC_MAP: {
		const struct gs_rec_map *m = gs_map(h);

		if (m)
			note_map(ctx, m);
		break;
	}
	case GS_REC_KSYM: {
		const struct gs_rec_ksym *k = gs_ksym(h);

		if (k)
			note_ksym(ctx, k);
		break;
	}
	case GS_REC_LOSSES: {
		const struct gs_rec_losses *l = gs_losses(h);

		if (l) {
			copy_counters(ctx->losses, &ctx->nlosses, h, l->n, l->count);
			ctx->has_losses = true;
		}
		break;
	}
	case GS_REC_LOST_TYPES: {
		const struct gs_rec_lost_types *l = gs_lost_types(h);

		if (l) {
			copy_counters(ctx->lost_types, &ctx->nlost_types, h, l->n, l->count);
			ctx->has_lost_types = true;
		}
		break;
	}
	case GS_REC_CLOCK:
		COPY(clock, struct gs_rec_clock, gs_clock);
		break;
	case GS_REC_SAMPLER:
		COPY(sampler, struct gs_rec_sampler, gs_sampler);
		break;
	case GS_REC_CU_HANDLES:
		COPY(cu_handles, struct gs_rec_cu_handles, gs_cu_handles);
		break;
	case GS_REC_PROC_EXIT:
		COPY(exit, struct gs_rec_exit, gs_proc_exit);
		break;
	case GS_REC_END:
		COPY(end, struct gs_rec_end, gs_end);
		break;
	}
}
