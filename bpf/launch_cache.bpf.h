/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The threads' launch caches (bpf/launches.bpf.h says what they hold and why) and the counts
 * they fold into: shared by the CUDA probes (cuda.bpf.c), which fill them, and the folds at
 * thread exit and at the recording's end (launchfold.bpf.c).
 */
#ifndef GAPSCOPE_LAUNCH_CACHE_BPF_H
#define GAPSCOPE_LAUNCH_CACHE_BPF_H

#define CU_SETS	   128
#define CU_WAYS	   2
#define CU_STREAMS 4

struct cu_slot {
	__u64 handle;
	__u64 stream;
	__u64 n;    /* launches counted here, not yet in cu_launch_counts */
	__u32 gen;  /* the process's unload generation */
	__u16 fn;   /* probe id */
	__u8 kind;  /* CU_K_LAUNCH, CU_K_GRAPH_LAUNCH or CU_K_MEMSET */
	__u8 named; /* name_by_handle answered for it: nothing more to read */
};

struct cu_stream_state {
	__u64 stream;
	__u64 epoch;	  /* cu_epoch at the last streamed launch */
	__u64 unstreamed; /* ts of the last launch left out since then, 0 none */
};

struct cu_thread {
	__u32 tgid;
	__u32 gen; /* the process's unload generation, read when cu_unloads was unloads */
	__u64 unloads;
	__u32 next; /* the stream state a new stream takes */
	__u32 pad;
	struct cu_stream_state st[CU_STREAMS];
	struct cu_slot slot[CU_SETS][CU_WAYS];
	__u64 last_launch;	    /* when its latest launch was made, 0: none */
	struct cu_launch_ival ival; /* the times between its launches (cuda.h) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cu_thread);
} cu_threads SEC(".maps") __weak;

/* Every launch, by process, probe, stream and kernel handle: exact counts, streamed or not. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, CU_MAX_LAUNCH_KEYS);
	__type(key, struct cu_launch_key);
	__type(value, __u64);
} cu_launch_counts SEC(".maps") __weak;

/* The threads' histograms of the time between their launches, by tid: folded at exit and at
 * the end, read by the recorder with the counts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CU_MAX_IVAL_THREADS);
	__type(key, __u32);
	__type(value, struct cu_launch_ival);
} cu_launch_ivals SEC(".maps") __weak;

static __always_inline void ival_fold(__u32 tid, struct cu_thread *t)
{
	if (t->ival.tgid && bpf_map_update_elem(&cu_launch_ivals, &tid, &t->ival, BPF_ANY))
		count_loss(GS_LOSS_MAP);
}

static __always_inline void count_add(const struct cu_launch_key *k, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&cu_launch_counts, k);

	if (c) {
		*c += n; /* this CPU's slot */
		return;
	}
	if (!bpf_map_update_elem(&cu_launch_counts, k, &n, BPF_NOEXIST))
		return;
	c = bpf_map_lookup_elem(&cu_launch_counts, k); /* made meanwhile on another CPU */
	if (c)
		*c += n;
	else
		count_loss(GS_LOSS_MAP);
}

/* n launches a slot counted, into cu_launch_counts under its key. */
static __always_inline void count_slot(__u32 tgid, const struct cu_slot *sl, __u64 n)
{
	struct cu_launch_key k = { .tgid = tgid,
				   .fn = sl->fn,
				   .gen = sl->gen,
				   .kind = sl->kind,
				   .stream = sl->stream,
				   .handle = sl->handle };

	if (n)
		count_add(&k, n);
}

#endif
