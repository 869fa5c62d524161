// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cuda.h"
#include "proc.h"
#include "record.skel.h"
#include "archive.h"
#include "bpf_setup.h"
#include "clock.h"
#include "elfx.h"
#include "metadata.h"
#include "pycode.h"
#include "procmaps.h"
#include "trace.h"
#include "vec.h"

void trace_out__append(struct trace_out *o, const void *rec, size_t size)
{
	if (o->tw)
		trace__append(o->tw, rec, size); /* a write error is kept, and counts what it cut */
	if (o->tap)
		o->tap(o->tap_ctx, rec, size);
}

void trace_out__flush(struct trace_out *o)
{
	if (o->tw)
		trace__flush(o->tw);
}

bool trace_out__failed(const struct trace_out *o)
{
	__u64 chunk, lost;

	return o->tw && trace__cut(o->tw, &chunk, &lost);
}

void meta__hdr(struct gs_hdr *h, __u32 type, __u32 size, __u32 tgid)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->ts = clock__mono_ns();
	h->tgid = tgid;
	h->tid = tgid;
}

void meta__clock(struct trace_out *o, unsigned int sample_freq)
{
	struct gs_rec_clock c = {};
	struct utsname u;

	meta__hdr(&c.h, GS_REC_CLOCK, sizeof(c), 0);
	c.mono_ns = clock__mono_ns();
	c.real_ns = clock__real_ns();
	c.boot_ns = clock__boot_ns();
	c.h.ts = c.mono_ns;
	c.sample_freq = sample_freq;
	c.ncpus = libbpf_num_possible_cpus();
	if (!uname(&u)) {
		snprintf(c.host, sizeof(c.host), "%.63s", u.nodename);
		snprintf(c.kernel, sizeof(c.kernel), "%.63s", u.release);
	}
	trace_out__append(o, &c, sizeof(c));
}

void meta__target(struct trace_out *o, pid_t pid, char **argv)
{
	size_t len = 0, off = 0;
	struct gs_rec_target *t;
	int argc = 0;

	for (; argv && argv[argc]; argc++)
		len += strlen(argv[argc]) + 1;
	t = calloc(1, sizeof(*t) + len + 8);
	if (!t)
		return;
	meta__hdr(&t->h, GS_REC_TARGET, sizeof(*t) + len, pid);
	t->mode = argv ? GS_TARGET_LAUNCH : GS_TARGET_ATTACH;
	t->argc = argc;
	for (int i = 0; i < argc; i++) {
		strcpy(t->argv + off, argv[i]);
		off += strlen(argv[i]) + 1;
	}
	trace_out__append(o, t, sizeof(*t) + len);
	free(t);
}

void meta__probe(struct trace_out *o, const struct meta_probe *mp)
{
	size_t ll = strlen(mp->lib) + 1, sl = strlen(mp->sym) + 1;
	struct gs_rec_probe *p = calloc(1, sizeof(*p) + ll + sl + 8);

	if (!p)
		return;
	meta__hdr(&p->h, GS_REC_PROBE, sizeof(*p) + ll + sl, mp->tgid);
	p->h.ts = mp->live_ns;
	p->id = mp->id;
	p->family = mp->family;
	p->kind = mp->kind;
	p->err = mp->err;
	p->offset = mp->offset;
	p->flags = mp->flags;
	p->pid = mp->pid;
	memcpy(p->names, mp->lib, ll);
	memcpy(p->names + ll, mp->sym, sl);
	trace_out__append(o, p, sizeof(*p) + ll + sl);
	free(p);
}

void meta__unprobed(struct trace_out *o, pid_t tgid, __u64 from_ns, __u32 why, __u32 links)
{
	struct gs_rec_unprobed r;

	memset(&r, 0, sizeof(r));
	meta__hdr(&r.h, GS_REC_UNPROBED, sizeof(r), tgid);
	r.h.ts = clock__mono_ns();
	r.from_ns = from_ns < r.h.ts ? from_ns : r.h.ts;
	r.why = why;
	r.links = links;
	trace_out__append(o, &r, sizeof(r));
}

void meta__kernel_probe(struct trace_out *o, pid_t tgid, int pid, const char *what)
{
	struct meta_probe p = {
		.id = o->next_probe_id++,
		.family = GS_PROBE_KERNEL,
		.live_ns = clock__mono_ns(),
		.tgid = tgid,
		.pid = pid,
		.lib = "kernel",
		.sym = what,
	};

	meta__probe(o, &p);
}

unsigned int meta__threads(struct trace_out *o, pid_t tgid)
{
	unsigned int written = 0;
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", tgid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct comm_event c;
		char cpath[300];
		ssize_t n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/comm", tgid, de->d_name);
		fd = open(cpath, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(&c, 0, sizeof(c));
		meta__hdr(&c.h, GS_EV_COMM, sizeof(c), trace_out__gpid(o, tgid, true));
		c.h.tid = trace_out__gpid(o, atoi(de->d_name), false);
		n = read(fd, c.comm, sizeof(c.comm) - 1);
		close(fd);
		if (n > 0 && c.comm[n - 1] == '\n')
			c.comm[n - 1] = 0;
		trace_out__append(o, &c, sizeof(c));
		written++;
	}
	closedir(d);
	return written;
}

void meta__ksym(struct trace_out *o, __u64 addr, const char *name)
{
	size_t len = strlen(name) + 1;
	struct gs_rec_ksym *rec = calloc(1, sizeof(*rec) + len + 8);

	if (!rec)
		return;
	meta__hdr(&rec->h, GS_REC_KSYM, sizeof(*rec) + len, 0);
	rec->addr = addr;
	memcpy(rec->name, name, len);
	trace_out__append(o, rec, sizeof(*rec) + len);
	free(rec);
}

void meta__exit(struct trace_out *o, pid_t pid, int status, const struct rusage *ru)
{
	struct gs_rec_exit x = {};

	meta__hdr(&x.h, GS_REC_PROC_EXIT, sizeof(x), pid);
	x.status = status;
	x.utime_ns = clock__timeval_ns(&ru->ru_utime);
	x.stime_ns = clock__timeval_ns(&ru->ru_stime);
	trace_out__append(o, &x, sizeof(x));
}

void meta__end(struct trace_out *o, pid_t pid, __u64 events)
{
	struct gs_rec_end end = {};

	meta__hdr(&end.h, GS_REC_END, sizeof(end), pid);
	end.events = events;
	end.records = o->tw ? trace__records(o->tw) : 0;
	trace_out__append(o, &end, sizeof(end));
}

/* ---- losses -------------------------------------------------------------------------------- */

/* Sums per-CPU counters KEY 0..N-1 of a BPF map into COUNT. */
static void sum_percpu(int fd, __u32 n, __u64 *count)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *vals = calloc(ncpus, sizeof(__u64));

	memset(count, 0, n * sizeof(*count));
	for (__u32 i = 0; vals && i < n; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			count[i] += vals[c];
	}
	free(vals);
}

/* Kernel names from handles (bpf/cuda.h): the calibration and fallback counts so far. */
static void write_cu_handles(struct trace_out *o, struct record_bpf *skel, pid_t tgid,
			     __u32 cuda_libs)
{
	struct gs_rec_cu_handles c = {};
	int fd = bpf_map__fd(skel->maps.cu_libs);

	meta__hdr(&c.h, GS_REC_CU_HANDLES, sizeof(c), tgid);
	for (__u32 i = 0; i < CU_MAX_LIBS; i++) {
		struct cu_handle_stats st;

		if (bpf_map_lookup_elem(fd, &i, &st))
			continue;
		c.agree += st.agree;
		c.disagree += st.disagree;
		c.named += st.named;
		c.rejected += st.rejected;
		c.libs_off += !!st.off;
	}
	c.libs = cuda_libs;
	trace_out__append(o, &c, sizeof(c));
}

static int cmp_count(const void *a, const void *b)
{
	return memcmp(&((const struct gs_launch_count *)a)->k,
		      &((const struct gs_launch_count *)b)->k, sizeof(struct cu_launch_key));
}

/* R grown to hold WANT entries (its capacity in *CAP); NULL, R freed, where memory ran out. */
static struct gs_rec_launches *launches_room(struct gs_rec_launches *r, size_t *cap, size_t want)
{
	struct gs_rec_launches *nr;
	size_t ncap = array__cap(*cap, sizeof(struct gs_launch_count), want, 64);

	if (want <= *cap)
		return r;
	nr = ncap ? realloc(r, sizeof(*r) + ncap * sizeof(struct gs_launch_count)) : NULL;
	if (!nr) {
		free(r);
		return NULL;
	}
	*cap = ncap;
	return nr;
}

/*
 * Every launch counted in BPF so far (bpf/launches.bpf.h): one record, the last counts. Those
 * folded into cu_launch_counts, and those threads' launch caches still hold (read, not taken,
 * while the probes are on: at the end they are folded, and this finds none), one entry a key.
 */
static void write_launches(struct trace_out *o, struct record_bpf *skel, pid_t tgid)
{
	int fd = bpf_map__fd(skel->maps.cu_launch_counts), ncpus = libbpf_num_possible_cpus();
	struct gs_launch_count *cached = NULL;
	struct cu_launch_key k, *prev = NULL;
	struct gs_rec_launches *r = NULL;
	__u64 *vals = calloc(ncpus, sizeof(__u64));
	size_t cap = 0, n = 0, ncached = 0, m = 0;

	if (!vals)
		return;
	bpf_setup__peek_launches(skel, &cached, &ncached); /* none where it fails */
	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue; /* deleted meanwhile: the recorder never deletes, not ours */
		if (!(r = launches_room(r, &cap, n + 1)))
			goto out;
		r->e[n] = (struct gs_launch_count){ .k = k };
		for (int c = 0; c < ncpus; c++)
			r->e[n].count += vals[c];
		n++;
	}
	if (ncached) {
		if (!(r = launches_room(r, &cap, n + ncached)))
			goto out;
		memcpy(r->e + n, cached, ncached * sizeof(*cached));
		n += ncached;
	}
	if (r) { /* one entry a key: the map's and the caches' of the same key summed */
		qsort(r->e, n, sizeof(r->e[0]), cmp_count);
		for (size_t i = 0; i < n; i++)
			if (m && !cmp_count(&r->e[m - 1], &r->e[i]))
				r->e[m - 1].count += r->e[i].count;
			else
				r->e[m++] = r->e[i];
	}
	if (!r && !(r = calloc(1, sizeof(*r))))
		goto out;
	meta__hdr(&r->h, GS_REC_LAUNCHES, sizeof(*r) + m * sizeof(struct gs_launch_count), tgid);
	r->n = m;
	r->flags = skel->rodata->all_launches ? GS_LAUNCHES_F_ALL : 0;
	trace_out__append(o, r, r->h.size);
out:
	free(r);
	free(vals);
	free(cached);
}

/*
 * The threads' histograms of the time between their launches (cuda.h), those folded so far (at
 * their exit; every thread's at the end): one record, the last counts; none while there are
 * none.
 */
static void write_launch_ivals(struct trace_out *o, struct record_bpf *skel, pid_t tgid)
{
	int fd = bpf_map__fd(skel->maps.cu_launch_ivals);
	struct gs_rec_launch_ivals *r = NULL, *bigger;
	__u32 tid, *prev = NULL;
	size_t n = 0, cap = 0;

	while (!bpf_map_get_next_key(fd, prev, &tid)) {
		prev = &tid;
		if (n == cap) {
			size_t ncap = array__cap(cap, sizeof(r->e[0]), n + 1, 64);

			bigger = ncap ? realloc(r, sizeof(*r) + ncap * sizeof(r->e[0])) : NULL;
			if (!bigger)
				goto out;
			r = bigger;
			cap = ncap;
		}
		r->e[n] = (struct gs_launch_ival){ .tid = tid };
		if (!bpf_map_lookup_elem(fd, &tid, &r->e[n].h))
			n++;
	}
	if (!n)
		goto out;
	meta__hdr(&r->h, GS_REC_LAUNCH_IVALS, sizeof(*r) + n * sizeof(r->e[0]), tgid);
	r->n = n;
	r->buckets = CU_IVAL_BUCKETS;
	trace_out__append(o, r, r->h.size);
out:
	free(r);
}

void meta__losses(struct trace_out *o, struct record_bpf *skel, pid_t tgid, __u64 attach_failed,
		  __u32 cuda_libs)
{
	size_t size = sizeof(struct gs_rec_losses) + GS_LOSS_MAX * sizeof(__u64);
	size_t tsize = sizeof(struct gs_rec_lost_types) + GS_EV_MAX * sizeof(__u64);
	struct gs_rec_losses *l = calloc(1, size);
	struct gs_rec_lost_types *t = calloc(1, tsize);
	struct bpf_program *prog;

	if (!l)
		goto out;
	meta__hdr(&l->h, GS_REC_LOSSES, size, tgid);
	l->n = GS_LOSS_MAX;
	sum_percpu(bpf_map__fd(skel->maps.losses), GS_LOSS_MAX, l->count);
	/* Runs the kernel skipped because another BPF program was active on the CPU (a sample
	 * that fires inside a uprobe program, for example). */
	bpf_object__for_each_program(prog, skel->obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			l->count[GS_LOSS_RECURSION] += info.recursion_misses;
	}
	l->count[GS_LOSS_ATTACH] = attach_failed;
	trace_out__append(o, l, size);

	/* The ring-buffer losses again, by event type. */
	if (t) {
		meta__hdr(&t->h, GS_REC_LOST_TYPES, tsize, tgid);
		t->n = GS_EV_MAX;
		sum_percpu(bpf_map__fd(skel->maps.lost_types), GS_EV_MAX, t->count);
		trace_out__append(o, t, tsize);
	}
	write_cu_handles(o, skel, tgid, cuda_libs);
	write_launches(o, skel, tgid);
	write_launch_ivals(o, skel, tgid);
out:
	free(l);
	free(t);
}

__u64 meta__count_losses(struct record_bpf *skel, __u64 attach_failed, __u64 *by_kind)
{
	__u64 sum = 0;

	sum_percpu(bpf_map__fd(skel->maps.losses), GS_LOSS_MAX, by_kind);
	by_kind[GS_LOSS_ATTACH] = attach_failed;
	for (int i = 0; i < GS_LOSS_MAX; i++)
		sum += by_kind[i];
	return sum;
}

/* ---- mappings ------------------------------------------------------------------------------ */

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
		meta__hdr(&rec->h, GS_REC_MAP, sizeof(*rec) + plen, trace_out__gpid(o, tgid, true));
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
	*m = (struct map_records){};
}
