// SPDX-License-Identifier: GPL-2.0
/*
 * One flight-recorder dump (flight.h), off the recording's thread: the records every dump needs,
 * then those of the ring's chunks that end inside the window (an interval that reaches into it
 * is whole: it is written at its end, stamped with its start), then an end record, as an
 * ordinary trace file; then `gapscope report` of it, as a process of its own (its memory is not
 * the recorder's), beside it. The chunks are the ring's own, held by a reference each until the
 * file is written: the recording goes on appending and letting go meanwhile.
 *
 * --dump-max-mb bounds what the dumps leave on disk, as du counts it: each trace and each report
 * is measured once written and taken from the recording's budget at once (by the thread that
 * wrote it, not when the dump is joined later); one that does not fit is removed and counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda.h"
#include "clock.h"
#include "debugcache.h"
#include "decode.h"
#include "flight.h"
#include "trace.h"

void flight_chunk__put(struct flight_chunk *c)
{
	if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_sub_fetch(c->alive, c->cap, __ATOMIC_ACQ_REL);
	if (c->spares && c->cap == FLIGHT_CHUNK) {
		pthread_mutex_lock(&c->spares->lock);
		if (c->spares->n < FLIGHT_SPARES) {
			c->spares->data[c->spares->n++] = c->data;
			c->data = NULL;
		}
		pthread_mutex_unlock(&c->spares->lock);
	}
	if (c->data)
		munmap(c->data, c->cap);
	free(c);
}

unsigned char *flight_spares__take(struct flight_spares *s)
{
	unsigned char *p = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->n)
		p = s->data[--s->n];
	pthread_mutex_unlock(&s->lock);
	return p;
}

void flight_spares__free(struct flight_spares *s)
{
	unsigned char *p;

	while ((p = flight_spares__take(s)))
		munmap(p, FLIGHT_CHUNK);
}

/* A record every dump needs, stamped at the window's start when it is an event of before. */
static int append_head(struct trace_writer *w, struct gs_hdr *h, __u64 w0)
{
	if (h->type < GS_REC_CLOCK && h->ts < w0) {
		h->ts = w0;
		if (h->type == GS_EV_CU_NAME && h->size >= sizeof(struct cu_name_event))
			((struct cu_name_event *)h)->dur_ns = 0;
	}
	return trace__append(w, h, h->size);
}

/* Whether a record of the ring belongs to the window. */
static bool in_window(const struct flight_dump *d, const struct gs_hdr *h)
{
	__u64 t;

	if (flight__sticky(h) || h->type == GS_REC_END)
		return false; /* at the head already; the dump ends with its own */
	t = gs_rec_untimed(h) ? h->ts : gs_rec_end(h);
	return t >= d->w0 && t <= d->w1;
}

/* Takes n bytes of --dump-max-mb's budget, false where they would pass it. */
static bool disk_take(struct flight_dump *d, __u64 n)
{
	__u64 cur = __atomic_load_n(d->disk, __ATOMIC_ACQUIRE);

	do {
		if (cur + n > d->disk_cap)
			return false;
	} while (!__atomic_compare_exchange_n(d->disk, &cur, cur + n, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return true;
}

#define TREE_MAX_DEPTH 8

/*
 * The bytes on disk of name under dfd and, a directory, of everything in it (du's count: blocks);
 * never through a link. rm: removes it all too. Names are opened relative to the fds, as the
 * report made them (outfile.h).
 */
static __u64 tree_walk(int dfd, const char *name, bool rm, int depth)
{
	struct dirent *de;
	struct stat st;
	__u64 n = 0;
	DIR *dir;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	n = (__u64)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode)) {
		if (rm)
			unlinkat(dfd, name, 0);
		return n;
	}
	/* A report is two levels deep; deeper, someone else made it, and it is not walked. */
	if (depth >= TREE_MAX_DEPTH)
		return n;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return n;
	}
	while ((de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n += tree_walk(dirfd(dir), de->d_name, rm, depth + 1);
	closedir(dir);
	if (rm)
		unlinkat(dfd, name, AT_REMOVEDIR);
	return n;
}

__u64 flight_dump__du(int dfd, const char *name)
{
	return tree_walk(dfd, name, false, 0);
}

static int write_trace(struct flight_dump *d)
{
	struct trace_writer *w = trace__create_at(d->dfd, d->name, false);
	struct gs_rec_end end = {};
	bool gpu_act = false;
	struct stat st;
	int err = 0;

	if (!w)
		return -errno;
	for (size_t off = 0; !err && off + sizeof(struct gs_hdr) <= d->heads_len;) {
		struct gs_hdr *h = (void *)(d->heads + off);

		err = append_head(w, h, d->w0);
		off += h->size;
	}
	for (size_t i = 0; !err && i < d->nchunks; i++) {
		const struct flight_chunk *c = d->chunks[i];

		for (size_t off = 0; !err && off + sizeof(struct gs_hdr) <= c->len;) {
			const struct gs_hdr *h = (const void *)(c->data + off);

			off += h->size;
			if (!in_window(d, h))
				continue;
			gpu_act |= h->type == GS_REC_GPU_ACT;
			err = trace__append(w, h, h->size);
		}
	}
	end.h.type = GS_REC_END;
	end.h.size = sizeof(end);
	end.h.ts = d->w1;
	end.records = trace__records(w);
	end.events = end.records;
	if (!err)
		err = trace__append(w, &end, sizeof(end));
	if (!err && gpu_act)
		err = trace__set_flags(w, TRACE_F_GPU_ACT);
	d->records = trace__records(w);
	err = trace__finish(w) ?: err;
	/* Its size on disk: the last chunk is compressed by trace__finish. */
	if (!err && !fstatat(d->dfd, d->name, &st, AT_SYMLINK_NOFOLLOW))
		d->bytes = st.st_size;
	/* Kept only where it fits in what the dumps may take, with what is taken already. */
	if (!err && !disk_take(d, (__u64)st.st_blocks * 512)) {
		d->over = true;
		err = -EFBIG;
	}
	if (err)
		unlinkat(d->dfd, d->name, 0);
	return err;
}

/* The peak RSS of a running process (VmHWM, KiB), 0 where it has none (gone, or a zombie). */
static long vm_hwm(pid_t pid)
{
	char path[64], line[128];
	long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * The report's own peak RSS, read every REPORT_HWM_MS while it runs, until it ends (not reaped).
 * Not its rusage's ru_maxrss: exec keeps the larger of the new program's peak and that of the
 * memory it replaced, which for posix_spawn's vfork is the recorder's own. The last reading may
 * miss what the report took in its last REPORT_HWM_MS.
 */
#define REPORT_HWM_MS 100
static void report_peak(struct flight_dump *d, pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long kb;
	int rc;

	if (fd < 0)
		return;
	for (;;) {
		kb = vm_hwm(pid);
		if (kb > d->report_maxrss_kb)
			d->report_maxrss_kb = kb;
		rc = poll(&p, 1, REPORT_HWM_MS);
		if (rc > 0 || (rc < 0 && errno != EINTR))
			break;
	}
	close(fd);
}

/* Guards every dump's report_pid and cut, between its thread and the recorder's. */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * gapscope report NAME -o NAME.report, at a lower priority; its exit status. The recorder's own
 * binary, through /proc/self/exe: also after the file was replaced (an upgrade while recording).
 * It runs in the dump directory the recorder took once (fchdir to its fd) and is given names
 * relative to it: a dump directory renamed away and a link planted at its path change nothing
 * (report in turn makes NAME.report and opens it without following links, see outfile.h).
 * It runs in a process group of its own, with no signal blocked: a terminal's Ctrl-C is the
 * recorder's to act on, and the recorder ends it with SIGTERM where the recording is cut
 * (flight_dump__cut). -ECANCELED: cut before it started, or ended by that.
 */
static int run_report(struct flight_dump *d)
{
	char dir[sizeof(d->name) + 8];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t sa;
	sigset_t none, dfl;
	struct rusage ru = {};
	pid_t pid;
	int status, err;
	char *argv[] = { "gapscope", "report", d->name, "-o", dir, NULL, NULL, NULL };

	snprintf(dir, sizeof(dir), "%s.report", d->name);
	pthread_mutex_lock(&report_lock);
	if (d->cache_off && !*d->cache_off) {
		argv[5] = "--debug-cache";
		argv[6] = FLIGHT_DEBUG_CACHE;
	}
	pthread_mutex_unlock(&report_lock);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	posix_spawnattr_init(&sa);
	posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					      POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setsigmask(&sa, &none);
	posix_spawnattr_setsigdefault(&sa, &dfl);
	posix_spawnattr_setpgroup(&sa, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addfchdir_np(&fa, d->dfd);
	pthread_mutex_lock(&report_lock);
	err = d->cut ? ECANCELED : posix_spawn(&pid, "/proc/self/exe", &fa, &sa, argv, environ);
	if (!err)
		d->report_pid = pid;
	pthread_mutex_unlock(&report_lock);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&sa);
	if (err)
		return -err;
	setpriority(PRIO_PROCESS, pid, 10);
	/* Ended, not reaped yet: until then the recorder may signal it (its pid is not reused). */
	report_peak(d, pid);
	while (waitid(P_PID, pid, &(siginfo_t){}, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&report_lock);
	d->report_pid = 0;
	pthread_mutex_unlock(&report_lock);
	/* Its cost is the recorder's too: counted in the recorder's line (flight__stop). */
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return -errno;
	d->report_cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
			  ru.ru_stime.tv_usec / 1e6;
	if (d->cut && WIFSIGNALED(status))
		return -ECANCELED;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

/*
 * What the debug cache grew by since last seen (the report's copies, or the live analysis's) is
 * taken from --dump-max-mb; where it does not fit, the cache is removed and given up: the next
 * reports inflate the files again rather than make copies that would not be kept.
 */
#define CACHE_GIVEN_UP (~0ull)
static void cache_take(struct flight_dump *d)
{
	__u64 n;

	if (!d->cache_seen)
		return;
	pthread_mutex_lock(&report_lock);
	n = tree_walk(d->dfd, FLIGHT_DEBUG_CACHE, false, 0);
	if (*d->cache_off) {
		/* Given up (not one never used): a report started before made copies again. */
		if (n && *d->cache_seen == CACHE_GIVEN_UP)
			tree_walk(d->dfd, FLIGHT_DEBUG_CACHE, true, 0);
	} else if (n > *d->cache_seen && !disk_take(d, n - *d->cache_seen)) {
		tree_walk(d->dfd, FLIGHT_DEBUG_CACHE, true, 0);
		*d->cache_seen = CACHE_GIVEN_UP;
		__atomic_store_n(d->cache_off, true, __ATOMIC_RELEASE);
		debugcache__set(NULL);
		d->cache_over = true;
	} else if (n > *d->cache_seen) {
		*d->cache_seen = n;
	}
	pthread_mutex_unlock(&report_lock);
}

void flight_dump__cut(struct flight_dump *d)
{
	pthread_mutex_lock(&report_lock);
	d->cut = true;
	if (d->report_pid > 0)
		kill(-d->report_pid, SIGTERM);
	pthread_mutex_unlock(&report_lock);
}

static void *dump_thread(void *arg)
{
	struct flight_dump *d = arg;
	__u64 real = d->asked_ns + d->real_off, t0 = clock__mono_ns(), t1;
	time_t sec = real / 1000000000ull;
	char stamp[32];
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(d->name, sizeof(d->name), "gapscope-flight-%s.%03uZ.gsc", stamp,
		 (unsigned int)(real / 1000000 % 1000));
	snprintf(d->path, sizeof(d->path), "%s/%s", d->dir, d->name);
	d->err = write_trace(d);
	t1 = clock__mono_ns();
	d->write_ms = (t1 - t0) / 1e6;
	d->after_ms = !d->replay && t1 > d->w1 ? (t1 - d->w1) / 1e6 : 0;
	/* The chunks go back as soon as the file has them. */
	for (size_t i = 0; i < d->nchunks; i++)
		flight_chunk__put(d->chunks[i]);
	d->nchunks = 0;
	__atomic_store_n(&d->written, 1, __ATOMIC_RELEASE);
	if (!d->err && d->report) {
		char dir[sizeof(d->name) + 8];
		int rc = run_report(d);

		d->err = rc == 0 ? 0 : 1;
		d->report_cut = rc == -ECANCELED;
		d->report_ms = (clock__mono_ns() - t1) / 1e6;
		cache_take(d);
		/* What it wrote (a failed one too) stays only where it fits; the next dump's trace
		 * may have taken the budget meanwhile. A cut one is removed: it is not the trace's
		 * report, and the trace is whole for another. */
		snprintf(dir, sizeof(dir), "%s.report", d->name);
		if (d->report_cut) {
			tree_walk(d->dfd, dir, true, 0);
		} else if (!disk_take(d, tree_walk(d->dfd, dir, false, 0))) {
			tree_walk(d->dfd, dir, true, 0);
			d->report_over = true;
		}
	}
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	/* The recorder may be waiting for it (flight__stop). */
	if (d->wake_fd >= 0)
		eventfd_write(d->wake_fd, 1);
	return NULL;
}

int flight_dump__start(struct flight_dump *d, pthread_t *thread)
{
	return -pthread_create(thread, NULL, dump_thread, d);
}

void flight_dump__join(struct flight_dump *d, pthread_t thread, struct flight_dump_counts *n)
{
	pthread_join(thread, NULL);
	if (d->err >= 0) { /* its file written (its report may have failed) */
		n->dumps++;
		n->bytes += d->bytes;
	}
	n->over += d->over;
	n->reports_over += d->report_over;
	n->reports_cut += d->report_cut;
	if (d->report_cpu_s > 0 || d->report_maxrss_kb > 0) {
		n->reports++;
		n->reports_cpu_s += d->report_cpu_s;
		if (d->report_maxrss_kb > n->reports_maxrss_kb)
			n->reports_maxrss_kb = d->report_maxrss_kb;
	}
	if (d->over)
		fprintf(stderr,
			"gapscope: flight: dump of %s not kept: its %.1f MB would pass --dump-max-mb "
			"(%llu MiB, traces and reports)\n",
			d->reason, d->bytes / 1e6, (unsigned long long)(d->disk_cap >> 20));
	else if (d->err < 0)
		fprintf(stderr, "gapscope: flight: cannot write %s: %s\n", d->path,
			strerror(-d->err));
	else
		fprintf(stderr,
			"gapscope: flight: dump %s: %s, window %llu..%llu ns (%.3f s, %s%s), %llu "
			"records, %.1f MB, written in %.0f ms (%.0f ms after the window), %s in %.0f "
			"ms\n",
			d->path, d->reason, (unsigned long long)d->w0, (unsigned long long)d->w1,
			(d->w1 - d->w0) / 1e9,
			d->clean ? "from an idle GPU" : "GPU state at its start unknown",
			d->late ? ", after the trigger: the ring no longer held its start" : "",
			(unsigned long long)d->records, d->bytes / 1e6, d->write_ms, d->after_ms,
			!d->report     ? "no report" :
			d->report_cut  ? "report cut at exit" :
			d->report_over ? "report removed: it would pass --dump-max-mb" :
			d->err	       ? "report FAILED" :
					 "report written",
			d->report_ms);
	if (d->cache_over)
		fprintf(stderr,
			"gapscope: flight: the debug files' copies in %s/" FLIGHT_DEBUG_CACHE
			" removed: they would pass --dump-max-mb; the reports inflate them again\n",
			d->dir);
	if (d->err >= 0 && d->report_cut)
		fprintf(stderr,
			"gapscope: flight: report of %s cut at exit: the trace is whole (gapscope "
			"report %s)\n",
			d->path, d->path);
	for (size_t i = 0; i < d->nchunks; i++)
		flight_chunk__put(d->chunks[i]);
	free(d->chunks);
	free(d->heads);
	free(d);
}
