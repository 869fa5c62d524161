// SPDX-License-Identifier: GPL-2.0
/*
 * pprof profiles of gap stacks (pprof.h). Samples are kept as string-table indices; encoding
 * builds protobuf-c's messages over them once, packs, and gzips (zlib, gzip wrapper).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "escape.h"
#include "gap.h"
#include "folded.h"
#include "outfile.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "strmap.h"
#include "vec.h"

/* Label keys and units: string-table indices fixed at pprof__new(). */
enum { S_EMPTY, S_GAP_TYPE, S_NS, S_GAP, S_DEVICE, S_CAUSE, S_CAUSE_FN, S_TIER, S_FIXED };

static const char *const fixed_strings[S_FIXED] = {
	[S_EMPTY] = "",
	[S_GAP_TYPE] = "gap_time",
	[S_NS] = "nanoseconds",
	[S_GAP] = "gap",
	[S_DEVICE] = "device",
	[S_CAUSE] = "cause",
	[S_CAUSE_FN] = "cause_function",
	[S_TIER] = "tier",
};

struct psample {
	size_t loc_off; /* into locs */
	__u32 nloc;
	__u32 gap_id, device;
	__u32 cause, cause_fn, tier; /* string indices, 0: none */
	__u64 ns;
};

struct pprof {
	char **strs; /* the string table (protobuf-c's type) */
	size_t nstrs, cap_strs;
	struct strmap index; /* strs' indexes */
	__u64 *fn_of;	     /* per string: its function id (1-based), 0 none */
	size_t cap_fn_of;
	__u32 *fn_name; /* per function id - 1: its name's string index */
	size_t nfns, cap_fns;
	__u64 *locs; /* location ids of every sample, leaf first */
	size_t nlocs, cap_locs;
	struct psample *samples;
	size_t nsamples, cap_samples;
	__u64 total;
};

/*
 * The string's index in the table, added if new; -1 when out of memory. Stored as valid UTF-8
 * (bytes that start no character as U+FFFD): proto3 strings must be, and strict decoders reject
 * a profile whose names the target chose otherwise.
 */
static long intern(struct pprof *p, const char *s)
{
	bool failed;
	char *fixed = esc__utf8(s, &failed), *copy;
	long i;

	if (failed)
		return -1;
	if (fixed)
		s = fixed;
	i = strmap__get(&p->index, (const char *const *)p->strs, s);
	if (i >= 0) {
		free(fixed);
		return i;
	}
	if (array__grow((void **)&p->strs, &p->cap_strs, sizeof(*p->strs), p->nstrs + 1, 64)) {
		free(fixed);
		return -1;
	}
	copy = fixed ?: strdup(s);
	if (!copy)
		return -1;
	p->strs[p->nstrs] = copy;
	if (strmap__set(&p->index, (const char *const *)p->strs, copy, p->nstrs)) {
		free(copy);
		return -1;
	}
	return p->nstrs++;
}

struct pprof *pprof__new(void)
{
	struct pprof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	for (int i = 0; i < S_FIXED; i++)
		if (intern(p, fixed_strings[i]) != i) {
			pprof__free(p);
			return NULL;
		}
	return p;
}

void pprof__free(struct pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	strmap__free(&p->index);
	free(p->fn_of);
	free(p->fn_name);
	free(p->locs);
	free(p->samples);
	free(p);
}

void pprof__reset(struct pprof *p)
{
	p->nsamples = 0;
	p->nlocs = 0;
	p->total = 0;
}

size_t pprof__samples(const struct pprof *p)
{
	return p->nsamples;
}

__u64 pprof__total(const struct pprof *p)
{
	return p->total;
}

/* The location (= function) id of a frame name, 0 when out of memory. */
static __u64 location(struct pprof *p, const char *name)
{
	long s = intern(p, name);
	size_t old = p->cap_fn_of;

	if (s < 0 || array__grow((void **)&p->fn_of, &p->cap_fn_of, sizeof(*p->fn_of), s + 1, 64))
		return 0;
	memset(p->fn_of + old, 0, (p->cap_fn_of - old) * sizeof(*p->fn_of));
	if (!p->fn_of[s]) {
		if (array__grow((void **)&p->fn_name, &p->cap_fns, sizeof(*p->fn_name), p->nfns + 1,
				64))
			return 0;
		p->fn_name[p->nfns++] = s;
		p->fn_of[s] = p->nfns;
	}
	return p->fn_of[s];
}

int pprof__add(struct pprof *p, const char *const *frames, size_t n, __u64 ns,
	       const struct pprof_labels *l)
{
	struct psample *s;
	long cause = 0, fn = 0, tier = 0;

	if (!n || !ns)
		return 0;
	if (array__grow((void **)&p->samples, &p->cap_samples, sizeof(*p->samples), p->nsamples + 1,
			64) ||
	    array__grow((void **)&p->locs, &p->cap_locs, sizeof(*p->locs), p->nlocs + n, 64))
		return -ENOMEM;
	if ((l->cause && (cause = intern(p, l->cause)) < 0) ||
	    (l->cause_function && (fn = intern(p, l->cause_function)) < 0) ||
	    (l->tier && (tier = intern(p, l->tier)) < 0))
		return -ENOMEM;
	s = &p->samples[p->nsamples];
	*s = (struct psample){ .loc_off = p->nlocs,
			       .nloc = n,
			       .gap_id = l->gap_id,
			       .device = l->device,
			       .cause = cause,
			       .cause_fn = fn,
			       .tier = tier,
			       .ns = ns };
	/* pprof lists a sample's locations leaf first; folded stacks are root first. */
	for (size_t i = 0; i < n; i++) {
		__u64 id = location(p, frames[n - 1 - i]);

		if (!id)
			return -ENOMEM;
		p->locs[p->nlocs + i] = id;
	}
	p->nlocs += n;
	p->nsamples++;
	p->total += ns;
	return 0;
}

int pprof__add_gap(struct pprof *p, const struct gap *g, __u32 gap_id)
{
	const struct chain_link *root = g->nchain ? &g->chain[g->nchain - 1] : NULL;
	struct pprof_labels l = {
		.gap_id = gap_id,
		.device = g->device,
		.cause = root ? blame_kind__name(root->kind) : NULL,
		.cause_function = root ? (root->lock ?: root->function) : NULL,
		.tier = g->tier,
	};

	for (__u32 i = 0; i < g->nstacks; i++)
		if (pprof__add(p, g->stacks[i].frames, g->stacks[i].nframes, g->stacks[i].ns, &l))
			return -ENOMEM;
	return 0;
}

/* gzip (RFC 1952) of in, into *out (malloc'd). */
static int gzip(const unsigned char *in, size_t len, unsigned char **out, size_t *outlen)
{
	z_stream z = {};
	size_t cap;
	int rc;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len) + 32;
	*out = malloc(cap);
	if (!*out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = len;
	z.next_out = *out;
	z.avail_out = cap;
	rc = deflate(&z, Z_FINISH);
	*outlen = cap - z.avail_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

int pprof__encode(const struct pprof *p, __u64 time_ns, __u64 duration_ns, unsigned char **out,
		  size_t *len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *vts[1] = { &vt };
	Perftools__Profiles__Sample *smp = calloc(p->nsamples ?: 1, sizeof(*smp));
	Perftools__Profiles__Sample **smpp = calloc(p->nsamples ?: 1, sizeof(*smpp));
	Perftools__Profiles__Label *lab = calloc(5 * (p->nsamples ?: 1), sizeof(*lab));
	Perftools__Profiles__Label **labp = calloc(5 * (p->nsamples ?: 1), sizeof(*labp));
	int64_t *vals = calloc(p->nsamples ?: 1, sizeof(*vals));
	Perftools__Profiles__Location *loc = calloc(p->nfns ?: 1, sizeof(*loc));
	Perftools__Profiles__Location **locp = calloc(p->nfns ?: 1, sizeof(*locp));
	Perftools__Profiles__Line *line = calloc(p->nfns ?: 1, sizeof(*line));
	Perftools__Profiles__Line **linep = calloc(p->nfns ?: 1, sizeof(*linep));
	Perftools__Profiles__Function *fn = calloc(p->nfns ?: 1, sizeof(*fn));
	Perftools__Profiles__Function **fnp = calloc(p->nfns ?: 1, sizeof(*fnp));
	unsigned char *buf = NULL;
	size_t nlab = 0, size;
	int err = -ENOMEM;

	*out = NULL;
	if (!smp || !smpp || !lab || !labp || !vals || !loc || !locp || !line || !linep || !fn ||
	    !fnp)
		goto out;
	vt.type = S_GAP_TYPE;
	vt.unit = S_NS;
	prof.n_sample_type = 1;
	prof.sample_type = vts;
	prof.period_type = &vt;
	prof.period = 1;
	prof.time_nanos = time_ns;
	prof.duration_nanos = duration_ns;
	for (size_t i = 0; i < p->nfns; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = i + 1;
		fn[i].name = fn[i].system_name = p->fn_name[i];
		fnp[i] = &fn[i];
		perftools__profiles__line__init(&line[i]);
		line[i].function_id = i + 1;
		linep[i] = &line[i];
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = i + 1;
		loc[i].n_line = 1;
		loc[i].line = &linep[i];
		locp[i] = &loc[i];
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct psample *s = &p->samples[i];
		size_t first = nlab;
		Perftools__Profiles__Label *l;

		perftools__profiles__sample__init(&smp[i]);
		smp[i].n_location_id = s->nloc;
		smp[i].location_id = (uint64_t *)&p->locs[s->loc_off];
		vals[i] = s->ns;
		smp[i].n_value = 1;
		smp[i].value = &vals[i];
#define LABEL(k, field, v)                           \
	do {                                         \
		l = &lab[nlab];                      \
		perftools__profiles__label__init(l); \
		l->key = (k);                        \
		l->field = (v);                      \
		labp[nlab++] = l;                    \
	} while (0)
		if (s->gap_id)
			LABEL(S_GAP, num, s->gap_id);
		LABEL(S_DEVICE, num, s->device);
		if (s->cause)
			LABEL(S_CAUSE, str, s->cause);
		if (s->cause_fn)
			LABEL(S_CAUSE_FN, str, s->cause_fn);
		if (s->tier)
			LABEL(S_TIER, str, s->tier);
#undef LABEL
		smp[i].n_label = nlab - first;
		smp[i].label = &labp[first];
		smpp[i] = &smp[i];
	}
	prof.n_sample = p->nsamples;
	prof.sample = smpp;
	prof.n_location = p->nfns;
	prof.location = locp;
	prof.n_function = p->nfns;
	prof.function = fnp;
	prof.n_string_table = p->nstrs;
	prof.string_table = p->strs;
	size = perftools__profiles__profile__get_packed_size(&prof);
	buf = malloc(size ?: 1);
	if (!buf)
		goto out;
	perftools__profiles__profile__pack(&prof, buf);
	err = gzip(buf, size, out, len);
out:
	free(buf);
	free(smp);
	free(smpp);
	free(lab);
	free(labp);
	free(vals);
	free(loc);
	free(locp);
	free(line);
	free(linep);
	free(fn);
	free(fnp);
	return err;
}

int pprof__write(const struct pprof *p, const char *path, bool force, __u64 time_ns,
		 __u64 duration_ns)
{
	unsigned char *buf;
	size_t len, off = 0;
	int fd, err = pprof__encode(p, time_ns, duration_ns, &buf, &len);

	if (err)
		return err;
	fd = outfile__open(path, force);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err = -errno;
			break;
		}
		off += w;
	}
	if (close(fd) && !err)
		err = -errno;
	free(buf);
	return err;
}

struct gap_ctx {
	struct pprof *p;
	struct pprof_labels l;
};

static int add_stack(const char *const *frames, size_t n, __u64 weight, void *ctx)
{
	struct gap_ctx *g = ctx;

	return pprof__add(g->p, frames, n, weight, &g->l);
}

int pprof__from_report(const struct analysis *a, int gaps_dfd, const char *path, bool force)
{
	struct pprof *p = pprof__new();
	char file[32];
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; !err && i < a->ngaps; i++) {
		const struct gap *g = &a->gaps[i];
		const struct chain_link *root = g->nchain ? &g->chain[g->nchain - 1] : NULL;
		struct gap_ctx c = { p,
				     { .gap_id = g->id,
				       .device = g->device,
				       .cause = root ? blame_kind__name(root->kind) : NULL,
				       .cause_function = root ? (root->lock ?: root->function) :
								NULL,
				       .tier = g->tier } };
		struct folded *f;

		snprintf(file, sizeof(file), "%04u.folded", g->id);
		f = folded__read_at(gaps_dfd, file);
		if (!f) {
			err = -EINVAL;
			break;
		}
		err = folded__for_each_stack(f, add_stack, &c);
		folded__free(f);
	}
	if (!err)
		err = pprof__write(p, path, force, 0, a->duration_ns);
	pprof__free(p);
	return err;
}
