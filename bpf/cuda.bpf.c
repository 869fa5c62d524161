// SPDX-License-Identifier: GPL-2.0
/*
 * CUDA driver API uprobes. The recorder attaches cu_entry to every probed cu* symbol of the
 * libcuda the target maps (cookie = probe id) and cu_return only where the call's value lies in
 * its return: a duration (synchronize, alloc), a result (queries) or a handle written through an
 * out pointer (contexts, streams, kernel handles). A uprobe hit costs several microseconds on the
 * machines we run on, so launches and async copies take one trap: entry only.
 */
#include "gapscope.bpf.h"
#include "cuda.h"
#include "offcpu.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* libbpf 1.1's bpf_tracing.h stops at PARM5; the sixth x86-64 argument register is r9. */
#ifndef PT_REGS_PARM6
#define PT_REGS_PARM6(x) ((x)->r9)
#endif

/* Filled by the recorder before any attach: per-probe-id argument layout. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CU_MAX_FNS);
	__type(key, __u32);
	__type(value, struct cu_fn_desc);
} cu_fns SEC(".maps");

struct call_key {
	__u32 tid;
	__u32 fn;
};

/* Calls between entry and return; keyed by probe id too, so nested cu* calls do not collide. */
struct call_state {
	struct cu_event ev;
	__u64 out;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_THREADS);
	__type(key, struct call_key);
	__type(value, struct call_state);
} calls SEC(".maps");

/*
 * Entry-only calls (launches, event records, async copies) carry their caller's address; their
 * whole user stack only with --launch-stacks: the walk is a third of the probe's own cost (0.54
 * of 1.67 us a launch on the 2-CPU machine), and the report blames nothing on it.
 */
const volatile bool launch_stacks = false;

/*
 * A call's arguments at its first instruction (x86-64 SysV): six registers, then the stack above
 * the return address. The stack part is read once, in one user read with the return address:
 * a launch's seventh to ninth arguments (block z, shared memory, stream) and its caller were
 * four reads.
 */
struct uargs {
	/* w[i]: argument i for i < 7 (w[0] = 0); w[7]: the return address; w[i + 1]: argument i
	 * for 7 <= i <= 12, as the stack holds them */
	__u64 w[14];
};

#define U_CALLER 7

static __always_inline void load_args(struct pt_regs *regs, struct uargs *a)
{
	__u64 sp = PT_REGS_SP(regs);

	a->w[0] = 0;
	a->w[1] = PT_REGS_PARM1(regs);
	a->w[2] = PT_REGS_PARM2(regs);
	a->w[3] = PT_REGS_PARM3(regs);
	a->w[4] = PT_REGS_PARM4(regs);
	a->w[5] = PT_REGS_PARM5(regs);
	a->w[6] = PT_REGS_PARM6(regs);
	if (!bpf_probe_read_user(&a->w[U_CALLER], 7 * sizeof(__u64), (void *)sp))
		return;
	/* The stack's top is within 56 bytes: only the return address can be there. */
	__builtin_memset(&a->w[U_CALLER], 0, 7 * sizeof(__u64));
	if (bpf_probe_read_user(&a->w[U_CALLER], sizeof(__u64), (void *)sp))
		count_loss(GS_LOSS_READ);
}

/* Argument i (1-based); 0 for i == 0 or beyond 12. */
static __always_inline __u64 arg(const struct uargs *a, __u32 i)
{
	if (i < U_CALLER)
		return a->w[i];
	return i <= 12 ? a->w[i + 1] : 0;
}

/* The leading fields of CUlaunchConfig (cuda.h), as the driver ABI lays them out. */
struct cu_launch_config {
	__u32 grid[3];
	__u32 block[3];
	__u32 shmem;
	__u32 pad;
	__u64 stream;
};

static __always_inline void decode_args(const struct uargs *regs, const struct cu_fn_desc *d,
					struct cu_event *ev)
{
	if (d->layout == CU_L_LAUNCH_EX) {
		struct cu_launch_config cfg = {};

		if (bpf_probe_read_user(&cfg, sizeof(cfg), (void *)arg(regs, 1)))
			count_loss(GS_LOSS_READ);
		ev->grid[0] = cfg.grid[0];
		ev->grid[1] = cfg.grid[1];
		ev->grid[2] = cfg.grid[2];
		ev->block[0] = cfg.block[0];
		ev->block[1] = cfg.block[1];
		ev->block[2] = cfg.block[2];
		ev->shmem = cfg.shmem;
		ev->stream = cfg.stream;
		ev->handle = arg(regs, 2);
		return;
	}
	if (d->layout == CU_L_MEMCPY2D) {
		/* CUDA_MEMCPY2D_v2: WidthInBytes at 112, Height at 120. */
		__u64 wh[2] = {};

		if (bpf_probe_read_user(wh, sizeof(wh), (void *)(arg(regs, 1) + 112)))
			count_loss(GS_LOSS_READ);
		ev->bytes = wh[0] * wh[1];
	}
	ev->handle = arg(regs, d->a_handle);
	ev->stream = arg(regs, d->a_stream);
	ev->ctx = arg(regs, d->a_ctx);
	ev->aux = arg(regs, d->a_aux);
	if (d->a_bytes) {
		ev->bytes = arg(regs, d->a_bytes);
		if (d->a_bytes2)
			ev->bytes *= arg(regs, d->a_bytes2);
		ev->bytes <<= d->bytes_shift & 7;
	}
	if (d->a_grid) {
		__u32 i = d->a_grid;

		ev->grid[0] = arg(regs, i);
		ev->grid[1] = arg(regs, i + 1);
		ev->grid[2] = arg(regs, i + 2);
		ev->block[0] = arg(regs, i + 3);
		ev->block[1] = arg(regs, i + 4);
		ev->block[2] = arg(regs, i + 5);
		ev->shmem = arg(regs, i + 6);
	}
}

#include "names.bpf.h"

#include "launches.bpf.h"

static __always_inline bool is_launch(__u32 kind)
{
	return kind == CU_K_LAUNCH || kind == CU_K_GRAPH_LAUNCH;
}

/* Async memsets: the report takes them for neither work nor evidence; counted, not streamed. */
static __always_inline bool is_async_memset(const struct cu_fn_desc *d)
{
	return d->kind == CU_K_MEMSET && (d->flags & CU_F_ASYNC);
}

/*
 * Calls that cannot tell a gap's edge: name lookups (the launch path of PyTorch has one) and
 * async memsets (cuBLAS puts one before each of its launches: with them, every such launch was
 * streamed).
 */
static __always_inline bool bumps_epoch(const struct cu_fn_desc *d)
{
	return !is_launch(d->kind) && !d->a_name && d->kind != CU_K_KERNEL_FUNCTION &&
	       !is_async_memset(d);
}

/* The kernel and stream of a launch or memset, with one user read: the stream is a stack
 * argument (cuLaunchKernel's ninth) or in the launch config (cuLaunchKernelEx). */
/* Argument i (1-based) of the six in registers; 0 for any other i. */
static __always_inline __u64 reg_arg(struct pt_regs *regs, __u32 i)
{
	__u64 a[8] = { 0,
		       PT_REGS_PARM1(regs),
		       PT_REGS_PARM2(regs),
		       PT_REGS_PARM3(regs),
		       PT_REGS_PARM4(regs),
		       PT_REGS_PARM5(regs),
		       PT_REGS_PARM6(regs),
		       0 };

	return a[i & 7]; /* i & 7 is 7 (0) past six */
}

static __always_inline void launch_id(struct pt_regs *regs, const struct cu_fn_desc *d,
				      struct launch_id *id)
{
	__u32 si = d->a_stream;

	if (d->layout == CU_L_LAUNCH_EX) {
		id->handle = PT_REGS_PARM2(regs);
		if (bpf_probe_read_user(&id->stream, sizeof(id->stream),
					(void *)(PT_REGS_PARM1(regs) +
						 offsetof(struct cu_launch_config, stream))))
			count_loss(GS_LOSS_READ);
		return;
	}
	id->handle = reg_arg(regs, d->a_handle < 7 ? d->a_handle : 0);
	if (si < 7) {
		id->stream = reg_arg(regs, si);
	} else if (si <= 12) {
		/* above the return address: argument 7 at sp + 8 */
		if (bpf_probe_read_user(&id->stream, sizeof(id->stream),
					(void *)(PT_REGS_SP(regs) + 8 * (si - 6))))
			count_loss(GS_LOSS_READ);
	}
}

/*
 * The threads of a driver stand-in that said they stand for a device (CU_K_DEVICE_THREAD), with
 * when that was last written: it says so before each of its wakeups, and one record a second is
 * enough (a thread whose entry was pushed out is written again at its next call).
 */
struct dev_thread {
	__u32 tgid;
	__u32 ordinal;
	__u64 said;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct dev_thread);
} dev_threads SEC(".maps");

/* gapscope_device_thread(ordinal) by a target's thread: written, unless said within a second. */
static __always_inline int device_thread(struct pt_regs *regs, __u64 id, __u32 fn)
{
	__u32 tid = (__u32)id;
	__u64 ts = bpf_ktime_get_ns();
	struct dev_thread v = { .tgid = id >> 32,
				.ordinal = (__u32)PT_REGS_PARM1(regs),
				.said = ts };
	const struct dev_thread *k = bpf_map_lookup_elem(&dev_threads, &tid);
	struct cu_event ev, *out;

	if (k && k->tgid == v.tgid && k->ordinal == v.ordinal &&
	    ts - k->said < CU_DEVICE_THREAD_REMARK_NS)
		return 0;
	__builtin_memset(&ev, 0, sizeof(ev));
	fill_hdr(&ev.h, GS_EV_CUDA, sizeof(ev), ts);
	ev.fn = fn;
	ev.kind = CU_K_DEVICE_THREAD;
	ev.aux = v.ordinal;
	if (bpf_probe_read_user(&ev.caller, sizeof(ev.caller), (void *)PT_REGS_SP(regs)))
		count_loss(GS_LOSS_READ);
	out = reserve(sizeof(*out), GS_EV_CUDA);
	if (!out)
		return 0; /* counted; said again at its next call */
	__builtin_memcpy(out, &ev, sizeof(ev));
	submit(out);
	if (bpf_map_update_elem(&dev_threads, &tid, &v, BPF_ANY))
		count_loss(GS_LOSS_MAP);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(cu_entry)
{
	__u64 ts, id = bpf_get_current_pid_tgid();
	__u32 fn = bpf_get_attach_cookie(ctx), tgid = id >> 32, gen;
	const struct cu_fn_desc *d = bpf_map_lookup_elem(&cu_fns, &fn);
	struct cu_thread *t = NULL;
	__u16 extra = 0;
	bool counted;
	struct cu_event ev;
	struct uargs a;

	if (!d)
		return 0;
	counted = is_launch(d->kind) || is_async_memset(d);
	if (counted) {
		/* a target's thread: its cache, which knows it is one */
		t = thread_cache(tgid, &gen);
		if (!gen)
			return 0;
	} else {
		__u32 *g = bpf_map_lookup_elem(&tgids,
					       &tgid); /* a target's: its unload generation */

		if (!g)
			return 0;
		gen = *g;
	}
	if (d->kind == CU_K_DEVICE_THREAD)
		return device_thread(ctx, id, fn);
	if (bumps_epoch(d))
		__sync_fetch_and_add(&cu_epoch, 1);
	ts = bpf_ktime_get_ns(); /* after the bump: see cu_epoch */
	if (counted) {
		/* Counted, and decided with one user read (the stream): most launches end here. */
		struct launch_id lid = { .handle = 0, .stream = 0, .kind = d->kind };
		struct cu_slot *sl;

		launch_id(ctx, d, &lid);
		sl = t ? count_cached(t, fn, gen, &lid) : NULL;
		if (t && is_launch(d->kind))
			count_ival(t, ts);
		if (!sl)
			count_launch(tgid, fn, gen, &lid);
		if (d->kind == CU_K_LAUNCH && (!sl || !sl->named)) {
			__u32 how = name_by_handle(lid.handle, d->lib, fn, CU_K_LAUNCH, ts, gen);

			if (sl)
				sl->named = !!how;
		}
		/* async memsets are never streamed; a launch by the rule, or always with no cache */
		if (is_async_memset(d) || (t && !launch_streamed(t, lid.stream, ts))) {
			if (!all_launches)
				return 0;
			extra = CU_LF_EXTRA;
		}
	}
	/* A call that makes an interval (a name lookup, a call with a return) ends any off-CPU
	 * interval of its thread still open (offcpu.bpf.h); launches do not look. */
	if (d->a_name || (d->flags & CU_F_RET))
		offcpu_resumed((__u32)id, tgid, ts);
	load_args(ctx, &a);
	if (d->a_name)
		return name_entry(&a, d, fn, ts);

	if (d->flags & CU_F_RET) {
		struct call_key key = { .tid = (__u32)id, .fn = fn };
		struct call_state s = {};

		fill_hdr(&s.ev.h, GS_EV_CUDA, sizeof(s.ev), ts);
		s.ev.fn = fn;
		s.ev.kind = d->kind;
		s.ev.caller = a.w[U_CALLER];
		decode_args(&a, d, &s.ev);
		s.out = arg(&a, d->a_out);
		if (bpf_map_update_elem(&calls, &key, &s, BPF_ANY))
			count_loss(GS_LOSS_MAP);
		return 0;
	}

	/*
	 * Entry-only: the event is complete now; the stack, where one is taken, is the one at the
	 * first instruction. Without one the record is the event alone: reserving room for a stack
	 * put 1.4 KiB of unused ring buffer behind every launch, and into the trace.
	 */
	__builtin_memset(&ev, 0, sizeof(ev));
	fill_hdr(&ev.h, GS_EV_CUDA, sizeof(ev), ts);
	ev.fn = fn;
	ev.kind = d->kind;
	ev.caller = a.w[U_CALLER];
	decode_args(&a, d, &ev);
	ev.h.flags |= extra;
	if (!counted && ev.stream && (d->flags & CU_F_ASYNC))
		prior_launch(&ev);

	struct cu_event *out;

	if (launch_stacks)
		out = reserve(sizeof(*out) + sizeof(struct gs_stack), GS_EV_CUDA);
	else
		out = reserve(sizeof(*out), GS_EV_CUDA);
	if (!out)
		return 0;
	__builtin_memcpy(out, &ev, sizeof(ev));
	if (launch_stacks) {
		out->h.size = sizeof(*out) + sizeof(struct gs_stack);
		take_ustack(ctx, &out->h, (void *)(out + 1));
		out->h.flags |= GS_F_ENTRY_STACK;
	}
	submit(out);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(cu_return)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 fn = bpf_get_attach_cookie(ctx);
	struct call_key key = { .tid = (__u32)id, .fn = fn };
	struct call_state *s;
	struct cu_event *ev;
	__u16 cal_flags = 0;

	if (!is_target(id >> 32))
		return 0;
	offcpu_resumed((__u32)id, id >> 32, now);
	s = bpf_map_lookup_elem(&calls, &key);
	if (!s)
		return name_return(ctx, fn, now);
	if (s->ev.kind == CU_K_KERNEL_FUNCTION && s->out && !PT_REGS_RC(ctx))
		cal_flags = kernel_function(s->out, s->ev.aux, fn, now);
	if (s->ev.kind == CU_K_UNLOAD && !PT_REGS_RC(ctx))
		note_unload();

	/* The stack at return starts at the caller's return address with the caller's frame
	 * pointer restored: a complete frame-pointer chain, no frame missing. */
	ev = reserve(sizeof(*ev) + sizeof(struct gs_stack), GS_EV_CUDA);
	if (ev) {
		__builtin_memcpy(ev, &s->ev, sizeof(*ev));
		ev->h.size = sizeof(*ev) + sizeof(struct gs_stack);
		ev->h.flags |= GS_F_RET | cal_flags;
		ev->dur_ns = now - s->ev.h.ts;
		ev->ret = PT_REGS_RC(ctx);
		if (s->out) {
			__u64 *dst = ev->kind == CU_K_CTX_CREATE    ? &ev->ctx :
				     ev->kind == CU_K_STREAM_CREATE ? &ev->stream :
								      &ev->handle;

			if (bpf_probe_read_user(dst, sizeof(*dst), (void *)s->out))
				count_loss(GS_LOSS_READ);
		}
		take_ustack(ctx, &ev->h, (void *)(ev + 1));
		submit(ev);
	}
	bpf_map_delete_elem(&calls, &key);
	return 0;
}
