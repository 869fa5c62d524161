// SPDX-License-Identifier: GPL-2.0
/* The target's file-backed mappings, each written once (maprecords.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "elfx.h"
#include "maprecords.h"
#include "procmaps.h"
#include "pycode.h"
#include "trace.h"
#include "trace_out.h"
#include "vec.h"

struct map_seen {
	__u32 tgid;
	__u64 start, end, ino, pgoff;
};

/* Whether M was written before; if not, remembers it. */
static bool map_records__seen(struct map_records *m, const struct map_seen *s)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct map_seen *v = &m->v[i];

		if (v->tgid == s->tgid && v->start == s->start && v->end == s->end &&
		    v->ino == s->ino && v->pgoff == s->pgoff)
			return true;
	}
	if (array__grow((void **)&m->v, &m->cap, sizeof(*m->v), m->n + 1, 256))
		return true;
	m->v[m->n++] = *s;
	return false;
}

/* Every file-backed mapping (and [vdso]), so that reports can name the code in user stacks. */
void map_records__scan(struct map_records *m, struct trace_out *o, pid_t tgid)
{
	struct procmaps it;
	struct procmaps_entry e;
	char dir[PATH_MAX];

	if (procmaps__open(&it, tgid))
		return;
	procmaps__dir(tgid, dir, sizeof(dir));
	while (procmaps__next(&it, &e)) {
		struct map_seen s = { tgid, e.start, e.end, e.ino, e.pgoff };
		size_t plen = strlen(e.path) + 1;
		struct gs_rec_map *rec;

		if (!e.ino && strcmp(e.path, "[vdso]"))
			continue;
		if (map_records__seen(m, &s))
			continue;
		rec = calloc(1, sizeof(*rec) + plen + 8);
		if (!rec)
			continue;
		trace_out__hdr(&rec->h, GS_REC_MAP, sizeof(*rec) + plen,
			       trace_out__gpid(o, tgid, true));
		rec->start = e.start;
		rec->end = e.end;
		rec->pgoff = e.pgoff;
		rec->dev = e.dev;
		rec->ino = e.ino;
		rec->prot = e.prot;
		memcpy(rec->path, e.path, plen);
		if (e.ino) {
			/* Through map_files: the very file mapped, also in another mount namespace
			 * or after it was deleted. */
			char mf[PATH_MAX + 64];

			snprintf(mf, sizeof(mf), "%s/map_files/%llx-%llx", dir,
				 (unsigned long long)e.start, (unsigned long long)e.end);
			rec->build_id_len = elfx__build_id(mf, rec->build_id,
							   sizeof(rec->build_id));
			if (m->archive && (e.prot & PROCMAPS_X))
				archive__note(m->archive, tgid, e.start, e.end, e.path,
					      rec->build_id, rec->build_id_len);
			if (m->py && (e.prot & PROCMAPS_X))
				pycode__map(m->py, tgid, mf, e.path, e.start, e.pgoff);
		}
		trace_out__append(o, rec, sizeof(*rec) + plen);
		free(rec);
	}
	procmaps__close(&it);
}

void map_records__file_fault(struct map_records *m, struct trace_out *o, pid_t tgid, __u64 ino)
{
	struct map_seen s = { .tgid = tgid, .ino = ino };

	if (tgid <= 0 || !ino || (m->fault_tgid == (__u32)tgid && m->fault_ino == ino))
		return;
	m->fault_tgid = tgid;
	m->fault_ino = ino;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].tgid == (__u32)tgid && m->v[i].ino == ino)
			return;
	for (size_t i = 0; i < m->nfaulted; i++)
		if (m->faulted[i].tgid == (__u32)tgid && m->faulted[i].ino == ino)
			return;
	if (!array__grow((void **)&m->faulted, &m->capfaulted, sizeof(*m->faulted), m->nfaulted + 1,
			 16))
		m->faulted[m->nfaulted++] = s;
	map_records__scan(m, o, tgid);
}

size_t map_records__tgids(const struct map_records *m, pid_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n && n < max; i++) {
		size_t k = 0;

		while (k < n && out[k] != (pid_t)m->v[i].tgid)
			k++;
		if (k == n)
			out[n++] = m->v[i].tgid;
	}
	return n;
}

void map_records__free(struct map_records *m)
{
	free(m->v);
	free(m->faulted);
	*m = (struct map_records){};
}
