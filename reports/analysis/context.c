// SPDX-License-Identifier: GPL-2.0
/*
 * The trace context (context.h): what the records so far say about threads, processes, probes,
 * kernels and the recorder. Strings are interned (strtab.h) and live with the context; lookups
 * by id go through idmap.h tables, so feeding a record allocates only when it adds a name or a
 * mapping.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrmaps.h"
#include "context.h"
#include "decode.h"
#include "idmap.h"
#include "knames.h"
#include "perfmap.h"
#include "strtab.h"

/* ---- the context ----------------------------------------------------------------------------- */

struct comm {
	char name[GS_COMM_LEN + 1];
};

#define CTX_MAX_COUNTERS 64

struct gs_ctx {
	struct strtab *strs;

	struct idmap comm_ids; /* tid -> comms: struct comm */
	struct vec comms;

	struct idmap probe_ids; /* probe id -> probes: struct ctx_probe */
	struct vec probes;

	/* Kernel names by handle: from lookups, and (trusted libraries only) from handles. */
	struct knames knames;

	/* Libraries whose handle names a lookup contradicted; any: one whose library is unknown. */
	struct vec distrust; /* const char * */
	bool distrust_any;

	struct addrmaps *maps;
	struct perfmaps *perfmaps; /* generated code's names; NULL until a perf map is seen */
	bool perfmaps_prescanned;

	struct ksyms *ksyms;

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

	if (!ctx)
		return NULL;
	ctx->strs = strtab__new();
	ctx->maps = addrmaps__new();
	if (!ctx->strs || !ctx->maps) {
		ctx__free(ctx);
		return NULL;
	}
	return ctx;
}

void ctx__free(struct gs_ctx *ctx)
{
	if (!ctx)
		return;
	strtab__free(ctx->strs);
	addrmaps__free(ctx->maps);
	perfmaps__free(ctx->perfmaps);
	idmap__free(&ctx->comm_ids);
	idmap__free(&ctx->probe_ids);
	knames__free(&ctx->knames);
	vec__free(&ctx->comms);
	vec__free(&ctx->probes);
	vec__free(&ctx->distrust);
	ksyms__free(ctx->ksyms);
	free((void *)ctx->target.argv);
	free(ctx);
}

/* A string of at most n bytes (the record's bound), interned. */
static const char *ctx__str(struct gs_ctx *ctx, const char *s, size_t n)
{
	return strtab__internf(ctx->strs, "%.*s", (int)n, s);
}

/* The element of key, NULL if none. */
static void *find(const struct idmap *ids, const struct vec *v, __u64 key)
{
	long i = idmap__get(ids, key);

	return i < 0 ? NULL : (char *)v->data + i * v->elem;
}

/* ---- thread names ---------------------------------------------------------------------------- */

/* Names tid with the first (at most max) bytes of name, up to a NUL. */
static void set_comm(struct gs_ctx *ctx, __u32 tid, const char *name, size_t max)
{
	struct comm *c = idmap__elem(&ctx->comm_ids, &ctx->comms, sizeof(*c), tid);
	size_t len = strnlen(name, max < GS_COMM_LEN ? max : GS_COMM_LEN);

	if (!c)
		return;
	memcpy(c->name, name, len);
	c->name[len] = 0;
}

const char *ctx__comm(const struct gs_ctx *ctx, __u32 tid)
{
	const struct comm *c = find(&ctx->comm_ids, &ctx->comms, tid);

	return c ? c->name : NULL;
}

/* ---- probes and kernel names ----------------------------------------------------------------- */

const struct ctx_probe *ctx__probe(const struct gs_ctx *ctx, __u32 id)
{
	return find(&ctx->probe_ids, &ctx->probes, id);
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
	struct ctx_probe *slot_p;

	cp.lib = ctx__str(ctx, p->names, ll);
	cp.sym = ctx__str(ctx, sym, gs_rec_strlen(h, sym));
	slot_p = idmap__elem(&ctx->probe_ids, &ctx->probes, sizeof(*slot_p), p->id);
	if (cp.lib && cp.sym && slot_p)
		*slot_p = cp;
}

const char *ctx__kernel_name(const struct gs_ctx *ctx, __u64 handle, bool *by_handle,
			     bool *unconfirmed)
{
	return knames__get(&ctx->knames, handle, by_handle, unconfirmed);
}

static bool distrusted(const struct gs_ctx *ctx, const char *lib)
{
	for (size_t i = 0; i < ctx->distrust.n; i++)
		if (!strcmp(*VEC_AT(&ctx->distrust, const char *, i), lib))
			return true;
	return false;
}

/* A lookup contradicted the name behind a handle of fn's library (of probes: which ones know). */
static void distrust(struct gs_ctx *ctx, const struct gs_ctx *probes, __u32 fn)
{
	const struct ctx_probe *p = ctx__probe(probes, fn);
	const char **lib;

	if (!p) {
		ctx->distrust_any = true; /* which library is unknown: trust none */
		return;
	}
	if (distrusted(ctx, p->lib))
		return;
	lib = vec__push(&ctx->distrust, sizeof(*lib));
	if (lib)
		*lib = ctx__str(ctx, p->lib, strlen(p->lib)) ?: "";
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
			knames__set(&ctx->knames, true, e->handle, name, 0);
		return;
	}
	if (e->ret || !e->handle)
		return;
	name = ctx__str(ctx, e->name, len);
	if (name)
		knames__set(&ctx->knames, false, e->handle, name, e->owner);
}

/* A perf map's lines; memory running out leaves code unnamed, nothing worse. */
static void note_perf_map(struct gs_ctx *ctx, const struct gs_hdr *h)
{
	if (!ctx->perfmaps)
		ctx->perfmaps = perfmaps__new();
	if (ctx->perfmaps)
		perfmaps__add(ctx->perfmaps, h);
}

const char *ctx__jit_symbol(struct gs_ctx *ctx, __u32 tgid, __u64 addr, __u64 *offset)
{
	return perfmaps__find(ctx->perfmaps, tgid, addr, offset);
}

/* What the prescan gathers: the probes it has seen so far, the context it tells. */
struct prescan {
	struct gs_ctx *ctx, *probes;
};

static int prescan_probe(void *ctx, const struct gs_hdr *h)
{
	struct prescan *ps = ctx;
	const struct gs_rec_probe *p = gs_probe_rec(h);

	if (p)
		note_probe(ps->probes, p);
	return 0;
}

static int prescan_disagree(void *ctx, const struct gs_hdr *h)
{
	struct prescan *ps = ctx;
	__u32 fn;

	if (disagrees(h, &fn))
		distrust(ps->ctx, ps->probes, fn);
	return 0;
}

static int prescan_perf_map(void *ctx, const struct gs_hdr *h)
{
	note_perf_map(((struct prescan *)ctx)->ctx, h);
	return 0;
}

int ctx__prescan(struct gs_ctx *ctx, const char *path)
{
	struct prescan ps = { ctx, ctx__new() };
	struct trace_consumer c[] = {
		{ .type = GS_REC_PROBE, .fn = prescan_probe, .ctx = &ps },
		{ .type = GS_EV_CU_NAME, .fn = prescan_disagree, .ctx = &ps },
		{ .type = GS_EV_CUDA, .fn = prescan_disagree, .ctx = &ps },
		{ .type = GS_REC_PERF_MAP, .fn = prescan_perf_map, .ctx = &ps },
	};
	char err[512];
	int ret;

	if (!ps.probes)
		return -ENOMEM;
	ret = trace__scan_types(path, c, sizeof(c) / sizeof(c[0]), err, sizeof(err));
	if (!ret)
		ctx->perfmaps_prescanned = true;
	ctx__free(ps.probes);
	return ret ? -EINVAL : 0;
}

/* ---- maps -------------------------------------------------------------------------------- */

static void note_map(struct gs_ctx *ctx, const struct gs_rec_map *r)
{
	struct ctx_map m = {
		.start = r->start,
		.end = r->end,
		.pgoff = r->pgoff,
		.ino = r->ino,
		.prot = r->prot,
	};

	if (r->build_id_len <= sizeof(m.build_id)) {
		m.build_id_len = r->build_id_len;
		memcpy(m.build_id, r->build_id, r->build_id_len);
	}
	m.path = ctx__str(ctx, r->path, gs_rec_strlen(&r->h, r->path));
	if (m.path)
		addrmaps__add(ctx->maps, r->h.tgid, &m);
}

static void note_mmap(struct gs_ctx *ctx, const struct mmap_event *e)
{
	const struct ctx_map *old = addrmaps__find(ctx->maps, e->h.tgid, e->addr);
	struct ctx_map m = {
		.start = e->addr,
		.end = e->addr + e->len,
		.pgoff = e->pgoff,
		.ino = e->ino,
		.from_mmap = true,
	};

	/* The same mapping already recorded from /proc (a full path): keep that one. */
	if (old && old->start == m.start && old->end == m.end && old->pgoff == m.pgoff &&
	    old->ino == m.ino)
		return;
	m.path = ctx__str(ctx, e->name, strnlen(e->name, PROC_NAME_LEN));
	if (m.path)
		addrmaps__add(ctx->maps, e->h.tgid, &m);
}

const struct ctx_map *ctx__map(struct gs_ctx *ctx, __u32 tgid, __u64 addr)
{
	return addrmaps__find(ctx->maps, tgid, addr);
}

const struct ctx_map *ctx__map_ino(struct gs_ctx *ctx, __u32 tgid, __u64 ino)
{
	return addrmaps__find_ino(ctx->maps, tgid, ino);
}

/* ---- kernel symbols ---------------------------------------------------------------------------- */

static void note_ksym(struct gs_ctx *ctx, const struct gs_rec_ksym *k)
{
	char name[512]; /* KSYM_NAME_LEN */

	if (!ctx->ksyms)
		ctx->ksyms = ksyms__new();
	snprintf(name, sizeof(name), "%.*s", (int)gs_rec_strlen(&k->h, k->name), k->name);
	if (ctx->ksyms)
		ksyms__add(ctx->ksyms, k->addr, name);
}

const struct ksym *ctx__ksym(struct gs_ctx *ctx, __u64 addr)
{
	return ctx->ksyms ? ksyms__find(ctx->ksyms, addr) : NULL;
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
		set_comm(ctx, t->h.tgid, base, GS_COMM_LEN - 1); /* as the kernel cuts it */
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

void ctx__note(struct gs_ctx *ctx, const struct gs_hdr *h)
{
	__u32 fn;

	/* Too short for its type: the decoders below would refuse it. */
	if (!gs_rec_check(h))
		return;
	if (disagrees(h, &fn))
		distrust(ctx, ctx, fn);
	switch (h->type) {
	case GS_EV_CUDA:
		/* cuKernelGetFunction: the CUfunction of a CUkernel gets the CUkernel's name. */
		if (gs_cuda(h)->kind == CU_K_KERNEL_FUNCTION)
			knames__alias(&ctx->knames, gs_cuda(h)->handle, gs_cuda(h)->aux);
		else if (gs_cuda(h)->kind == CU_K_UNLOAD && (h->flags & GS_F_RET) &&
			 !gs_cuda(h)->ret)
			knames__unload(&ctx->knames, gs_cuda(h)->handle);
		break;
	case GS_EV_CU_NAME:
		note_cu_name(ctx, gs_cu_name(h));
		break;
	case GS_EV_FORK:
		set_comm(ctx, gs_fork(h)->child_tid, gs_fork(h)->comm, GS_COMM_LEN);
		break;
	case GS_EV_COMM:
		set_comm(ctx, h->tid, gs_comm(h)->comm, GS_COMM_LEN);
		break;
	case GS_EV_EXEC:
		set_comm(ctx, h->tid, gs_exec(h)->comm, GS_COMM_LEN);
		break;
	case GS_EV_MMAP:
		note_mmap(ctx, gs_mmap(h));
		break;
	case GS_REC_TARGET:
		note_target(ctx, gs_target(h));
		break;
	case GS_REC_PROBE:
		note_probe(ctx, gs_probe_rec(h));
		break;
	case GS_REC_MAP:
		note_map(ctx, gs_map(h));
		break;
	case GS_REC_KSYM:
		note_ksym(ctx, gs_ksym(h));
		break;
	case GS_REC_LOSSES:
		ctx->has_losses = true;
		copy_counters(ctx->losses, &ctx->nlosses, h, gs_losses(h)->n, gs_losses(h)->count);
		break;
	case GS_REC_LOST_TYPES:
		ctx->has_lost_types = true;
		copy_counters(ctx->lost_types, &ctx->nlost_types, h, gs_lost_types(h)->n,
			      gs_lost_types(h)->count);
		break;
	case GS_REC_CLOCK:
		ctx->clock = *gs_clock(h);
		ctx->has_clock = true;
		break;
	case GS_REC_SAMPLER:
		ctx->sampler = *gs_sampler(h);
		ctx->has_sampler = true;
		break;
	case GS_REC_CU_HANDLES:
		ctx->cu_handles = *gs_cu_handles(h);
		ctx->has_cu_handles = true;
		break;
	case GS_REC_PROC_EXIT:
		ctx->exit = *gs_proc_exit(h);
		ctx->has_exit = true;
		break;
	case GS_REC_END:
		ctx->end = *gs_end(h);
		ctx->has_end = true;
		break;
	case GS_REC_PERF_MAP:
		if (!ctx->perfmaps_prescanned) /* else taken in already */
			note_perf_map(ctx, h);
		break;
	}
}
