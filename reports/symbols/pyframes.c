// SPDX-License-Identifier: GPL-2.0
/* Python frames in the report's stacks: see pyframes.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "idmap.h"
#include "pyframes.h"
#include "strtab.h"

/* Events whose Python frames came and whose event did not yet: as many as the unwinder keeps
 * snapshots waiting (unwind.h's UNWIND_PENDING), the oldest giving way. */
#define PY_PENDING   256
#define PY_EXPIRE_NS (1000ull * 1000 * 1000) /* frames whose event did not come by then */
#define PY_OUT_MAX   255		     /* user frames a record holds (gs_hdr.ustack_n) */

struct py_code {
	__u32 tgid;
	__u64 code;
	__s32 first;
	const char *name, *file; /* interned */
	struct gs_pyline *lines;
	__u32 nlines;
};

struct py_fr {
	__u32 tgid, offset;
	__u64 code;
	const char *name;  /* made when first asked for, once its code object is known */
	bool unnamed_seen; /* counted once as unnamed */
};

struct py_pending {
	__u32 tid, type, n;
	bool done, gc;
	__u64 ts, end;
	struct py_frame f[PY_FRAMES_MAX];
};

struct pyframes {
	struct strtab *strs;
	pyframes_native_fn native;
	void *native_ctx;
	struct vec codes; /* struct py_code */
	struct idmap code_ix;
	struct vec frames; /* struct py_fr: a frame's number is its index */
	struct idmap frame_ix;
	struct py_pending pend[PY_PENDING];
	size_t npend;
	void *rec;
	size_t caprec;
	struct py_counts counts;
};

struct pyframes *pyframes__new(struct strtab *strs, pyframes_native_fn native, void *ctx)
{
	struct pyframes *p = calloc(1, sizeof(*p));

	if (p) {
		p->strs = strs;
		p->native = native;
		p->native_ctx = ctx;
	}
	return p;
}

void pyframes__free(struct pyframes *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->codes.n; i++)
		free(VEC_AT(&p->codes, struct py_code, i)->lines);
	vec__free(&p->codes);
	vec__free(&p->frames);
	idmap__free(&p->code_ix);
	idmap__free(&p->frame_ix);
	free(p->rec);
	free(p);
}

static __u64 mix(__u64 a, __u64 b, __u64 c)
{
	__u64 h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull ^
		  c * 0x94d049bb133111ebull;

	return h ^ (h >> 31);
}

static struct py_code *code_find(struct pyframes *p, __u32 tgid, __u64 code)
{
	long i = idmap__get(&p->code_ix, mix(tgid, code, 0));
	struct py_code *c = i < 0 ? NULL : VEC_AT(&p->codes, struct py_code, i);

	return c && c->tgid == tgid && c->code == code ? c : NULL;
}

int pyframes__take(void *ctx, const struct gs_hdr *h)
{
	struct pyframes *p = ctx;
	const char *name, *file;
	const struct gs_rec_pycode *r = gs_pycode(h, &name, &file);
	struct py_code *c;

	if (!r)
		return 0; /* damaged: its frames stay unnamed */
	c = code_find(p, h->tgid, r->code);
	if (!c) {
		if (!(c = vec__push(&p->codes, sizeof(*c))) ||
		    idmap__set(&p->code_ix, mix(h->tgid, r->code, 0), p->codes.n - 1))
			return -ENOMEM;
	}
	free(c->lines);
	*c = (struct py_code){ .tgid = h->tgid,
			       .code = r->code,
			       .first = r->firstlineno,
			       .name = strtab__intern(p->strs, name),
			       .file = strtab__intern(p->strs, file) };
	if (r->nlines && (c->lines = malloc(r->nlines * sizeof(*c->lines)))) {
		memcpy(c->lines, r->lines, r->nlines * sizeof(*c->lines));
		c->nlines = r->nlines;
	}
	return c->name && c->file ? 0 : -ENOMEM;
}

/* The line of the instruction at offset: the last range that starts at or before it. */
static int line_of(const struct py_code *c, __u32 offset)
{
	__u32 lo = 0, hi = c->nlines;

	while (lo < hi) {
		__u32 mid = (lo + hi) / 2;

		if (c->lines[mid].start <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && c->lines[lo - 1].line >= 0 ? c->lines[lo - 1].line : c->first;
}

/* A file as stacks show it: its base name, with its folder for a package's __init__.py. */
static const char *short_file(const char *file, int *keep)
{
	const char *b = strrchr(file, '/');

	if (!b)
		return *keep = strlen(file), file;
	if (!strcmp(b + 1, "__init__.py") && b > file) {
		const char *d = b - 1;

		while (d > file && d[-1] != '/')
			d--;
		b = d - 1;
	}
	*keep = strlen(b + 1);
	return b + 1;
}

const char *pyframes__name(struct pyframes *p, __u64 addr)
{
	__u64 i = addr & ~PYFRAME_MASK;
	struct py_fr *f;
	const struct py_code *c;
	const char *file;
	int len;

	if (pyframes__is_gc(addr))
		return "gc";
	if (!p || i >= p->frames.n)
		return "[python]";
	f = VEC_AT(&p->frames, struct py_fr, i);
	if (f->name)
		return f->name;
	c = code_find(p, f->tgid, f->code);
	if (!c) {
		/* Not kept as its name: a live analysis (record --flight) may meet the code object's
		 * record after the frame, and names it then. */
		p->counts.unnamed += !f->unnamed_seen;
		f->unnamed_seen = true;
		return strtab__internf(p->strs, "[python code 0x%llx]", (unsigned long long)f->code) ?:
			       "[python]";
	} else {
		file = short_file(c->file, &len);
		f->name = strtab__internf(p->strs, "%s (%.*s:%d)", c->name, len, file,
					  line_of(c, f->offset));
	}
	return f->name ?: "[python]";
}

const char *pyframes__file(struct pyframes *p, __u64 addr)
{
	__u64 i = addr & ~PYFRAME_MASK;
	const struct py_fr *f;
	const struct py_code *c;

	if (!p || i >= p->frames.n)
		return NULL;
	f = VEC_AT(&p->frames, struct py_fr, i);
	c = code_find(p, f->tgid, f->code);
	return c ? c->file : NULL;
}

/* The stack address of a Python frame: its number among the distinct ones, tagged. */
static __u64 frame_addr(struct pyframes *p, __u32 tgid, const struct py_frame *pf)
{
	__u64 key = mix(tgid, pf->code, pf->offset);
	long i = idmap__get(&p->frame_ix, key);
	struct py_fr *f;

	if (i >= 0) {
		f = VEC_AT(&p->frames, struct py_fr, i);
		if (f->tgid == tgid && f->code == pf->code && f->offset == pf->offset)
			return PYFRAME_TAG | (__u64)i;
	}
	f = vec__push(&p->frames, sizeof(*f));
	if (!f)
		return 0;
	*f = (struct py_fr){ .tgid = tgid, .offset = pf->offset, .code = pf->code };
	if (i < 0)
		idmap__set(&p->frame_ix, key, p->frames.n - 1);
	return PYFRAME_TAG | (__u64)(p->frames.n - 1);
}

static bool is_eval(const char *name)
{
	return name && !strncmp(name, "_PyEval_EvalFrameDefault", 24);
}

/* The event with the Python frames in its user stack; NULL when out of memory. */
static const struct gs_hdr *rebuild(struct pyframes *p, const struct gs_hdr *h,
				    const struct py_pending *pe)
{
	size_t fixed = gs_fixed_size(h), size = fixed + 8 * ((size_t)PY_OUT_MAX + h->kstack_n);
	const __u64 *ip = gs_ustack(h);
	__u64 *out;
	__u32 n = 0, k = 0;
	struct gs_hdr *r;

	if (size > p->caprec) {
		void *v = realloc(p->rec, size);

		if (!v)
			return NULL;
		p->rec = v;
		p->caprec = size;
	}
	r = p->rec;
	memcpy(r, h, fixed);
	out = (__u64 *)((char *)r + fixed);
	for (__u32 i = 0; i < h->ustack_n && n < PY_OUT_MAX; i++) {
		if (k < pe->n && is_eval(p->native(p->native_ctx, h->tgid, ip[i], i == 0))) {
			if (!k && pe->gc && n < PY_OUT_MAX - 1)
				out[n++] = PYFRAME_GC;
			/* This call of the loop ran the frames up to its first. */
			do
				out[n++] = frame_addr(p, h->tgid, &pe->f[k]);
			while (!(pe->f[k++].flags & PYF_EVAL_FIRST) && k < pe->n && n < PY_OUT_MAX);
			continue;
		}
		out[n++] = ip[i];
	}
	if (k < pe->n)
		p->counts.unplaced++;
	if (!k && pe->gc && n < PY_OUT_MAX - 1)
		out[n++] = PYFRAME_GC;
	while (k < pe->n && n < PY_OUT_MAX)
		out[n++] = frame_addr(p, h->tgid, &pe->f[k++]);
	memcpy(out + n, gs_kstack(h), 8 * (size_t)h->kstack_n);
	r->ustack_n = n;
	r->size = fixed + 8 * ((size_t)n + h->kstack_n);
	p->counts.stacks++;
	return r;
}

const struct gs_hdr *pyframes__feed(struct pyframes *p, const struct gs_hdr *h)
{
	const struct gs_hdr *out = h;
	struct py_pending *pe = NULL;
	size_t k = 0;

	if (!p)
		return h;
	/* A code object met in the stream: a live analysis (record --flight) has no file to scan
	 * first; a report has it from its pass of its own already (pyframes__take). */
	if (h->type == GS_REC_PYCODE) {
		const char *name, *file;
		const struct gs_rec_pycode *r = gs_pycode(h, &name, &file);

		if (r && !code_find(p, h->tgid, r->code))
			pyframes__take(p, h);
		return h;
	}
	if (h->type == GS_EV_PYSTACK) {
		__u32 n = 0;
		const struct pystack_event *e = gs_pystack(h, &n);

		if (!e || !n)
			return h;
		if (p->npend == PY_PENDING) {
			memmove(&p->pend[0], &p->pend[1], (PY_PENDING - 1) * sizeof(p->pend[0]));
			p->npend--;
		}
		pe = &p->pend[p->npend++];
		*pe = (struct py_pending){ .tid = h->tid,
					   .type = e->of_type,
					   .n = n,
					   .gc = e->status & PYSTACK_F_GC,
					   .ts = h->ts,
					   .end = e->end_ns };
		memcpy(pe->f, e->f, n * sizeof(pe->f[0]));
		return h;
	}
	if (!p->npend || (h->type != GS_EV_FUTEX && h->type != GS_EV_OFFCPU &&
			  h->type != GS_EV_SAMPLE && h->type != GS_EV_PROBE))
		return h;
	for (size_t i = 0; i < p->npend && !pe; i++)
		if (p->pend[i].tid == h->tid && p->pend[i].type == h->type &&
		    p->pend[i].ts == h->ts)
			pe = &p->pend[i];
	if (pe) {
		out = rebuild(p, h, pe) ?: h;
		pe->done = true;
	}
	for (size_t i = 0; i < p->npend; i++)
		if (!p->pend[i].done && p->pend[i].end + PY_EXPIRE_NS >= h->ts)
			p->pend[k++] = p->pend[i];
	p->npend = k;
	return out;
}

const struct py_counts *pyframes__counts(const struct pyframes *p)
{
	static const struct py_counts none;

	return p ? &p->counts : &none;
}
