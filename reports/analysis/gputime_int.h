/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The API-inferred GPU timeline's state, shared by its two halves: reports/analysis/gputime.c takes the
 * calls (threads' contexts, streams and events by handle, which evidence a call gives) and
 * reports/analysis/gpudev.c keeps each device's busy intervals and gaps from launches and evidence.
 */
#ifndef GAPSCOPE_GPUTIME_INT_H
#define GAPSCOPE_GPUTIME_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "gputime.h"

#define MAX_DEVICES	    64
#define NULL_STREAM_MAX	    2 /* 0: legacy NULL stream, 1: CU_STREAM_LEGACY, 2: per-thread */
#define STREAM_NON_BLOCKING 1
#define STREAM_WAITS	    4 /* a stream's waits for other streams' events, kept */

/* An intrusive circular list: a table's entries in use order, or those with work. */
struct glink {
	struct glink *prev, *next;
};

static inline void glist_init(struct glink *h)
{
	h->prev = h->next = h;
}

static inline void glist_del(struct glink *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->prev = l->next = l;
}

static inline void glist_add_tail(struct glink *h, struct glink *l)
{
	l->prev = h->prev;
	l->next = h;
	h->prev->next = l;
	h->prev = l;
}

#define GLIST_ENTRY(l, type, member) ((type *)((char *)(l)-offsetof(type, member)))

/* An entry of a chained hash table keyed by two words (gputime.c). */
struct hnode {
	struct hnode *next;
	__u64 k1, k2;
};

struct htab {
	struct hnode **b;
	size_t cap, n;
};

struct gproc;

/* What gputime needs of one call. */
struct gop {
	__u64 t;     /* entry */
	__u64 end;   /* return (== t for an entry-only call) */
	__u64 woken; /* its last sleep's wakeup, 0 unknown */
	__u32 tid, tgid;
	__u32 kind; /* enum cu_kind */
	__s32 ret;
	__u64 stream, ctx, handle, aux, bytes;
	const char *fn, *comm;
	const char *verb; /* how the evidence came, for a gap's start: NULL "returned in" */
};

struct stream {
	struct hnode hn;    /* k1 the handle, k2 the tgid (real streams) or the ctx (NULL ones) */
	struct gproc *proc; /* of the process that named it first */
	/* In its process's list of streams with work (active) or without (idle, in use order),
	 * and in its device's list with work or the list of all idle ones (in use order). */
	struct glink plink, glink;
	bool active;
	__u64 used; /* when last named, or when its work was last seen done */
	__u32 heap; /* outstanding: its place in its device's heap + 1, else 0 */
	__u32 device;
	__u32 tgid; /* the process that named it first */
	__u8 non_blocking, capturing, known_device;
	__u64 last_launch; /* ts of the last launch, 0 none */
	__u64 open_since;  /* its first launch since its last evidence */
	__u64 host_fn;	   /* the latest host function queued after outstanding work, 0 none */
	__u64 host_arg;	   /* its argument, which its call (a probe's arg0) carries */
	__u64 launches;	   /* all its launches */
	/* Its waits for events recorded on other streams (cuStreamWaitEvent): work queued after
	 * one seen done means the other stream's work before the record was done too. */
	struct {
		__u64 src_handle, src_owner; /* the stream the event was recorded on: its key */
		__u64 rec, at;		     /* the record's time, the wait's */
	} waits[STREAM_WAITS];
	__u32 nwaits;
	bool ever_done;	   /* some completion evidence closed its work once */
	__u64 done_before; /* launches before this are complete */
	/* The copy model (gputime__copy_model): where the stream's own copies hold its kernels. */
	__u64 copy_free; /* the copies queued while no kernel was outstanding end then, 0 none */
	__u64 tail_ns;	 /* modelled time of the copies queued since the last launch */
	__u64 tail_last; /* when the last of them was queued */
	/* Since it last became outstanding: when its first kernel could start, and the launch. */
	__u64 start_eff;
	const char *start_how;
	__u32 start_tid;
};

/* A process that made CUDA calls: its streams and events, for the loops and bounds that are
 * per process. */
struct gproc {
	struct hnode hn; /* k1 the tgid */
	__u32 nstreams, nevents;
	struct glink active, idle; /* its streams with work, and without (least recently used
				    * first) */
	struct glink events;	   /* its events, least recently used first */
	__u64 floor;		   /* its work queued before this is done (evidence for all) */
};

static inline bool outstanding(const struct stream *s)
{
	return s->last_launch && s->last_launch >= s->done_before;
}

/*
 * A thread's latest blocked intervals, for the wake chains from the GPU's driver: the driver
 * thread its wakeup came from (through threads that each ran only briefly before passing it
 * on), and when that thread learnt what it passed on.
 */
#define TSTATE_OFFS 4
#define TSTATE_IRQS 8
struct toff {
	__u64 start, end; /* switched out, switched in */
	__u32 root;	  /* the driver thread its wake chain came from, 0 none */
	__u64 news;	  /* when the chain's news arose: that thread's interrupt while this one
			   * waited, or where it had none, when that thread ran; 0 none */
	__u64 peer;	  /* woken then by another thread of its process (not a timer), 0 not */
};

struct tstate {
	__u32 tid;
	bool cuda;   /* made a CUDA call: a host thread that feeds the GPU and may wait for it */
	bool driver; /* woken from a device's interrupt: a driver's thread (cuda-EvtHandlr) */
	__u64 ctx;   /* current context */
	struct toff off[TSTATE_OFFS]; /* a ring, off[noff % TSTATE_OFFS] the next */
	__u32 noff, nirq;
	__u64 irqs[TSTATE_IRQS]; /* a driver thread's latest interrupt wakeups, a ring */
	struct tstate *next;
};

struct ctxmap {
	__u64 ctx;
	__u32 device;
	struct ctxmap *next;
};

struct gdev {
	bool seen;
	__u32 outstanding; /* streams with outstanding work */
	__u64 busy_since;
	__u64 idle_since; /* when the last evidence made it idle, 0: never busy yet */
	const char *idle_fn, *idle_comm; /* the call that made it idle */
	const char *idle_verb;
	const char *idle_less; /* "" or how much earlier the copy model put it */
	__u64 idle_earliest;
	struct vec busy;   /* struct busy_interval */
	__u64 busy_folded; /* of intervals let go by gputime__busy_ns() */
	__u64 first_busy;  /* the start of its first busy interval, 0: none yet */
	/*
	 * The last launch or evidence while busy, and busy time no signal backs (gpudev.c):
	 * summed, and the windows of the busy interval still open (struct busy_interval), which
	 * a call that turns out to have waited through them still confirms.
	 */
	__u64 last_signal, unconfirmed;
	struct vec unsure;
	/* The copy model: when the copies queued so far each way end (0: host to device). */
	__u64 engine_free[2];
	/* The latest gap while a launch on another stream may still end it earlier. */
	bool pend;
	struct gpu_idle gap;
	/* The latest launches, for gputime__launcher(): a ring. */
	__u64 launch_ts[GPUTIME_LAUNCHES];
	__u32 launch_tid[GPUTIME_LAUNCHES];
	__u32 nlaunch;
	/* Its streams with work, and those outstanding in a heap by when their first kernel
	 * could start (struct stream *): the next to start after a stream's work is done. */
	struct glink active;
	struct vec heap;
	bool ever_done;			 /* some completion evidence closed some stream's work */
	__u64 floor_all, floor_blocking; /* work queued before these is done: every stream's,
					  * the blocking streams' */
};

/* An event's last two records: a synchronize that began before the latest waits for the other. */
struct evrec {
	struct hnode hn; /* k1 the handle, k2 the tgid */
	struct gproc *proc;
	struct glink plink, glink; /* in its process's events and all, least recently used first */
	__u64 used;
	struct {
		__u64 handle, owner; /* the stream's key */
		__u64 ts;
		bool set;
	} rec[2]; /* [0] the latest */
};

struct gputime {
	struct strtab *strs;
	struct stream *last; /* the stream named last: most calls name it again */
	struct gproc *last_proc;
	struct tstate *last_thread;
	struct htab streams, events, procs;
	struct glink idle_streams; /* every stream without work, least recently used first */
	struct glink ev_lru;	   /* every event, least recently used first */
	struct handle_stats hs;
	struct tstate *threads;
	struct ctxmap *ctxs;
	struct gdev dev[MAX_DEVICES];
	struct vec idle; /* struct gpu_idle */
	__u64 min_gap;
	double copy_bytes_per_ns; /* 0: copies are not modelled */
	__u64 copy_latency_ns;
	struct vec evidence_work; /* gpudev__evidence's worklist (struct evidence_step) */
	struct vec visit;	  /* the streams a loop over a list visits (struct stream *) */
};

/* The stream of key (handle, owner), NULL where none is kept. */
struct stream *gputime__find(struct gputime *g, __u64 handle, __u64 owner);
/* s's work changed (a launch, evidence, a wait, a copy, a host function) at now: the lists and
 * the heap it is in follow. */
void gputime__track(struct gputime *g, struct stream *s, __u64 now);
/* The streams of list h (linked by member plink or glink) into g->visit: a loop that gives them
 * evidence moves them between lists. The count; g->visit's first entries hold them. */
size_t gputime__visit(struct gputime *g, struct glink *h, bool by_plink);
/* s's place in its device's heap of outstanding streams follows outstanding(s) (gpudev.c). */
void gpudev__heap_sync(struct gputime *g, struct stream *s);
void gpudev__heap_del(struct gputime *g, struct stream *s);
/* A stream without work takes the evidence the loops over streams with work left it (its
 * process's and device's floors): before a launch the trace left out is put on it. */
void gpudev__floor(struct gputime *g, struct stream *s);

/* The devices' gaps the trace has passed (their end before now) are final. */
void gpudev__flush_due(struct gputime *g, __u64 now);
/* A launch on s (not being captured). */
void gpudev__launch(struct gputime *g, struct stream *s, const struct gop *op);
/* Completion evidence for the launches on s before cut, from the call op. */
void gpudev__evidence(struct gputime *g, struct stream *s, __u64 cut, const struct gop *op);
/* An async copy between host and device on s (the copy model). */
void gpudev__queue_copy(struct gputime *g, struct stream *s, const struct gop *op, bool to_host);
/* Evidence for every stream of device (only the blocking ones: blocking_only). */
void gpudev__evidence_all(struct gputime *g, __u32 device, bool blocking_only, __u64 cut,
			  const struct gop *op);

#endif
