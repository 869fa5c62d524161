/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a live CPython's frames from BPF (pystack.h): py_take() at the places a user stack
 * snapshot is taken (snapshot.bpf.h), whether or not snapshots are on. The maps are weak, as in
 * gapscope.bpf.h: linked into one object, each is one map.
 *
 * The thread's PyThreadState: the interpreters' lists of thread states hold, for each, the
 * pthread_self() of its thread, which on x86-64 (glibc and musl alike) is the thread's fs base.
 * The one found is cached by thread and checked again at each use (one read), so a thread state
 * freed and made again for another thread is not followed. A thread in none of the lists (a
 * thread of the C library the interpreter never saw) has no Python frames and costs the walk of
 * the lists: a few hundred nanoseconds for the programs this is made for.
 */
#ifndef GAPSCOPE_PYSTACK_BPF_H
#define GAPSCOPE_PYSTACK_BPF_H

#include "gapscope.bpf.h"
#include "pystack.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_TGIDS);
	__type(key, __u32);
	__type(value, struct py_offsets);
} py_procs SEC(".maps") __weak;

struct py_tcache {
	__u64 tstate;
	__u64 fsbase;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PY_TSTATE_CACHED);
	__type(key, __u32);
	__type(value, struct py_tcache);
} py_tstates SEC(".maps") __weak;

struct py_slot {
	__u64 busy;
	struct pystack_event ev;
};

/* PY_SLOTS per CPU, cpu * PY_SLOTS + i: sized by the recorder. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PY_SLOTS);
	__type(key, __u32);
	__type(value, struct py_slot);
} py_bufs SEC(".maps") __weak;

static __always_inline int py_read(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

/*
 * The walks are bpf_loop() callbacks (Linux 5.17): verified once, where an open-coded loop is
 * verified turn by turn at each of the places a stack is taken, past the verifier's limit.
 */
struct py_find_ctx {
	const struct py_offsets *o;
	__u64 fsbase, interp, ts, found;
	__u32 ninterp;
	int err;
};

static long py_find_step(__u64 i, void *arg)
{
	struct py_find_ctx *c = arg;
	const struct py_offsets *o = c->o;
	__u64 id = 0;

	if (!c->ts) {
		if (++c->ninterp >= PY_INTERPS_MAX ||
		    py_read(&c->interp, sizeof(c->interp), c->interp + o->interp_next) ||
		    !c->interp)
			return 1;
		if (py_read(&c->ts, sizeof(c->ts), c->interp + o->interp_threads))
			goto fail;
		return 0;
	}
	if (py_read(&id, sizeof(id), c->ts + o->ts_thread_id))
		goto fail;
	if (id == c->fsbase) {
		c->found = c->ts;
		return 1;
	}
	if (py_read(&c->ts, sizeof(c->ts), c->ts + o->ts_next))
		goto fail;
	return 0;
fail:
	c->err = 1;
	return 1;
}

/* The thread's PyThreadState: 0 when it has none, -1 when a read failed. */
static __always_inline __s64 py_tstate(const struct py_offsets *o, __u32 tid, __u64 fsbase)
{
	struct py_tcache *c = bpf_map_lookup_elem(&py_tstates, &tid);
	struct py_find_ctx f = { .o = o, .fsbase = fsbase };
	__u64 id = 0;

	if (c && c->fsbase == fsbase && c->tstate &&
	    !py_read(&id, sizeof(id), c->tstate + o->ts_thread_id) && id == fsbase)
		return c->tstate;
	if (py_read(&f.interp, sizeof(f.interp), o->runtime + o->rt_interp_head))
		return -1;
	if (!f.interp)
		return 0; /* not initialized yet */
	if (py_read(&f.ts, sizeof(f.ts), f.interp + o->interp_threads))
		return -1;
	bpf_loop(PY_THREADS_MAX, py_find_step, &f, 0);
	if (f.err)
		return -1;
	if (f.found) {
		struct py_tcache v = { .tstate = f.found, .fsbase = fsbase };

		bpf_map_update_elem(&py_tstates, &tid, &v, BPF_ANY);
	}
	return f.found;
}

struct py_walk_ctx {
	const struct py_offsets *o;
	struct pystack_event *ev;
	__u64 frame;
	__u32 n, status;
};

static long py_walk_step(__u64 i, void *arg)
{
	struct py_walk_ctx *c = arg;
	const struct py_offsets *o = c->o;
	struct pystack_event *ev = c->ev;
	__u64 code = 0, ptr = 0, frame = c->frame;
	__u32 flags = 0, off = 0, n = c->n;
	__u8 entry = 0;
	__s32 lasti = 0;

	if (!frame)
		return 1;
	if (o->entry_kind != PY_ENTRY_EVERY && py_read(&entry, sizeof(entry), frame + o->fr_entry))
		goto fail;
	if (o->entry_kind == PY_ENTRY_CSTACK && entry == PY_OWNED_BY_CSTACK) {
		/* The shim an eval loop starts with: the frame before it was its first. */
		if (n > 0 && n <= PY_FRAMES_MAX)
			ev->f[n - 1].flags |= PYF_EVAL_FIRST;
		goto next;
	}
	if (n >= PY_FRAMES_MAX) {
		c->status |= PYSTACK_F_TRUNCATED;
		return 1;
	}
	if (o->entry_kind == PY_ENTRY_EVERY || (o->entry_kind == PY_ENTRY_FLAG && entry))
		flags = PYF_EVAL_FIRST;
	if (py_read(&code, sizeof(code), frame + o->fr_code))
		goto fail;
	if (o->instr_kind == PY_INSTR_LASTI) {
		if (py_read(&lasti, sizeof(lasti), frame + o->fr_instr))
			goto fail;
		off = lasti > 0 ? (__u32)lasti * 2 : 0;
	} else {
		if (py_read(&ptr, sizeof(ptr), frame + o->fr_instr))
			goto fail;
		ptr -= code + o->code_adaptive;
		off = ptr < (1u << 30) ? (__u32)ptr : 0;
	}
	ev->f[n].code = code;
	ev->f[n].offset = off;
	ev->f[n].flags = flags;
	c->n = n + 1;
next:
	if (py_read(&c->frame, sizeof(c->frame), frame + o->fr_previous))
		goto fail;
	return 0;
fail:
	c->status |= PYSTACK_F_READ;
	return 1;
}

/* The frames from FRAME on into EV; PYSTACK_F_* of what went wrong. */
static __always_inline __u32 py_walk(const struct py_offsets *o, struct pystack_event *ev,
				     __u64 frame)
{
	/* Shim frames take a turn each and add none: a few more turns than frames. */
	struct py_walk_ctx c = { .o = o, .ev = ev, .frame = frame };

	bpf_loop(PY_FRAMES_MAX + PY_FRAMES_MAX / 4, py_walk_step, &c, 0);
	ev->n = c.n;
	if (c.frame && !(c.status & PYSTACK_F_READ))
		c.status |= PYSTACK_F_TRUNCATED;
	return c.status;
}

/*
 * Whether the interpreter of thread state ts runs its cyclic collector now, on this thread (the
 * GIL's last holder): three reads. A read that fails leaves the frames unmarked (they were
 * read: the process is there).
 */
static __always_inline bool py_collecting(const struct py_offsets *o, __u64 ts)
{
	__u64 interp = 0, holder = 0;
	__s32 collecting = 0;

	if (!o->interp_gc || py_read(&interp, sizeof(interp), ts + o->ts_interp) || !interp ||
	    py_read(&collecting, sizeof(collecting), interp + o->interp_gc) || !collecting)
		return false;
	return !o->gil_holder ||
	       (!py_read(&holder, sizeof(holder),
			 (o->gil_in_interp ? interp : o->runtime) + o->gil_holder) &&
		holder == ts);
}

#if defined(__TARGET_ARCH_x86)
/*
 * The current thread's Python frames for the event (of_type, ts) that ends at end, written
 * before that event where both come from the same program. irq: 1 from an interrupt.
 */
static __always_inline void py_take(__u32 of_type, __u64 ts, __u64 end, __u32 irq)
{
	__u64 id = bpf_get_current_pid_tgid(), frame = 0, size;
	struct task_struct *task;
	const struct py_offsets *o;
	struct pystack_event *ev;
	struct py_slot *slot = NULL;
	__u32 tgid = id >> 32, key;
	__s64 ts_addr;

	o = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!o)
		return;
	task = bpf_get_current_task_btf();
	ts_addr = py_tstate(o, (__u32)id, BPF_CORE_READ(task, thread.fsbase));
	if (ts_addr <= 0) {
		if (ts_addr < 0)
			count_loss(GS_LOSS_PYSTACK);
		return; /* 0: a thread the interpreter does not know */
	}
	if (py_read(&frame, sizeof(frame), ts_addr + o->ts_frame) ||
	    (o->has_cframe && frame && py_read(&frame, sizeof(frame), frame + o->cframe_current))) {
		count_loss(GS_LOSS_PYSTACK);
		return;
	}
	if (!frame)
		return; /* not running Python code now */
	key = bpf_get_smp_processor_id() * PY_SLOTS;
	if (irq) {
		key += PY_SLOTS - 1;
		slot = bpf_map_lookup_elem(&py_bufs, &key);
		if (slot && __sync_val_compare_and_swap(&slot->busy, 0, 1))
			slot = NULL;
	} else {
		for (int i = 0; i < PY_SLOTS - 1 && !slot; i++, key++) {
			slot = bpf_map_lookup_elem(&py_bufs, &key);
			if (slot && __sync_val_compare_and_swap(&slot->busy, 0, 1))
				slot = NULL;
		}
	}
	if (!slot) {
		count_loss(GS_LOSS_PYSTACK); /* every slot of this CPU is being filled */
		return;
	}
	ev = &slot->ev;
	ev->n = 0;
	ev->status = py_walk(o, ev, frame);
	if (ev->status & PYSTACK_F_READ)
		count_loss(GS_LOSS_PYSTACK);
	if (ev->n && py_collecting(o, ts_addr))
		ev->status |= PYSTACK_F_GC;
	if (ev->n) {
		ev->h.type = GS_EV_PYSTACK;
		ev->h.ts = ts;
		ev->h.tid = (__u32)id;
		ev->h.tgid = tgid;
		ev->h.cpu = bpf_get_smp_processor_id();
		ev->h.flags = 0;
		ev->h.ustack_n = 0;
		ev->h.kstack_n = 0;
		ev->end_ns = end;
		ev->of_type = of_type;
		ev->pad = 0;
		size = sizeof(*ev) - sizeof(ev->f) + (__u64)ev->n * sizeof(ev->f[0]);
		ev->h.size = size;
		/* A bound the verifier must see on size itself, next to the call. */
		barrier_var(size);
		if (size > sizeof(*ev))
			size = sizeof(*ev);
		barrier_var(size);
		if (size > 0 && size <= sizeof(*ev) &&
		    bpf_ringbuf_output(&events, ev, size, BPF_RB_NO_WAKEUP)) {
			__u32 type = GS_EV_PYSTACK;
			__u64 *lost = bpf_map_lookup_elem(&lost_types, &type);

			count_loss(GS_LOSS_RINGBUF);
			if (lost)
				*lost += 1;
		}
	}
	slot->busy = 0;
}
#else
/* The thread's fs base is x86-64's: none elsewhere yet. */
static __always_inline void py_take(__u32 of_type, __u64 ts, __u64 end, __u32 irq)
{
}
#endif

#endif
