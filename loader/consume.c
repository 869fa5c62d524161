// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "escape.h"
#include "offcpu.h"
#include "proc.h"
#include "sigfwd.h"
#include "record.skel.h"
#include "clock.h"
#include "cgroup.h"
#include "bpf_setup.h"
#include "consume.h"
#include "gpu_feeds.h"
#include "ksyms.h"
#include "probe_spec.h"
#include "links.h"
#include "counters.h"
#include "maprecords.h"
#include "metadata.h"
#include "trace_out.h"
#include "procmaps.h"
#include "pycode.h"
#include "stack.h"
#include "target.h"
#include "trace.h"
#include "uprobes.h"

/*
 * The signals passed on to a launched target: every one a process can catch, but SIGCHLD (the
 * target's own end), SIGPIPE (ignored: a closed stderr must not stop a recording) and the
 * terminal's stop signals (SIGTSTP, SIGTTIN, SIGTTOU: they stop the recorder as before, so that
 * a shell sees the job stop; the terminal sends the target its own). The real-time ones too,
 * but glibc's two below SIGRTMIN. The one list: a mode that keeps a signal for itself takes it
 * out here.
 */
bool signals__passed_on(int sig)
{
	switch (sig) {
	case SIGKILL:
	case SIGSTOP:
	case SIGCHLD:
	case SIGPIPE:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return false;
	}
	return sig > 0 && sig < NSIG && (sig < 32 || (sig >= SIGRTMIN && sig <= SIGRTMAX));
}

/* With -p nothing is passed on: a signal whose default would end the recorder ends the recording. */
static bool ends_recording(int sig)
{
	return sig != SIGCONT && sig != SIGWINCH && sig != SIGURG;
}

int signals__block(sigset_t *orig, bool *pipe_ignored, int kept)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigset_t mask;
	int fd;

	sigaction(SIGPIPE, &ign, &old);
	*pipe_ignored = old.sa_handler == SIG_IGN;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (int sig = 1; sig < NSIG; sig++)
		if (signals__passed_on(sig) && sig != kept)
			sigaddset(&mask, sig);
	sigprocmask(SIG_BLOCK, &mask, orig);
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static void *ksyms_worker(void *arg)
{
	return ksyms__load();
}

void consumer__load_ksyms(struct consumer *c)
{
	c->ksyms_loading = !pthread_create(&c->ksyms_thread, NULL, ksyms_worker, NULL);
	if (!c->ksyms_loading)
		c->ksyms = ksyms__load();
}

struct ksyms *consumer__ksyms(struct consumer *c)
{
	void *k = NULL;

	if (c->ksyms_loading) {
		c->ksyms_loading = false;
		if (!pthread_join(c->ksyms_thread, &k))
			c->ksyms = k;
	}
	return c->ksyms;
}

#define KSYMS_SEEN 4096

/* A GS_REC_KSYM for each kernel function in a stack not named in the trace before. */
static void name_kernel_frames(struct consumer *c, const __u64 *frames, unsigned int n)
{
	if (!n || !consumer__ksyms(c))
		return;
	if (!c->ksyms_seen)
		c->ksyms_seen = calloc(KSYMS_SEEN, sizeof(*c->ksyms_seen));
	for (unsigned int i = 0; i < n; i++) {
		__u64 *seen = c->ksyms_seen ? &c->ksyms_seen[(frames[i] >> 2) % KSYMS_SEEN] : NULL;
		struct ksym *k;

		if (seen && *seen == frames[i])
			continue;
		k = ksyms__find(c->ksyms, frames[i]);
		if (k && seen)
			*seen = frames[i];
		if (!k || k->emitted)
			continue;
		k->emitted = true;
		meta__ksym(c->out, k->addr, k->name);
	}
}

/*
 * The file behind a mapping the event reports: its /proc/PID/map_files/START-END link, which
 * lives as long as the mapping (a dlopen closes its fd at once: with -p the thread is not stopped
 * and the fd is gone by the time the event is read), found by the mapping's inode where the
 * range moved on (merged, split); else the fd's link. The link opens the very file mapped, also
 * across mount namespaces. Its path into PATH, what it shows into SHOWN; false when none.
 */
static bool mapped_file(const struct mmap_event *ev, pid_t pid, char *path, size_t plen,
			char *shown, size_t slen)
{
	char dir[PATH_MAX];
	struct procmaps it;
	struct procmaps_entry e;
	bool found = false;
	struct stat st;
	ssize_t n;

	procmaps__dir(pid, dir, sizeof(dir));
	if (!procmaps__open(&it, pid)) {
		while (!found && procmaps__next(&it, &e))
			found = e.ino == ev->ino && ev->addr >= e.start && ev->addr < e.end;
		procmaps__close(&it);
	}
	if (found)
		snprintf(path, plen, "%s/map_files/%llx-%llx", dir, (unsigned long long)e.start,
			 (unsigned long long)e.end);
	/* Following a map_files link needs CAP_SYS_ADMIN (CAP_BPF and CAP_PERFMON: the fd). */
	if (!found || stat(path, &st) || (n = readlink(path, shown, slen - 1)) <= 0) {
		snprintf(path, plen, "%s/fd/%d", dir, ev->fd);
		n = readlink(path, shown, slen - 1);
	}
	if (n <= 0)
		return false;
	shown[n] = 0;
	return true;
}

/* A watched library mapped: attach to it (the mapping thread waits stopped if asked to). */
static void on_mmap(struct consumer *c, const struct mmap_event *ev)
{
	char path[PATH_MAX + 64], shown[PATH_MAX], said[ESC_TEXT_MAX];
	__u64 had = c->up->links_made;
	pid_t pid = pidns__local(c->out->ns, ev->h.tgid, true); /* for /proc and kill(2) */

	if (ev->flags & MMAP_F_WATCHED) {
		if (pid && mapped_file(ev, pid, path, sizeof(path), shown, sizeof(shown))) {
			uprobes__attach_file(c->up, pid, ev->h.tgid, path, shown, ev->dev, ev->ino);
			/* Unstopped (-p), its calls from the mmap to this line were not seen: the
			 * window is in the trace, as every process's that ran unprobed. */
			if (c->up->links_made > had && !(ev->flags & MMAP_F_STOPPED)) {
				meta__unprobed(c->out, ev->h.tgid, ev->h.ts, GS_UNPROBED_DLOPEN,
					       c->up->links_made - had);
				if (c->up->verbose || path__is_libcuda(shown) ||
				    path__is_libc(shown))
					fprintf(stderr,
						"gapscope: pid %u mapped %s: probes attached\n",
						pid,
						esc__text(said, sizeof(said), shown, SIZE_MAX));
			}
		} else if (ev->flags & MMAP_F_STOPPED) {
			fprintf(stderr, "gapscope: warning: cannot attach to %s of pid %u: %s\n",
				esc__text(said, sizeof(said), ev->name,
					  strnlen(ev->name, sizeof(ev->name))),
				ev->h.tgid, strerror(errno));
		}
		if (ev->flags & MMAP_F_STOPPED)
			kill(pid > 0 ? pid : (pid_t)ev->h.tgid, SIGCONT);
	}
	if (pid > 0)
		map_records__scan(c->maps, c->out, pid);
}

/*
 * A new process. It has its parent's mappings, which no mmap event will tell: its own map records,
 * as at an exec (a DataLoader worker's stacks). Followed (the BPF side took it into the
 * recording), it gets its own probes: it inherited its parent's breakpoints, but the kernel's
 * filter lets none of its calls through to BPF until then (GS_REC_UNPROBED: how long).
 */
static void on_fork(struct consumer *c, const struct fork_event *ev)
{
	pid_t pid = pidns__local(c->out->ns, ev->child_tgid, true);

	map_records__scan(c->maps, c->out, pid);
	if (pid && bpf_setup__watching(c->skel, ev->child_tgid))
		uprobes__process_joined(c->up, pid, ev->child_tgid, ev->h.ts, GS_UNPROBED_FORK);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	struct gs_hdr *h = data;
	size_t n;

	if (size < sizeof(*h) || h->size > size)
		return 0;
	c->events++;
	switch (h->type) {
	case GS_EV_MMAP:
		if (h->size >= sizeof(struct mmap_event))
			on_mmap(c, data);
		break;
	case GS_EV_OFFCPU:
		if (offcpu_fault(data, h->size) && ((struct offcpu_event *)data)->fault_ino)
			map_records__file_fault(c->maps, c->out,
						pidns__local(c->out->ns, h->tgid, true),
						((struct offcpu_event *)data)->fault_ino);
		break;
	case GS_EV_EXEC:
		if (c->maps->py)
			pycode__exec(c->maps->py, h->tgid);
		map_records__scan(c->maps, c->out, pidns__local(c->out->ns, h->tgid, true));
		if (h->size >= sizeof(struct exec_event) &&
		    ((struct exec_event *)data)->old_tid != h->tgid)
			uprobes__process_joined(c->up, pidns__local(c->out->ns, h->tgid, true),
						h->tgid, h->ts, GS_UNPROBED_EXEC);
		break;
	case GS_EV_FORK:
		if (h->size >= sizeof(struct fork_event) &&
		    ((struct fork_event *)data)->child_tgid != h->tgid)
			on_fork(c, data);
		break;
	case GS_EV_EXIT:
		if (h->size >= sizeof(struct exit_event) && ((struct exit_event *)data)->group_dead)
			uprobes__process_gone(c->up, h->tgid);
		break;
	}
	/* A host function queued: probed from now on, its calls the driver's completion news. */
	if (h->type == GS_EV_CUDA && h->size >= sizeof(struct cu_event) &&
	    ((struct cu_event *)data)->kind == CU_K_HOST_FUNC && c->up)
		uprobes__host_fn(c->up, h->tgid, pidns__local(c->out->ns, h->tgid, true),
				 ((struct cu_event *)data)->handle);
	if (h->type == GS_EV_PYSTACK) {
		trace_out__append(c->out, data, h->size);
		if (c->maps->py)
			pycode__event(c->maps->py, h); /* its code objects named, after it */
		return 0;
	}
	if (!(h->flags & GS_F_STACK)) {
		trace_out__append(c->out, data, h->size);
		return 0;
	}
	n = stack__compact(h, c->buf, STACK_COMPACT_MAX);
	if (n) {
		name_kernel_frames(c, stack__kernel_frames((void *)c->buf), h->kstack_n);
		trace_out__append(c->out, c->buf, n);
	}
	return 0;
}

int consumer__open(struct consumer *c)
{
	c->buf = malloc(STACK_COMPACT_MAX);
	if (!c->buf)
		return -ENOMEM;
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_event, c, NULL);
	if (!c->rb) {
		int err = -errno;

		fprintf(stderr, "gapscope: cannot open the ring buffer: %s\n", strerror(errno));
		return err;
	}
	return 0;
}

void consumer__drain(struct consumer *c)
{
	ring_buffer__consume(c->rb);
}

static __u64 losses_so_far(struct consumer *c)
{
	__u64 kinds[GS_LOSS_MAX];

	return counters__losses(c->skel, c->up->attach_failed, kinds);
}

/* While recording, on a terminal only: one line, rewritten every second. */
static void status_line(struct consumer *c, struct target *t, __u64 elapsed_ns, double rate)
{
	fprintf(stderr,
		"\rgapscope: recording %s%d: %.0f s, %.1fk events/s, %llu events, %llu lost\033[K",
		t->launched ? "" : "pid ", t->pid, elapsed_ns / 1e9, rate / 1e3,
		(unsigned long long)c->events, (unsigned long long)losses_so_far(c));
	fflush(stderr);
}

int signals__watch_group_kills(struct record_bpf *skel, struct links *links)
{
	struct bpf_link *l = bpf_program__attach(skel->progs.sigfwd_kill);
	int err = l ? links__add(links, l) : -errno;

	if (err)
		fprintf(stderr, "gapscope: cannot attach to kill(2): %s\n", strerror(-err));
	return err;
}

/*
 * Whether a signal the recorder got was sent to a process group that holds the target, which then
 * got its own copy (sigfwd.bpf.c noted the sender's kill(2) before the signal went out).
 */
static bool sent_to_target_too(struct consumer *c, struct target *t,
			       const struct signalfd_siginfo *si)
{
	int fd = bpf_map__fd(c->skel->maps.group_kills);
	__u32 sender = si->ssi_pid;
	struct group_kill k;
	pid_t pgid;

	if (si->ssi_code != SI_USER || bpf_map_lookup_elem(fd, &sender, &k))
		return false;
	bpf_map_delete_elem(fd, &sender);
	if (k.sig != si->ssi_signo)
		return false;
	if (k.pid == -1)
		return true; /* every process the sender may signal: the target too */
	pgid = getpgid(t->pid);
	return pgid > 0 && (k.pid ? -k.pid : k.pgid) == pgid;
}

/* The signals that arrived: whether the recording ends. */
static bool on_signals(struct consumer *c, int sfd, struct target *t)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			stop |= target__reap(t);
			continue;
		}
		if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM)
			c->stop_signal = si.ssi_signo;
		if (!t->launched) {
			/* -p: a signal to the recorder ends the recording only. */
			stop |= ends_recording(si.ssi_signo);
			continue;
		}
		/*
		 * A terminal's Ctrl-C reaches the whole foreground process group, the target
		 * included (si_code SI_KERNEL): it needs no help, nor does a kill(2) of the group.
		 * A signal sent to the recorder alone (kill) is passed on, so the target sees what
		 * it would see without gapscope: once.
		 */
		if (si.ssi_code != SI_KERNEL && !sent_to_target_too(c, t, &si))
			kill(t->pid, si.ssi_signo);
	}
	return stop;
}

int consumer__poll(struct consumer *c, struct target *t, int sfd, double duration, __u64 start_ns)
{
	/*
	 * Every 50 ms: consume the ring buffer (the BPF side does not wake us per event, see
	 * submit()); every 200 ms a chunk goes to the file and every second the loss counters, so
	 * a killed recorder loses little.
	 */
	struct itimerspec its = { { 0, 50000000 }, { 0, 50000000 } };
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK), err = 0;
	struct pollfd pfd[5] = {
		{ .fd = ring_buffer__epoll_fd(c->rb), .events = POLLIN },
		{ .fd = sfd, .events = POLLIN },
		{ .fd = tfd, .events = POLLIN },
		{ .fd = c->outlives_target ? -1 : target__exit_fd(t), .events = POLLIN },
		{ .fd = c->extra_fd, .events = POLLIN }, /* the listener's (--flight: SIGUSR1) */
	};
	bool stop = false, tty = isatty(STDERR_FILENO);
	__u64 last_events = 0, last_ns = start_ns;
	unsigned int ticks = 0;

	if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL)) {
		err = -errno;
		fprintf(stderr, "gapscope: %s\n", strerror(errno));
		goto out;
	}
	while (!stop) {
		__u64 n;

		if (poll(pfd, 5, -1) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		if (pfd[0].revents)
			consumer__drain(c);
		if (pfd[1].revents)
			stop |= on_signals(c, sfd, t);
		if (pfd[2].revents && read(tfd, &n, sizeof(n)) > 0) {
			consumer__drain(c);
			gpu_feeds__tick(c->out);
			uprobes__retire_lookups(c->up);
			if (c->maps->py)
				pycode__tick(c->maps->py);
			if (c->tick)
				c->tick(c->listener);
			ticks++;
			if (ticks % 4 == 0)
				trace_out__flush(c->out);
			if (ticks % 20 == 0) {
				counters__write(c->out, c->skel, t->gpid, c->up->attach_failed,
						uprobes__cuda_libs(c->up));
				cgroup__sample(c->cg, c->out);
				if (c->each_second && c->each_second(c->second_ctx))
					stop = true;
			}
			if (tty && ticks % 20 == 0) {
				__u64 now = clock__mono_ns();

				status_line(c, t, now - start_ns,
					    (c->events - last_events) * 1e9 / (now - last_ns));
				last_events = c->events;
				last_ns = now;
			}
		}
		if (pfd[2].revents && duration && clock__mono_ns() - start_ns >= duration * 1e9)
			stop = true;
		if (pfd[4].fd >= 0 && pfd[4].revents && c->on_fd)
			c->on_fd(c->listener);
		if (pfd[3].fd >= 0 && pfd[3].revents) {
			t->gone = true;
			stop = true;
		}
		/* The trace cannot take more (a full disk): let the target go on unrecorded. */
		if (trace_out__failed(c->out))
			stop = true;
	}
	if (tty && ticks >= 20)
		fputs("\r\033[K", stderr); /* the status line gives way to the summary */
out:
	if (tfd >= 0)
		close(tfd);
	return err;
}

void consumer__free(struct consumer *c)
{
	ring_buffer__free(c->rb);
	c->rb = NULL;
	ksyms__free(consumer__ksyms(c));
	c->ksyms = NULL;
	free(c->ksyms_seen);
	c->ksyms_seen = NULL;
	free(c->buf);
	c->buf = NULL;
}
