// SPDX-License-Identifier: GPL-2.0
/*
 * gapscope script: a trace as text, one event per line in recording order, like perf script.
 * Recorder metadata (clock, probes, maps, losses) prints as '#' lines; stacks follow their event
 * indented, user frames as dso+offset, kernel frames named from the trace's own symbols.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gapscope.h"
#include "cuda.h"
#include "futex.h"
#include "offcpu.h"
#include "probe.h"
#include "proc.h"
#include "sample.h"
#include "cuda_fns.h"
#include "gapscope_cmd.h"
#include "trace.h"

static struct {
	const char *file;
	bool no_stacks;
	bool no_meta;
} env;

static const struct argp_option opts[] = {
	{ "no-stacks", 's', NULL, 0, "Do not print stacks", 0 },
	{ "no-meta", 'm', NULL, 0, "Do not print the recorder's '#' metadata lines", 0 },
	{},
};

static const char doc[] = "Print a gapscope trace, one event per line.\n"
			  "\n"
			  "USAGE: gapscope script [--no-stacks] [--no-meta] FILE\n"
			  "\n"
			  "EXAMPLES:\n"
			  "  gapscope script trace.gsc | grep cuLaunchKernel\n";

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 's':
		env.no_stacks = true;
		break;
	case 'm':
		env.no_meta = true;
		break;
	case ARGP_KEY_ARG:
		if (env.file)
			argp_error(state, "one trace file at a time");
		env.file = arg;
		break;
	case ARGP_KEY_END:
		if (!env.file)
			argp_error(state, "which trace file?");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- a small u64 -> string map (thread names, probe names, kernel names) ------------------- */

struct strmap {
	__u64 *keys;
	char **vals;
	size_t cap, n;
};

static size_t strmap__slot(const struct strmap *m, __u64 key)
{
	size_t i = (key * 0x9e3779b97f4a7c15ull) & (m->cap - 1);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static const char *strmap__get(const struct strmap *m, __u64 key)
{
	return m->cap ? m->vals[strmap__slot(m, key)] : NULL;
}

static void strmap__set(struct strmap *m, __u64 key, const char *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct strmap big = { .cap = m->cap ? m->cap * 2 : 256 };

		big.keys = calloc(big.cap, sizeof(*big.keys));
		big.vals = calloc(big.cap, sizeof(*big.vals));
		if (!big.keys || !big.vals) {
			free(big.keys);
			free(big.vals);
			return;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->vals[j])
				continue;
			i = strmap__slot(&big, m->keys[j]);
			big.keys[i] = m->keys[j];
			big.vals[i] = m->vals[j];
			big.n++;
		}
		free(m->keys);
		free(m->vals);
		*m = big;
	}
	i = strmap__slot(m, key);
	if (m->vals[i])
		free(m->vals[i]);
	else
		m->n++;
	m->keys[i] = key;
	m->vals[i] = strdup(val);
}

static void strmap__free(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = (struct strmap){};
}

static __u64 str_hash(const char *s)
{
	__u64 h = 1469598103934665603ull;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h | 1;	/* never 0: key 0 of distrust means "every library" */
}

/* ---- state built while reading ------------------------------------------------------------- */

struct map {
	__u32 tgid;
	__u64 start, end, pgoff;
	char *path;
};

struct ksym {
	__u64 addr;
	char *name;
};

/*
 * kernels: names from lookups; hkernels: names read from handles (bpf/cuda.h), printed as
 * name(handle) and only used for libraries no lookup contradicted anywhere in the trace
 * (pre-pass: distrust, the library paths of disagreeing calibrations).
 */
static struct strmap comms, probes, kernels, hkernels, probe_libs, distrust;
static struct map *maps;
static size_t nmaps;
static struct ksym *ksyms;
static size_t nksyms;
static bool ksyms_sorted = true;

static void note_probe_lib(const struct gs_rec_probe *p, const char *end)
{
	const char *lib = p->names;
	char buf[512];

	snprintf(buf, sizeof(buf), "%.*s", (int)strnlen(lib, end - lib), lib);
	strmap__set(&probe_libs, p->id, buf);
}

/*
 * Before printing: the libraries where a lookup's name contradicted the handle's. A name read
 * from a handle of such a library may have been put in the trace before the contradiction was
 * seen; it is not used anywhere in the trace, so no launch gets a wrong name.
 */
static void find_distrust(const char *file)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	char err[512];

	r = trace__open(file, err, sizeof(err));
	if (!r)
		return;
	while (trace__next(r, &h) > 0) {
		size_t fixed = gs_fixed_size(h);
		__u32 fn;

		if (h->type == GS_REC_PROBE && fixed >= sizeof(struct gs_rec_probe)) {
			note_probe_lib((const void *)h, (const char *)h + fixed);
			continue;
		}
		if (!(h->flags & CU_NF_CAL_DISAGREE))
			continue;
		if (h->type == GS_EV_CU_NAME && fixed >= sizeof(struct cu_name_event))
			fn = ((const struct cu_name_event *)h)->fn;
		else if (h->type == GS_EV_CUDA && fixed >= sizeof(struct cu_event))
			fn = ((const struct cu_event *)h)->fn;
		else
			continue;
		const char *lib = strmap__get(&probe_libs, fn);

		/* Which library is unknown: trust none. */
		strmap__set(&distrust, lib ? str_hash(lib) : 0, lib ? lib : "*");
	}
	trace__close(r);
	strmap__free(&probe_libs);
}

static const char *comm_of(__u32 tid)
{
	const char *c = strmap__get(&comms, tid);

	return c ? c : "?";
}

static void print_time(__u64 ns)
{
	printf("%llu.%06llu", (unsigned long long)(ns / 1000000000ull),
	       (unsigned long long)(ns % 1000000000ull / 1000));
}

static void print_dur(const char *what, __u64 ns)
{
	if (ns >= 1000000)
		printf(" %s=%.3fms", what, ns / 1e6);
	else
		printf(" %s=%.3fus", what, ns / 1e3);
}

static void head(const struct gs_hdr *h, const char *event)
{
	printf("%16s %6u/%-6u [%03u] ", comm_of(h->tid), h->tid, h->tgid, h->cpu);
	print_time(h->ts);
	printf(": %s", event);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct ksym *find_ksym(__u64 addr)
{
	size_t lo = 0, hi = nksyms;

	if (!ksyms_sorted) {
		qsort(ksyms, nksyms, sizeof(*ksyms), cmp_ksym);
		ksyms_sorted = true;
	}
	if (!nksyms || addr < ksyms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &ksyms[lo];
}

static const struct map *find_map(__u32 tgid, __u64 addr)
{
	/* Latest first: a later mapping at the same address replaced an earlier one. */
	for (size_t i = nmaps; i > 0; i--)
		if (maps[i - 1].tgid == tgid && addr >= maps[i - 1].start && addr < maps[i - 1].end)
			return &maps[i - 1];
	return NULL;
}

static void print_stacks(const struct gs_hdr *h, __u64 caller)
{
	const __u64 *u = gs_ustack(h), *k = gs_kstack(h);

	if (env.no_stacks)
		return;
	for (unsigned int i = 0; i < h->kstack_n; i++) {
		const struct ksym *s = find_ksym(k[i]);

		if (s)
			printf("\t%16" PRIx64 " %s+0x%" PRIx64 " ([kernel.kallsyms])\n",
			       (uint64_t)k[i], s->name, (uint64_t)(k[i] - s->addr));
		else
			printf("\t%16" PRIx64 " [unknown] ([kernel.kallsyms])\n", (uint64_t)k[i]);
	}
	for (unsigned int i = 0; i < h->ustack_n; i++) {
		__u64 a = u[i];
		const struct map *m;

		/* Taken at a function's first instruction: the caller's frame follows. */
		if (i == 1 && (h->flags & GS_F_ENTRY_STACK) && caller) {
			m = find_map(h->tgid, caller);
			if (m)
				printf("\t%16" PRIx64 " [caller] (%s+0x%" PRIx64 ")\n",
				       (uint64_t)caller, m->path,
				       (uint64_t)(caller - m->start + m->pgoff));
			else
				printf("\t%16" PRIx64 " [caller] ([unknown])\n", (uint64_t)caller);
		}
		m = find_map(h->tgid, a);
		if (m)
			printf("\t%16" PRIx64 " (%s+0x%" PRIx64 ")\n", (uint64_t)a, m->path,
			       (uint64_t)(a - m->start + m->pgoff));
		else
			printf("\t%16" PRIx64 " ([unknown])\n", (uint64_t)a);
	}
	if (h->kstack_n || h->ustack_n)
		putchar('\n');
}

static const char *futex_op(__u32 op)
{
	switch (op) {
	case 0:
		return "WAIT";
	case 6:
		return "LOCK_PI";
	case 9:
		return "WAIT_BITSET";
	case 11:
		return "WAIT_REQUEUE_PI";
	case 13:
		return "LOCK_PI2";
	default:
		return "?";
	}
}

static void print_calibration(__u16 flags)
{
	if (flags & CU_NF_CAL_AGREE)
		printf(" handle-name=agrees");
	else if (flags & CU_NF_CAL_DISAGREE)
		printf(" handle-name=DISAGREES");
}

/* Names read from handles count only where no lookup contradicted the handle's name. */
static bool handle_names_trusted(__u32 fn)
{
	const char *lib = strmap__get(&probe_libs, fn);

	return lib && !strmap__get(&distrust, (uintptr_t)0) &&
	       !strmap__get(&distrust, str_hash(lib));
}

static void print_cuda(const struct cu_event *e)
{
	const char *sym = strmap__get(&probes, e->fn);
	char ev[128];

	snprintf(ev, sizeof(ev), "cuda:%s", sym ? sym : cuda_fns__kind_name(e->kind));
	head(&e->h, ev);
	switch (e->kind) {
	case CU_K_LAUNCH: {
		const char *name = strmap__get(&kernels, e->handle);
		const char *hname = name ? NULL : strmap__get(&hkernels, e->handle);

		printf(" kernel=%s%s func=0x%llx grid=(%u,%u,%u) block=(%u,%u,%u) shmem=%u",
		       name ? name : hname ? hname : "?", hname ? "(handle)" : "",
		       (unsigned long long)e->handle, e->grid[0], e->grid[1],
		       e->grid[2], e->block[0], e->block[1], e->block[2], e->shmem);
		break;
	}
	case CU_K_GRAPH_LAUNCH:
		printf(" graph=0x%llx", (unsigned long long)e->handle);
		break;
	case CU_K_MEMCPY:
	case CU_K_MEMSET:
		printf(" bytes=%llu", (unsigned long long)e->bytes);
		if (e->kind == CU_K_MEMSET)
			printf(" dst=0x%llx", (unsigned long long)e->handle);
		break;
	case CU_K_SYNC_EVENT:
	case CU_K_EVENT_RECORD:
	case CU_K_EVENT_QUERY:
	case CU_K_STREAM_WAIT:
		printf(" event=0x%llx", (unsigned long long)e->handle);
		break;
	case CU_K_ALLOC:
	case CU_K_FREE:
	case CU_K_HOST_REGISTER:
	case CU_K_HOST_UNREGISTER:
		printf(" ptr=0x%llx bytes=%llu", (unsigned long long)e->handle,
		       (unsigned long long)e->bytes);
		break;
	case CU_K_CTX_CREATE:
		printf(" device=%llu", (unsigned long long)e->aux);
		break;
	case CU_K_KERNEL_FUNCTION: {
		const char *name = strmap__get(&kernels, e->aux);
		const char *hname = name ? NULL : strmap__get(&hkernels, e->aux);

		printf(" func=0x%llx kernel=0x%llx name=%s%s", (unsigned long long)e->handle,
		       (unsigned long long)e->aux, name ? name : hname ? hname : "?",
		       hname ? "(handle)" : "");
		/* (a handle equal to its kernel's would free the name being copied) */
		if (name && e->handle != e->aux)
			strmap__set(&kernels, e->handle, name);
		else if (hname && e->handle != e->aux)
			strmap__set(&hkernels, e->handle, hname);
		print_calibration(e->h.flags);
		break;
	}
	}
	if (e->stream || e->kind == CU_K_LAUNCH || e->kind == CU_K_SYNC_STREAM ||
	    e->kind == CU_K_EVENT_RECORD || e->kind == CU_K_STREAM_QUERY ||
	    e->kind == CU_K_STREAM_WAIT)
		printf(" stream=0x%llx", (unsigned long long)e->stream);
	if (e->ctx)
		printf(" ctx=0x%llx", (unsigned long long)e->ctx);
	if (e->h.flags & GS_F_RET) {
		print_dur("dur", e->dur_ns);
		printf(" ret=%d", e->ret);
	}
	printf(" caller=0x%llx\n", (unsigned long long)e->caller);
	print_stacks(&e->h, e->caller);
}

static void print_record(const struct gs_hdr *h)
{
	size_t fixed = gs_fixed_size(h);
	char line[256];

#define NEED(T)                                              \
	if (fixed < sizeof(T)) {                             \
		printf("# short record type %u\n", h->type); \
		return;                                      \
	}
	switch (h->type) {
	case GS_EV_CUDA:
		NEED(struct cu_event);
		print_cuda((const void *)h);
		break;
	case GS_EV_CU_NAME: {
		NEED(struct cu_name_event);
		const struct cu_name_event *e = (const void *)h;
		const char *sym = strmap__get(&probes, e->fn);
		char name[CU_NAME_LEN + 1];

		memcpy(name, e->name, CU_NAME_LEN);
		name[CU_NAME_LEN] = 0;
		if (h->flags & CU_NF_BY_HANDLE) {
			/* Read from the handle at its first use (record -p: the lookup was before). */
			bool trusted = handle_names_trusted(e->fn);

			if (trusted && e->handle)
				strmap__set(&hkernels, e->handle, name);
			head(h, "cuda:kernel-name");
			printf(" name=%s handle=0x%llx from=handle at=%s%s\n", name,
			       (unsigned long long)e->handle, sym ? sym : cuda_fns__kind_name(e->kind),
			       trusted ? "" : " untrusted");
			break;
		}
		if (!e->ret && e->handle)
			strmap__set(&kernels, e->handle, name);
		snprintf(line, sizeof(line), "cuda:%s", sym ? sym : cuda_fns__kind_name(e->kind));
		head(h, line);
		printf(" name=%s handle=0x%llx owner=0x%llx", name, (unsigned long long)e->handle,
		       (unsigned long long)e->owner);
		print_dur("dur", e->dur_ns);
		printf(" ret=%d", e->ret);
		print_calibration(h->flags);
		putchar('\n');
		break;
	}
	case GS_EV_FUTEX: {
		NEED(struct futex_event);
		const struct futex_event *e = (const void *)h;

		head(h, "futex:wait");
		printf(" uaddr=0x%llx op=%s%s val=%u word=0x%x owner=%u",
		       (unsigned long long)e->uaddr, futex_op(e->op),
		       e->sys == FUTEX_SYS_WAITV ? "(waitv)" :
		       e->sys == FUTEX_SYS_WAIT	 ? "(futex_wait)" :
						   "",
		       e->val, e->word, e->owner);
		print_dur("dur", e->dur_ns);
		printf(" ret=%d\n", e->ret);
		print_stacks(h, 0);
		break;
	}
	case GS_EV_OFFCPU: {
		NEED(struct offcpu_event);
		const struct offcpu_event *e = (const void *)h;

		head(h, e->state == OFFCPU_BLOCKED ? "sched:offcpu blocked" :
						     "sched:offcpu preempted");
		printf(" state=0x%x%s", e->prev_state, h->flags & GS_F_IN_FUTEX ? " in=futex" : "");
		print_dur("dur", e->dur_ns);
		if (e->waker_tid || e->wake_ts)
			printf(" waker=%.16s/%u/%u", e->waker_comm, e->waker_tid, e->waker_tgid);
		printf(" cpu=%u->%u\n", e->h.cpu, e->on_cpu);
		print_stacks(h, 0);
		break;
	}
	case GS_EV_SAMPLE: {
		NEED(struct sample_event);
		const struct sample_event *e = (const void *)h;

		head(h, h->flags & GS_F_TICK ? "sample:tick" : "sample:timer");
		printf(" ip=0x%llx%s\n", (unsigned long long)e->ip, h->kstack_n ? " kernel" : "");
		print_stacks(h, 0);
		break;
	}
	case GS_EV_PROBE: {
		NEED(struct probe_event);
		const struct probe_event *e = (const void *)h;
		const char *sym = strmap__get(&probes, e->id);

		snprintf(line, sizeof(line), "probe:%s", sym ? sym : "?");
		head(h, line);
		print_dur("dur", e->dur_ns);
		printf(" arg0=0x%llx ret=0x%llx caller=0x%llx\n", (unsigned long long)e->arg0,
		       (unsigned long long)e->ret, (unsigned long long)e->caller);
		print_stacks(h, 0);
		break;
	}
	case GS_EV_LOCK: {
		NEED(struct lock_event);
		const struct lock_event *e = (const void *)h;

		head(h, "lock:hold");
		printf(" mutex=0x%llx", (unsigned long long)e->mutex);
		print_dur("hold", e->hold_ns);
		print_dur("wait", e->wait_ns);
		printf(" locked-at=0x%llx unlocked-at=0x%llx\n", (unsigned long long)e->lock_caller,
		       (unsigned long long)e->unlock_caller);
		print_stacks(h, e->unlock_caller);
		break;
	}
	case GS_EV_FORK: {
		NEED(struct fork_event);
		const struct fork_event *e = (const void *)h;
		char comm[GS_COMM_LEN + 1] = {};

		memcpy(comm, e->comm, GS_COMM_LEN);
		strmap__set(&comms, e->child_tid, comm);
		head(h, e->child_tgid == h->tgid ? "sched:thread_new" : "sched:fork");
		printf(" child=%u/%u comm=%s\n", e->child_tid, e->child_tgid, comm);
		break;
	}
	case GS_EV_EXIT: {
		NEED(struct exit_event);
		const struct exit_event *e = (const void *)h;

		head(h, "sched:exit");
		printf(" code=0x%x%s\n", e->exit_code, e->group_dead ? " group_dead" : "");
		break;
	}
	case GS_EV_COMM: {
		NEED(struct comm_event);
		const struct comm_event *e = (const void *)h;
		char comm[GS_COMM_LEN + 1] = {};

		memcpy(comm, e->comm, GS_COMM_LEN);
		strmap__set(&comms, h->tid, comm);
		head(h, "comm");
		printf(" %s\n", comm);
		break;
	}
	case GS_EV_EXEC: {
		NEED(struct exec_event);
		const struct exec_event *e = (const void *)h;
		char comm[GS_COMM_LEN + 1] = {}, file[PROC_PATH_LEN + 1] = {};

		memcpy(comm, e->comm, GS_COMM_LEN);
		memcpy(file, e->filename, PROC_PATH_LEN);
		strmap__set(&comms, h->tid, comm);
		head(h, "sched:exec");
		printf(" %s\n", file);
		break;
	}
	case GS_EV_MMAP: {
		NEED(struct mmap_event);
		const struct mmap_event *e = (const void *)h;
		char name[PROC_NAME_LEN + 1] = {};

		memcpy(name, e->name, PROC_NAME_LEN);
		head(h, "mmap");
		printf(" 0x%llx+0x%llx off=0x%llx %s%s%s\n", (unsigned long long)e->addr,
		       (unsigned long long)e->len, (unsigned long long)e->pgoff, name,
		       (e->flags & MMAP_F_WATCHED) ? " watched" : "",
		       (e->flags & MMAP_F_STOPPED) ? " stopped-for-attach" : "");
		break;
	}
	case GS_REC_CLOCK: {
		NEED(struct gs_rec_clock);
		const struct gs_rec_clock *c = (const void *)h;

		if (!env.no_meta)
			printf("# clock monotonic=%llu realtime=%llu boottime=%llu freq=%u cpus=%u "
			       "host=%.64s kernel=%.64s\n",
			       (unsigned long long)c->mono_ns, (unsigned long long)c->real_ns,
			       (unsigned long long)c->boot_ns, c->sample_freq, c->ncpus, c->host,
			       c->kernel);
		break;
	}
	case GS_REC_TARGET: {
		NEED(struct gs_rec_target);
		const struct gs_rec_target *t = (const void *)h;
		const char *a = t->argv, *end = (const char *)h + fixed;

		if (env.no_meta)
			break;
		printf("# target pid=%u %s", h->tgid,
		       t->mode == GS_TARGET_LAUNCH ? "launch" : "attach");
		for (__u32 i = 0; i < t->argc && a < end; i++) {
			printf(" %.*s", (int)strnlen(a, end - a), a);
			a += strnlen(a, end - a) + 1;
		}
		putchar('\n');
		break;
	}
	case GS_REC_PROBE: {
		NEED(struct gs_rec_probe);
		const struct gs_rec_probe *p = (const void *)h;
		const char *end = (const char *)h + fixed, *lib = p->names;
		size_t ll = strnlen(lib, end - lib);
		const char *sym = lib + ll + 1 < end ? lib + ll + 1 : "";
		char symbuf[256];

		snprintf(symbuf, sizeof(symbuf), "%.*s", (int)strnlen(sym, end - sym), sym);
		strmap__set(&probes, p->id, symbuf);
		note_probe_lib(p, end);
		if (env.no_meta)
			break;
		printf("# probe %u %s %.*s:%s", p->id,
		       p->family == GS_PROBE_CUDA   ? "cuda" :
		       p->family == GS_PROBE_LIBC   ? "libc" :
		       p->family == GS_PROBE_KERNEL ? "kernel" :
		       p->family == GS_PROBE_LOCK   ? "lock" :
						      "user",
		       (int)ll, lib, symbuf);
		if (p->err)
			printf(" FAILED: %s\n", strerror(-p->err));
		else {
			printf(" live-since=");
			print_time(h->ts);
			printf("%s off=0x%llx\n", (p->flags & GS_PROBE_F_RET) ? " +return" : "",
			       (unsigned long long)p->offset);
		}
		break;
	}
	case GS_REC_MAP: {
		NEED(struct gs_rec_map);
		const struct gs_rec_map *m = (const void *)h;
		const char *end = (const char *)h + fixed;
		int plen = strnlen(m->path, end - m->path);
		struct map *nm = realloc(maps, (nmaps + 1) * sizeof(*nm));

		if (nm) {
			maps = nm;
			maps[nmaps].tgid = h->tgid;
			maps[nmaps].start = m->start;
			maps[nmaps].end = m->end;
			maps[nmaps].pgoff = m->pgoff;
			maps[nmaps].path = strndup(m->path, plen);
			nmaps++;
		}
		if (env.no_meta)
			break;
		printf("# map pid=%u %llx-%llx %c%c%c off=%llx %.*s", h->tgid,
		       (unsigned long long)m->start, (unsigned long long)m->end,
		       m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-', m->prot & 4 ? 'x' : '-',
		       (unsigned long long)m->pgoff, plen, m->path);
		if (m->build_id_len) {
			printf(" build-id=");
			for (__u32 i = 0; i < m->build_id_len && i < sizeof(m->build_id); i++)
				printf("%02x", m->build_id[i]);
		}
		putchar('\n');
		break;
	}
	case GS_REC_KSYM: {
		NEED(struct gs_rec_ksym);
		const struct gs_rec_ksym *k = (const void *)h;
		const char *end = (const char *)h + fixed;
		struct ksym *nk = realloc(ksyms, (nksyms + 1) * sizeof(*nk));

		if (nk) {
			ksyms = nk;
			ksyms[nksyms].addr = k->addr;
			ksyms[nksyms].name = strndup(k->name, end - k->name);
			nksyms++;
			ksyms_sorted = false;
		}
		break;
	}
	case GS_REC_LOSSES: {
		NEED(struct gs_rec_losses);
		const struct gs_rec_losses *l = (const void *)h;
		__u64 n = (fixed - sizeof(*l)) / 8, sum = 0;

		if (env.no_meta)
			break;
		for (__u64 i = 0; i < l->n && i < n; i++)
			sum += l->count[i];
		printf("# losses total=%llu", (unsigned long long)sum);
		for (__u64 i = 0; i < l->n && i < n; i++)
			printf(" %s=%llu", i < GS_LOSS_MAX ? gs_loss_names[i] : "other",
			       (unsigned long long)l->count[i]);
		putchar('\n');
		break;
	}
	case GS_REC_LOST_TYPES: {
		NEED(struct gs_rec_lost_types);
		const struct gs_rec_lost_types *l = (const void *)h;
		__u64 n = (fixed - sizeof(*l)) / 8;
		static const char *const names[GS_EV_MAX] = {
			[GS_EV_CUDA] = "cuda",	 [GS_EV_CU_NAME] = "cu_name", [GS_EV_FUTEX] = "futex",
			[GS_EV_OFFCPU] = "offcpu", [GS_EV_SAMPLE] = "sample",   [GS_EV_PROBE] = "probe",
			[GS_EV_FORK] = "fork",	 [GS_EV_EXIT] = "exit",	      [GS_EV_COMM] = "comm",
			[GS_EV_EXEC] = "exec",	 [GS_EV_MMAP] = "mmap",	      [GS_EV_LOCK] = "lock",
		};

		if (env.no_meta)
			break;
		printf("# lost-by-type");
		for (__u64 i = 1; i < l->n && i < n; i++)
			printf(" %s=%llu", i < GS_EV_MAX && names[i] ? names[i] : "other",
			       (unsigned long long)l->count[i]);
		putchar('\n');
		break;
	}
	case GS_REC_CU_HANDLES: {
		NEED(struct gs_rec_cu_handles);
		const struct gs_rec_cu_handles *c = (const void *)h;

		if (!env.no_meta)
			printf("# kernel-names-from-handles checked=%llu agreed=%llu disagreed=%llu "
			       "named=%llu rejected=%llu libs=%u off=%u\n",
			       (unsigned long long)(c->agree + c->disagree),
			       (unsigned long long)c->agree, (unsigned long long)c->disagree,
			       (unsigned long long)c->named, (unsigned long long)c->rejected, c->libs,
			       c->libs_off);
		break;
	}
	case GS_REC_PROC_EXIT: {
		NEED(struct gs_rec_exit);
		const struct gs_rec_exit *x = (const void *)h;

		if (!env.no_meta)
			printf("# exit pid=%u status=0x%x utime_ns=%llu stime_ns=%llu\n", h->tgid,
			       x->status, (unsigned long long)x->utime_ns,
			       (unsigned long long)x->stime_ns);
		break;
	}
	case GS_REC_SAMPLER: {
		NEED(struct gs_rec_sampler);
		const struct gs_rec_sampler *s = (const void *)h;

		if (!env.no_meta)
			printf("# sampler %s freq=%u tick_ns=%llu period_ns=%llu\n",
			       s->kind == GS_SAMPLER_TICK ? "tick" : "timer", s->freq,
			       (unsigned long long)s->tick_ns, (unsigned long long)s->period_ns);
		break;
	}
	case GS_REC_END: {
		NEED(struct gs_rec_end);
		const struct gs_rec_end *e = (const void *)h;

		if (!env.no_meta)
			printf("# end events=%llu\n", (unsigned long long)e->events);
		break;
	}
	default:
		if (!env.no_meta)
			printf("# unknown record type %u size %u\n", h->type, h->size);
	}
#undef NEED
}

int cmd_script(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_opt,
		.args_doc = "FILE",
		.doc = doc,
	};
	const struct gs_hdr *h;
	struct trace_reader *r;
	char err[512];

	memset(&env, 0, sizeof(env));
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 1;
	r = trace__open(env.file, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "gapscope: %s\n", err);
		return 1;
	}
	find_distrust(env.file);
	while (trace__next(r, &h) > 0)
		print_record(h);
	fflush(stdout);
	trace__warn(r, env.file, stderr);
	trace__close(r);
	strmap__free(&comms);
	strmap__free(&probes);
	strmap__free(&kernels);
	strmap__free(&hkernels);
	strmap__free(&probe_libs);
	strmap__free(&distrust);
	for (size_t i = 0; i < nmaps; i++)
		free(maps[i].path);
	free(maps);
	for (size_t i = 0; i < nksyms; i++)
		free(ksyms[i].name);
	free(ksyms);
	/* Ready for another file in the same process (the fuzz target reads many). */
	maps = NULL;
	nmaps = 0;
	ksyms = NULL;
	nksyms = 0;
	ksyms_sorted = true;
	memset(&env, 0, sizeof(env));
	return 0;
}
