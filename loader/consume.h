/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ring-buffer consumption: the poll loop of a recording (ring buffer, signals, a 50 ms timer,
 * the end of the target), and what each event needs on its way to the trace: stacks compacted,
 * their kernel functions named once, a watched library mapped late attached, mappings recorded.
 */
#ifndef GAPSCOPE_CONSUME_H
#define GAPSCOPE_CONSUME_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <linux/types.h>

struct ksyms;
struct links;
struct map_records;
struct record_bpf;
struct ring_buffer;
struct target;
struct trace_out;
struct uprobes;

struct consumer {
	/* Set by the caller. */
	struct record_bpf *skel;
	struct trace_out *out;
	struct uprobes *up;
	struct map_records *maps;
	/*
	 * A listener of the poll loop (record --flight's), or none (fd -1, NULL callbacks):
	 * on_fd when fd is readable (SIGUSR1's signalfd), tick every 50 ms.
	 */
	int extra_fd;
	void (*on_fd)(void *ctx);
	void (*tick)(void *ctx);
	void *listener;
	struct cgroup_watch *cg; /* the target's cgroup, sampled every second (cgroup.h) */
	/*
	 * Called every second on the poll loop (record.c: --cgroup's newcomers); NULL: none. True
	 * ends the recording (--cgroup alone: the cgroup has no process left, or was removed).
	 */
	bool (*each_second)(void *ctx);
	void *second_ctx;
	/* --cgroup alone: the target (its first member) may exit, the recording goes on. */
	bool outlives_target;
	/* Set by consumer__poll: SIGINT or SIGTERM came (the last of them), 0: neither. */
	int stop_signal;

	struct ring_buffer *rb;
	unsigned char *buf; /* one event, stack compacted */
	struct ksyms *ksyms;
	pthread_t ksyms_thread; /* reading them, while ksyms_loading */
	bool ksyms_loading;
	/* Kernel return addresses whose function is named in the trace already, direct-mapped: a
	 * binary search of kallsyms for every frame of every kernel stack was 5.5% of the flight
	 * recorder's CPU in make bench's soak. NULL: not allocated (each is searched). */
	__u64 *ksyms_seen;
	__u64 events;
	/* Thread names the recorder read from /proc itself: events of the trace as much as those
	 * from the ring buffer, and counted with them in what it says it wrote. */
	__u64 names_read;
};

/* Whether a signal the recorder receives is passed on to a launched target (consume.c: which). */
bool signals__passed_on(int sig);
/*
 * Ignores SIGPIPE, blocks SIGCHLD and every signal passed on, and returns a signalfd for them,
 * the mask before in ORIG and whether SIGPIPE was ignored before in PIPE_IGNORED (the launched
 * target gets both back). KEPT (0: none) is a signal the recorder keeps for itself and does not
 * pass on: SIGUSR1 in flight mode, which flight.c reads. -errno.
 */
int signals__block(sigset_t *orig, bool *pipe_ignored, int kept);
/*
 * Launch mode: notes every kill(2) of a process group from now on, so that a signal sent to the
 * group that holds both the recorder and its target is not passed on to the target a second
 * time. 0 or -errno, said why.
 */
int signals__watch_group_kills(struct record_bpf *skel, struct links *links);

/*
 * Starts reading the kernel's symbols beside the BPF load (~50 ms, off the path to
 * "recording"), not on the first kernel stack: that would stall the consumer while a thread may
 * be stopped for a late attach. Call with the signals blocked, so that the thread never takes one.
 */
void consumer__load_ksyms(struct consumer *c);
/* The kernel's symbols (waiting for them), or NULL when unreadable. */
struct ksyms *consumer__ksyms(struct consumer *c);
/* Opens the ring buffer of C->skel. 0 or -errno, said why. */
int consumer__open(struct consumer *c);
/* Consumes everything the ring buffer holds now. */
void consumer__drain(struct consumer *c);
/*
 * Until the target ends (unless outlives_target), each_second says so, a signal ends a -p
 * recording, DURATION seconds (0: no limit) pass from START_NS, or the trace cannot be written
 * (a full disk): consumes the ring buffer, flushes a chunk every 200 ms and the loss counters
 * every second, and passes signals on to a launched target. 0 or -errno.
 */
int consumer__poll(struct consumer *c, struct target *t, int sfd, double duration, __u64 start_ns);
void consumer__free(struct consumer *c);

#endif
