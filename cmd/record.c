// SPDX-License-Identifier: GPL-2.0
/*
 * gapscope record: attach the probes to a launched command (or a running process), consume the
 * ring buffer and append everything to the trace file. cmd_record() is the lifecycle, top to
 * bottom; each stage is its own file:
 *
 *   options.c    the command line and its checks (record_opts__check)
 *   target.c     the launched (or attached) process, its guardian, its exit status
 *   bpf_setup.c  checks, open, configure, load, tracepoints, teardown
 *   sampler.c    CPU samples: the tick or cpu-clock timers
 *   uprobes.c    uprobes on libcuda, libc and --probe libraries
 *   consume.c    the poll loop and each event on its way to the trace
 *   metadata.c   the recorder's own records (clock, probes, maps, losses, end)
 *   archive.c    --archive: the mapped ELF files, reduced, at the end
 *   pycode.c     Python interpreters found, their code objects named
 *   flight.c     --flight: the last seconds in memory, analysed live, dumped on a trigger
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "record.skel.h"
#include "archive.h"
#include "bpf_setup.h"
#include "cgroup.h"
#include "clock.h"
#include "consume.h"
#include "gapscope_cmd.h"
#include "flight.h"
#include "gpu_feeds.h"
#include "jitmap.h"
#include "links.h"
#include "memlimit.h"
#include "counters.h"
#include "maprecords.h"
#include "metadata.h"
#include "trace_out.h"
#include "options.h"
#include "pycode.h"
#include "sampler.h"
#include "privs.h"
#include "target.h"
#include "tree.h"
#include "trace.h"
#include "uprobes.h"

/* --cgroup: what a process that joins the cgroup during the recording needs, as at the attach. */
struct joiners {
	struct consumer *c;
	struct proc_tree *tree;
	const struct pidns *ns;
	bool ends;	 /* --cgroup alone: the recording ends with the cgroup */
	bool unreadable; /* said so */
	__u64 last_look; /* when a newcomer was last looked for: one seen now joined since */
};

/*
 * Every second: the cgroup's newcomers (in the cgroups below it too), recorded from then on as a
 * process given at the attach is (a container's `exec`, a service's new worker, a pid reused).
 * What they did before the look is not in the trace; a process forked by one already recorded
 * is the BPF side's already. True when the recording ends: the cgroup has no process left, or
 * was removed (--cgroup alone; with -p, the first -p's exit ends it).
 */
static bool follow_joiners(void *ctx)
{
	struct joiners *j = ctx;
	__u64 now = clock__mono_ns();
	long n = proc_tree__look(j->tree);

	if (j->ends && (n == 0 || n == -ENOENT)) {
		fprintf(stderr, "gapscope: the cgroup %s %s: the recording ends\n", j->tree->cgroup,
			n ? "was removed" : "has no process left");
		return true;
	}
	if (n < 0 && !j->unreadable) {
		fprintf(stderr,
			"gapscope: warning: cannot read the cgroup %s any more: %s: processes that "
			"join it are not recorded\n",
			j->tree->cgroup, n == -ENOENT ? "it was removed" : strerror((int)-n));
		j->unreadable = true;
	}
	for (size_t i = 0; i < j->tree->njoined; i++) {
		const struct proc_member *m = &j->tree->joined[i];
		pid_t g = pidns__global(j->ns, m->pid, true);

		if (!g || bpf_setup__watching(j->c->skel, g) || privs__may_trace(m->pid) ||
		    bpf_setup__watch_tgid(j->c->skel, g))
			continue;
		/*
		 * Exited before it was watched: its exit took nothing from the BPF side, so take
		 * it back, or the next process given its pid would be recorded. (One caught in
		 * its exit, past the BPF side's hook but not yet a zombie, for microseconds, is
		 * not seen here.)
		 */
		if (!proc_tree__alive(m)) {
			bpf_setup__unwatch_tgid(j->c->skel, g);
			continue;
		}
		map_records__scan(j->c->maps, j->c->out, m->pid);
		/* Unprobed from when it joined, at the latest since the last look. */
		uprobes__process_joined(j->c->up, m->pid, g, j->last_look ?: now, GS_UNPROBED_JOIN);
		j->c->names_read += meta__threads(j->c->out, m->pid);
		fprintf(stderr, "gapscope: pid %d joined the cgroup: recording it\n", m->pid);
	}
	j->last_look = now;
	return false;
}

/*
 * -p: what the process has mapped and runs already, on disk before we say we record. Returns the
 * thread names written.
 */
static unsigned int attach_running(struct uprobes *up, struct map_records *maps,
				   struct trace_out *out, const struct proc_tree *tree)
{
	unsigned int names = 0;
	pid_t pid = tree->pids[0];

	for (size_t i = 0; i < tree->n; i++) {
		map_records__scan(maps, out, tree->pids[i]);
		uprobes__attach_mapped(up, tree->pids[i]);
	}
	if (!up->cuda_probes)
		fprintf(stderr,
			"gapscope: warning: pid %d has no libcuda mapped (yet): recording its host "
			"side\n",
			pid);
	/* Threads started while the tracepoints were being attached. */
	for (size_t i = 0; i < tree->n; i++)
		names += meta__threads(out, tree->pids[i]);
	/* Everything about the attach is on disk before we say so (tests read it). */
	trace_out__flush(out);
	if (tree->n > 1)
		fprintf(stderr,
			"gapscope: recording pid %d and %zu more process(es) (%zu of them "
			"descendants) (Ctrl-C to stop)\n",
			pid, tree->n - 1, tree->n - tree->given);
	else
		fprintf(stderr, "gapscope: recording pid %d (Ctrl-C to stop)\n", pid);
	return names;
}

/* The end of the summary line: each loss counter that is not 0. */
static void print_losses(const __u64 *by_kind)
{
	for (int i = 0; i < GS_LOSS_MAX; i++)
		if (by_kind[i])
			fprintf(stderr, " %s=%llu", gs_loss_names[i],
				(unsigned long long)by_kind[i]);
	fputc('\n', stderr);
}

/* Probes off, everything still buffered into the trace, the final records, the summary. */
static int finish(struct consumer *c, struct links *links, struct sampler *s, struct target *t,
		  __u64 start_ns)
{
	struct trace_out *out = c->out;
	__u64 by_kind[GS_LOSS_MAX], lost, bytes, chunk, cut;
	int err;

	links__detach_all(links);
	if (bpf_setup__fold_launches(c->skel))
		fprintf(stderr,
			"gapscope: warning: launch counts still cached in threads not read: "
			"the counts are short\n");
	consumer__drain(c);
	jitmap__write_all(out, c->maps, t->pid); /* JITs' perf maps, as the processes left them */
	gpu_feeds__finish(out);
	if (c->maps->archive)
		archive__write_all(c->maps->archive, out); /* the mapped files, reduced */
	sampler__write(s, c->skel, out, t->gpid, clock__mono_ns() - start_ns);
	cgroup__sample(c->cg, out); /* the quota's last word: cpu.stat at the end */
	counters__write(out, c->skel, t->gpid, c->up->attach_failed, uprobes__cuda_libs(c->up));
	meta__end(out, t->gpid, c->events + c->names_read);
	if (t->launched && t->gone)
		meta__exit(out, t->gpid, t->status, &t->ru);
	if (!c->events)
		/* A filter that matched nothing (the pid namespaces are crossed for this) or a
		 * target that never ran: either way the trace holds none of it. */
		fprintf(stderr,
			"gapscope: warning: nothing was recorded from pid %d: it never ran while "
			"recorded, or its events did not reach the recorder\n",
			t->pid);
	lost = counters__losses(c->skel, c->up->attach_failed, by_kind);
	if (c->up->no_symtab && c->up->verbose)
		fprintf(stderr,
			"gapscope: no async runtime in %zu files without a symbol table (chains "
			"through them follow threads; -vv lists them)\n",
			c->up->no_symtab);
	if (!out->tw) { /* --flight alone: no file, the events and losses all the same */
		fprintf(stderr, "gapscope: %llu events, %llu lost",
			(unsigned long long)(c->events + c->names_read), (unsigned long long)lost);
		print_losses(by_kind);
		return 0;
	}
	trace__flush(out->tw);
	bytes = trace__bytes(out->tw);
	err = trace__cut(out->tw, &chunk, &cut);
	if (err) {
		/* One line: what failed, and what the trace lacks for it. */
		fprintf(stderr,
			"gapscope: cannot write %s: %s: trace cut at chunk %llu, %llu events lost, "
			"recording stopped\n",
			out->path, strerror(-err), (unsigned long long)chunk,
			(unsigned long long)(cut + lost));
		trace__finish(out->tw);
		out->tw = NULL;
		return err;
	}
	err = trace__finish(out->tw);
	out->tw = NULL;
	if (err)
		fprintf(stderr, "gapscope: cannot write %s: %s\n", out->path, strerror(-err));
	fprintf(stderr, "gapscope: %llu events, %.1f MB written to %s, %llu lost",
		(unsigned long long)(c->events + c->names_read), bytes / 1e6, out->path,
		(unsigned long long)lost);
	print_losses(by_kind);
	return err;
}

/* The flight recorder listens to the trace's records and the poll loop (a tap, a tick, its fd). */
static void flight_tap(void *f, const void *rec, size_t size)
{
	flight__append(f, rec, size);
}

static void flight_tick(void *f)
{
	flight__tick(f);
}

static void flight_signal(void *f)
{
	flight__on_signal(f);
}

static void flight_listen(struct flight *f, struct trace_out *out, struct consumer *c)
{
	out->tap = f ? flight_tap : NULL;
	out->tap_ctx = f;
	c->extra_fd = flight__signal_fd(f);
	c->on_fd = f ? flight_signal : NULL;
	c->tick = f ? flight_tick : NULL;
	c->listener = f;
}

/* Everything one recording holds, in the order cmd_record() sets it up and cleans it up. */
struct recording {
	struct record_cmd_opts cmd; /* the recording's options and the flight recorder's */
	struct target t;
	struct trace_out out;
	struct map_records maps;
	struct archive archive;
	struct links links;
	struct sampler sampler;
	struct record_bpf *skel;
	struct uprobes up;
	struct pidns ns;
	struct consumer c;
	struct cgroup_watch *cg;
	struct flight *flight;
	sigset_t orig_mask;
	int sfd;
	int cannot_run; /* the exit status of a command that could not run, else 0 */
	bool umulti;
	struct proc_tree tree;
	struct joiners joiners;
};

/*
 * The checks that need no privileges first, each a one-line error: the processes an attach
 * takes, the target, the right to trace them, the kernel's and the memory cgroup's word.
 */
static int check(struct recording *r)
{
	struct record_opts *o = &r->cmd.o;
	const struct flight_opts *fl = &r->cmd.flight;
	char terr[512];
	int err;

	if (!o->cmd) {
		/* An attach takes the processes' descendants, and what they fork from now on. */
		if ((err = proc_tree__collect(&r->tree, o->pids, o->npids, o->cgroup, terr,
					      sizeof(terr)))) {
			fprintf(stderr, "gapscope: %s\n", terr);
			return err;
		}
		o->pid = r->tree.pids[0];
		/*
		 * The whole tree, also with one -p: a DataLoader's workers, a launcher's ranks,
		 * whatever forks later. Each process gets library probes of its own as it joins
		 * (loader/uprobes.h): none in any process outside the recording.
		 */
		o->follow_children = true;
	}
	if ((err = target__check(&r->t, o->cmd, o->pid))) {
		r->cannot_run = o->cmd ? 127 : 0; /* as a shell says a command it cannot run */
		return err;
	}
	for (size_t i = 1; i < r->tree.n; i++)
		if ((err = privs__may_trace(r->tree.pids[i])))
			return err;
	if (!bpf_setup__check() || !memlimit__check(o->ringbuf_mb, fl->seconds ? fl->mem_mb : 0))
		return -EPERM;
	return 0;
}

/* Where the records go: the trace file (not with --flight alone), the flight recorder. */
static int open_outputs(struct recording *r)
{
	const struct record_opts *o = &r->cmd.o;
	const struct flight_opts *fl = &r->cmd.flight;
	int err;

	if ((err = pidns__open(&r->ns)))
		return err;
	r->out = (struct trace_out){ .path = o->output, .ns = &r->ns };
	if ((!fl->seconds || o->output_given) &&
	    !(r->out.tw = trace__create(o->output, o->force))) {
		err = -(errno ?: EIO);
		fprintf(stderr, "gapscope: cannot create %s: %s\n", o->output, strerror(-err));
		return err;
	}
	if (r->out.tw)
		trace__compress(r->out.tw, !o->uncompressed);
	bpf_setup__mount_tracefs(o->verbose > 0);
	err = r->sfd = signals__block(&r->orig_mask, &r->t.pipe_ignored, fl->seconds ? SIGUSR1 : 0);
	if (r->sfd < 0) {
		fprintf(stderr, "gapscope: %s\n", strerror(-err));
		return err;
	}
	if (fl->seconds && !(r->flight = flight__new(fl, o->ringbuf_mb)))
		return -EINVAL;
	if (r->flight)
		flight_listen(r->flight, &r->out, &r->c);
	consumer__load_ksyms(&r->c);
	return 0;
}

/* Open, configure, load; then the target, stopped until the probes are on, watched. */
static int load_and_start(struct recording *r)
{
	const struct record_opts *o = &r->cmd.o;
	int err;

	if (o->cmd && (err = target__start_guardian(&r->t)))
		return err;
	r->c.skel = r->skel = bpf_setup__open_load(o, &r->umulti);
	if (!r->skel)
		return -EINVAL;
	if (!o->no_python)
		r->maps.py = pycode__new(r->skel, &r->out); /* NULL (out of memory): no frames */
	gpu_feeds__start(o);				    /* CUPTI: the target's environment */
	err = o->cmd ? target__launch(&r->t, o->cmd, &r->orig_mask) : target__attach(&r->t, o->pid);
	if (err)
		return err;
	/* The BPF side and the trace know the target by its global id (pidns.h). */
	r->t.gpid = pidns__global(&r->ns, r->t.pid, true);
	if (!r->t.gpid) {
		fprintf(stderr, "gapscope: cannot find pid %d outside this pid namespace\n",
			r->t.pid);
		return -ESRCH;
	}
	if ((err = bpf_setup__watch_tgid(r->skel, r->t.gpid)) || (err = consumer__open(&r->c)))
		return err;
	for (size_t i = 1; i < r->tree.n && !err; i++) {
		pid_t g = pidns__global(&r->ns, r->tree.pids[i], true);

		/* Gone since it was listed: nothing of it to record. */
		if (g)
			err = bpf_setup__watch_tgid(r->skel, g);
	}
	return err;
}

/* Attach: tracepoints, the sampler, the uprobes; each recorded as it goes live. */
static int attach(struct recording *r)
{
	const struct record_opts *o = &r->cmd.o;
	struct trace_out *out = &r->out;
	struct ksyms *ksyms;
	int err;

	r->up = (struct uprobes){
		.skel = r->skel,
		.links = &r->links,
		.out = out,
		.ns = &r->ns,
		.umulti = r->umulti,
		.tgid = r->t.gpid,
		.pid = r->t.pid,
		.lock_holds = o->lock_holds,
		.verbose = o->verbose,
		.keep_lookups = o->keep_lookups,
		.specs = o->probes,
		.nspecs = o->nprobes,
	};
	meta__clock(out, o->freq);
	meta__target(out, r->t.gpid, o->cmd);
	/* A launched child is named like us until it execs. */
	r->c.names_read = meta__threads(out, r->t.pid);
	cgroup__watch(r->cg, r->t.pid, r->t.gpid);
	r->c.cg = r->cg;
	cgroup__sample(r->cg, out);
	uprobes__watch(&r->up);
	/* Tracepoints: for every process, filtered in BPF (they cost others no trap). */
	err = bpf_setup__attach_tracepoints(r->skel, &r->links, out, r->t.gpid, -1,
					    &r->up.attach_failed);
	/* The tick sampler finds the tick by its kernel symbols; the timer needs none. */
	ksyms = o->sampler == GS_SAMPLER_TIMER ? NULL : consumer__ksyms(&r->c);
	if (err || (err = sampler__attach(&r->sampler, r->skel, &r->links, out, ksyms, o->sampler,
					  o->freq, r->t.gpid, -1)))
		return err;
	if (o->cmd && (err = signals__watch_group_kills(r->skel, &r->links)))
		return err;
	if (o->cmd)
		uprobes__attach_predicted(&r->up, r->t.exe);
	else
		r->c.names_read += attach_running(&r->up, &r->maps, out, &r->tree);
	if (r->tree.cgroup) {
		r->joiners = (struct joiners){
			.c = &r->c, .tree = &r->tree, .ns = &r->ns, .ends = !o->npids
		};
		r->c.each_second = follow_joiners;
		r->c.second_ctx = &r->joiners;
		r->c.outlives_target = r->joiners.ends;
	}
	return 0;
}

/* Poll until the target ends (or a signal, or --duration); then write the end. */
static int poll_and_finish(struct recording *r)
{
	const struct record_opts *o = &r->cmd.o;
	__u64 start_ns = clock__mono_ns();
	int err;

	if (o->cmd && (err = target__release(&r->t, o->cmd[0])))
		return err;
	err = consumer__poll(&r->c, &r->t, r->sfd, o->duration, start_ns);
	/* Asked to end: the flight recorder's dumps' reports end now too, not when done. */
	if (r->c.stop_signal)
		flight__cut(r->flight);
	err = finish(&r->c, &r->links, &r->sampler, &r->t, start_ns) ?: err;
	flight__stop(r->flight); /* its dumps written, the ring let go */
	flight_listen(NULL, &r->out, &r->c);
	r->flight = NULL;
	/* The target outlives a --duration: wait for it, as without gapscope. */
	target__wait(&r->t);
	return err;
}

/* In the reverse order of the above; the exit status, the target's where it ran. */
static int clean_up(struct recording *r, int err)
{
	flight__stop(r->flight);
	pycode__free(r->maps.py); /* before map_records__free clears the pointer */
	map_records__free(&r->maps);
	proc_tree__free(&r->tree);
	archive__free(&r->archive);
	uprobes__free(&r->up);
	links__free(&r->links);
	sampler__close(&r->sampler);
	consumer__free(&r->c);
	target__close(&r->t);
	bpf_setup__destroy(r->skel);
	target__stop_guardian(&r->t);
	pidns__close(&r->ns);
	if (r->sfd >= 0)
		close(r->sfd);
	if (r->out.tw) {
		trace__finish(r->out.tw);
		if (err && !r->t.released)
			unlink(r->cmd.o.output);
	}
	return r->cannot_run ?: target__exit_code(&r->t, err, &r->orig_mask);
}

int cmd_record(int argc, char **argv)
{
	static struct cgroup_watch cg; /* 130 KiB of paths: not on the stack */
	/* What clean_up() closes, as target__check() leaves it, for a failure before that. */
	struct recording rec = {
		.t = { .go_fd = -1, .exec_fd = -1, .pidfd = -1, .guardian_sock = -1 },
		.c = { .out = &rec.out, .up = &rec.up, .maps = &rec.maps, .extra_fd = -1 },
		.cg = &cg,
		.sfd = -1,
	};
	struct recording *r = &rec;
	int err;

	if ((err = record_opts__parse(argc, argv, &r->cmd)))
		return clean_up(r, err);
	bpf_setup__libbpf_output(r->cmd.o.verbose >= 2);
	r->maps.archive = r->cmd.o.archive ? &r->archive : NULL;
	if ((err = record_opts__check(&r->cmd)))
		return clean_up(r, err);
	/* --replay: a recorded trace through the flight recorder, no probes (flight_replay.c). */
	if (r->cmd.flight.replay)
		return flight__replay(&r->cmd.flight, r->cmd.flight.replay);
	err = check(r) ?: open_outputs(r) ?: load_and_start(r) ?: attach(r) ?: poll_and_finish(r);
	return clean_up(r, err);
}
