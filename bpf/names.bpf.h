/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel names (included once, by cuda.bpf.c, after the argument decoding it uses): the lookups'
 * entry and return probes' work, the kernel handles already named and how, the names read from
 * a handle where no lookup was seen, and the per-libcuda calibration that says whether such
 * reads can be trusted.
 */
#ifndef GAPSCOPE_NAMES_BPF_H
#define GAPSCOPE_NAMES_BPF_H

struct name_state {
	struct cu_name_event ev;
	__u64 out;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct call_key);
	__type(value, struct name_state);
} name_calls SEC(".maps");

/* Scratch for building a call state without a large BPF stack frame. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct name_state);
} name_scratch SEC(".maps");

/*
 * Kernel handles of the targets already seen, {tgid, handle} -> how they got their name (H_*):
 * a launch looks its handle up here (one hash lookup), and only a handle not here is read
 * (*(handle + 8), cuda.h), once. Once per unload: a module or library unloaded frees its
 * handles, which the driver may hand out again for another kernel, possibly through a call we
 * do not see (cuModuleEnumerateFunctions); every mark older than the process's last unload
 * counts as absent, so that the handle's name is read afresh at its next launch.
 */
enum { H_LOOKUP = 1, H_LOOKUP_DISAGREED, H_BY_HANDLE, H_UNNAMED };

struct handle_key {
	__u32 tgid;
	__u32 pad;
	__u64 handle;
};

struct handle_mark {
	__u32 how;
	__u32 gen; /* the process's unload count when marked */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct handle_key);
	__type(value, struct handle_mark);
} cu_handles SEC(".maps");

/*
 * The process's unload generation is the value of its tgids entry (gapscope.bpf.h): 1 when the
 * recorder or a fork puts it there, one more for every successful cuModuleUnload or
 * cuLibraryUnload. A launch finds it in the lookup that tells it is a target's.
 */

/* Per attached libcuda (cu_fn_desc.lib): calibration counts and the off switch. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CU_MAX_LIBS);
	__type(key, __u32);
	__type(value, struct cu_handle_stats);
} cu_libs SEC(".maps");

struct two_names {
	char a[CU_NAME_LEN];
	char b[CU_NAME_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct two_names);
} name_pair SEC(".maps");

/*
 * The string *(handle + CU_HANDLE_NAME_OFF) points to, into buf: bpf_probe_read_user_str's
 * length (with the NUL), or < 0. Failed reads here are not losses: a layout that is not the
 * driver's reads nothing.
 */
static __always_inline long handle_str(__u64 handle, char *buf)
{
	__u64 p = 0;

	if (!handle || bpf_probe_read_user(&p, sizeof(p), (void *)(handle + CU_HANDLE_NAME_OFF)) ||
	    !p)
		return -1;
	return bpf_probe_read_user_str(buf, CU_NAME_LEN, (void *)p);
}

/*
 * A C identifier or a mangled C++ name ([A-Za-z_][A-Za-z0-9_.$]*), NUL-terminated in the buffer.
 * A name that fills the buffer is cut to CU_NAME_LEN - 1 characters, exactly as the lookup
 * probes cut the names they capture: template kernels (PyTorch, cuBLAS) are often longer, and a
 * cut mangled name still tells them apart far better than none.
 */
static __always_inline bool symbol_like(const char *s, long n)
{
	if (n < 2 || n > CU_NAME_LEN)
		return false;
	for (int i = 0; i < CU_NAME_LEN; i++) {
		char c = s[i];

		if (!c)
			return i == n - 1;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
			continue;
		if (i > 0 && ((c >= '0' && c <= '9') || c == '.' || c == '$'))
			continue;
		return false;
	}
	return false;
}

static __always_inline bool same_str(const char *a, const char *b)
{
	for (int i = 0; i < CU_NAME_LEN; i++) {
		if (a[i] != b[i])
			return false;
		if (!a[i])
			return true;
	}
	return true;
}

static __always_inline __u32 unload_gen(__u32 tgid)
{
	__u32 *g = bpf_map_lookup_elem(&tgids, &tgid);

	return g ? *g : 0;
}

/* Unloads in all targets: a thread's cached unload generation (cu_thread) is good while this
 * has not moved since it was read. */
__u64 cu_unloads = 0;

/* A module or library of the current process was unloaded: its names are all in doubt. */
static __always_inline void note_unload(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 *g = bpf_map_lookup_elem(&tgids, &tgid);

	if (g)
		__sync_fetch_and_add(g, 1);
	__sync_fetch_and_add(&cu_unloads, 1);
}

/* How the handle of k got its name since the last unload (H_*), 0: not named since; gen is the
 * process's unload generation. */
static __always_inline __u32 handle_how(const struct handle_key *k, __u32 gen)
{
	struct handle_mark *m = bpf_map_lookup_elem(&cu_handles, k);

	return m && m->gen == gen ? m->how : 0;
}

static __always_inline void mark_handle(__u64 handle, __u32 how, __u64 flags)
{
	struct handle_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .handle = handle };
	struct handle_mark m = { .how = how, .gen = unload_gen(k.tgid) };

	bpf_map_update_elem(&cu_handles, &k, &m, flags);
}

/* A lookup's name against *(handle + 8): counted, and the first disagreement turns names from
 * handles off for the library. Returns the CU_NF_CAL_* flag. */
static __always_inline __u16 calibrate(__u32 lib, bool agree)
{
	struct cu_handle_stats *st = bpf_map_lookup_elem(&cu_libs, &lib);

	if (st) {
		if (agree) {
			__sync_fetch_and_add(&st->agree, 1);
		} else {
			__sync_fetch_and_add(&st->disagree, 1);
			st->off = 1;
		}
	}
	return agree ? CU_NF_CAL_AGREE : CU_NF_CAL_DISAGREE;
}

/*
 * A launch (or cuKernelGetFunction) of a handle no lookup named: read its name from the handle,
 * once, and put it in the trace as a cu_name_event marked CU_NF_BY_HANDLE, ahead of the event
 * that uses it. Returns how the handle is named (H_*), 0 when it is not (yet).
 */
static __always_inline __u32 name_by_handle(__u64 handle, __u32 lib, __u32 fn, __u32 kind, __u64 ts,
					    __u32 gen)
{
	struct handle_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .handle = handle };
	struct cu_handle_stats *st;
	struct cu_name_event *ev;
	struct handle_mark m;
	__u32 how;
	long n;

	if (!handle)
		return 0;
	how = handle_how(&k, gen);
	if (how)
		return how;
	st = bpf_map_lookup_elem(&cu_libs, &lib);
	if (!st || st->off)
		return 0;
	ev = reserve(sizeof(*ev), GS_EV_CU_NAME);
	if (!ev)
		return 0; /* counted; the next launch tries again */
	fill_hdr(&ev->h, GS_EV_CU_NAME, sizeof(*ev), ts);
	ev->h.flags = CU_NF_BY_HANDLE;
	ev->fn = fn;
	ev->kind = kind;
	ev->handle = handle;
	ev->owner = 0;
	ev->dur_ns = 0;
	ev->ret = 0;
	ev->pad = 0;
	n = handle_str(handle, ev->name);
	if (n > 0 && symbol_like(ev->name, n)) {
		m.how = H_BY_HANDLE;
		__sync_fetch_and_add(&st->named, 1);
		submit(ev);
	} else {
		m.how = H_UNNAMED;
		__sync_fetch_and_add(&st->rejected, 1);
		bpf_ringbuf_discard(ev, BPF_RB_NO_WAKEUP);
	}
	/* Not over a lookup's mark made meanwhile by another thread; over one from before the
	 * last unload. */
	m.gen = gen;
	if (bpf_map_update_elem(&cu_handles, &k, &m, BPF_NOEXIST) && !handle_how(&k, gen))
		bpf_map_update_elem(&cu_handles, &k, &m, BPF_ANY);
	return m.how;
}

static __always_inline int name_entry(const struct uargs *regs, const struct cu_fn_desc *d,
				      __u32 fn, __u64 ts)
{
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid(), .fn = fn };
	__u32 zero = 0;
	struct name_state *s = bpf_map_lookup_elem(&name_scratch, &zero);

	if (!s)
		return 0;
	fill_hdr(&s->ev.h, GS_EV_CU_NAME, sizeof(s->ev), ts);
	s->ev.fn = fn;
	s->ev.kind = d->kind;
	s->ev.owner = arg(regs, d->a_aux);
	s->ev.handle = 0;
	s->ev.ret = 0;
	s->out = arg(regs, d->a_out);
	if (bpf_probe_read_user_str(s->ev.name, sizeof(s->ev.name), (void *)arg(regs, d->a_name)) <
	    0)
		count_loss(GS_LOSS_READ);
	if (bpf_map_update_elem(&name_calls, &key, s, BPF_ANY))
		count_loss(GS_LOSS_MAP);
	return 0;
}

static __always_inline int name_return(struct pt_regs *regs, __u32 fn, __u64 now)
{
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid(), .fn = fn };
	struct name_state *s = bpf_map_lookup_elem(&name_calls, &key);
	struct cu_name_event *ev;

	if (!s)
		return 0;
	ev = reserve(sizeof(*ev), GS_EV_CU_NAME);
	if (ev) {
		__builtin_memcpy(ev, &s->ev, sizeof(*ev));
		ev->h.flags |= GS_F_RET;
		ev->dur_ns = now - s->ev.h.ts;
		ev->ret = PT_REGS_RC(regs);
		if (s->out && bpf_probe_read_user(&ev->handle, sizeof(ev->handle), (void *)s->out))
			count_loss(GS_LOSS_READ);
		if (!ev->ret && ev->handle && ev->name[0]) {
			/* A name the lookup gave: calibrate the handle's against it. */
			__u32 zero = 0, lib;
			struct two_names *t = bpf_map_lookup_elem(&name_pair, &zero);
			const struct cu_fn_desc *d = bpf_map_lookup_elem(&cu_fns, &fn);
			__u32 how = H_LOOKUP;

			if (t && d) {
				lib = d->lib;
				ev->h.flags |= calibrate(lib, handle_str(ev->handle, t->a) > 0 &&
								      same_str(t->a, ev->name));
				if (ev->h.flags & CU_NF_CAL_DISAGREE)
					how = H_LOOKUP_DISAGREED;
			}
			mark_handle(ev->handle, how, BPF_ANY);
		}
		submit(ev);
	}
	bpf_map_delete_elem(&name_calls, &key);
	return 0;
}

/*
 * cuKernelGetFunction returned FUNC for KERNEL. A kernel a lookup named and the kernel's
 * *(handle + 8) confirmed: check that the function's *(handle + 8) is the kernel's too. A kernel no lookup named: name the kernel from its handle (the reader passes the name
 * on to the function, as for a looked-up kernel). Either way launches of FUNC need no read.
 */
static __always_inline __u16 kernel_function(__u64 out, __u64 kernel, __u32 fn, __u64 ts)
{
	struct handle_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .handle = kernel };
	const struct cu_fn_desc *d = bpf_map_lookup_elem(&cu_fns, &fn);
	struct two_names *t;
	__u64 func = 0;
	__u32 zero = 0, how, lib, gen;
	__u16 flags = 0;

	if (!d || bpf_probe_read_user(&func, sizeof(func), (void *)out) || !func)
		return 0;
	lib = d->lib;
	gen = unload_gen(k.tgid);
	how = handle_how(&k, gen);
	if (how == H_LOOKUP) {
		t = bpf_map_lookup_elem(&name_pair, &zero);
		if (!t)
			return 0;
		flags = calibrate(lib, handle_str(kernel, t->a) > 0 && handle_str(func, t->b) > 0 &&
					       same_str(t->a, t->b));
		mark_handle(func, H_LOOKUP, BPF_ANY);
		return flags;
	}
	if (how == H_LOOKUP_DISAGREED) {
		/* Counted already: the kernel's own name was contradicted. */
		mark_handle(func, H_LOOKUP, BPF_ANY);
		return 0;
	}
	if (!how)
		how = name_by_handle(kernel, lib, fn, CU_K_KERNEL_FUNCTION, ts, gen);
	if (how != H_BY_HANDLE)
		return 0;
	/*
	 * A kernel named from its handle (its lookup ran before the attach, as in a process that
	 * loaded cuBLAS and cuDNN before record -p): the function the driver made of it must carry
	 * the same name. Two objects agreeing is the check a lookup would have made; without it
	 * such a process never confirmed a name and the probe was never retired (150k lookups in
	 * 9 s of a PyTorch CNN on the H200).
	 */
	t = bpf_map_lookup_elem(&name_pair, &zero);
	if (!t)
		return 0;
	flags = calibrate(lib, handle_str(kernel, t->a) > 0 && handle_str(func, t->b) > 0 &&
				       same_str(t->a, t->b));
	if (flags & CU_NF_CAL_AGREE)
		mark_handle(func, H_BY_HANDLE, BPF_ANY);
	return flags;
}

#endif
