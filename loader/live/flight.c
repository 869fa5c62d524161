// SPDX-License-Identifier: GPL-2.0
/*
 * The flight recorder (flight.h): the live analysis (the report's, fed through the pushed
 * ordered reader), the triggers and the dumps they ask for. The ring of chunks and the records
 * every dump needs are flight_ring.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "analysis.h"
#include "clock.h"
#include "debugcache.h"
#include "decode.h"
#include "flight.h"
#include "metrics.h"
#include "outfile.h"
#include "push.h"
#include "reader.h"
#include "symbols.h"

#include "flight_int.h"

void flight__set_clock(struct flight *f, __u64 now)
{
	f->replay = true;
	if (now > f->replay_ns)
		f->replay_ns = now;
}

static void live_step(struct flight *f, const struct gs_hdr *h)
{
	int err = analysis__step(f->a, h);

	if (err) {
		fprintf(stderr, "gapscope: flight: the live analysis stopped: %s\n",
			strerror(-err));
		analysis__free(f->a);
		f->a = NULL;
		f->rd = NULL;
	}
}

/* Every record that is due now goes through the analysis. */
static void live_drain(struct flight *f)
{
	const struct gs_hdr *h;

	while (f->rd && oreader__next(f->rd, &h) > 0)
		live_step(f, h);
}

void flight__live_push(struct flight *f, const struct gs_hdr *h)
{
	const struct gs_hdr *late;
	int rc;

	if (!f->rd)
		return;
	rc = oreader__push(f->rd, h, &late);
	if (rc == OREADER_LATE) {
		live_step(f, late);
	} else if (rc < 0) {
		fprintf(stderr, "gapscope: flight: the live analysis stopped: out of memory\n");
		analysis__free(f->a);
		f->a = NULL;
		f->rd = NULL;
	}
	live_drain(f);
}

/* A dump not written for a limit: counted, said the first time. */
static void suppress(struct flight *f, const char *why, const char *limit)
{
	f->suppressed++;
	if (!f->said_suppressed)
		fprintf(stderr,
			"gapscope: flight: dump of %s not written: %s (counted from now on, not said "
			"again)\n",
			why, limit);
	f->said_suppressed = true;
}

/* A dump of [w0, w1] asked for: queued, or counted where a limit or another window says no. */
static void ask(struct flight *f, __u64 w0, __u64 w1, __u64 start, __u64 end, const char *why)
{
	__u64 now = flight_now(f);
	size_t k = 0;

	for (size_t i = 0; i < f->npending; i++)
		if (f->pending[i].w0 <= start && end <= f->pending[i].w1) {
			f->covered++;
			return;
		}
	for (int i = -1; i < FLIGHT_REPORTS; i++) {
		const struct flight_dump *d = i < 0 ? f->cur : f->reporting[i];

		if (d && d->w0 <= start && end <= d->w1) {
			f->covered++;
			return;
		}
	}
	for (size_t i = 0; i < f->nhour; i++)
		if (f->hour[i] + HOUR_NS > now)
			f->hour[k++] = f->hour[i];
	f->nhour = k;
	if (f->nhour >= f->o.max_per_hour || f->npending == FLIGHT_PENDING ||
	    __atomic_load_n(&f->disk, __ATOMIC_ACQUIRE) >= f->disk_cap) {
		suppress(f, why,
			 f->nhour >= f->o.max_per_hour ? "--dump-max-per-hour reached" :
			 f->npending == FLIGHT_PENDING ? "too many dumps waiting" :
							 "--dump-max-mb reached");
		return;
	}
	f->hour[f->nhour++] = now;
	f->pending[f->npending++] =
		(struct flight_req){ .w0 = w0, .w1 = w1, .asked = now, .start = start };
	snprintf(f->pending[f->npending - 1].reason, sizeof(f->pending[0].reason), "%s", why);
}

static int on_gap(const struct gap *g, void *ctx)
{
	struct flight *f = ctx;
	const struct chain_link *root = g->nchain ? &g->chain[g->nchain - 1] : NULL;
	__u64 before = f->o.before_s * NS, after = f->o.after_s * NS;
	char why[96];

	if (f->m)
		metrics__gap(f->m, g);
	if (f->push)
		push__gap(f->push, g);
	if (g->device < METRICS_DEVICES) {
		typeof(f->idle[0]) *id = &f->idle[g->device];
		__u64 last = id->n ? id->at[(id->n - 1) % FLIGHT_IDLE] : 0;

		if (!id->n || g->end_ns >= last + f->keep_ns / (FLIGHT_IDLE / 2))
			id->at[id->n++ % FLIGHT_IDLE] = g->end_ns;
	}
	if (!f->o.trigger_gap_ms || g->end_ns - g->start_ns < f->o.trigger_gap_ms * 1e6)
		return 0;
	snprintf(why, sizeof(why), "gap of %.3f s on gpu%u (%s %s)",
		 (g->end_ns - g->start_ns) / 1e9, g->device,
		 root ? blame_kind__name(root->kind) : "unexplained",
		 root ? (root->lock		?:
				 root->function ?:
						  "") :
			"");
	ask(f, g->start_ns > before ? g->start_ns - before : 0, g->end_ns + after, g->start_ns,
	    g->end_ns, why);
	return 0;
}

/*
 * Where a dump of a window from w0 starts: at the latest moment before w0 where the live
 * analysis saw each device start work after a gap (the launch that ended it: every stream was
 * drained, and the busy time that follows is seen whole), so that the dump's records find the
 * GPU as the whole recording had it there (no launch outstanding from before, no event recorded
 * before and waited for after). A device with no such moment before w0 in the ring may take its
 * first one after w0, as long as that is not after trig, the start of what triggered the dump
 * (the window starts late but holds its trigger). Where a device has neither, the window starts
 * at w0 (or the ring's oldest record, if later) and the GPU's state there is not known
 * (*clean false): a GPU busy since before the ring, whose first gap is the trigger itself.
 */
static __u64 clean_start(const struct flight *f, __u64 w0, __u64 w1, __u64 trig, bool *clean)
{
	__u64 held = f->head ? f->head->min_end : w0; /* the ring's oldest record */
	__u64 start = ~0ull;

	*clean = true;
	for (int d = 0; d < METRICS_DEVICES; d++) {
		size_t n = f->idle[d].n < FLIGHT_IDLE ? f->idle[d].n : FLIGHT_IDLE;
		__u64 before = 0, after = 0;

		if (!f->idle[d].n)
			continue; /* never seen idle (nor, maybe, at all): see below */
		for (size_t i = 0; i < n; i++) {
			__u64 t = f->idle[d].at[i];

			if (t < held || t > w1)
				continue;
			if (t <= w0 && t > before)
				before = t;
			if (t > w0 && (!after || t < after))
				after = t;
		}
		if (!before && (!after || after > trig)) {
			*clean = false;
			break;
		}
		if ((before ?: after) < start)
			start = before ?: after;
	}
	if (start == ~0ull)
		*clean = false; /* no device was ever seen idle: busy since before the ring */
	if (!*clean)
		start = held > w0 ? held : w0; /* cut: the ring holds no more */
	return start;
}

/* Starts writing the oldest dump asked for (the chunk being filled is closed for it). */
static void start_dump(struct flight *f, const struct flight_req *r)
{
	struct flight_dump *d = calloc(1, sizeof(*d));
	size_t off = 0, n = 0;

	if (!d)
		return;
	/* The dumps before it, those still being written or reported included, took it all. */
	if (__atomic_load_n(&f->disk, __ATOMIC_ACQUIRE) >= f->disk_cap) {
		suppress(f, r->reason, "--dump-max-mb reached");
		free(d);
		return;
	}
	*d = (struct flight_dump){ .w0 = r->w0,
				   .w1 = r->w1,
				   .asked_ns = r->asked,
				   .real_off = f->real_off,
				   .dir = f->o.dir,
				   .dfd = f->dump_dfd,
				   .report = !f->o.no_report,
				   .cut = f->cut,
				   .wake_fd = f->wake_fd,
				   .replay = f->replay,
				   .disk = &f->disk,
				   .disk_cap = f->disk_cap,
				   .cache_seen = &f->cache_seen,
				   .cache_off = &f->cache_off };
	snprintf(d->reason, sizeof(d->reason), "%s", r->reason);
	d->w0 = clean_start(f, r->w0, r->w1, r->start, &d->clean);
	d->late = d->w0 > r->start; /* the ring no longer held the trigger's start */
	d->heads = malloc(f->sticky_bytes ?: 1);
	for (struct flight_chunk *c = f->head; c; c = c->next)
		n++;
	d->chunks = calloc(n ?: 1, sizeof(*d->chunks));
	if (!d->heads || !d->chunks) {
		free(d->heads);
		free(d->chunks);
		free(d);
		return;
	}
	for (size_t i = 0; i < f->nsticky; i++) {
		memcpy(d->heads + off, f->sticky[i], f->sticky[i]->size);
		off += f->sticky[i]->size;
	}
	d->heads_len = off;
	flight_ring__close_tail(f,
				flight_now(f)); /* nothing more goes into a chunk the dump reads */
	for (struct flight_chunk *c = f->head; c; c = c->next) {
		if (c->max_end < d->w0 && !c->gpu_act)
			continue;
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
		d->chunks[d->nchunks++] = c;
	}
	errno = -flight_dump__start(d, &d->thread);
	if (errno) {
		fprintf(stderr, "gapscope: flight: cannot start a dump: %s\n", strerror(errno));
		for (size_t i = 0; i < d->nchunks; i++)
			flight_chunk__put(d->chunks[i]);
		free(d->chunks);
		free(d->heads);
		free(d);
		return;
	}
	f->cur = d;
	/* A replay runs faster than the clock it replays: it waits the milliseconds a dump takes to
	 * write its file (its chunks held meanwhile), which the recording would not have outrun. */
	while (f->replay && !__atomic_load_n(&d->written, __ATOMIC_ACQUIRE))
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
}

void flight__cut(struct flight *f)
{
	if (!f || f->cut)
		return;
	f->cut = true;
	if (f->cur)
		flight_dump__cut(f->cur);
	for (int i = 0; i < FLIGHT_REPORTS; i++)
		if (f->reporting[i])
			flight_dump__cut(f->reporting[i]);
}

bool flight__interrupted(struct flight *f)
{
	struct pollfd p = { .fd = f->stop_fd, .events = POLLIN };

	if (!f->cut && f->stop_fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLIN))
		flight__cut(f);
	return f->cut;
}

static bool dump_done(const struct flight_dump *d)
{
	return !d || __atomic_load_n(&d->done, __ATOMIC_ACQUIRE);
}

/*
 * Until every dump's thread is done (its file written, its report ended), or (any) one of the
 * reports: a report can take long (debuginfod), and SIGINT or SIGTERM meanwhile cuts them all
 * (flight__cut) rather than wait for them; with any, it ends the wait too.
 */
static void wait_dumps(struct flight *f, bool any)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = f->wake_fd, .events = POLLIN },
				       { .fd = f->stop_fd, .events = POLLIN } };
		bool busy = !dump_done(f->cur), one = false;
		eventfd_t n;

		/* Emptied before the dumps are looked at: one done after it wakes the poll. */
		if (f->wake_fd >= 0)
			eventfd_read(f->wake_fd, &n);
		for (int i = 0; i < FLIGHT_REPORTS; i++) {
			busy |= !dump_done(f->reporting[i]);
			one |= f->reporting[i] && dump_done(f->reporting[i]);
		}
		if (!busy || (any && one) || f->wake_fd < 0)
			return; /* without the eventfd: joined, as they end */
		if (flight__interrupted(f)) {
			if (any)
				return;
			p[1].fd = -1;
		}
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
	}
}

__u64 flight__due(const struct flight *f, bool *blocked)
{
	bool slot = false;

	for (int i = 0; i < FLIGHT_REPORTS; i++)
		slot |= !f->reporting[i] || dump_done(f->reporting[i]);
	*blocked = f->cur && !slot;
	return f->npending ? f->pending[0].w1 + FLIGHT_DUE_NS : 0;
}

void flight__wait_report(struct flight *f)
{
	wait_dumps(f, true);
}

/*
 * The dump being written: once its file is, its report goes on beside the next one (it holds no
 * chunk then); the reports that ended are counted. wait: every one of them, to the end.
 */
static void reap_dumps(struct flight *f, bool wait)
{
	if (wait)
		wait_dumps(f, false);
	for (int i = 0; i < FLIGHT_REPORTS; i++) {
		struct flight_dump *d = f->reporting[i];

		if (!d || (!wait && !__atomic_load_n(&d->done, __ATOMIC_ACQUIRE)))
			continue;
		f->reporting[i] = NULL;
		/* Counted once its thread is joined (its bytes and error are the thread's until
		 * then); its line, then freed. */
		flight_dump__join(d, d->thread, &f->n);
		flight_debug_cache_on(f); /* its report may have made the folder */
	}
	for (int i = 0; f->cur && i < FLIGHT_REPORTS; i++)
		if (!f->reporting[i] &&
		    (wait || __atomic_load_n(&f->cur->written, __ATOMIC_ACQUIRE))) {
			f->reporting[i] = f->cur;
			f->cur = NULL;
		}
	if (wait && f->cur)
		reap_dumps(f, true);
}

void flight__tick(struct flight *f)
{
	__u64 now = flight_now(f);

	if (f->rd && now > FLIGHT_LAG_NS) {
		oreader__advance(f->rd, now - FLIGHT_LAG_NS);
		live_drain(f);
	}
	flight_ring__let_go(f, now, 0);
	/* Every 100 ticks (5 s), what the live analysis read of files to name and unwind goes: a
	 * process that maps libtorch would otherwise keep its unwind tables (and DWARF) read in
	 * whole. The next use reads again what it needs; a file that changed meanwhile is said. */
	f->ticks++;
	if (f->a && f->ticks % 100 == 0)
		f->released_kb += analysis__release_pages(f->a);
	if (f->m && f->a && f->ticks % 20 == 0) {
		const struct analysis *a = f->a;
		__u64 busy;

		struct idle_split split;

		for (__u32 d = 0; d < METRICS_DEVICES; d++) {
			if (!analysis__busy_ns(f->a, d, &busy))
				metrics__device(f->m, d, busy, a->end_ns - a->start_ns);
			if (!analysis__split(f->a, d, &busy, &split))
				metrics__split(f->m, d, &split, busy);
		}
		metrics__flight(f->m, f->n.dumps, f->ring_bytes);
	}
	if (f->push)
		push__tick(f->push);
	reap_dumps(f, false);
	if (!f->cur && f->npending && f->pending[0].w1 + FLIGHT_DUE_NS <= now) {
		struct flight_req r = f->pending[0];

		memmove(&f->pending[0], &f->pending[1], --f->npending * sizeof(r));
		start_dump(f, &r);
	}
}

int flight__signal_fd(const struct flight *f)
{
	return f ? f->sfd : -1;
}

void flight__on_signal(struct flight *f)
{
	struct signalfd_siginfo si;
	__u64 now = flight_now(f), before = f->o.before_s * NS, after = f->o.after_s * NS;
	char why[64];

	while (read(f->sfd, &si, sizeof(si)) == sizeof(si)) {
		snprintf(why, sizeof(why), "SIGUSR1 from pid %u", si.ssi_pid);
		ask(f, now > before ? now - before : 0, now + after, now, now, why);
	}
}

/*
 * The debug cache (debugcache.h) under the dump directory, for every dump's report (through
 * --debug-cache) and the live analysis: a compressed debug file is inflated once per build-id,
 * not by every report nor after every let-go. The first report that needs a copy makes the
 * folder: the live analysis uses it from then on (flight_debug_cache_on), or from the start
 * where it is there already; a recording that dumps nothing leaves none. What it holds from
 * before counts as the dumps from before do (not at all); what it grows by is taken from
 * --dump-max-mb (flight_dump.c). One there that is not this user's alone is not used.
 */
static void debug_cache(struct flight *f)
{
	char proc[64];
	struct stat st;

	f->cache_off = true;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->dump_dfd);
	/* The dump directory as opened (it may have been renamed since). */
	if (!realpath(proc, f->cache_path) ||
	    strlen(f->cache_path) + sizeof(FLIGHT_DEBUG_CACHE) + 1 >= sizeof(f->cache_path))
		return;
	strcat(f->cache_path, "/" FLIGHT_DEBUG_CACHE);
	if (!fstatat(f->dump_dfd, FLIGHT_DEBUG_CACHE, &st, AT_SYMLINK_NOFOLLOW) &&
	    (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))))
		return;
	f->cache_off = false;
	f->cache_seen = flight_dump__du(f->dump_dfd, FLIGHT_DEBUG_CACHE);
	flight_debug_cache_on(f);
}

void flight_debug_cache_on(struct flight *f)
{
	struct stat st;

	if (f->cache_live || __atomic_load_n(&f->cache_off, __ATOMIC_ACQUIRE) ||
	    fstatat(f->dump_dfd, FLIGHT_DEBUG_CACHE, &st, AT_SYMLINK_NOFOLLOW))
		return;
	f->cache_live = debugcache__set(f->cache_path);
}

struct flight *flight__new(const struct flight_opts *o, unsigned int ringbuf_mb)
{
	struct flight *f = calloc(1, sizeof(*f));
	/*
	 * Unwinding stack snapshots with libdw's CFI was a third of the recorder's CPU attached to
	 * PyTorch (266 snapshots a second, tests/gpu/flight-h100): the live analysis unwinds
	 * FLIGHT_UNWIND_PER_S a second; the dumps' reports unwind every one of theirs.
	 */
	struct analysis_opts ao = ANALYSIS_OPTS_DEFAULT;
	char err[256];
	struct stat st;
	sigset_t mask;

	if (!f || !(f->hour = calloc(o->max_per_hour + 1, sizeof(*f->hour)))) {
		free(f);
		fprintf(stderr, "gapscope: flight: out of memory\n");
		return NULL;
	}
	f->o = *o;
	pthread_mutex_init(&f->spares.lock, NULL);
	/* The live analysis runs on the recording's thread: it must not wait on a network. */
	symbols__offline();
	f->dump_dfd = -1;
	f->stop_fd = f->wake_fd = -1;
	f->keep_ns = o->seconds * NS;
	f->cap_bytes = (__u64)o->mem_mb << 20;
	f->real_off = clock__real_ns() - clock__mono_ns();
	f->t0_ns = clock__mono_ns();
	f->bound_mb = memlimit__need_mb(ringbuf_mb, o->mem_mb);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	f->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* Blocked by the caller (signals__block, flight__replay): pending, they show here. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	f->stop_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	f->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ao.forget_gaps = true;
	ao.forget_idle_ns = (__u64)(o->seconds * NS);
	ao.unwind_per_s = FLIGHT_UNWIND_PER_S;
	ao.on_gap = on_gap;
	ao.ctx = f;
	f->a = analysis__open(NULL, &ao, err, sizeof(err));
	if (f->sfd < 0 || !f->a) {
		fprintf(stderr, "gapscope: flight: %s\n", f->a ? strerror(errno) : err);
		flight__stop(f);
		return NULL;
	}
	f->rd = analysis__reader(f->a);
	f->dump_dfd = outfile__dir("--dump-dir", o->dir);
	if (f->dump_dfd < 0) {
		flight__stop(f);
		return NULL;
	}
	/* What du says of the dump directory counts its own blocks: so does the budget. */
	f->disk_cap = (__u64)o->max_total_mb << 20;
	if (!fstat(f->dump_dfd, &st))
		f->disk = (__u64)st.st_blocks * 512;
	debug_cache(f);
	if ((o->metrics && !(f->m = metrics__new(o->metrics))) ||
	    ((o->push_url || o->pprof_dir) &&
	     !(f->push = push__new(o->push_url, o->pprof_dir, o->push_interval_s)))) {
		flight__stop(f);
		return NULL;
	}
	fprintf(stderr,
		"gapscope: flight: the last %g s of trace kept in at most %u MiB (the dumps being "
		"written included) and %u MiB for what every dump needs; ",
		o->seconds, o->mem_mb, FLIGHT_STICKY_MAX >> 20);
	if (o->trigger_gap_ms)
		fprintf(stderr, "a gap of %g ms or ", o->trigger_gap_ms);
	fprintf(stderr, "SIGUSR1 writes %g s before and %g s after it into %s\n", o->before_s,
		o->after_s, o->dir);
	/* A replay (no ring buffer) states its bound too: its memory is the same but for it. */
	fprintf(stderr,
		"gapscope: flight: memory: about %llu MiB in all (%d MiB, the ring buffer's "
		"%u MiB, the ring's %u, %d for what every dump needs, %d for the live "
		"analysis)\n",
		f->bound_mb, MEMLIMIT_FLOOR_MB, ringbuf_mb, o->mem_mb, MEMLIMIT_STICKY_MB,
		MEMLIMIT_ANALYSIS_MB);
	return f;
}

/*
 * What being always on cost: the recorder's CPU with its dumps' reports' (processes of their
 * own, reaped by the dumps' threads), against the time since flight__new; its peak RSS, alone
 * and with the largest report's added (read from /proc while it ran: flight_dump.c), an upper
 * bound of the two together where one report runs at a time, against the bound it stated.
 */
static void cost_line(const struct flight *f)
{
	double secs = (clock__mono_ns() - f->t0_ns) / 1e9, cpu;
	struct rusage ru;

	if (f->replay || getrusage(RUSAGE_SELF, &ru))
		return; /* a replay's clock is not the recorder's */
	cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	      ru.ru_stime.tv_usec / 1e6 + f->n.reports_cpu_s;
	fprintf(stderr,
		"gapscope: flight: cost: %.2f s of CPU in %.0f s (%.3f s a minute), %.2f s of it in "
		"%llu dump report(s); peak RSS %.1f MiB, %.1f MiB with the largest report's, "
		"against the stated %llu MiB\n",
		cpu, secs, secs > 0 ? cpu * 60 / secs : 0, f->n.reports_cpu_s,
		(unsigned long long)f->n.reports, ru.ru_maxrss / 1024.0,
		(ru.ru_maxrss + f->n.reports_maxrss_kb) / 1024.0, f->bound_mb);
}

/* What the live analysis let go of from its tables keyed by what the target chose. */
static void tables_line(const struct analysis *a)
{
	__u64 evicted[3] = {};
	static const char *const names[3] = { "futex_waits_evicted", "threads_evicted",
					      "names_evicted" };

	for (size_t i = 0; i < a->loss.count; i++)
		for (size_t k = 0; k < 3; k++)
			if (!strcmp(a->loss.names[i], names[k]))
				evicted[k] = a->loss.n[i];
	fprintf(stderr,
		"gapscope: flight: the live analysis let go of %llu futex word(s) and %llu exited "
		"thread(s) (at most %llu and %llu threads held); before their time: %llu futex "
		"wait(s), %llu exited thread(s), %llu name(s)\n",
		(unsigned long long)a->tables.words_forgotten,
		(unsigned long long)a->tables.threads_forgotten,
		(unsigned long long)a->tables.words_max, (unsigned long long)a->tables.threads_max,
		(unsigned long long)evicted[0], (unsigned long long)evicted[1],
		(unsigned long long)evicted[2]);
}

void flight__stop(struct flight *f)
{
	__u64 now = f ? flight_now(f) : 0;
	char err[256];

	if (!f)
		return;
	if (f->rd) {
		oreader__end(f->rd);
		live_drain(f);
	}
	if (f->a && analysis__finish(f->a, err, sizeof(err)))
		fprintf(stderr, "gapscope: flight: %s\n", err);
	else if (f->a && f->m)
		for (size_t d = 0; d < f->a->ndevices; d++) {
			metrics__device(f->m, f->a->devices[d].id, f->a->devices[d].busy_ns,
					f->a->devices[d].busy_ns + f->a->devices[d].idle_ns);
			metrics__split(f->m, f->a->devices[d].id, &f->a->devices[d].split,
				       f->a->devices[d].busy_ns);
		}
	if (f->a && (f->a->handles.streams_let_go || f->a->handles.stream_calls_refused))
		fprintf(stderr,
			"gapscope: flight: %llu stream handle(s) not followed: %llu let go of (over "
			"the bounds, their process gone or unused for the window), %llu call(s) on a "
			"new one refused; %llu event handle(s) let go of\n",
			(unsigned long long)(f->a->handles.streams_let_go +
					     f->a->handles.stream_calls_refused),
			(unsigned long long)f->a->handles.streams_let_go,
			(unsigned long long)f->a->handles.stream_calls_refused,
			(unsigned long long)f->a->handles.events_let_go);
	if (f->a)
		tables_line(f->a);
	if (f->a && f->a->stacks.over_budget)
		fprintf(stderr,
			"gapscope: flight: %llu stack snapshot(s) left to the dumps' reports: the live "
			"analysis unwinds %u a second (its metrics and gap profiles take their "
			"frame-pointer stacks)\n",
			(unsigned long long)f->a->stacks.over_budget, FLIGHT_UNWIND_PER_S);
	analysis__free(f->a);
	f->a = NULL;
	f->rd = NULL;
	/* The dumps asked for, their windows cut at the end. */
	while (f->cur || f->npending) {
		if (f->cur) {
			reap_dumps(f, true); /* waits for them */
			continue;
		}
		if (f->pending[0].w1 > now)
			f->pending[0].w1 = now;
		start_dump(f, &f->pending[0]);
		memmove(&f->pending[0], &f->pending[1], --f->npending * sizeof(f->pending[0]));
	}
	reap_dumps(f, true);
	if (f->sfd >= 0)
		fprintf(stderr,
			"gapscope: flight: %llu dump(s) written (%.1f MB), %.1f MiB on disk with "
			"their reports (--dump-max-mb %u), %llu report(s) removed for it, %llu not "
			"written for the limits, %llu inside another's window; %llu chunk(s) let go "
			"early for --flight-mb, %llu record(s) dropped, %llu not kept for every dump; the ring "
			"held at most %.1f MiB (dumps being written included)\n",
			(unsigned long long)f->n.dumps, f->n.bytes / 1e6,
			__atomic_load_n(&f->disk, __ATOMIC_ACQUIRE) / 1048576.0, f->o.max_total_mb,
			(unsigned long long)f->n.reports_over,
			(unsigned long long)(f->suppressed + f->n.over),
			(unsigned long long)f->covered, (unsigned long long)f->let_go_early,
			(unsigned long long)f->dropped, (unsigned long long)f->sticky_dropped,
			f->ring_max / 1048576.0);
	if (f->n.reports_cut)
		fprintf(stderr,
			"gapscope: flight: %llu dump report(s) cut at exit (SIGINT or SIGTERM), "
			"their traces whole\n",
			(unsigned long long)f->n.reports_cut);
	if (f->released_kb)
		fprintf(stderr,
			"gapscope: flight: %.1f MiB of files read to name frames and unwind "
			"stacks, let go as it went\n",
			f->released_kb / 1024.0);
	if (f->sfd >= 0)
		cost_line(f);
	push__free(f->push);
	if (f->m)
		metrics__flight(f->m, f->n.dumps, f->ring_bytes);
	metrics__free(f->m, f->o.metrics_linger_s);
	while (f->head) {
		struct flight_chunk *c = f->head;

		f->head = c->next;
		flight_chunk__put(c);
	}
	flight_spares__free(&f->spares);
	for (size_t i = 0; i < f->nsticky; i++)
		free(f->sticky[i]);
	free(f->sticky);
	idmap__free(&f->sticky_name);
	idmap__free(&f->sticky_dev);
	free(f->hour);
	if (f->sfd >= 0)
		close(f->sfd);
	if (f->stop_fd >= 0)
		close(f->stop_fd);
	if (f->wake_fd >= 0)
		close(f->wake_fd);
	if (f->dump_dfd >= 0)
		close(f->dump_dfd);
	free(f);
}
