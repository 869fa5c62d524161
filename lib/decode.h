/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Typed decoders for trace records: instead of a cast at each use, gs_<type>(h) returns the
 * record as its struct, or NULL when h is of another type or too short for that struct.
 *
 * A record's size is checked against the size every readable trace version wrote for its type
 * (gs_rec_min_size). A field appended to an event in a later version makes no new decoder: the
 * struct grows, its minimum stays what the oldest readable version wrote, and the new field is
 * read through an accessor that checks the record's size (and says when it is absent); a field
 * that took the place of padding is read by the trace version (trace__version; offcpu.h's
 * offcpu_syscall).
 *
 * The ordered reader (reader.h) checks every record once as it arrives with gs_rec_check() and
 * counts and drops those too short for their type, so a consumer of the ordered stream gets NULL
 * from a decoder only for a record of another type.
 */
#ifndef GAPSCOPE_DECODE_H
#define GAPSCOPE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "gapscope.h"
#include "cuda.h"
#include "futex.h"
#include "offcpu.h"
#include "probe.h"
#include "proc.h"
#include "pystack.h"
#include "sample.h"
#include "snapshot.h"
#include "trace.h"

/* The smallest fixed part (header included, stacks excluded) a readable trace has for type. */
static inline size_t gs_rec_min_size(__u32 type)
{
	switch (type) {
	case GS_EV_CUDA:
		return sizeof(struct cu_event);
	case GS_EV_CU_NAME:
		return sizeof(struct cu_name_event);
	case GS_EV_FUTEX:
		return sizeof(struct futex_event);
	case GS_EV_OFFCPU:
		return OFFCPU_EVENT_V5_SIZE;
	case GS_EV_SAMPLE:
		return sizeof(struct sample_event);
	case GS_EV_PROBE:
		return sizeof(struct probe_event);
	case GS_EV_FORK:
		return sizeof(struct fork_event);
	case GS_EV_EXIT:
		return sizeof(struct exit_event);
	case GS_EV_COMM:
		return sizeof(struct comm_event);
	case GS_EV_EXEC:
		return sizeof(struct exec_event);
	case GS_EV_MMAP:
		return sizeof(struct mmap_event);
	case GS_EV_LOCK:
		return sizeof(struct lock_event);
	case GS_EV_USTACK_SNAP:
		return sizeof(struct ustack_snap_event);
	case GS_EV_PYSTACK:
		return offsetof(struct pystack_event, f);
	case GS_REC_CLOCK:
		return sizeof(struct gs_rec_clock);
	case GS_REC_TARGET:
		return sizeof(struct gs_rec_target);
	case GS_REC_PROBE:
		return sizeof(struct gs_rec_probe);
	case GS_REC_MAP:
		return sizeof(struct gs_rec_map);
	case GS_REC_KSYM:
		return sizeof(struct gs_rec_ksym);
	case GS_REC_LOSSES:
		return sizeof(struct gs_rec_losses);
	case GS_REC_PROC_EXIT:
		return sizeof(struct gs_rec_exit);
	case GS_REC_END:
		return sizeof(struct gs_rec_end);
	case GS_REC_LOST_TYPES:
		return sizeof(struct gs_rec_lost_types);
	case GS_REC_CU_HANDLES:
		return sizeof(struct gs_rec_cu_handles);
	case GS_REC_SAMPLER:
		return sizeof(struct gs_rec_sampler);
	case GS_REC_PERF_MAP:
		return sizeof(struct gs_rec_perf_map);
	case GS_REC_ARCHIVE:
		return sizeof(struct gs_rec_archive);
	case GS_REC_GPU_ACT:
		return sizeof(struct gs_rec_gpu_act);
	case GS_REC_NVML:
		return sizeof(struct gs_rec_nvml);
	case GS_REC_LAUNCHES:
		return sizeof(struct gs_rec_launches);
	case GS_REC_PYCODE:
		return sizeof(struct gs_rec_pycode);
	case GS_REC_LAUNCH_IVALS:
		return sizeof(struct gs_rec_launch_ivals);
	case GS_REC_CGROUP:
		return sizeof(struct gs_rec_cgroup);
	case GS_REC_CPUSTAT:
		return sizeof(struct gs_rec_cpustat);
	case GS_REC_UNPROBED:
		return sizeof(struct gs_rec_unprobed);
	default:
		return sizeof(struct gs_hdr); /* unknown: skippable by its size alone */
	}
}

/* Whether the record is long enough for its type (trace__next already checked the framing). */
static inline bool gs_rec_check(const struct gs_hdr *h)
{
	return gs_fixed_size(h) >= gs_rec_min_size(h->type) &&
	       h->size >= gs_fixed_size(h) + 8 * ((size_t)h->ustack_n + h->kstack_n);
}

static inline bool gs_rec_is_meta(const struct gs_hdr *h)
{
	return h->type >= GS_REC_CLOCK;
}

/*
 * Whether the record's time is where it was written rather than a time in the stream: recorder
 * records, and comm events, which the recorder also writes itself (the names of an attached
 * process's threads, stamped when read from /proc, while the ring buffer may still hold events
 * from before; a rename seen in BPF is written at once, so where it arrives is its time).
 */
static inline bool gs_rec_untimed(const struct gs_hdr *h)
{
	return h->type >= GS_REC_CLOCK || h->type == GS_EV_COMM;
}

#define GS_DECODER(fn, TYPE, T)                                                    \
	static inline const T *fn(const struct gs_hdr *h)                          \
	{                                                                          \
		if (h->type != (TYPE) || gs_fixed_size(h) < gs_rec_min_size(TYPE)) \
			return NULL;                                               \
		return (const T *)h;                                               \
	}

GS_DECODER(gs_cuda, GS_EV_CUDA, struct cu_event)
GS_DECODER(gs_cu_name, GS_EV_CU_NAME, struct cu_name_event)
GS_DECODER(gs_futex, GS_EV_FUTEX, struct futex_event)
GS_DECODER(gs_offcpu, GS_EV_OFFCPU, struct offcpu_event)
GS_DECODER(gs_sample, GS_EV_SAMPLE, struct sample_event)
GS_DECODER(gs_probe, GS_EV_PROBE, struct probe_event)
GS_DECODER(gs_fork, GS_EV_FORK, struct fork_event)
GS_DECODER(gs_exit, GS_EV_EXIT, struct exit_event)
GS_DECODER(gs_comm, GS_EV_COMM, struct comm_event)
GS_DECODER(gs_exec, GS_EV_EXEC, struct exec_event)
GS_DECODER(gs_mmap, GS_EV_MMAP, struct mmap_event)
GS_DECODER(gs_lock, GS_EV_LOCK, struct lock_event)
GS_DECODER(gs_snap, GS_EV_USTACK_SNAP, struct ustack_snap_event)
GS_DECODER(gs_clock, GS_REC_CLOCK, struct gs_rec_clock)
GS_DECODER(gs_target, GS_REC_TARGET, struct gs_rec_target)
GS_DECODER(gs_probe_rec, GS_REC_PROBE, struct gs_rec_probe)
GS_DECODER(gs_map, GS_REC_MAP, struct gs_rec_map)
GS_DECODER(gs_ksym, GS_REC_KSYM, struct gs_rec_ksym)
GS_DECODER(gs_losses, GS_REC_LOSSES, struct gs_rec_losses)
GS_DECODER(gs_proc_exit, GS_REC_PROC_EXIT, struct gs_rec_exit)
GS_DECODER(gs_end, GS_REC_END, struct gs_rec_end)
GS_DECODER(gs_lost_types, GS_REC_LOST_TYPES, struct gs_rec_lost_types)
GS_DECODER(gs_cu_handles, GS_REC_CU_HANDLES, struct gs_rec_cu_handles)
GS_DECODER(gs_sampler, GS_REC_SAMPLER, struct gs_rec_sampler)
GS_DECODER(gs_cgroup, GS_REC_CGROUP, struct gs_rec_cgroup)
GS_DECODER(gs_cpustat, GS_REC_CPUSTAT, struct gs_rec_cpustat)
GS_DECODER(gs_unprobed, GS_REC_UNPROBED, struct gs_rec_unprobed)

/* A cgroup record's strings, checked to lie inside it, NUL-terminated: false if damaged. */
static inline bool cgroup_rec__strings(const struct gs_rec_cgroup *c, const char **path,
				       const char **cpus, const char **cpuset)
{
	size_t room = c ? c->h.size - sizeof(*c) : 0, a, b, d;

	if (!c)
		return false;
	a = c->path_len, b = c->cpus_len, d = c->cpuset_len;
	if (!a || !b || !d || a > room || b > room - a || d > room - a - b || c->text[a - 1] ||
	    c->text[a + b - 1] || c->text[a + b + d - 1])
		return false;
	*path = c->text;
	*cpus = c->text + a;
	*cpuset = c->text + a + b;
	return true;
}
GS_DECODER(gs_perf_map, GS_REC_PERF_MAP, struct gs_rec_perf_map)
GS_DECODER(gs_archive, GS_REC_ARCHIVE, struct gs_rec_archive)
GS_DECODER(gs_nvml, GS_REC_NVML, struct gs_rec_nvml)
GS_DECODER(gs_launches, GS_REC_LAUNCHES, struct gs_rec_launches)
GS_DECODER(gs_pystack_hdr, GS_EV_PYSTACK, struct pystack_event)
GS_DECODER(gs_pycode_hdr, GS_REC_PYCODE, struct gs_rec_pycode)
GS_DECODER(gs_launch_ivals, GS_REC_LAUNCH_IVALS, struct gs_rec_launch_ivals)

/* Python frames whose count fits in the record: n set to those present. */
static inline const struct pystack_event *gs_pystack(const struct gs_hdr *h, __u32 *n)
{
	const struct pystack_event *e = gs_pystack_hdr(h);
	size_t room;

	if (!e)
		return NULL;
	room = (gs_fixed_size(h) - offsetof(struct pystack_event, f)) / sizeof(struct py_frame);
	*n = e->n < room ? e->n : (__u32)room;
	return e;
}

/*
 * A code object record whose lines and names fit in it, names NUL-terminated: *name and *file
 * point into it.
 */
static inline const struct gs_rec_pycode *gs_pycode(const struct gs_hdr *h, const char **name,
						    const char **file)
{
	const struct gs_rec_pycode *r = gs_pycode_hdr(h);
	size_t room, need;

	if (!r)
		return NULL;
	room = gs_fixed_size(h) - sizeof(*r);
	need = (size_t)r->nlines * sizeof(struct gs_pyline);
	if (r->nlines > room / sizeof(struct gs_pyline) || !r->name_len || !r->file_len ||
	    r->name_len > room - need || r->file_len > room - need - r->name_len)
		return NULL;
	*name = (const char *)(r->lines + r->nlines);
	*file = *name + r->name_len;
	if ((*name)[r->name_len - 1] || (*file)[r->file_len - 1])
		return NULL;
	return r;
}

/* A CUPTI activity record whose own size fits in the record (its text NUL-terminated). */
static inline const struct gs_gpu_act *gs_gpu_act(const struct gs_hdr *h)
{
	const struct gs_rec_gpu_act *r;

	if (h->type != GS_REC_GPU_ACT || gs_fixed_size(h) < sizeof(*r))
		return NULL;
	r = (const struct gs_rec_gpu_act *)h;
	if (r->a.size < sizeof(r->a) || r->a.size > gs_fixed_size(h) - sizeof(r->h))
		return NULL;
	if (r->a.size > sizeof(r->a) && r->a.text[r->a.size - sizeof(r->a) - 1])
		return NULL;
	return &r->a;
}

#undef GS_DECODER

/*
 * End of the record's fixed part: the limit for its variable-length tail (names, paths, argv,
 * counters), which the stack frames follow.
 */
static inline const char *gs_rec_tail_end(const struct gs_hdr *h)
{
	return (const char *)h + gs_fixed_size(h);
}

/* Length of a string in the record's tail, bounded by the tail's end (no NUL needed). */
static inline size_t gs_rec_strlen(const struct gs_hdr *h, const char *s)
{
	const char *end = gs_rec_tail_end(h);

	return s < end ? strnlen(s, end - s) : 0;
}

/* Counters of a losses or lost-types record actually present: min(n, what the size holds). */
static inline __u32 gs_rec_counters(const struct gs_hdr *h, __u32 n, const __u64 *count)
{
	size_t room = (gs_rec_tail_end(h) - (const char *)count) / sizeof(__u64);

	return n < room ? n : (__u32)room;
}

/* The stack frames of a record: user frames (innermost first), kernel frames (innermost first). */
struct gs_frames {
	const __u64 *ip;
	unsigned int n;
};

static inline struct gs_frames gs_user_frames(const struct gs_hdr *h)
{
	return (struct gs_frames){ gs_ustack(h), h->ustack_n };
}

static inline struct gs_frames gs_kernel_frames(const struct gs_hdr *h)
{
	return (struct gs_frames){ gs_kstack(h), h->kstack_n };
}

/*
 * The duration a record stands for, 0 for an instant: off-CPU, futex wait, probed function,
 * CUDA call with a return, kernel-name lookup, mutex hold. Valid for a record gs_rec_check passed.
 */
static inline __u64 gs_rec_dur(const struct gs_hdr *h)
{
	switch (h->type) {
	case GS_EV_CUDA:
		return (h->flags & GS_F_RET) ? ((const struct cu_event *)h)->dur_ns : 0;
	case GS_EV_CU_NAME:
		return ((const struct cu_name_event *)h)->dur_ns;
	case GS_EV_FUTEX:
		return ((const struct futex_event *)h)->dur_ns;
	case GS_EV_OFFCPU:
		return ((const struct offcpu_event *)h)->dur_ns;
	case GS_EV_PROBE:
		return ((const struct probe_event *)h)->dur_ns;
	case GS_EV_LOCK:
		return ((const struct lock_event *)h)->hold_ns;
	default:
		return 0;
	}
}

/*
 * When the record's interval ended (h.ts + duration), its h.ts for an instant. A stack snapshot
 * (and a record of Python frames) is ordered a nanosecond before the end of the event it completes, so that a reader has it when
 * the event comes (an off-CPU interval's is written after it, at its system call's return).
 */
static inline __u64 gs_rec_end(const struct gs_hdr *h)
{
	__u64 end = h->ts + gs_rec_dur(h);

	if (h->type == GS_EV_USTACK_SNAP && gs_fixed_size(h) >= sizeof(struct ustack_snap_event))
		return ((const struct ustack_snap_event *)h)->end_ns ?
			       ((const struct ustack_snap_event *)h)->end_ns - 1 :
			       0;
	if (h->type == GS_EV_PYSTACK && gs_fixed_size(h) >= offsetof(struct pystack_event, f))
		return ((const struct pystack_event *)h)->end_ns ?
			       ((const struct pystack_event *)h)->end_ns - 1 :
			       0;

	return end < h->ts ? ~0ull : end; /* a corrupt duration must not wrap to the past */
}

#endif
