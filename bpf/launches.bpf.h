/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Launches and async memsets, decided and counted here (included once, by cuda.bpf.c): the
 * epoch rule that picks the launches the trace needs, the threads' launch caches that count the
 * rest, and their folds into cu_launch_counts.
 */
#ifndef GAPSCOPE_LAUNCHES_BPF_H
#define GAPSCOPE_LAUNCHES_BPF_H

/*
 * Launches decided here (cuda.h). The report's API tier needs, per stream, the launch that can
 * end a gap (the first after completion evidence) and whether a launch came after the point a
 * synchronize or a recorded event covers; every other launch only needs counting. cu_epoch is
 * bumped at every CUDA call of a target other than a launch, a name lookup or an async memset
 * (synchronizes, queries, event records, copies, captures, context calls), before it takes its
 * timestamp; a launch takes its timestamp before it reads cu_epoch, so a launch that saw the old
 * epoch began before the call that bumped it. A launch is streamed when its thread's state for
 * its stream holds another epoch: the first on that thread and stream since any such call. One
 * counter for all targets: a call in one process makes the next launch of every other one
 * streamed too, a record more, never a gap less.
 */
__u64 cu_epoch = 1;

/* --all-launches: every launch streamed, those the default leaves out flagged CU_LF_EXTRA. */
const volatile bool all_launches = false;

/*
 * A target thread's launch cache, in task-local storage: one lookup with no hashing and no lock
 * (the map lookups of a launch were most of its cost), made for a thread at its first launch.
 * It holds the thread's streams' states (the rule above) and, two ways per set, the counts of
 * the kernels it launched lately by stream: a launch of one of them is an increment. A count
 * leaves its slot for cu_launch_counts when another kernel takes the slot, when the thread
 * exits or execs, and when the recording ends (launchfold.bpf.c), so that the counts are
 * exact. Only the thread writes its cache while it launches; the folds that may meet (an exit
 * and the end's) take each count with an exchange. A thread with no cache (none could be made)
 * streams every launch and counts it in cu_launch_counts itself. The types and maps are in
 * launch_cache.bpf.h, shared with the folds.
 */

/* Whether uprobe programs may use task storage (the recorder probes the kernel); without it
 * every launch is streamed and counted in cu_launch_counts. */
const volatile bool launch_caches = true;

#include "launch_cache.bpf.h"

/*
 * The calling thread's cache when it is a target's (created at its first launch), its
 * process's unload generation in *gen; NULL when it is not a target's (*gen 0) or no cache
 * could be made (*gen set).
 */
static __always_inline struct cu_thread *thread_cache(__u32 tgid, __u32 *gen)
{
	struct task_struct *task;
	struct cu_thread *t;
	__u64 unloads = *(volatile __u64 *)&cu_unloads;
	__u32 *g;

	if (!launch_caches) { /* the verifier drops the rest: no task storage for uprobes here */
		g = bpf_map_lookup_elem(&tgids, &tgid);
		*gen = g ? *g : 0;
		return NULL;
	}
	task = bpf_get_current_task_btf();
	t = bpf_task_storage_get(&cu_threads, task, 0, 0);
	if (t && t->unloads == unloads && t->tgid == tgid) {
		*gen = t->gen;
		return t;
	}
	g = bpf_map_lookup_elem(&tgids, &tgid);
	*gen = g ? *g : 0;
	if (!g)
		return NULL;
	if (!t) {
		t = bpf_task_storage_get(&cu_threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!t)
			return NULL;
	}
	if (t->tgid && t->tgid != tgid)
		return NULL; /* another process's: an exec cu_thread_exec did not see */
	t->tgid = tgid;
	t->gen = *gen;
	t->unloads = unloads;
	return t;
}

static __always_inline __u32 slot_set(__u64 handle, __u64 stream)
{
	return ((handle ^ (stream * 31)) * 0x9e3779b97f4a7c15ull) >> 57; /* 7 bits: CU_SETS */
}

/* The kernel and stream of a launch or async memset. */
struct launch_id {
	__u64 handle;
	__u64 stream;
	__u32 kind;
};

/* One more launch of id in t's cache; the slot, for its name. */
static __always_inline struct cu_slot *count_cached(struct cu_thread *t, __u32 fn, __u32 gen,
						    const struct launch_id *id)
{
	__u32 set = slot_set(id->handle, id->stream);
	struct cu_slot *a, *b, *sl;

	if (set >= CU_SETS)
		return NULL;
	a = &t->slot[set][0];
	b = &t->slot[set][1];
	if (a->handle == id->handle && a->stream == id->stream && a->fn == fn && a->gen == gen &&
	    a->kind == id->kind)
		sl = a;
	else if (b->handle == id->handle && b->stream == id->stream && b->fn == fn &&
		 b->gen == gen && b->kind == id->kind)
		sl = b;
	else {
		sl = a->n <= b->n ? a : b; /* the one launched less: a hot pair keeps its slots */
		count_slot(t->tgid, sl, sl->n); /* only this thread writes it while it launches */
		sl->n = 0;
		sl->handle = id->handle;
		sl->stream = id->stream;
		sl->fn = fn;
		sl->gen = gen;
		sl->kind = id->kind;
		sl->named = 0;
	}
	sl->n++;
	return sl;
}

/* The time since the thread's previous launch, into its histogram (cuda.h). */
static __always_inline void count_ival(struct cu_thread *t, __u64 ts)
{
	__u64 last = t->last_launch;
	__u32 b;

	t->last_launch = ts;
	t->ival.tgid = t->tgid;
	if (!last || ts <= last)
		return;
	b = cu_ival_bucket(ts - last);
	if (b < CU_IVAL_BUCKETS)
		t->ival.n[b]++;
}

/* A launch counted where no cache is. */
static __always_inline void count_launch(__u32 tgid, __u32 fn, __u32 gen,
					 const struct launch_id *id)
{
	struct cu_launch_key k = { .tgid = tgid,
				   .fn = fn,
				   .gen = gen,
				   .kind = id->kind,
				   .stream = id->stream,
				   .handle = id->handle };

	count_add(&k, 1);
}

static __always_inline struct cu_stream_state *stream_state(struct cu_thread *t, __u64 stream)
{
	for (int i = 0; i < CU_STREAMS; i++)
		if (t->st[i].stream == stream && t->st[i].epoch)
			return &t->st[i];
	return NULL;
}

/* Whether the launch at ts on stream goes into the trace by the rule above. */
static __always_inline bool launch_streamed(struct cu_thread *t, __u64 stream, __u64 ts)
{
	struct cu_stream_state *st = stream_state(t, stream);
	__u64 epoch = *(volatile __u64 *)&cu_epoch;
	__u32 i;

	if (st && st->epoch == epoch) {
		st->unstreamed = ts;
		return false;
	}
	if (!st) { /* a new stream takes the states in turn: the one it takes streams anew */
		i = t->next++ % CU_STREAMS;
		if (i >= CU_STREAMS)
			return true;
		st = &t->st[i];
		st->stream = stream;
	}
	st->epoch = epoch;
	st->unstreamed = 0;
	return true;
}

/* An async copy on a stream whose launches since the last streamed one were left out: when the
 * last of them was made, for the copy model (cuda.h, CU_EF_PRIOR_LAUNCH). */
static __always_inline void prior_launch(struct cu_event *ev)
{
	struct cu_thread *t = launch_caches ?
				      bpf_task_storage_get(&cu_threads, bpf_get_current_task_btf(),
							   0, 0) :
				      NULL;
	struct cu_stream_state *st = t ? stream_state(t, ev->stream) : NULL;

	if (st && st->unstreamed && st->unstreamed <= ev->h.ts) {
		ev->dur_ns = ev->h.ts - st->unstreamed;
		ev->h.flags |= CU_EF_PRIOR_LAUNCH;
	}
}

#endif
