// SPDX-License-Identifier: GPL-2.0
/*
 * gapscope script: a trace as text, one event per line, like perf script. Events come in the
 * order their intervals ended (reader.h), each printed with its start time and duration.
 * Recorder metadata (clock, probes, maps, losses) prints as '#' lines; stacks follow their event
 * indented, user frames as dso+offset (generated code by the name its perf map gives it), kernel
 * frames named from the trace's own symbols: the output depends on the trace alone.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "escape.h"
#include "gapscope_cmd.h"
#include "launches.h"
#include "numarg.h"
#include "reader.h"
#include "script.h"
#include "kinds.h"

struct script_opts {
	const char *file;
	bool no_stacks;
	bool no_meta;
	__u64 window_ns;
};

struct script {
	struct gs_ctx *ctx;
	const struct script_opts *opts;
	FILE *out;
	struct launch_counter *launches;
};

static const struct argp_option opts[] = {
	{ "no-stacks", 's', NULL, 0, "Do not print stacks", 0 },
	{ "no-meta", 'm', NULL, 0, "Do not print the recorder's '#' metadata lines", 0 },
	{ "window", 'w', "MS", 0,
	  "How late (ms) an event may arrive and still be put in time order (default 50)", 0 },
	{},
};

static const char doc[] = "Print a gapscope trace, one event per line.\n"
			  "\n"
			  "EXAMPLES:\n"
			  "  gapscope script trace.gsc | grep cuLaunchKernel\n";

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct script_opts *o = state->input;
	double ms;

	switch (key) {
	case 's':
		o->no_stacks = true;
		break;
	case 'm':
		o->no_meta = true;
		break;
	case 'w':
		if (numarg__double(arg, 0, 1e6, &ms))
			argp_error(state, "--window: a number of milliseconds, not '%s'", arg);
		o->window_ns = (__u64)(ms * 1e6);
		break;
	case ARGP_KEY_ARG:
		if (o->file)
			argp_error(state, "one trace file at a time");
		o->file = arg;
		break;
	case ARGP_KEY_END:
		if (!o->file)
			argp_error(state, "which trace file?");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void print_dur(FILE *o, const char *what, __u64 ns)
{
	if (ns >= 1000000)
		fprintf(o, " %s=%.3fms", what, ns / 1e6);
	else
		fprintf(o, " %s=%.3fus", what, ns / 1e3);
}

/*
 * Names the target chose (threads, kernels, paths, symbols), at most N bytes of S, as text that
 * holds no line break or terminal control (escape.h): no name can forge a line, '#' ones
 * included.
 */
static void put(FILE *o, const char *s, size_t n)
{
	esc__put_text(o, s, n);
}

static void head(const struct script *s, const struct gs_hdr *h, const char *event)
{
	const char *comm = ctx__comm(s->ctx, h->tid);
	char buf[ESC_TEXT_MAX];

	fprintf(s->out, "%16s %6u/%-6u [%03u] ", esc__text(buf, sizeof(buf), comm ?: "?", SIZE_MAX),
		h->tid, h->tgid, h->cpu);
	script__print_time(s->out, h->ts);
	fputs(": ", s->out);
	put(s->out, event, SIZE_MAX);
}

static void print_user_frame(const struct script *s, __u32 tgid, __u64 a, const char *tag)
{
	const struct ctx_map *m = ctx__map(s->ctx, tgid, a);
	__u64 off;
	const char *jit = ctx__jit_symbol(s->ctx, tgid, a, &off);

	/* Generated code the process named in its perf map, as perf script shows it. */
	char buf[ESC_TEXT_MAX];

	if (jit)
		fprintf(s->out, "\t%16" PRIx64 " %s%s+0x%" PRIx64 " (/tmp/perf-%u.map)\n",
			(uint64_t)a, tag, esc__text(buf, sizeof(buf), jit, SIZE_MAX), (uint64_t)off,
			tgid);
	else if (m)
		fprintf(s->out, "\t%16" PRIx64 " %s(%s+0x%" PRIx64 ")\n", (uint64_t)a, tag,
			esc__text(buf, sizeof(buf), m->path, SIZE_MAX),
			(uint64_t)(a - m->start + m->pgoff));
	else
		fprintf(s->out, "\t%16" PRIx64 " %s([unknown])\n", (uint64_t)a, tag);
}

static void print_stacks(const struct script *s, const struct gs_hdr *h, __u64 caller)
{
	struct gs_frames u = gs_user_frames(h), k = gs_kernel_frames(h);

	if (s->opts->no_stacks)
		return;
	for (unsigned int i = 0; i < k.n; i++) {
		const struct ksym *sym = ctx__ksym(s->ctx, k.ip[i]);

		char buf[ESC_TEXT_MAX];

		if (sym)
			fprintf(s->out, "\t%16" PRIx64 " %s+0x%" PRIx64 " ([kernel.kallsyms])\n",
				(uint64_t)k.ip[i], esc__text(buf, sizeof(buf), sym->name, SIZE_MAX),
				(uint64_t)(k.ip[i] - sym->addr));
		else
			fprintf(s->out, "\t%16" PRIx64 " [unknown] ([kernel.kallsyms])\n",
				(uint64_t)k.ip[i]);
	}
	for (unsigned int i = 0; i < u.n; i++) {
		/* Taken at a function's first instruction: the caller's frame follows. */
		if (i == 1 && (h->flags & GS_F_ENTRY_STACK) && caller)
			print_user_frame(s, h->tgid, caller, "[caller] ");
		print_user_frame(s, h->tgid, u.ip[i], "");
	}
	if (k.n || u.n)
		fputc('\n', s->out);
}

static const char *futex_op(__u32 op)
{
	switch (op) {
	case 0:
		return "WAIT";
	case 6:
		return "LOCK_PI";
	case 9:
		return "WAIT_BITSET";
	case 11:
		return "WAIT_REQUEUE_PI";
	case 13:
		return "LOCK_PI2";
	default:
		return "?";
	}
}

static void print_calibration(FILE *o, __u16 flags)
{
	if (flags & CU_NF_CAL_AGREE)
		fprintf(o, " handle-name=agrees");
	else if (flags & CU_NF_CAL_DISAGREE)
		fprintf(o, " handle-name=DISAGREES");
}

/* The probed symbol of a CUDA event, or its kind when the probe record is missing. */
static const char *cuda_sym(const struct script *s, __u32 fn, __u32 kind)
{
	const struct ctx_probe *p = ctx__probe(s->ctx, fn);

	return p ? p->sym : trace__cu_kind_name(kind);
}

static void print_kernel_name(FILE *o, const struct script *s, __u64 handle)
{
	bool by_handle, unconfirmed;
	const char *name = ctx__kernel_name(s->ctx, handle, &by_handle, &unconfirmed);

	/* NAME?: learned before an unload that may have given the handle to another kernel. */
	put(o, name ? name : "?", SIZE_MAX);
	fprintf(o, "%s%s", by_handle ? "(handle)" : "", unconfirmed ? "?" : "");
}

static void print_cuda(const struct script *s, const struct cu_event *e)
{
	FILE *o = s->out;
	char ev[128];

	snprintf(ev, sizeof(ev), "cuda:%s", cuda_sym(s, e->fn, e->kind));
	head(s, &e->h, ev);
	switch (e->kind) {
	case CU_K_LAUNCH:
		fprintf(o, " kernel=");
		print_kernel_name(o, s, e->handle);
		fprintf(o, " func=0x%llx grid=(%u,%u,%u) block=(%u,%u,%u) shmem=%u",
			(unsigned long long)e->handle, e->grid[0], e->grid[1], e->grid[2],
			e->block[0], e->block[1], e->block[2], e->shmem);
		break;
	case CU_K_GRAPH_LAUNCH:
		fprintf(o, " graph=0x%llx", (unsigned long long)e->handle);
		break;
	case CU_K_MEMCPY:
	case CU_K_MEMSET:
		fprintf(o, " bytes=%llu", (unsigned long long)e->bytes);
		if (e->kind == CU_K_MEMSET)
			fprintf(o, " dst=0x%llx", (unsigned long long)e->handle);
		break;
	case CU_K_SYNC_EVENT:
	case CU_K_EVENT_RECORD:
	case CU_K_EVENT_QUERY:
	case CU_K_STREAM_WAIT:
		fprintf(o, " event=0x%llx", (unsigned long long)e->handle);
		break;
	case CU_K_ALLOC:
	case CU_K_FREE:
	case CU_K_HOST_REGISTER:
	case CU_K_HOST_UNREGISTER:
		fprintf(o, " ptr=0x%llx bytes=%llu", (unsigned long long)e->handle,
			(unsigned long long)e->bytes);
		break;
	case CU_K_CTX_CREATE:
		fprintf(o, " device=%llu", (unsigned long long)e->aux);
		break;
	case CU_K_DEVICE_THREAD: /* a driver stand-in's thread that stands for the device */
		fprintf(o, " device=%llu", (unsigned long long)e->aux);
		break;
	case CU_K_HOST_FUNC:
		fprintf(o, " fn=0x%llx arg=0x%llx", (unsigned long long)e->handle,
			(unsigned long long)e->aux);
		break;
	case CU_K_UNLOAD: /* the module or library, as the lookups' owner= */
		fprintf(o, " owner=0x%llx", (unsigned long long)e->handle);
		break;
	case CU_K_KERNEL_FUNCTION:
		fprintf(o, " func=0x%llx kernel=0x%llx name=", (unsigned long long)e->handle,
			(unsigned long long)e->aux);
		print_kernel_name(o, s, e->aux);
		print_calibration(o, e->h.flags);
		break;
	}
	if (e->stream || e->kind == CU_K_LAUNCH || e->kind == CU_K_SYNC_STREAM ||
	    e->kind == CU_K_EVENT_RECORD || e->kind == CU_K_STREAM_QUERY ||
	    e->kind == CU_K_STREAM_WAIT || e->kind == CU_K_HOST_FUNC)
		fprintf(o, " stream=0x%llx", (unsigned long long)e->stream);
	if (e->ctx)
		fprintf(o, " ctx=0x%llx", (unsigned long long)e->ctx);
	if (e->h.flags & GS_F_RET) {
		print_dur(o, "dur", e->dur_ns);
		fprintf(o, " ret=%d", e->ret);
	}
	fprintf(o, " caller=0x%llx\n", (unsigned long long)e->caller);
	print_stacks(s, &e->h, e->caller);
}

static void print_cu_name(const struct script *s, const struct cu_name_event *e)
{
	const struct gs_hdr *h = &e->h;
	const char *sym = cuda_sym(s, e->fn, e->kind);
	FILE *o = s->out;
	char ev[128];

	if (h->flags & CU_NF_BY_HANDLE) {
		head(s, h, "cuda:kernel-name");
		fputs(" name=", o);
		put(o, e->name, CU_NAME_LEN);
		fprintf(o, " handle=0x%llx from=handle at=%s%s\n", (unsigned long long)e->handle,
			sym, ctx__handle_names_trusted(s->ctx, e->fn) ? "" : " untrusted");
		return;
	}
	snprintf(ev, sizeof(ev), "cuda:%s", sym);
	head(s, h, ev);
	fputs(" name=", o);
	put(o, e->name, CU_NAME_LEN);
	fprintf(o, " handle=0x%llx owner=0x%llx", (unsigned long long)e->handle,
		(unsigned long long)e->owner);
	print_dur(o, "dur", e->dur_ns);
	fprintf(o, " ret=%d", e->ret);
	print_calibration(o, h->flags);
	fputc('\n', o);
}

static void print_futex(const struct script *s, const struct futex_event *e)
{
	head(s, &e->h, "futex:wait");
	fprintf(s->out, " uaddr=0x%llx op=%s%s val=%u word=0x%x owner=%u",
		(unsigned long long)e->uaddr, futex_op(e->op),
		e->sys == FUTEX_SYS_WAITV ? "(waitv)" :
		e->sys == FUTEX_SYS_WAIT  ? "(futex_wait)" :
					    "",
		e->val, e->word, e->owner);
	print_dur(s->out, "dur", e->dur_ns);
	fprintf(s->out, " ret=%d\n", e->ret);
	print_stacks(s, &e->h, 0);
}

static void print_offcpu(const struct script *s, const struct offcpu_event *e)
{
	const struct gs_hdr *h = &e->h;

	head(s, h, e->state == OFFCPU_BLOCKED ? "sched:offcpu blocked" : "sched:offcpu preempted");
	fprintf(s->out, " state=0x%x%s%s%s", e->prev_state,
		h->flags & GS_F_IN_FUTEX ? " in=futex" : "",
		h->flags & GS_F_RESUME_UNSEEN ? " resume=unseen" : "",
		h->flags & OFFCPU_F_ASLEEP_BEFORE ? " since=watched" : "");
	if (offcpu__fd_name(h->flags))
		fprintf(s->out, " fd=%s", offcpu__fd_name(h->flags));
	print_dur(s->out, "dur", e->dur_ns);
	if (e->waker_tid || e->wake_ts) {
		fputs(" waker=", s->out);
		put(s->out, e->waker_comm, 16);
		fprintf(s->out, "/%u/%u", e->waker_tid, e->waker_tgid);
		/* From a device's interrupt handler (GS_F_WAKE_IRQ), whichever task it stopped. */
		if (h->flags & GS_F_WAKE_IRQ)
			fputs(" from=irq", s->out);
	}
	if (offcpu_next(e, gs_fixed_size(h))) {
		if (!e->next_tid) {
			fputs(" next=idle", s->out);
		} else {
			fputs(" next=", s->out);
			put(s->out, e->next_comm, 16);
			fprintf(s->out, "/%u/%u", e->next_tid, e->next_tgid);
		}
		if (e->last_tid) {
			fputs(" last=", s->out);
			put(s->out, e->last_comm, 16);
			fprintf(s->out, "/%u/%u", e->last_tid, e->last_tgid);
		}
		if (h->flags & OFFCPU_F_THROTTLE_KNOWN)
			fprintf(s->out, " throttled=%s",
				h->flags & OFFCPU_F_THROTTLED ? "yes" : "no");
	}
	if (offcpu_fault(e, gs_fixed_size(h))) {
		/* The file fault it slept after: the file where its mapping is known, the page. */
		const struct ctx_map *m = ctx__map_ino(s->ctx, h->tgid, e->fault_ino);

		fputs(" fault=", s->out);
		if (m && m->path)
			put(s->out, m->path, strlen(m->path));
		else
			fprintf(s->out, "inode:%llu", (unsigned long long)e->fault_ino);
		fprintf(s->out, "+0x%llx", (unsigned long long)e->fault_index << 12);
		print_dur(s->out, "before", h->ts > e->fault_ts ? h->ts - e->fault_ts : 0);
	}
	fprintf(s->out, " cpu=%u->%u\n", h->cpu, e->on_cpu);
	print_stacks(s, h, 0);
}

static void print_event(const struct script *s, const struct gs_hdr *h)
{
	FILE *o = s->out;
	char line[256];

	switch (h->type) {
	case GS_EV_CUDA:
		print_cuda(s, gs_cuda(h));
		break;
	case GS_EV_CU_NAME:
		print_cu_name(s, gs_cu_name(h));
		break;
	case GS_EV_FUTEX:
		print_futex(s, gs_futex(h));
		break;
	case GS_EV_OFFCPU:
		print_offcpu(s, gs_offcpu(h));
		break;
	case GS_EV_SAMPLE: {
		const struct sample_event *e = gs_sample(h);

		head(s, h, h->flags & GS_F_TICK ? "sample:tick" : "sample:timer");
		fprintf(o, " ip=0x%llx%s\n", (unsigned long long)e->ip,
			h->kstack_n ? " kernel" : "");
		print_stacks(s, h, 0);
		break;
	}
	case GS_EV_PROBE: {
		const struct probe_event *e = gs_probe(h);
		const struct ctx_probe *p = ctx__probe(s->ctx, e->id);

		snprintf(line, sizeof(line), "probe:%s", p ? p->sym : "?");
		head(s, h, line);
		print_dur(o, "dur", e->dur_ns);
		fprintf(o, " arg0=0x%llx ret=0x%llx caller=0x%llx\n", (unsigned long long)e->arg0,
			(unsigned long long)e->ret, (unsigned long long)e->caller);
		print_stacks(s, h, 0);
		break;
	}
	case GS_EV_LOCK: {
		const struct lock_event *e = gs_lock(h);

		head(s, h, "lock:hold");
		fprintf(o, " mutex=0x%llx", (unsigned long long)e->mutex);
		print_dur(o, "hold", e->hold_ns);
		print_dur(o, "wait", e->wait_ns);
		fprintf(o, " locked-at=0x%llx unlocked-at=0x%llx\n",
			(unsigned long long)e->lock_caller, (unsigned long long)e->unlock_caller);
		print_stacks(s, h, e->unlock_caller);
		break;
	}
	case GS_EV_FORK: {
		const struct fork_event *e = gs_fork(h);

		head(s, h, e->child_tgid == h->tgid ? "sched:thread_new" : "sched:fork");
		fprintf(o, " child=%u/%u comm=", e->child_tid, e->child_tgid);
		put(o, e->comm, GS_COMM_LEN);
		fputc('\n', o);
		break;
	}
	case GS_EV_EXIT: {
		const struct exit_event *e = gs_exit(h);

		head(s, h, "sched:exit");
		fprintf(o, " code=0x%x%s\n", e->exit_code, e->group_dead ? " group_dead" : "");
		break;
	}
	case GS_EV_COMM:
		head(s, h, "comm");
		fputc(' ', o);
		put(o, gs_comm(h)->comm, GS_COMM_LEN);
		fputc('\n', o);
		break;
	case GS_EV_EXEC:
		head(s, h, "sched:exec");
		fputc(' ', o);
		put(o, gs_exec(h)->filename, PROC_PATH_LEN);
		fputc('\n', o);
		break;
	case GS_EV_MMAP: {
		const struct mmap_event *e = gs_mmap(h);

		head(s, h, "mmap");
		fprintf(o, " 0x%llx+0x%llx off=0x%llx ", (unsigned long long)e->addr,
			(unsigned long long)e->len, (unsigned long long)e->pgoff);
		put(o, e->name, PROC_NAME_LEN);
		fprintf(o, "%s%s\n", (e->flags & MMAP_F_WATCHED) ? " watched" : "",
			(e->flags & MMAP_F_STOPPED) ? " stopped-for-attach" : "");
		break;
	}
	case GS_EV_PYSTACK: {
		__u32 n = 0;
		const struct pystack_event *e = gs_pystack(h, &n);

		head(s, h, "pystack");
		fprintf(o, " of=%s frames=%u%s%s%s\n", trace__event_name(e->of_type), n,
			e->status & PYSTACK_F_TRUNCATED ? " truncated" : "",
			e->status & PYSTACK_F_READ ? " read-failed" : "",
			e->status & PYSTACK_F_GC ? " gc" : "");
		for (__u32 i = 0; i < n && !s->opts->no_stacks; i++)
			fprintf(o, "\t    code=0x%llx+0x%x%s\n", (unsigned long long)e->f[i].code,
				e->f[i].offset,
				e->f[i].flags & PYF_EVAL_FIRST ? " eval-first" : "");
		break;
	}
	default:
		if (!s->opts->no_meta)
			fprintf(o, "# unknown record type %u size %u\n", h->type, h->size);
	}
}

/*
 * Every launch the recorder counted (the last GS_REC_LAUNCHES record), one line per process,
 * probe, stream and kernel: the trace itself holds only the launches that can end a gap. Async
 * memsets, counted the same way and not in the default trace at all, as memset-count lines.
 */
static void print_launch_counts(const struct script *s)
{
	const struct gs_rec_launches *r = launch_counter__record(s->launches);

	if (!r || s->opts->no_meta)
		return;
	for (__u32 i = 0; i < r->n; i++) {
		const struct gs_launch_count *e = &r->e[i];
		const struct ctx_probe *p = ctx__probe(s->ctx, e->k.fn);

		if (e->k.kind == CU_K_MEMSET) {
			fprintf(s->out, "# memset-count pid=%u fn=%s stream=0x%llx n=%llu\n",
				e->k.tgid, p ? p->sym : "?", (unsigned long long)e->k.stream,
				(unsigned long long)e->count);
			continue;
		}
		fprintf(s->out, "# launch-count pid=%u fn=%s kernel=", e->k.tgid, p ? p->sym : "?");
		print_kernel_name(s->out, s, e->k.handle);
		fprintf(s->out, " func=0x%llx stream=0x%llx n=%llu\n",
			(unsigned long long)e->k.handle, (unsigned long long)e->k.stream,
			(unsigned long long)e->count);
	}
}

static void print_record(const struct script *s, const struct gs_hdr *h, int how)
{
	if (how == OREADER_LATE)
		fprintf(s->out, "# late: the next event ended before events printed above\n");
	if (!gs_rec_is_meta(h))
		print_event(s, h);
	else if (!s->opts->no_meta)
		script__print_meta(s->out, h);
}

int cmd_script(int argc, char **argv)
{
	struct script_opts o = { .window_ns = OREADER_WINDOW_NS };
	static const struct argp_child children[] = { { &cli__argp, 0, NULL, 0 }, {} };
	static const struct argp argp = {
		.options = opts,
		.parser = parse_opt,
		.args_doc = "FILE",
		.doc = doc,
		.children = children,
	};
	struct script s = { .opts = &o, .out = stdout };
	struct ordered_reader *r = NULL;
	struct trace_reader *tr;
	const struct gs_hdr *h;
	char err[512];
	int n, ret = 1;

	if (argp_parse(&argp, argc, argv, ARGP_NO_HELP, NULL, &o))
		return 1;
	tr = trace__open(o.file, err, sizeof(err));
	if (!tr) {
		fprintf(stderr, "gapscope: %s\n", err);
		return 1;
	}
	s.ctx = ctx__new();
	s.launches = launch_counter__new();
	if (s.ctx && s.launches && !ctx__prescan(s.ctx, o.file))
		r = oreader__new(tr, s.ctx, o.window_ns);
	if (!r) {
		fprintf(stderr, "gapscope: out of memory\n");
		goto out;
	}
	if (!o.no_meta)
		printf("# trace version=%u arch=%s\n", trace__version(tr),
		       gs_arch__name(trace_flags__arch(trace__stats(tr)->flags)));
	while ((n = oreader__next(r, &h)) > 0) {
		print_record(&s, h, n);
		if (launch_counter__add(s.launches, h)) {
			n = -ENOMEM;
			break;
		}
	}
	print_launch_counts(&s);
	fflush(stdout);
	if (n < 0)
		fprintf(stderr, "gapscope: %s: %s\n", o.file, strerror(-n));
	else
		ret = 0;
	oreader__warn(r, o.file, stderr);
	trace__warn(tr, o.file, stderr);
out:
	oreader__free(r);
	launch_counter__free(s.launches);
	ctx__free(s.ctx);
	trace__close(tr);
	return ret;
}
