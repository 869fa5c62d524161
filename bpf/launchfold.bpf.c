// SPDX-License-Identifier: GPL-2.0
/*
 * The folds of the threads' launch caches (launch_cache.bpf.h) into cu_launch_counts: at a
 * thread's exit or exec, and at the recording's end (cu_fold, a task iterator the recorder runs
 * once the CUDA probes are off, before it lets go of the exit fold). An exit and cu_fold may
 * meet on one thread: each takes a slot's count with an exchange, so that it is counted once.
 * Built for BPF v3 (atomic exchange) apart from the CUDA probes, whose verification v3 slows.
 * And cu_peek: what the caches hold, read (not taken) for the recorder's counts every second.
 */
#include "gapscope.bpf.h"
#include "cuda.h"
#include "launch_cache.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline void fold_slot(__u32 tgid, struct cu_slot *sl)
{
	count_slot(tgid, sl, __sync_lock_test_and_set(&sl->n, 0));
}

struct fold_ctx {
	struct cu_thread *t; /* bpf_loop's context is on the stack */
};

static long fold_set(__u64 i, void *ctx)
{
	struct cu_thread *t = ((struct fold_ctx *)ctx)->t;
	__u32 set = i;

	if (!t || set >= CU_SETS)
		return 1;
	fold_slot(t->tgid, &t->slot[set][0]);
	fold_slot(t->tgid, &t->slot[set][1]);
	return 0;
}

static __always_inline void fold_thread(struct cu_thread *t)
{
	struct fold_ctx c = { .t = t };

	bpf_loop(CU_SETS, fold_set, &c, 0);
}

/* A thread exits, or execs (its cache would be another image's): its counts folded first. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(cu_thread_exit, struct task_struct *task)
{
	struct cu_thread *t = bpf_task_storage_get(&cu_threads, task, 0, 0);

	if (t) {
		fold_thread(t);
		ival_fold(task->pid, t);
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cu_thread_exec, struct task_struct *p)
{
	struct cu_thread *t = bpf_task_storage_get(&cu_threads, p, 0, 0);

	if (t) {
		fold_thread(t);
		ival_fold(p->pid, t);
		bpf_task_storage_delete(&cu_threads, p);
	}
	return 0;
}

/* At the end, once the probes are off: the counts still in caches, into cu_launch_counts. */
SEC("iter/task")
int cu_fold(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct cu_thread *t;

	if (!task)
		return 0;
	t = bpf_task_storage_get(&cu_threads, task, 0, 0);
	if (t) {
		fold_thread(t);
		ival_fold(task->pid, t);
	}
	return 0;
}

/* cu_peek's output, one per slot holding a count: as the trace's struct gs_launch_count. */
struct peek_rec {
	struct cu_launch_key k;
	__u64 n;
};

struct peek_ctx {
	struct cu_thread *t;
	struct seq_file *seq;
};

static long peek_set(__u64 i, void *ctx)
{
	struct peek_ctx *c = ctx;
	struct cu_thread *t = c->t;
	__u32 set = i;

	if (!t || set >= CU_SETS)
		return 1;
	for (int w = 0; w < CU_WAYS; w++) {
		struct cu_slot *sl = &t->slot[set][w];
		struct peek_rec r = { .n = *(volatile __u64 *)&sl->n };

		if (!r.n)
			continue;
		/* Read while the thread may be giving the slot to another kernel: a count may be
		 * put under the next one's key in this read, never in cu_launch_counts. */
		r.k = (struct cu_launch_key){ .tgid = t->tgid,
					      .fn = sl->fn,
					      .gen = sl->gen,
					      .kind = sl->kind,
					      .stream = sl->stream,
					      .handle = sl->handle };
		bpf_seq_write(c->seq, &r, sizeof(r));
	}
	return 0;
}

/* Every second while the probes are on: the counts the caches hold, for the recorder to add to
 * cu_launch_counts' in the record it writes (metadata.c). */
SEC("iter/task")
int cu_peek(struct bpf_iter__task *ctx)
{
	struct peek_ctx c = { .seq = ctx->meta->seq };

	if (!ctx->task)
		return 0;
	c.t = bpf_task_storage_get(&cu_threads, ctx->task, 0, 0);
	if (c.t)
		bpf_loop(CU_SETS, peek_set, &c, 0);
	return 0;
}
