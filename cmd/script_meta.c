// SPDX-License-Identifier: GPL-2.0
/* gapscope script's '#' lines: the recorder's metadata records (script.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "escape.h"
#include "script.h"
#include "trace.h"

void script__print_time(FILE *o, __u64 ns)
{
	fprintf(o, "%llu.%06llu", (unsigned long long)(ns / 1000000000ull),
		(unsigned long long)(ns % 1000000000ull / 1000));
}

static void print_counters(FILE *o, const struct gs_hdr *h, __u32 n, const __u64 *count,
			   bool by_type)
{
	__u32 have = gs_rec_counters(h, n, count);

	for (__u32 i = by_type; i < have; i++)
		fprintf(o, " %s=%llu",
			by_type		? trace__event_name(i) :
			i < GS_LOSS_MAX ? gs_loss_names[i] :
					  "other",
			(unsigned long long)count[i]);
	fputc('\n', o);
}

static void print_probe_rec(FILE *o, const struct gs_rec_probe *p)
{
	size_t ll = gs_rec_strlen(&p->h, p->names);
	const char *sym = p->names + ll + 1;

	fprintf(o, "# probe %u %s ", p->id, trace__probe_family_name(p->family));
	esc__put_text(o, p->names, ll);
	fputc(':', o);
	esc__put_text(o, sym, gs_rec_strlen(&p->h, sym));
	if (p->err) {
		/* -INT_MIN would overflow: negated unsigned */
		fprintf(o, " FAILED: %s\n", strerror((int)(0u - (__u32)p->err)));
		return;
	}
	fprintf(o, (p->flags & GS_PROBE_F_RETIRED) ? " retired-at=" : " live-since=");
	script__print_time(o, p->h.ts);
	fprintf(o, "%s off=0x%llx\n", (p->flags & GS_PROBE_F_RET) ? " +return" : "",
		(unsigned long long)p->offset);
}

/* A part of an archived file: its place in the file, the build-id and the path mapped. */
static void print_archive(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_archive *r = gs_archive(h);
	size_t room = gs_fixed_size(h) - sizeof(*r);
	bool ok = r->path_len && r->path_len <= room && !r->data[r->path_len - 1] &&
		  r->len <= room - r->path_len && r->build_id_len <= sizeof(r->build_id);

	fprintf(o, "# archive pid=%u part=%u bytes=%u at=%llu of=%llu%s build-id=", h->tgid, r->seq,
		r->len, (unsigned long long)r->offset, (unsigned long long)r->total,
		r->flags & GS_ARCHIVE_F_DWARF ? " dwarf" : "");
	for (__u32 i = 0; ok && i < r->build_id_len; i++)
		fprintf(o, "%02x", r->build_id[i]);
	fputc(' ', o);
	esc__put_text(o, ok ? r->data : "(damaged)", SIZE_MAX);
	fputc('\n', o);
}

/* A CUPTI activity record, as the collector sent it (lib/gpu_act.h). */
static void print_gpu_act(FILE *o, const struct gs_hdr *h)
{
	const struct gs_gpu_act *a = gs_gpu_act(h);

	if (!a) {
		fprintf(o, "# cupti: malformed record (%u bytes)\n", h->size);
		return;
	}
	fprintf(o,
		"# cupti %s dev=%u ctx=%u stream=%u corr=%u aux=%u tid=%u start=%" PRIu64
		" end=%" PRIu64 " bytes=%" PRIu64 " ",
		trace__gpu_act_kind_name(a->kind), a->device, a->context, a->stream, a->correlation,
		a->aux, a->tid, (uint64_t)a->start, (uint64_t)a->end, (uint64_t)a->bytes);
	esc__put_text(o, a->size > sizeof(*a) ? a->text : "", SIZE_MAX);
	fputc('\n', o);
}

static void print_clock(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_clock *c = gs_clock(h);

	fprintf(o, "# clock monotonic=%llu realtime=%llu boottime=%llu freq=%u cpus=%u host=",
		(unsigned long long)c->mono_ns, (unsigned long long)c->real_ns,
		(unsigned long long)c->boot_ns, c->sample_freq, c->ncpus);
	esc__put_text(o, c->host, 64);
	fputs(" kernel=", o);
	esc__put_text(o, c->kernel, 64);
	fputc('\n', o);
}

static void print_target(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_target *t = gs_target(h);
	const char *a = t->argv, *end = gs_rec_tail_end(h);

	fprintf(o, "# target pid=%u %s", h->tgid,
		t->mode == GS_TARGET_LAUNCH ? "launch" : "attach");
	for (__u32 i = 0; i < t->argc && a < end; i++) {
		size_t len = gs_rec_strlen(h, a);

		fputc(' ', o);
		esc__put_text(o, a, len);
		a += len + 1;
	}
	fputc('\n', o);
}

static void print_map(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_map *m = gs_map(h);

	fprintf(o, "# map pid=%u %llx-%llx %c%c%c off=%llx ", h->tgid, (unsigned long long)m->start,
		(unsigned long long)m->end, m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-',
		m->prot & 4 ? 'x' : '-', (unsigned long long)m->pgoff);
	esc__put_text(o, m->path, gs_rec_strlen(h, m->path));
	if (m->build_id_len) {
		fprintf(o, " build-id=");
		for (__u32 i = 0; i < m->build_id_len && i < sizeof(m->build_id); i++)
			fprintf(o, "%02x", m->build_id[i]);
	}
	fputc('\n', o);
}

static void print_losses(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_losses *l = gs_losses(h);
	__u32 have = gs_rec_counters(h, l->n, l->count);
	__u64 sum = 0;

	for (__u32 i = 0; i < have; i++)
		sum += l->count[i];
	fprintf(o, "# losses total=%llu", (unsigned long long)sum);
	print_counters(o, h, l->n, l->count, false);
}

static void print_lost_types(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_lost_types *l = gs_lost_types(h);

	fprintf(o, "# lost-by-type");
	print_counters(o, h, l->n, l->count, true);
}

static void print_cu_handles(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_cu_handles *c = gs_cu_handles(h);

	fprintf(o,
		"# kernel-names-from-handles checked=%llu agreed=%llu disagreed=%llu "
		"named=%llu rejected=%llu libs=%u off=%u\n",
		(unsigned long long)(c->agree + c->disagree), (unsigned long long)c->agree,
		(unsigned long long)c->disagree, (unsigned long long)c->named,
		(unsigned long long)c->rejected, c->libs, c->libs_off);
}

static void print_launches(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_launches *l = gs_launches(h);
	__u32 n = (h->size - sizeof(*l)) / sizeof(l->e[0]);
	__u64 sum = 0;

	n = l->n < n ? l->n : n;
	for (__u32 i = 0; i < n; i++)
		sum += l->e[i].count;
	/* Each kernel's count is printed once, from the last of these, after the events. */
	fprintf(o, "# launches total=%llu entries=%u%s\n", (unsigned long long)sum, n,
		(l->flags & GS_LAUNCHES_F_ALL) ? " all-launches" : "");
}

static void print_launch_ivals(FILE *o, const struct gs_hdr *h)
{
	/* Per thread: the time between its launches, each bucket by its least us. */
	const struct gs_rec_launch_ivals *l = gs_launch_ivals(h);
	__u32 n = (h->size - sizeof(*l)) / sizeof(l->e[0]);

	n = l->n < n ? l->n : n;
	for (__u32 i = 0; i < n; i++) {
		const struct gs_launch_ival *e = &l->e[i];
		__u64 sum = 0;

		for (__u32 b = 0; b < CU_IVAL_BUCKETS; b++)
			sum += e->h.n[b];
		fprintf(o, "# launch-intervals pid=%u tid=%u n=%llu us>=", e->h.tgid, e->tid,
			(unsigned long long)sum);
		for (__u32 b = 0, first = 1; b < CU_IVAL_BUCKETS; b++)
			if (e->h.n[b]) {
				fprintf(o, "%s%g:%u", first ? "" : ",", cu_ival_lo_ns(b) / 1000.0,
					e->h.n[b]);
				first = 0;
			}
		fputc('\n', o);
	}
}

static void print_exit(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_exit *x = gs_proc_exit(h);

	fprintf(o, "# exit pid=%u status=0x%x utime_ns=%llu stime_ns=%llu\n", h->tgid, x->status,
		(unsigned long long)x->utime_ns, (unsigned long long)x->stime_ns);
}

static void print_unprobed(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_unprobed *u = gs_unprobed(h);

	fprintf(o, "# unprobed pid=%u why=%s for_ns=%llu links=%u from=", h->tgid,
		u->why < GS_UNPROBED_MAX ? gs_unprobed_names[u->why] : "?",
		(unsigned long long)(h->ts > u->from_ns ? h->ts - u->from_ns : 0), u->links);
	script__print_time(o, u->from_ns);
	fputc('\n', o);
}

static void print_sampler(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_sampler *sa = gs_sampler(h);

	fprintf(o, "# sampler %s freq=%u tick_ns=%llu period_ns=%llu\n",
		sa->kind == GS_SAMPLER_TICK ? "tick" : "timer", sa->freq,
		(unsigned long long)sa->tick_ns, (unsigned long long)sa->period_ns);
}

static void print_pycode(FILE *o, const struct gs_hdr *h)
{
	const char *name, *file;
	const struct gs_rec_pycode *r = gs_pycode(h, &name, &file);

	if (r)
		fprintf(o, "# pycode pid=%u code=0x%llx %s (%s:%d) lines=%u\n", h->tgid,
			(unsigned long long)r->code, name, file, r->firstlineno, r->nlines);
	else
		fprintf(o, "# pycode pid=%u damaged\n", h->tgid);
}

static void print_cgroup(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_cgroup *c = gs_cgroup(h);
	const char *path, *cpus, *cpuset;

	if (!cgroup_rec__strings(c, &path, &cpus, &cpuset)) {
		fprintf(o, "# cgroup pid=%u damaged\n", h->tgid);
		return;
	}
	fprintf(o,
		"# cgroup pid=%u id=%u v%u depth=%u %s quota_us=%lld period_us=%llu "
		"cpus=%s cpuset=%s ncpus=%u\n",
		h->tgid, c->id, c->version, c->depth, path, (long long)c->quota_us,
		(unsigned long long)c->period_us, cpus, cpuset[0] ? cpuset : "?", c->ncpus);
}

static void print_cpustat(FILE *o, const struct gs_hdr *h)
{
	const struct gs_rec_cpustat *c = gs_cpustat(h);

	fprintf(o,
		"# cpustat pid=%u id=%u usage_ns=%lld periods=%lld throttled=%lld "
		"throttled_ns=%lld at=",
		h->tgid, c->id, (long long)c->usage_ns, (long long)c->nr_periods,
		(long long)c->nr_throttled, (long long)c->throttled_ns);
	script__print_time(o, h->ts);
	fputc('\n', o);
}

static void print_probe(FILE *o, const struct gs_hdr *h)
{
	print_probe_rec(o, gs_probe_rec(h));
}

static void print_end(FILE *o, const struct gs_hdr *h)
{
	fprintf(o, "# end events=%llu\n", (unsigned long long)gs_end(h)->events);
}

static void print_perf_map(FILE *o, const struct gs_hdr *h)
{
	fprintf(o, "# perf-map pid=%u part=%u bytes=%u\n", h->tgid, gs_perf_map(h)->seq,
		gs_perf_map(h)->len);
}

static void print_nvml(FILE *o, const struct gs_hdr *h)
{
	fprintf(o, "# nvml device=%u gpu=%u%% mem=%u%% at=", gs_nvml(h)->device,
		gs_nvml(h)->gpu_pct, gs_nvml(h)->mem_pct);
	script__print_time(o, h->ts);
	fputc('\n', o);
}

/* Each metadata record's line; NULL: none of its own (a kernel symbol names kernel frames). */
static const struct {
	__u32 type;
	void (*print)(FILE *o, const struct gs_hdr *h);
} printers[] = {
	{ GS_REC_CLOCK, print_clock },
	{ GS_REC_TARGET, print_target },
	{ GS_REC_PROBE, print_probe },
	{ GS_REC_MAP, print_map },
	{ GS_REC_LOSSES, print_losses },
	{ GS_REC_LOST_TYPES, print_lost_types },
	{ GS_REC_CU_HANDLES, print_cu_handles },
	{ GS_REC_LAUNCHES, print_launches },
	{ GS_REC_LAUNCH_IVALS, print_launch_ivals },
	{ GS_REC_PROC_EXIT, print_exit },
	{ GS_REC_UNPROBED, print_unprobed },
	{ GS_REC_SAMPLER, print_sampler },
	{ GS_REC_END, print_end },
	{ GS_REC_KSYM, NULL },
	{ GS_REC_PERF_MAP, print_perf_map },
	{ GS_REC_ARCHIVE, print_archive },
	{ GS_REC_GPU_ACT, print_gpu_act },
	{ GS_REC_PYCODE, print_pycode },
	{ GS_REC_CGROUP, print_cgroup },
	{ GS_REC_CPUSTAT, print_cpustat },
	{ GS_REC_NVML, print_nvml },
};

void script__print_meta(FILE *o, const struct gs_hdr *h)
{
	for (size_t i = 0; i < sizeof(printers) / sizeof(printers[0]); i++)
		if (printers[i].type == h->type) {
			if (printers[i].print)
				printers[i].print(o, h);
			return;
		}
	fprintf(o, "# unknown record type %u size %u\n", h->type, h->size);
}
