// SPDX-License-Identifier: GPL-2.0
/*
 * The analysis's intake: each record, in time order, into what the analysis keeps (probe and
 * kernel names, mappings, the thread timelines, the GPU timeline). analysis.c drives it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis_priv.h"
#include "cgroups.h"
#include "cuda.h"
#include "tasks.h"
#include "futex.h"
#include "gputime.h"
#include "idlesplit.h"
#include "losses.h"
#include "names.h"
#include "offcpu.h"
#include "probe.h"
#include "proc.h"
#include "sample.h"
#include "threads.h"
#include "trace.h"
#include "unwind.h"

static const char *probe_name(struct analysis_priv *p, __u32 id)
{
	const char **n = id < p->probes.n ? VEC_AT(&p->probes, const char *, id) : NULL;

	return n && *n ? *n : "?";
}

const char *analysis_priv__probe_name(void *p, __u32 id)
{
	return probe_name(p, id);
}

static void note_probe(struct analysis_priv *p, const struct gs_hdr *h)
{
	const struct gs_rec_probe *r = (const void *)h;
	size_t fixed = gs_fixed_size(h), len;
	const char *lib, *sym;

	if (fixed <= sizeof(*r) || r->id > 1u << 20)
		return;
	lib = r->names;
	len = strnlen(lib, fixed - sizeof(*r));
	if (sizeof(*r) + len + 1 >= fixed)
		return;
	sym = lib + len + 1;
	len = strnlen(sym, fixed - sizeof(*r) - len - 1);
	if (!len)
		return;
	while (p->probes.n <= r->id)
		if (!vec__push(&p->probes, sizeof(const char *)))
			return;
	{
		char buf[256];

		snprintf(buf, sizeof(buf), "%.*s", (int)len, sym);
		*VEC_AT(&p->probes, const char *, r->id) = strtab__intern(p->strs, buf);
	}
	while (p->task_kinds.n <= r->id)
		if (!vec__push(&p->task_kinds, sizeof(__u32)))
			return;
	*VEC_AT(&p->task_kinds, __u32, r->id) = r->family == GS_PROBE_TASK    ? r->kind :
						r->family == GS_PROBE_HOST_FN ? PROBE_HOST_FN :
										0;
}

/*
 * Completion evidence is taken at a synchronize's return, which can only be late (by a wait for
 * a CPU), never early. The wakeup of its last sleep bounds how much earlier: not the evidence
 * itself, since a driver may wake its waiters before the last operation is done (simcuda does
 * at every operation its stream completes).
 */
/* A launch: its call ends nothing the host waits for (cuLaunch*, cuGraphLaunch*). */
static bool is_launch(const char *fn)
{
	return !strncmp(fn, "cuLaunch", 8) || !strncmp(fn, "cuGraphLaunch", 13);
}

static __u64 woken(const struct thread *t, const struct gs_hdr *h, const struct cu_event *e)
{
	__u64 end = h->ts + e->dur_ns;

	if (!(h->flags & GS_F_RET) || (e->kind != CU_K_SYNC_STREAM && e->kind != CU_K_SYNC_EVENT &&
				       e->kind != CU_K_SYNC_CTX && e->kind != CU_K_MEMCPY))
		return 0;
	for (size_t i = t->off.n; i--;) {
		const struct th_off *o = VEC_AT(&t->off, struct th_off, i);

		if (o->end <= h->ts)
			break;
		if (o->end <= end && o->blocked)
			return o->wake;
	}
	return 0;
}

/* A driver stand-in's thread of process tgid that said it stands for a device (cuda.h's
 * CU_K_DEVICE_THREAD). */
static bool stands_for_device(const struct analysis_priv *p, __u32 tid, __u32 tgid)
{
	const struct thread *t = tid ? threads__find(p->th, tid) : NULL;

	return t && t->device && t->tgid == tgid;
}

/*
 * Whether an off-CPU interval's wakeup came from a device's interrupt: marked so by the
 * recorder (GS_F_WAKE_IRQ), or in a trace from before the mark, made by the idle task of
 * another CPU than the one the thread slept and woke on (a timer expires on the CPU it was set
 * on, the sleeper's; a device's interrupt goes where it is routed), and not in a futex wait
 * (whose only wake from an interrupt is its timeout).
 */
static bool wake_irq(const struct analysis_priv *p, const struct gs_hdr *h,
		     const struct offcpu_event *e)
{
	unsigned int cpu;

	/*
	 * A driver stand-in's threads that stand for its devices: their wakeups of the process's
	 * other threads out of a sleep a signal would end (a futex: a condition the device
	 * signals) are the simulated device's interrupt. Not out of an uninterruptible one: such a
	 * thread also runs on a CPU as any thread does (a kernel's CPU version, faulting its pages
	 * in), and the kernel lock it lets go of (mmap_lock, behind a trimming thread's madvise)
	 * wakes its waiter with no news of the device; a real device's interrupt reaches its
	 * driver's thread in poll, interruptible too.
	 */
	if (stands_for_device(p, e->waker_tid, e->waker_tgid))
		return e->waker_tgid == h->tgid && !stands_for_device(p, h->tid, h->tgid) &&
		       (e->prev_state & OFFCPU_TASK_INTERRUPTIBLE);

	/* A socket's, a pipe's, a file's wait is a network card's, a disk's or a timer's news,
	 * never the GPU's (whose driver thread polls the driver's own files). */
	switch ((h->flags & OFFCPU_FD_MASK) >> OFFCPU_FD_SHIFT) {
	case OFFCPU_FD_PIPE:
	case OFFCPU_FD_SOCKET:
	case OFFCPU_FD_FILE:
	case OFFCPU_FD_EPOLL:
	case OFFCPU_FD_TIMERFD:
	case OFFCPU_FD_SIGNALFD:
		return false;
	}
	if (h->flags & GS_F_WAKE_SEEN)
		return h->flags & GS_F_WAKE_IRQ;
	if (!e->wake_ts || e->waker_tid || (h->flags & GS_F_IN_FUTEX))
		return false;
	if (sscanf(e->waker_comm, "swapper/%u", &cpu) != 1)
		return false;
	return cpu != h->cpu && cpu != e->on_cpu;
}

/* An off-CPU interval into the API tier's wake chains (gputime.h). */
static int gpu_wake(struct analysis_priv *p, const struct gs_hdr *h)
{
	const struct offcpu_event *e = (const void *)h;
	struct thread *t = threads__get(p->th, h->tid, h->tgid);
	struct gwake w = {
		.start = h->ts,
		.end = h->ts + e->dur_ns,
		.wake = e->wake_ts,
		.tid = h->tid,
		.tgid = h->tgid,
		.waker_tid = e->waker_tid,
		.waker_tgid = e->waker_tgid,
		.blocked = e->state == OFFCPU_BLOCKED,
		.irq = wake_irq(p, h, e),
		.comm = t ? t->comm : "?",
	};

	/* A stand-in's device threads stand for the device: their own waits are no host thread's. */
	if (t && t->device)
		return 0;
	return p->gt ? gputime__offcpu(p->gt, &w) : 0;
}

/* One record: metadata, or an event for the timelines. Returns -ENOMEM only. */
/* A process gone, and its pid given to another (a fork, a mapping): not to be let go of. */
static void revived(struct analysis_priv *p, __u32 tgid)
{
	size_t k = 0;

	for (size_t i = 0; i < p->exited.n; i++)
		if (VEC_AT(&p->exited, struct exited_proc, i)->tgid != tgid)
			*VEC_AT(&p->exited, struct exited_proc,
				k++) = *VEC_AT(&p->exited, struct exited_proc, i);
	p->exited.n = k;
}

void analysis_priv__forget_exited(struct analysis_priv *p, __u64 horizon)
{
	size_t k = 0;

	for (size_t i = 0; i < p->exited.n; i++) {
		struct exited_proc *e = VEC_AT(&p->exited, struct exited_proc, i);

		if (e->ts < horizon) {
			gputime__forget_proc(p->gt, e->tgid, e->ts);
			unwinder__forget(p->uw, e->tgid);
			names__forget(p->nm, e->tgid);
			continue;
		}
		*VEC_AT(&p->exited, struct exited_proc, k++) = *e;
	}
	p->exited.n = k;
}

int analysis_priv__feed(struct analysis *a, const struct gs_hdr *h, __u32 version)
{
	struct analysis_priv *p = a->priv;
	size_t fixed = gs_fixed_size(h);
	__u64 end = h->ts;

	switch (h->type) {
	case GS_REC_CLOCK:
	case GS_REC_CGROUP:
	case GS_REC_CPUSTAT:
		return cgroups__add(p->cg, h) ? -ENOMEM : 0; /* metadata: no event, no time */
	case GS_REC_PROBE:
		note_probe(p, h);
		return 0;
	case GS_REC_MAP:
		if (fixed > sizeof(struct gs_rec_map)) {
			revived(p, h->tgid);
			names__add_map(p->nm, (const void *)h);
			unwinder__add_map(p->uw, (const void *)h);
		}
		return 0;
	case GS_REC_KSYM:
		if (fixed > sizeof(struct gs_rec_ksym)) {
			char buf[256];
			const struct gs_rec_ksym *k = (const void *)h;

			snprintf(buf, sizeof(buf), "%.*s", (int)(fixed - sizeof(*k)), k->name);
			names__add_ksym(p->nm, k->addr, buf);
		}
		return 0;
	case GS_REC_UNPROBED:
		losses__unprobed(&a->loss, h);
		return 0;
	case GS_REC_LOSSES:
		losses__record(&a->loss, h);
		return 0;
	case GS_EV_COMM:
		if (fixed >= sizeof(struct comm_event))
			threads__set_comm(p->th, h->tid, h->tgid,
					  ((const struct comm_event *)h)->comm, GS_COMM_LEN);
		break;
	case GS_EV_FORK:
		if (fixed >= sizeof(struct fork_event)) {
			const struct fork_event *f = (const void *)h;
			struct thread *c = threads__get(p->th, f->child_tid, f->child_tgid);

			if (!c)
				return -ENOMEM;
			c->born_ns = h->ts;
			c->parent = h->tid;
			/* a new thread, where its tid may have been a device's */
			c->device = false;
			revived(p, f->child_tgid);
			threads__set_comm(p->th, f->child_tid, f->child_tgid, f->comm, GS_COMM_LEN);
		}
		break;
	case GS_EV_EXEC:
		if (fixed >= sizeof(struct exec_event))
			threads__set_comm(p->th, h->tid, h->tgid,
					  ((const struct exec_event *)h)->comm, GS_COMM_LEN);
		break;
	case GS_EV_EXIT: {
		if (threads__exit(p->th, h->tid, h->tgid, h->ts))
			return -ENOMEM;
		if (p->opts.forget_gaps && fixed >= sizeof(struct exit_event) &&
		    ((const struct exit_event *)h)->group_dead) {
			struct exited_proc *e = vec__push(&p->exited, sizeof(*e));

			if (e)
				*e = (struct exited_proc){ .tgid = h->tgid, .ts = h->ts };
		}
		break;
	}
	case GS_EV_OFFCPU:
		if (fixed < OFFCPU_EVENT_V5_SIZE)
			return 0;
		end += ((const struct offcpu_event *)h)->dur_ns;
		if (h->flags & GS_F_RESUME_UNSEEN)
			a->resume_unseen++;
		if (threads__add_offcpu(p->th, h, version) || gpu_wake(p, h))
			return -ENOMEM;
		{
			const struct thread *t = threads__find(p->th, h->tid);

			if (t && t->off.n &&
			    cgroups__note_off(p->cg, h->tgid, h->tid,
					      VEC_AT(&t->off, struct th_off, t->off.n - 1)))
				return -ENOMEM;
		}
		break;
	case GS_EV_FUTEX:
		if (fixed < sizeof(struct futex_event))
			return 0;
		end += ((const struct futex_event *)h)->dur_ns;
		if (threads__add_futex(p->th, h))
			return -ENOMEM;
		break;
	case GS_EV_PROBE:
		if (fixed < sizeof(struct probe_event))
			return 0;
		if (h->flags & GS_F_RET) {
			const struct probe_event *e = (const void *)h;
			__u32 *tk = e->id < p->task_kinds.n ? VEC_AT(&p->task_kinds, __u32, e->id) :
							      NULL;

			end += e->dur_ns;
			if (tk && *tk == PROBE_HOST_FN) {
				/* The driver calling a host function: its stream's news. */
				struct thread *t = threads__get(p->th, h->tid, h->tgid);

				if (p->gt && gputime__host_fn(p->gt, h->tgid, h->tid, e->arg0,
							      h->ts, t ? t->comm : "?"))
					return -ENOMEM;
				if (threads__add_call(p->th, h, TC_PROBE, probe_name(p, e->id),
						      e->dur_ns))
					return -ENOMEM;
			} else if (tk &&
				   *tk) { /* an async task's poll or wake: not a call of the thread */
				if (tasks__add(p->tasks, h, *tk, e->arg0, e->dur_ns))
					return -ENOMEM;
			} else if (threads__add_call(p->th, h, TC_PROBE, probe_name(p, e->id),
						     e->dur_ns)) {
				return -ENOMEM;
			}
		}
		break;
	case GS_EV_CUDA: {
		const struct cu_event *e = (const void *)h;
		struct thread *t;

		if (fixed < sizeof(*e))
			return 0;
		t = threads__get(p->th, h->tid, h->tgid);
		if (e->kind == CU_K_DEVICE_THREAD) {
			/* no call of the program's: a stand-in's word on what the thread is */
			if (!t)
				return -ENOMEM;
			t->device = true;
			break;
		}
		a->cuda_events++;
		if (!t || gputime__add(p->gt, e, probe_name(p, e->fn), t->comm, woken(t, h, e)))
			return -ENOMEM;
		if (!(h->flags & GS_F_RET) && is_launch(probe_name(p, e->fn))) {
			/* The idle split names its launchers at the end, by tid. */
			t->keep = true;
			if (idlesplit__launch(p->split, h->tid, h->ts))
				return -ENOMEM;
		}
		if (h->flags & GS_F_RET) {
			end += e->dur_ns;
			if (threads__add_call(p->th, h, TC_CUDA, probe_name(p, e->fn), e->dur_ns) ||
			    idlesplit__call(p->split, h->tid, h->ts, probe_name(p, e->fn),
					    e->dur_ns))
				return -ENOMEM;
		}
		break;
	}
	case GS_EV_SAMPLE:
		if (fixed < sizeof(struct sample_event))
			return 0;
		if (threads__add_sample(p->th, h))
			return -ENOMEM;
		break;
	default:
		if (h->type >= GS_REC_CLOCK)
			return 0;
	}
	if (h->ts && (!a->start_ns || h->ts < a->start_ns))
		a->start_ns = h->ts;
	if (end > a->end_ns)
		a->end_ns = end;
	a->events++;
	return 0;
}
