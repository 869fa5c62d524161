// SPDX-License-Identifier: GPL-2.0
/* What the BPF side counted, written at the end (counters.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cuda.h"
#include "record.skel.h"
#include "bpf_setup.h"
#include "counters.h"
#include "trace.h"
#include "trace_out.h"
#include "vec.h"

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

	trace_out__hdr(&c.h, GS_REC_CU_HANDLES, sizeof(c), tgid);
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
	trace_out__hdr(&r->h, GS_REC_LAUNCHES, sizeof(*r) + m * sizeof(struct gs_launch_count),
		       tgid);
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
	trace_out__hdr(&r->h, GS_REC_LAUNCH_IVALS, sizeof(*r) + n * sizeof(r->e[0]), tgid);
	r->n = n;
	r->buckets = CU_IVAL_BUCKETS;
	trace_out__append(o, r, r->h.size);
out:
	free(r);
}

void counters__write(struct trace_out *o, struct record_bpf *skel, pid_t tgid, __u64 attach_failed,
		     __u32 cuda_libs)
{
	size_t size = sizeof(struct gs_rec_losses) + GS_LOSS_MAX * sizeof(__u64);
	size_t tsize = sizeof(struct gs_rec_lost_types) + GS_EV_MAX * sizeof(__u64);
	struct gs_rec_losses *l = calloc(1, size);
	struct gs_rec_lost_types *t = calloc(1, tsize);
	struct bpf_program *prog;

	if (!l)
		goto out;
	trace_out__hdr(&l->h, GS_REC_LOSSES, size, tgid);
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
		trace_out__hdr(&t->h, GS_REC_LOST_TYPES, tsize, tgid);
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

__u64 counters__losses(struct record_bpf *skel, __u64 attach_failed, __u64 *by_kind)
{
	__u64 sum = 0;

	sum_percpu(bpf_map__fd(skel->maps.losses), GS_LOSS_MAX, by_kind);
	by_kind[GS_LOSS_ATTACH] = attach_failed;
	for (int i = 0; i < GS_LOSS_MAX; i++)
		sum += by_kind[i];
	return sum;
}
