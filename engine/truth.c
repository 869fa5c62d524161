// SPDX-License-Identifier: MIT
/*
 * The engine's truth and the stalls it knows it injects.
 *
 * --truth FILE: what the engine knows about itself, one JSON object a line (CLOCK_MONOTONIC ns;
 * the profiler never reads it, tests compare its reports against it):
 *   meta             scenario, backend, threads, sizes
 *   partition        a partition's GPU section: kernels_start_ns/kernels_end_ns from its events
 *   malloc_trim      a trim: tracker_lock_held says whether under the tracker lock
 *   tracker_wait, gpu_lock_wait, cond_wait_work, gpu_lock_hold, sync_memcpy, preempted,
 *   result_records, batch_wait
 *                    stalls of 1 ms or more with the thread's tid and comm
 *   produce_batch    parallel-waits: a producer's batch, every one
 *   wait_step        parallel-waits: per launch, both intervals the worker waited for (the
 *                    trim and the batch) and when it had both (waits.c)
 *   gpu_busy         the device's busy intervals: simcuda's exact kernel intervals on the
 *                    simulator, else each partition's kernel span from its CUDA events; gaps under
 *                    0.1 ms bridged
 *   gpu_idle         every idle window of 1 ms or more between the first kernel and the last, with
 *                    "stalls": the ns of it each kind of stall overlaps, and "own_ns": the ns the
 *                    scenario's own mechanism overlaps (see own_stalls)
 *   gpu_steady       busy_pct (first kernel to last), whole_busy_pct, idle_ns, own_ns, own_share
 *   gpu_summary, counts, oversubscribe
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline_int.h"

void name_thread(const char *fmt, unsigned i)
{
	char name[16];
	snprintf(name, sizeof(name), fmt, i);
	pthread_setname_np(pthread_self(), name);
}

/* Time this thread spent runnable but not running (schedstat's run_delay), ns.  Read with
 * open/read, not stdio: a GPU worker calls it, and must not allocate (see op_new in simcuda). */
uint64_t run_delay_ns(void)
{
	char buf[128];
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	unsigned long long run = 0, wait = 0;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	return wait;
}

struct truth_file truth = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* One JSON line: kind, this thread's tid and name, the interval, then `extra` (",\"k\":v..."). */
void truth_stall(const char *kind, uint64_t start, uint64_t end, const char *extra, ...)
{
	if (!truth.f)
		return;
	char comm[16] = "", more[512] = "";
	pthread_getname_np(pthread_self(), comm, sizeof(comm));
	if (extra) {
		va_list ap;
		va_start(ap, extra);
		vsnprintf(more, sizeof(more), extra, ap);
		va_end(ap);
	}
	pthread_mutex_lock(&truth.mu);
	fprintf(truth.f,
		"{\"kind\":\"%s\",\"tid\":%d,\"comm\":\"%s\",\"start_ns\":%llu,\"end_ns\":%llu,"
		"\"ns\":%llu%s}\n",
		kind, gettid(), comm, (unsigned long long)start, (unsigned long long)end,
		(unsigned long long)(end - start), more);
	pthread_mutex_unlock(&truth.mu);
}

void truth_line(const char *fmt, ...)
{
	if (!truth.f)
		return;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&truth.mu);
	vfprintf(truth.f, fmt, ap);
	fputc('\n', truth.f);
	pthread_mutex_unlock(&truth.mu);
	va_end(ap);
}

const char *const stall_names[STALL_COUNT] = {
	"tracker_wait", "trim_locked", "gpu_lock_wait", "gpu_lock_hold", "wait_work",
	"sync_copy",	"preempted",   "batch_wait",	"produce",
};

struct stall_lists stalls = { .mu = PTHREAD_MUTEX_INITIALIZER };

void stall_keep(enum stall k, uint64_t start, uint64_t end)
{
	if (!truth.f || end <= start)
		return;
	pthread_mutex_lock(&stalls.mu);
	struct ivs *l = &stalls.k[k];
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	l->v[l->n++] = (struct iv){ start, end };
	pthread_mutex_unlock(&stalls.mu);
}

/*
 * A wait of a thread that feeds the GPU has ended: the run delay it gathered since d0 is the
 * time it was woken but not yet running, at the wait's end.  Half a millisecond or more of it is
 * an oversubscription stall (the pipeline held back by threads it could not get a CPU from).
 */
void waited(uint64_t d0)
{
	uint64_t t = now_ns(), d = run_delay_ns() - d0;
	if (d >= 500000 && d < t)
		stall_keep(STALL_PREEMPTED, t - d, t);
}

/* A segment of work that feeds the GPU (synthesis, a tail that returns the reservation) spent
 * mostly runnable but not running: an oversubscription stall. */
void seg_runnable(const struct seg *s)
{
	uint64_t t = now_ns(), d = run_delay_ns() - s->delay;
	if (t - s->t >= 1000000 && 2 * d >= t - s->t)
		stall_keep(STALL_PREEMPTED, s->t, t);
}

/* ---- results ----------------------------------------------------------------------------- */

static int cmp_iv(const void *x, const void *y)
{
	const struct iv *a = x, *b = y;
	return a->s < b->s ? -1 : a->s > b->s;
}

/* Sort and merge in place; intervals closer than `bridge` ns become one. */
void ivs_merge(struct ivs *l, uint64_t bridge)
{
	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), cmp_iv);
	size_t k = 0;
	for (size_t i = 1; i < l->n; i++) {
		if (l->v[i].s <= l->v[k].e + bridge) {
			if (l->v[i].e > l->v[k].e)
				l->v[k].e = l->v[i].e;
		} else {
			l->v[++k] = l->v[i];
		}
	}
	l->n = k + 1;
}

static void ivs_add(struct ivs *l, uint64_t start, uint64_t end)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			oom();
	}
	l->v[l->n++] = (struct iv){ start, end };
}

/* The intersection of two merged lists. */
static struct ivs ivs_intersect(const struct ivs *a, const struct ivs *b)
{
	struct ivs r = { 0 };
	for (size_t i = 0, j = 0; i < a->n && j < b->n;) {
		uint64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		uint64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
		if (s < e)
			ivs_add(&r, s, e);
		if (a->v[i].e < b->v[j].e)
			i++;
		else
			j++;
	}
	return r;
}

/* ns of the merged list l inside [s, e) */
static uint64_t ivs_overlap(const struct ivs *l, uint64_t s, uint64_t e)
{
	uint64_t ns = 0;
	for (size_t i = 0; i < l->n && l->v[i].s < e; i++) {
		uint64_t a = l->v[i].s > s ? l->v[i].s : s, b = l->v[i].e < e ? l->v[i].e : e;
		if (a < b)
			ns += b - a;
	}
	return ns;
}

static struct ivs ivs_copy(const struct ivs *l)
{
	struct ivs r = { 0 };
	for (size_t i = 0; i < l->n; i++)
		ivs_add(&r, l->v[i].s, l->v[i].e);
	return r;
}

/* The stalls of this scenario's own mechanism, as one merged list (none for fixed). */
struct ivs own_stalls(void)
{
	struct ivs none = { 0 };
	switch (E.o->scenario) {
	case SCENARIO_TRACKER_TRIM: /* waiting for the tracker lock while a trim holds it */
		return ivs_intersect(&stalls.k[STALL_TRACKER_WAIT], &stalls.k[STALL_TRIM_LOCKED]);
	case SCENARIO_GPU_LOCK_WIDE: /* waiting for the GPU mutex while its holder does host work */
		return ivs_intersect(&stalls.k[STALL_GPU_LOCK_WAIT],
				     &stalls.k[STALL_GPU_LOCK_HOLD]);
	case SCENARIO_STARVED:
		return ivs_copy(&stalls.k[STALL_WAIT_WORK]);
	case SCENARIO_PAGEABLE:
		return ivs_copy(&stalls.k[STALL_SYNC_COPY]);
	case SCENARIO_OVERSUBSCRIBED:
		return ivs_copy(&stalls.k[STALL_PREEMPTED]);
	case SCENARIO_PARALLEL_WAITS: { /* the tracker lock while a trim holds it, or the batch */
		struct ivs r = ivs_intersect(&stalls.k[STALL_TRACKER_WAIT],
					     &stalls.k[STALL_TRIM_LOCKED]);
		for (size_t i = 0; i < stalls.k[STALL_BATCH_WAIT].n; i++)
			ivs_add(&r, stalls.k[STALL_BATCH_WAIT].v[i].s,
				stalls.k[STALL_BATCH_WAIT].v[i].e);
		ivs_merge(&r, 0);
		return r;
	}
	default:
		return none;
	}
}

/*
 * The device's busy intervals: simcuda's exact kernel intervals (SIMCUDA_TRACE) on the
 * simulator, else each partition's kernel span from its CUDA events.  Gaps shorter than
 * SIM_BRIDGE_NS (launch handoffs between back-to-back kernels) are bridged.
 */
struct ivs busy_intervals(const char *sim_trace, const struct gpu_ctx *g, uint64_t since)
{
	struct ivs l = { 0 };
	FILE *f = sim_trace && *sim_trace ? fopen(sim_trace, "re") : NULL;
	if (!f) {
		for (unsigned k = 0; k < g->nbusy; k++)
			ivs_add(&l, g->busy[2 * k], g->busy[2 * k + 1]);
		ivs_merge(&l, 0);
		return l;
	}
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		int d;
		unsigned long long st, en;
		const char *p = strstr(line, "\"start_ns\":");
		const char *q = strstr(line, "\"end_ns\":");
		if (sscanf(line, "{\"device\":%d", &d) != 1 || d != g->ordinal || !p || !q)
			continue;
		if (sscanf(p, "\"start_ns\":%llu", &st) != 1 ||
		    sscanf(q, "\"end_ns\":%llu", &en) != 1 || st < since)
			continue;
		ivs_add(&l, st, en);
	}
	fclose(f);
	ivs_merge(&l, SIM_BRIDGE_NS);
	return l;
}

/*
 * The GPU's truth for one device: its busy intervals, and every idle window of 1 ms or more
 * between its first kernel and its last (the steady state), with the ns of it that each kind of
 * stall of a GPU-feeding thread overlaps and the ns the scenario's own mechanism overlaps.
 * Returns steady-state busy %; *whole_pct gets busy over [t_start, t_end].
 */
double truth_gpu(const struct ivs *busy, unsigned gpu, const struct ivs *own, uint64_t t_start,
		 uint64_t t_end, double *whole_pct, uint64_t *busy_ns)
{
	uint64_t b = 0, idle = 0, own_ns = 0;
	for (size_t i = 0; i < busy->n; i++) {
		b += busy->v[i].e - busy->v[i].s;
		truth_line("{\"kind\":\"gpu_busy\",\"gpu\":%u,\"start_ns\":%llu,\"end_ns\":%llu}",
			   gpu, (unsigned long long)busy->v[i].s, (unsigned long long)busy->v[i].e);
	}
	for (size_t i = 1; i < busy->n; i++) {
		uint64_t s = busy->v[i - 1].e, e = busy->v[i].s;
		if (e - s < 1000000)
			continue;
		char kinds[512] = "";
		size_t len = 0;
		for (int k = 0; k < STALL_COUNT; k++) {
			uint64_t ns = ivs_overlap(&stalls.k[k], s, e);
			if (ns && len < sizeof(kinds))
				len += (size_t)snprintf(kinds + len, sizeof(kinds) - len,
							"%s\"%s\":%llu", len ? "," : "",
							stall_names[k], (unsigned long long)ns);
		}
		uint64_t o = ivs_overlap(own, s, e);
		idle += e - s;
		own_ns += o;
		truth_line("{\"kind\":\"gpu_idle\",\"gpu\":%u,\"start_ns\":%llu,\"end_ns\":%llu,"
			   "\"ns\":%llu,\"own_ns\":%llu,\"stalls\":{%s}}",
			   gpu, (unsigned long long)s, (unsigned long long)e,
			   (unsigned long long)(e - s), (unsigned long long)o, kinds);
	}
	uint64_t first = busy->n ? busy->v[0].s : 0, last = busy->n ? busy->v[busy->n - 1].e : 0;
	double steady = last > first ? 100.0 * (double)b / (double)(last - first) : 0;
	*whole_pct = t_end > t_start ? 100.0 * (double)b / (double)(t_end - t_start) : 0;
	*busy_ns = b;
	truth_line("{\"kind\":\"gpu_steady\",\"gpu\":%u,\"busy_pct\":%.2f,\"whole_busy_pct\":%.2f,"
		   "\"first_kernel_ns\":%llu,\"last_kernel_ns\":%llu,\"idle_ns\":%llu,"
		   "\"own_ns\":%llu,\"own_share\":%.4f}",
		   gpu, steady, *whole_pct, (unsigned long long)first, (unsigned long long)last,
		   (unsigned long long)idle, (unsigned long long)own_ns,
		   idle ? (double)own_ns / (double)idle : 0.0);
	return steady;
}
