// SPDX-License-Identifier: GPL-2.0
/*
 * Writes tests/golden/report/trace.gsc, the input of the `gapscope report` golden test: a
 * synthetic recording of a small proving daemon on a simulated device, written record by record
 * with the trace library, as the recorder writes a real one (loader/consume.c, loader/metadata.c):
 * metadata first, BPF events in the order they ended, stacks compacted user then kernel, a
 * kernel symbol record just before the first event that needs it, losses and the end last.
 *
 * Everything is fixed (times, tids, addresses, build-ids, the clock record's host and kernel,
 * the file header's creation time), so the file is the same byte for byte wherever it is made.
 * The mapped files' paths do not exist anywhere: every user frame is named module+offset, the
 * same on every machine.
 *
 * The program (pid 31000): a context on device 0, two GPU workers with a stream each (simcuda's
 * stream threads, which say they stand for the device, complete their work and wake the
 * synchronizing worker), a finalizer holding the
 * static tracker lock across malloc_trim(0), a dispatcher (the main thread). The device's gaps:
 *
 *   gap 1  130.0 -> 158.1 ms  closed by gpu-worker-0, blocked on the tracker lock (a pthread
 *                             mutex: futex event with the owner) held by finalizer-0 inside
 *                             malloc_trim, which returns at 157.95 ms
 *   gap 2  175.0 -> 182.1 ms  closed by gpu-worker-0, asleep in clock_nanosleep (a back-off)
 *   gap 3  191.0 -> 203.0 ms  closed by gpu-worker-1, on-CPU (samples) preparing its batch
 *
 * and an idle window of 0.4 ms (106.0 -> 106.4 ms), shorter than the default --min-gap. (The
 * report may place a gap's edges at a synchronize's return rather than its wakeup, 14 us later.)
 * No two roots or folded stacks of a gap explain the same time: the report sorts them by time
 * with qsort, and the order of equal ones would be the C library's.
 *
 * The program is in report_program.c.
 *
 *   report_gen FILE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <zlib.h>

#include "report_gen.h"

static const char *const exe_path = "/gapscope-golden/bin/zkengine";
static const char *const libc_path = "/gapscope-golden/lib/libc.so.6";
static const char *const libcuda_path = "/gapscope-golden/lib/libcuda.so.1";

/* ---- records -------------------------------------------------------------------------------- */

struct rec {
	__u64 end; /* when the recorder got it: the event's end */
	unsigned int seq;
	size_t size;
	struct gs_hdr *h;
};

static struct rec *recs;
static size_t nrecs, caprecs;
static __u64 nevents;

static void *xcalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		perror("report_gen");
		exit(1);
	}
	return p;
}

/* A record of type with fixed size fixed and the given stacks (user then kernel frames). */
static void *rec_new(__u32 type, size_t fixed, __u32 tid, __u64 ts, __u32 cpu, const __u64 *u,
		     unsigned int nu, const __u64 *k, unsigned int nk)
{
	struct gs_hdr *h = xcalloc(fixed + 8 * (nu + nk));

	h->type = type;
	h->size = fixed + 8 * (nu + nk);
	h->ts = ts;
	h->tid = tid;
	h->tgid = PID;
	h->cpu = cpu;
	h->ustack_n = nu;
	h->kstack_n = nk;
	if (nu || nk)
		h->flags |= GS_F_STACK; /* the BPF side took stacks; the recorder compacted them */
	if (nu)				/* memcpy's source may not be NULL, even for no bytes */
		memcpy((char *)h + fixed, u, 8 * nu);
	if (nk)
		memcpy((char *)h + fixed + 8 * nu, k, 8 * nk);
	return h;
}

static void emit(void *rec, __u64 end)
{
	if (nrecs == caprecs) {
		caprecs = caprecs ? 2 * caprecs : 256;
		recs = realloc(recs, caprecs * sizeof(*recs));
		if (!recs) {
			perror("report_gen");
			exit(1);
		}
	}
	recs[nrecs] = (struct rec){ end, nrecs, ((struct gs_hdr *)rec)->size, rec };
	nrecs++;
	nevents++;
}

/* The CPU each thread runs on: two CPUs, the workers apart. */
static __u32 cpu_of(__u32 tid)
{
	return tid == TID_W1 || tid == TID_FIN || tid == TID_DEV_B ? 1 : 0;
}

static const char *comm_of(__u32 tid)
{
	switch (tid) {
	case TID_MAIN:
		return "zkengine";
	case TID_W0:
		return "gpu-worker-0";
	case TID_W1:
		return "gpu-worker-1";
	case TID_FIN:
		return "finalizer-0";
	case TID_DEV_A:
	case TID_DEV_B:
		return "simcuda-dev0";
	}
	return "swapper/0"; /* the idle task, interrupted by a timer */
}

void ev_comm(__u32 tid, __u64 ts)
{
	struct comm_event *e = rec_new(GS_EV_COMM, sizeof(*e), tid, ts, cpu_of(tid), NULL, 0, NULL,
				       0);

	snprintf(e->comm, sizeof(e->comm), "%s", comm_of(tid));
	emit(e, ts);
}

/* parent creates child (named as its parent until it renames itself) */
void ev_fork(__u32 parent, __u32 child, __u64 ts)
{
	struct fork_event *e = rec_new(GS_EV_FORK, sizeof(*e), parent, ts, cpu_of(parent), NULL, 0,
				       NULL, 0);

	e->child_tid = child;
	e->child_tgid = PID;
	snprintf(e->comm, sizeof(e->comm), "%s", comm_of(parent));
	emit(e, ts);
	ev_comm(child, ts + 30 * US);
}

/* The launched program replaces the recorder's child (named after the recorder until then). */
void ev_exec(__u64 ts)
{
	struct exec_event *e = rec_new(GS_EV_EXEC, sizeof(*e), TID_MAIN, ts, 0, NULL, 0, NULL, 0);
	struct comm_event *c = rec_new(GS_EV_COMM, sizeof(*c), TID_MAIN, ts - 20 * US, 0, NULL, 0,
				       NULL, 0);

	snprintf(c->comm, sizeof(c->comm), "gapscope");
	emit(c, ts - 20 * US);
	e->old_tid = TID_MAIN;
	snprintf(e->comm, sizeof(e->comm), "zkengine");
	snprintf(e->filename, sizeof(e->filename), "./zkengine");
	emit(e, ts);
}

void ev_exit(__u32 tid, __u64 ts, bool group_dead)
{
	struct exit_event *e = rec_new(GS_EV_EXIT, sizeof(*e), tid, ts, cpu_of(tid), NULL, 0, NULL,
				       0);

	e->group_dead = group_dead;
	emit(e, ts);
}

/* A CUDA call: entry only (dur 0, stack at entry), or with its return (stack at return). */
void ev_cuda(__u32 tid, __u64 ts, __u64 dur, __u32 fn, __u32 kind, __u64 caller, const __u64 *u,
	     unsigned int nu)
{
	struct cu_event *e = rec_new(GS_EV_CUDA, sizeof(*e), tid, ts, cpu_of(tid), u, nu, NULL, 0);

	e->fn = fn;
	e->kind = kind;
	e->caller = caller;
	if (dur) {
		e->h.flags |= GS_F_RET;
		e->dur_ns = dur;
	} else {
		e->h.flags |= GS_F_ENTRY_STACK;
	}
	emit(e, ts + dur);
}

struct cu_event *last_cuda(void)
{
	return (struct cu_event *)recs[nrecs - 1].h;
}

void ev_cu_name(__u32 tid, __u64 ts, __u64 dur, __u64 handle, const char *name)
{
	struct cu_name_event *e = rec_new(GS_EV_CU_NAME, sizeof(*e), tid, ts, cpu_of(tid), NULL, 0,
					  NULL, 0);

	e->h.flags |= GS_F_RET | CU_NF_CAL_AGREE;
	e->fn = P_GET_FUNCTION;
	e->kind = CU_K_GET_FUNCTION;
	e->handle = handle;
	e->owner = MODULE;
	e->dur_ns = dur;
	snprintf(e->name, sizeof(e->name), "%s", name);
	emit(e, ts + dur);
}

/* A futex wait, with the waiter's user stack (it lasted over 100 us). */
void ev_futex(__u32 tid, __u64 ts, __u64 dur, __u64 uaddr, __u32 op, __u32 val, __u32 owner,
	      const __u64 *u, unsigned int nu)
{
	struct futex_event *e = rec_new(GS_EV_FUTEX, sizeof(*e), tid, ts, cpu_of(tid), u, nu, NULL,
					0);

	e->uaddr = uaddr;
	e->dur_ns = dur;
	e->op = op;
	e->val = val;
	e->word = val;
	e->owner = owner;
	e->nr = 1;
	emit(e, ts + dur);
}

/*
 * Off-CPU from ts to end: blocked (woken by waker at wake) or preempted (waker 0, wake 0).
 * Inside a futex wait no kernel stack (the futex event has the user's); else blocked intervals
 * of 100 us or more carry one.
 */
struct offcpu_event *ev_off(__u32 tid, __u64 ts, __u64 end, bool blocked, int syscall, __u32 waker,
			    __u64 wake, const __u64 *k, unsigned int nk)
{
	struct offcpu_event *e = rec_new(GS_EV_OFFCPU, sizeof(*e), tid, ts, cpu_of(tid), NULL, 0, k,
					 nk);

	e->dur_ns = end - ts;
	e->state = blocked ? OFFCPU_BLOCKED : OFFCPU_PREEMPTED;
	e->prev_state = blocked ? OFFCPU_TASK_INTERRUPTIBLE : 0;
	e->syscall = blocked ? syscall : OFFCPU_NO_SYSCALL;
	if (blocked && syscall == SYS_FUTEX)
		e->h.flags |= GS_F_IN_FUTEX;
	if (wake) {
		e->waker_tid = waker;
		e->waker_tgid = waker ? PID : 0;
		e->wake_ts = wake;
		snprintf(e->waker_comm, sizeof(e->waker_comm), "%s", comm_of(waker));
	}
	e->on_cpu = cpu_of(tid);
	emit(e, end);
	return e;
}

void ev_sample(__u32 tid, __u64 ts, const __u64 *u, unsigned int nu, const __u64 *k,
	       unsigned int nk)
{
	struct sample_event *e = rec_new(GS_EV_SAMPLE, sizeof(*e), tid, ts, cpu_of(tid), u, nu, k,
					 nk);

	e->h.flags |= GS_F_TICK;
	e->ip = nk ? k[0] : u[0];
	emit(e, ts);
}

void ev_probe(__u32 tid, __u64 ts, __u64 dur, __u32 id, __u64 arg0, __u64 ret, const __u64 *u,
	      unsigned int nu)
{
	struct probe_event *e = rec_new(GS_EV_PROBE, sizeof(*e), tid, ts, cpu_of(tid), u, nu, NULL,
					0);

	e->h.flags |= GS_F_RET;
	e->id = id;
	e->dur_ns = dur;
	e->caller = u[0];
	e->arg0 = arg0;
	e->ret = ret;
	emit(e, ts + dur);
}

/* ---- metadata ------------------------------------------------------------------------------ */

static struct trace_writer *w;
static __u64 meta_written;

static void put(const void *rec, size_t size)
{
	int err = trace__append(w, rec, size);

	if (err) {
		fprintf(stderr, "report_gen: cannot write: %s\n", strerror(-err));
		exit(1);
	}
	meta_written++;
}

static void meta_hdr(struct gs_hdr *h, __u32 type, size_t size, __u64 ts)
{
	h->type = type;
	h->size = size;
	h->ts = ts;
	h->tid = PID;
	h->tgid = PID;
}

static void meta_clock(void)
{
	struct gs_rec_clock c = {};

	meta_hdr(&c.h, GS_REC_CLOCK, sizeof(c), T0);
	c.h.tid = c.h.tgid = 0;
	c.mono_ns = T0;
	c.real_ns = 1796109596000000000ull;
	c.boot_ns = T0 + 94;
	c.sample_freq = 499;
	c.ncpus = 2;
	snprintf(c.host, sizeof(c.host), "golden");
	snprintf(c.kernel, sizeof(c.kernel), "linux");
	put(&c, sizeof(c));
}

static void meta_target(void)
{
	static const char argv[] = "./zkengine\0--scenario\0tracker-trim\0--jobs\0"
				   "1";
	char buf[sizeof(struct gs_rec_target) + sizeof(argv) + 8] = {};
	struct gs_rec_target *t = (void *)buf;

	meta_hdr(&t->h, GS_REC_TARGET, sizeof(*t) + sizeof(argv), T0 + 40 * US);
	t->mode = GS_TARGET_LAUNCH;
	t->argc = 5;
	memcpy(t->argv, argv, sizeof(argv));
	put(t, sizeof(*t) + sizeof(argv));
}

static void meta_probe(__u32 id, __u32 family, __u32 kind, __u64 live, __u64 offset, bool ret,
		       const char *lib, const char *sym)
{
	char buf[512] = {};
	struct gs_rec_probe *p = (void *)buf;
	size_t ll = strlen(lib) + 1, sl = strlen(sym) + 1;

	meta_hdr(&p->h, GS_REC_PROBE, sizeof(*p) + ll + sl, live);
	p->id = id;
	p->family = family;
	p->kind = kind;
	p->offset = offset;
	p->flags = ret ? GS_PROBE_F_RET : 0;
	p->pid = PID;
	memcpy(p->names, lib, ll);
	memcpy(p->names + ll, sym, sl);
	put(p, sizeof(*p) + ll + sl);
}

static void meta_map(__u64 start, __u64 end, __u64 pgoff, __u32 prot, __u64 ino, __u8 id,
		     const char *path, __u64 ts)
{
	char buf[512] = {};
	struct gs_rec_map *m = (void *)buf;
	size_t pl = strlen(path) + 1;

	meta_hdr(&m->h, GS_REC_MAP, sizeof(*m) + pl, ts);
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->prot = prot;
	if (ino) {
		m->dev = (259ull << 8) | 2; /* makedev(259, 2) */
		m->ino = ino;
		m->build_id_len = 20;
		for (int i = 0; i < 20; i++) /* a build-id no file anywhere has */
			m->build_id[i] = id ^ (0x11 * i);
	}
	memcpy(m->path, path, pl);
	put(m, sizeof(*m) + pl);
}

static void meta_maps(__u64 ts)
{
	meta_map(EXE, EXE + 0x2000, 0, 1, 4001, 0xa1, exe_path, ts);
	meta_map(EXE + 0x2000, EXE + 0x1a000, 0x2000, 5, 4001, 0xa1, exe_path, ts);
	meta_map(EXE + 0x1a000, EXE + 0x20000, 0x1a000, 1, 4001, 0xa1, exe_path, ts);
	meta_map(EXE + 0x20000, EXE + 0x22000, 0x20000, 3, 4001, 0xa1, exe_path, ts);
	meta_map(LIBCUDA, LIBCUDA + 0x1000, 0, 1, 4003, 0xc3, libcuda_path, ts);
	meta_map(LIBCUDA + 0x1000, LIBCUDA + 0x9000, 0x1000, 5, 4003, 0xc3, libcuda_path, ts);
	meta_map(LIBCUDA + 0x9000, LIBCUDA + 0xb000, 0x9000, 3, 4003, 0xc3, libcuda_path, ts);
	meta_map(LIBC, LIBC + 0x28000, 0, 1, 4002, 0xb2, libc_path, ts);
	meta_map(LIBC + 0x28000, LIBC + 0x1bd000, 0x28000, 5, 4002, 0xb2, libc_path, ts);
	meta_map(LIBC + 0x1bd000, LIBC + 0x215000, 0x1bd000, 1, 4002, 0xb2, libc_path, ts);
	meta_map(LIBC + 0x215000, LIBC + 0x21b000, 0x214000, 3, 4002, 0xb2, libc_path, ts);
	meta_map(VDSO, VDSO + 0x2000, 0, 5, 0, 0, "[vdso]", ts);
}

/* Kernel functions the stacks pass through: written before the first event that needs them. */
static const struct {
	__u64 addr;
	const char *name;
} ksyms[] = {
	{ KTEXT + 0x00000ba, "entry_SYSCALL_64_after_hwframe" },
	{ KTEXT + 0x11ed4a0, "do_syscall_64" },
	{ KTEXT + 0x0f8a2c0, "__schedule" },
	{ KTEXT + 0x0f8b030, "schedule" },
	{ KTEXT + 0x0f91de0, "do_nanosleep" },
	{ KTEXT + 0x0429a50, "hrtimer_nanosleep" },
	{ KTEXT + 0x0431c70, "common_nsleep" },
	{ KTEXT + 0x0431f10, "__x64_sys_clock_nanosleep" },
	{ KTEXT + 0x02f9e80, "zap_pte_range" },
	{ KTEXT + 0x02fa7c0, "zap_pmd_range" },
	{ KTEXT + 0x02fb390, "unmap_page_range" },
	{ KTEXT + 0x02fbe20, "zap_page_range_single" },
	{ KTEXT + 0x0323b10, "madvise_vma_behavior" },
	{ KTEXT + 0x0324850, "do_madvise" },
	{ KTEXT + 0x0324c40, "__x64_sys_madvise" },
};
static bool ksym_written[N(ksyms)];

static void meta_ksyms_for(const struct gs_hdr *h, __u64 ts)
{
	const __u64 *k = gs_kstack(h);

	for (unsigned int f = 0; f < h->kstack_n; f++) {
		size_t best = N(ksyms);

		for (size_t i = 0; i < N(ksyms); i++)
			if (ksyms[i].addr <= k[f] &&
			    (best == N(ksyms) || ksyms[i].addr > ksyms[best].addr))
				best = i;
		if (best == N(ksyms) || ksym_written[best])
			continue;
		{
			char buf[128] = {};
			struct gs_rec_ksym *r = (void *)buf;
			size_t len = strlen(ksyms[best].name) + 1;

			meta_hdr(&r->h, GS_REC_KSYM, sizeof(*r) + len, ts);
			r->h.tid = r->h.tgid = 0;
			r->addr = ksyms[best].addr;
			memcpy(r->name, ksyms[best].name, len);
			put(r, sizeof(*r) + len);
			ksym_written[best] = true;
		}
	}
}

static void meta_tail(__u64 ts)
{
	struct gs_rec_sampler s = {};
	char lbuf[sizeof(struct gs_rec_losses) + 8 * GS_LOSS_MAX] = {};
	char tbuf[sizeof(struct gs_rec_lost_types) + 8 * GS_EV_MAX] = {};
	struct gs_rec_losses *l = (void *)lbuf;
	struct gs_rec_lost_types *t = (void *)tbuf;
	struct gs_rec_cu_handles c = {};
	struct gs_rec_exit x = {};
	struct gs_rec_end e = {};

	meta_hdr(&s.h, GS_REC_SAMPLER, sizeof(s), ts);
	s.kind = GS_SAMPLER_TICK;
	s.freq = 499;
	s.tick_ns = 4 * MS;
	s.period_ns = 4 * MS;
	put(&s, sizeof(s));
	meta_hdr(&l->h, GS_REC_LOSSES, sizeof(lbuf), ts);
	l->n = GS_LOSS_MAX;
	put(l, sizeof(lbuf));
	meta_hdr(&t->h, GS_REC_LOST_TYPES, sizeof(tbuf), ts);
	t->n = GS_EV_MAX;
	put(t, sizeof(tbuf));
	meta_hdr(&c.h, GS_REC_CU_HANDLES, sizeof(c), ts);
	c.agree = 2;
	c.libs = 1;
	put(&c, sizeof(c));
	meta_hdr(&x.h, GS_REC_PROC_EXIT, sizeof(x), ts);
	x.utime_ns = 96 * MS;
	x.stime_ns = 18 * MS;
	put(&x, sizeof(x));
	meta_hdr(&e.h, GS_REC_END, sizeof(e), ts);
	e.events = nevents;
	e.records = meta_written + nrecs;
	put(&e, sizeof(e));
}

/* ---- writing ------------------------------------------------------------------------------- */

static int cmp_rec(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;

	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The file header's creation time, fixed (and its CRC again), so the file is reproducible. */
static int fix_header(const char *path)
{
	struct trace_file_hdr fh;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0 || pread(fd, &fh, sizeof(fh), 0) != sizeof(fh))
		goto fail;
	fh.created_ns = 1796109596000000000ull;
	fh.crc = 0;
	fh.crc = crc32(0, (const void *)&fh, sizeof(fh));
	if (pwrite(fd, &fh, sizeof(fh), 0) != sizeof(fh) || close(fd))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "report_gen: %s: %s\n", path, strerror(errno));
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: report_gen FILE\n");
		return 2;
	}
	w = trace__create(argv[1], true);
	if (!w) {
		fprintf(stderr, "report_gen: cannot create %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	meta_clock();
	meta_target();
	{
		static const char *const tps[] = {
			"tp_btf/sched_process_fork",
			"tp_btf/sched_process_exit",
			"tp_btf/task_rename",
			"tp_btf/sched_process_exec",
			"tp_btf/sys_enter",
			"tp_btf/sys_enter",
			"tp_btf/sys_exit",
			"tp_btf/sys_exit",
			"tp_btf/sched_switch",
			"tp_btf/sched_waking",
			"tp_btf/hrtimer_expire_entry+exit (tick sampler)",
		};

		for (__u32 i = 0; i < N(tps); i++)
			meta_probe(i, GS_PROBE_KERNEL, 0, T0 + (50 + i) * US, 0, false, "kernel",
				   tps[i]);
	}
	meta_maps(T0 + 90 * US);
	meta_probe(P_MALLOC_TRIM, GS_PROBE_LIBC, 0, T0 + 100 * US, 0xa5d10, true, libc_path,
		   "malloc_trim");
	program();
	/* libcuda is loaded by the context's creation: its probes go live before the call. */
	meta_probe(P_CTX_CREATE, GS_PROBE_CUDA, CU_K_CTX_CREATE, AT(19000), 0x3010, true,
		   libcuda_path, "cuCtxCreate_v2");
	meta_probe(P_CTX_SET, GS_PROBE_CUDA, CU_K_CTX_SET, AT(19000), 0x3090, false, libcuda_path,
		   "cuCtxSetCurrent");
	meta_probe(P_STREAM_CREATE, GS_PROBE_CUDA, CU_K_STREAM_CREATE, AT(19000), 0x3110, true,
		   libcuda_path, "cuStreamCreate");
	meta_probe(P_GET_FUNCTION, GS_PROBE_CUDA, CU_K_GET_FUNCTION, AT(19000), 0x3190, true,
		   libcuda_path, "cuModuleGetFunction");
	meta_probe(P_LAUNCH, GS_PROBE_CUDA, CU_K_LAUNCH, AT(19000), 0x3350, false, libcuda_path,
		   "cuLaunchKernel");
	meta_probe(P_COPY_ASYNC, GS_PROBE_CUDA, CU_K_MEMCPY, AT(19000), 0x33d0, false, libcuda_path,
		   "cuMemcpyHtoDAsync_v2");
	meta_probe(P_SYNC_STREAM, GS_PROBE_CUDA, CU_K_SYNC_STREAM, AT(19000), 0x3390, true,
		   libcuda_path, "cuStreamSynchronize");
	meta_probe(P_DEVICE_THREAD, GS_PROBE_CUDA, CU_K_DEVICE_THREAD, AT(19000), 0x3400, false,
		   libcuda_path, "gapscope_device_thread");
	qsort(recs, nrecs, sizeof(*recs), cmp_rec);
	for (size_t i = 0; i < nrecs; i++) {
		meta_ksyms_for(recs[i].h, recs[i].end);
		put(recs[i].h, recs[i].size);
		meta_written--;
		free(recs[i].h);
	}
	meta_tail(AT(213500));
	free(recs);
	if (trace__finish(w))
		return 1;
	return fix_header(argv[1]) ? 1 : 0;
}
