// SPDX-License-Identifier: GPL-2.0
/* Prometheus metrics of record --flight (metrics.h). */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "gap.h"
#include "clock.h"
#include "escape.h"
#include "gapscope.h"
#include "metrics.h"
#include "numarg.h"
#include "trace.h"

#define EV_KINDS	    (GS_EV_MAX + 1) /* the last: the recorder's own records */
/* Connections served at once, and the time each has for its whole exchange (Prometheus' default
 * scrape timeout is 10 s; a local scrape takes about a millisecond). */
#define METRICS_CONNS	    64
#define METRICS_DEADLINE_MS 2000

/* Gap lengths, seconds: the histogram's upper bounds (+Inf after). */
static const double buckets[] = { 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30 };
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

/*
 * A kind's functions, each with a series of its own while it ranks in the top METRICS_FUNCTIONS
 * by recent gap time (metrics.h). Its series is all the time it explained since it was first
 * tracked; "other" is the time of functions while they had no series. Both only grow: a
 * function that leaves the top takes its series with it, and one that enters it brings all its
 * time along (Prometheus reads a new series' first value as where it starts, not as an increase).
 */
struct cause_fn {
	char *function; /* owned, NULL: unused slot */
	__u64 ns;
	double score; /* its time, each gap's weighted by weight() at its end */
	bool shown;
};

struct cause_kind {
	struct cause_fn fn[METRICS_TRACKED];
	__u64 total_ns; /* every function's, exactly: what the series re-ranked cannot sum to */
	__u64 other_ns;
	__u64 evicted; /* functions let go of for newer ones, their time left in "other" */
};

/* What a scrape renders of a kind's causes: the series, copied under the lock. */
struct cause_row {
	char *function; /* owned by the copy; NULL: unused */
	__u64 ns;
};

struct numbers {
	__u64 busy_ns[METRICS_DEVICES], seen_ns[METRICS_DEVICES];
	bool seen[METRICS_DEVICES];
	bool split[METRICS_DEVICES];
	struct idle_split parts[METRICS_DEVICES];
	double active_busy[METRICS_DEVICES];		   /* of the active window, 0..1 */
	__u64 gap_ns[METRICS_DEVICES][BK_MAX + 1];	   /* by main cause; BK_MAX: none */
	struct cause_row cause[BK_MAX][METRICS_FUNCTIONS]; /* filled by a scrape only */
	__u64 other_ns[BK_MAX], evicted;		   /* filled by a scrape only */
	__u64 kind_ns[BK_MAX];				   /* filled by a scrape only */
	__u64 bucket[NBUCKETS + 1], gaps, gap_sum_ns;
	__u64 events[EV_KINDS];
	__u64 lost[GS_LOSS_MAX];
	__u64 dumps, ring_bytes;
	bool done;
};

struct metrics {
	int fd, wake; /* the listening socket; an eventfd that stops the server */
	pthread_t thread;
	pthread_mutex_t lock;
	struct numbers n;		  /* under lock */
	struct cause_kind causes[BK_MAX]; /* under lock */
	double weight;			  /* of a gap's time in a score now; 0: no gap yet */
	__u64 weight_next;		  /* when it grows next, trace ns */
	bool other_processes;		  /* --metrics-other-processes */
	bool running;
};

void metrics__record(struct metrics *m, const struct gs_hdr *h)
{
	pthread_mutex_lock(&m->lock);
	m->n.events[h->type < GS_EV_MAX ? h->type : GS_EV_MAX]++;
	if (h->type == GS_REC_LOSSES && h->size >= sizeof(struct gs_rec_losses)) {
		const struct gs_rec_losses *l = (const void *)h;

		for (__u32 i = 0;
		     i < l->n && i < GS_LOSS_MAX && sizeof(*l) + (i + 1) * sizeof(__u64) <= h->size;
		     i++)
			m->n.lost[i] = l->count[i];
	}
	pthread_mutex_unlock(&m->lock);
}

/*
 * A process outside the recording is named in a cause as "NAME (pid N)" (another user's job that
 * preempted the target, blame_sched.c). The report keeps that; the exposition, which whoever
 * reaches the port reads, says "another process" instead, or NAME alone with
 * --metrics-other-processes, and never a pid (each would also be a series of its own). The last
 * " (pid N)" is the one: NAME, the other process's choice, may hold such text itself. NULL: FN
 * names no such process; else the label value, malloc'd.
 */
static char *published(const char *fn, bool keep_name)
{
	const char *at = NULL, *end = NULL;
	char *out;

	for (const char *p = strstr(fn, " (pid "); p; p = strstr(p + 1, " (pid ")) {
		const char *d = p + strlen(" (pid ");

		if (*d < '0' || *d > '9')
			continue;
		while (*d >= '0' && *d <= '9')
			d++;
		if (*d == ')')
			at = p, end = d + 1;
	}
	if (!at)
		return NULL;
	if (asprintf(&out, "%.*s%s", keep_name ? (int)(at - fn) : (int)strlen("another process"),
		     keep_name ? fn : "another process", end) < 0)
		return NULL;
	return out;
}

/*
 * A gap's time at TS in its scores' weight: doubled every METRICS_HALF_LIFE_S (in 16 steps), so
 * that comparing two scores compares their time with older gaps worth less, without decaying
 * every score at every gap. Rescaled, the order kept, once the weight nears a double's range.
 */
static double weight(struct metrics *m, __u64 ts)
{
	const __u64 step = METRICS_HALF_LIFE_S * NSEC_PER_SEC / 16;

	if (!m->weight || ts > m->weight_next + 64 * 16 * step) {
		/* The first gap, or one so much later that every score before it is worth nothing
		 * beside it (a clock that jumped, in a replayed trace): no steps walked to it. */
		for (int k = 0; k < BK_MAX && m->weight; k++)
			for (int i = 0; i < METRICS_TRACKED; i++)
				m->causes[k].fn[i].score = 0;
		m->weight = 1;
		m->weight_next = ts + step;
	}
	for (; ts >= m->weight_next; m->weight_next += step) {
		m->weight *= 1.0442737824274138; /* 2^(1/16) */
		if (m->weight < 0x1p512)
			continue;
		for (int k = 0; k < BK_MAX; k++)
			for (int i = 0; i < METRICS_TRACKED; i++)
				m->causes[k].fn[i].score *= 0x1p-512;
		m->weight *= 0x1p-512;
	}
	return m->weight;
}

/* C, not shown, takes a series: a free one, or that of the shown function it outranks by more
 * than METRICS_HYSTERESIS (two functions of about the same time do not trade it every gap). */
static void promote(struct cause_kind *ck, struct cause_fn *c)
{
	struct cause_fn *low = NULL;
	int shown = 0;

	for (int i = 0; i < METRICS_TRACKED; i++) {
		struct cause_fn *e = &ck->fn[i];

		if (!e->function || !e->shown)
			continue;
		shown++;
		if (!low || e->score < low->score)
			low = e;
	}
	if (shown < METRICS_FUNCTIONS) {
		c->shown = true;
	} else if (c->score > low->score * METRICS_HYSTERESIS) {
		low->shown = false;
		c->shown = true;
	}
}

static void add_cause(struct metrics *m, enum blame_kind k, const char *fn, __u64 ns, __u64 ts)
{
	struct cause_kind *ck = &m->causes[k];
	struct cause_fn *c = NULL, *spare = NULL, *low = NULL;
	char *own = published(fn ?: "", m->other_processes);
	double w = weight(m, ts);

	fn = own ?: fn ?: "";
	ck->total_ns += ns;
	for (int i = 0; i < METRICS_TRACKED && !c; i++) {
		struct cause_fn *e = &ck->fn[i];

		if (!e->function)
			spare = spare ?: e;
		else if (!strcmp(e->function, fn))
			c = e;
		else if (!e->shown && (!low || e->score < low->score))
			low = e;
	}
	if (!c) {
		/* Bounded: a newcomer takes the place of the tracked function with the least
		 * recent time that has no series (there is one: more are tracked than shown). */
		c = spare ?: low;
		if (!spare) {
			ck->evicted++;
			free(c->function);
		}
		*c = (struct cause_fn){ .function = strdup(fn) };
	}
	if (c->function) {
		c->ns += ns;
		c->score += ns * w;
		if (!c->shown)
			promote(ck, c);
	}
	if (!c->shown)
		ck->other_ns += ns;
	free(own);
}

void metrics__gap(struct metrics *m, const struct gap *g)
{
	const struct chain_link *root = g->nchain ? &g->chain[g->nchain - 1] : NULL;
	__u64 dur = g->end_ns - g->start_ns;
	size_t b = 0;

	pthread_mutex_lock(&m->lock);
	if (g->device < METRICS_DEVICES)
		m->n.gap_ns[g->device][root ? root->kind : BK_MAX] += dur;
	for (__u32 k = 0; k < g->nkinds; k++)
		if (g->kinds[k].kind < BK_MAX)
			add_cause(m, g->kinds[k].kind, g->kinds[k].function, g->kinds[k].ns,
				  g->end_ns);
	while (b < NBUCKETS && dur > buckets[b] * 1e9)
		b++;
	m->n.bucket[b]++;
	m->n.gaps++;
	m->n.gap_sum_ns += dur;
	pthread_mutex_unlock(&m->lock);
}

void metrics__device(struct metrics *m, __u32 device, __u64 busy_ns, __u64 seen_ns)
{
	if (device >= METRICS_DEVICES)
		return;
	pthread_mutex_lock(&m->lock);
	m->n.seen[device] = true;
	m->n.busy_ns[device] = busy_ns;
	m->n.seen_ns[device] = seen_ns;
	pthread_mutex_unlock(&m->lock);
}

void metrics__split(struct metrics *m, __u32 device, const struct idle_split *s, __u64 busy_ns)
{
	__u64 active = s->active_end - s->active_start;

	if (device >= METRICS_DEVICES)
		return;
	pthread_mutex_lock(&m->lock);
	m->n.split[device] = true;
	m->n.parts[device] = *s;
	m->n.active_busy[device] = active ? (busy_ns < active ? busy_ns : active) / (double)active :
					    0;
	pthread_mutex_unlock(&m->lock);
}

void metrics__flight(struct metrics *m, __u64 dumps, __u64 ring_bytes)
{
	pthread_mutex_lock(&m->lock);
	m->n.dumps = dumps;
	m->n.ring_bytes = ring_bytes;
	pthread_mutex_unlock(&m->lock);
}

/*
 * A label value as the exposition format wants it: UTF-8 (a byte that starts no valid character,
 * by escape.h's strict decoder, as U+FFFD: one such name would make Prometheus reject the whole
 * scrape), with \, " and newline escaped.
 */
static void label(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	uint32_t cp;

	fputc('"', f);
	while (n) {
		int len = utf8__decode(p, n, &cp);

		if (!len) {
			fputs("\xef\xbf\xbd", f);
			len = 1;
		} else if (*p == '\\' || *p == '"') {
			fputc('\\', f);
			fputc(*p, f);
		} else if (*p == '\n') {
			fputs("\\n", f);
		} else {
			fwrite(p, 1, len, f);
		}
		p += len;
		n -= len;
	}
	fputc('"', f);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void render(FILE *f, const struct numbers *n)
{
	struct rusage ru;
	long pages = 0;
	FILE *statm;

	head(f, "gapscope_gpu_busy_seconds_total", "counter",
	     "GPU time with a kernel outstanding (API-inferred), by device.");
	for (int d = 0; d < METRICS_DEVICES; d++)
		if (n->seen[d])
			fprintf(f, "gapscope_gpu_busy_seconds_total{device=\"%d\"} %.9f\n", d,
				n->busy_ns[d] / 1e9);
	head(f, "gapscope_gpu_idle_seconds_total", "counter",
	     "GPU time without a kernel outstanding since the device was first seen, by device.");
	for (int d = 0; d < METRICS_DEVICES; d++)
		if (n->seen[d])
			fprintf(f, "gapscope_gpu_idle_seconds_total{device=\"%d\"} %.9f\n", d,
				(n->seen_ns[d] > n->busy_ns[d] ? n->seen_ns[d] - n->busy_ns[d] :
								 0) /
					1e9);
	head(f, "gapscope_gpu_idle_split_seconds", "gauge",
	     "GPU idle time by part: setup (before the first GPU work), gaps (windows of the floor "
	     "or more), under_floor (only where kernels are timed), tail (after the last work).");
	for (int d = 0; d < METRICS_DEVICES; d++) {
		const struct idle_split *s = &n->parts[d];
		const char *part[] = { "setup", "gaps", "under_floor", "tail" };
		__u64 ns[] = { s->setup_ns, s->gaps_ns, s->under_floor_ns, s->tail_ns };

		for (int k = 0; k < 4 && n->split[d]; k++)
			if (k != 2 || s->under_floor_known)
				fprintf(f,
					"gapscope_gpu_idle_split_seconds{device=\"%d\",part=\"%s\"} "
					"%.9f\n",
					d, part[k], ns[k] / 1e9);
	}
	head(f, "gapscope_gpu_active_busy_ratio", "gauge",
	     "GPU busy time over its active window, first to last GPU work (the report's headline; "
	     "API-inferred: an upper bound, idle under the floor counted busy).");
	for (int d = 0; d < METRICS_DEVICES; d++)
		if (n->split[d])
			fprintf(f, "gapscope_gpu_active_busy_ratio{device=\"%d\"} %.6f\n", d,
				n->active_busy[d]);
	head(f, "gapscope_gap_seconds_total", "counter",
	     "Time in GPU gaps, by device and the kind of each gap's main root cause.");
	for (int d = 0; d < METRICS_DEVICES; d++)
		for (int k = 0; k <= BK_MAX; k++)
			if (n->gap_ns[d][k])
				fprintf(f,
					"gapscope_gap_seconds_total{device=\"%d\",cause=\"%s\"} "
					"%.9f\n",
					d, k < BK_MAX ? blame_kind__name(k) : "unexplained",
					n->gap_ns[d][k] / 1e9);
	head(f, "gapscope_gap_cause_seconds_total", "counter",
	     "Gap time each root cause explains, by kind and function (the report's causes): "
	     "the top functions of a kind by recent time, each with all of its time; other: "
	     "functions' time while they were not among them.");
	for (int k = 0; k < BK_MAX; k++) {
		for (int i = 0; i < METRICS_FUNCTIONS; i++) {
			const struct cause_row *c = &n->cause[k][i];

			if (!c->function || !c->ns)
				continue;
			fprintf(f, "gapscope_gap_cause_seconds_total{kind=\"%s\",function=",
				blame_kind__name(k));
			label(f, c->function);
			fprintf(f, "} %.9f\n", c->ns / 1e9);
		}
		if (n->other_ns[k])
			fprintf(f,
				"gapscope_gap_cause_seconds_total{kind=\"%s\",function=\"other\"} "
				"%.9f\n",
				blame_kind__name(k), n->other_ns[k] / 1e9);
	}
	head(f, "gapscope_gap_cause_kind_seconds_total", "counter",
	     "Gap time the root causes of each kind explain, all of their functions: a kind's "
	     "function series re-ranked do not sum to it (one that leaves takes its time along, "
	     "one that enters brings its time from other).");
	for (int k = 0; k < BK_MAX; k++)
		if (n->kind_ns[k])
			fprintf(f, "gapscope_gap_cause_kind_seconds_total{kind=\"%s\"} %.9f\n",
				blame_kind__name(k), n->kind_ns[k] / 1e9);
	head(f, "gapscope_gap_cause_functions_evicted_total", "counter",
	     "Functions no longer tracked, for newer ones (their later time counts as other).");
	fprintf(f, "gapscope_gap_cause_functions_evicted_total %llu\n",
		(unsigned long long)n->evicted);
	head(f, "gapscope_gap_duration_seconds", "histogram", "GPU gaps by length.");
	for (size_t b = 0, cum = 0; b <= NBUCKETS; b++) {
		cum += n->bucket[b];
		if (b < NBUCKETS)
			fprintf(f, "gapscope_gap_duration_seconds_bucket{le=\"%g\"} %zu\n",
				buckets[b], cum);
		else
			fprintf(f, "gapscope_gap_duration_seconds_bucket{le=\"+Inf\"} %zu\n", cum);
	}
	fprintf(f, "gapscope_gap_duration_seconds_sum %.9f\n", n->gap_sum_ns / 1e9);
	fprintf(f, "gapscope_gap_duration_seconds_count %llu\n", (unsigned long long)n->gaps);
	head(f, "gapscope_events_total", "counter", "Records made, by event type.");
	for (int t = 0; t < EV_KINDS; t++)
		if (n->events[t])
			fprintf(f, "gapscope_events_total{type=\"%s\"} %llu\n",
				t < GS_EV_MAX ? trace__event_name(t) : "recorder",
				(unsigned long long)n->events[t]);
	head(f, "gapscope_events_lost_total", "counter", "Events lost, by the recorder's counter.");
	for (int i = 0; i < GS_LOSS_MAX; i++)
		fprintf(f, "gapscope_events_lost_total{kind=\"%s\"} %llu\n", gs_loss_names[i],
			(unsigned long long)n->lost[i]);
	head(f, "gapscope_recording_done", "gauge",
	     "1 once the recording ended and every gap of it is counted.");
	fprintf(f, "gapscope_recording_done %d\n", n->done);
	head(f, "gapscope_flight_dumps_total", "counter", "Flight-recorder dumps written.");
	fprintf(f, "gapscope_flight_dumps_total %llu\n", (unsigned long long)n->dumps);
	head(f, "gapscope_flight_ring_bytes", "gauge", "Trace bytes the flight recorder holds.");
	fprintf(f, "gapscope_flight_ring_bytes %llu\n", (unsigned long long)n->ring_bytes);
	getrusage(RUSAGE_SELF, &ru);
	head(f, "process_cpu_seconds_total", "counter", "The recorder's CPU time (user + system).");
	fprintf(f, "process_cpu_seconds_total %.6f\n",
		ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	statm = fopen("/proc/self/statm", "r");
	if (statm && fscanf(statm, "%*d %ld", &pages) != 1)
		pages = 0;
	if (statm)
		fclose(statm);
	head(f, "process_resident_memory_bytes", "gauge", "The recorder's resident memory.");
	fprintf(f, "process_resident_memory_bytes %ld\n", pages * sysconf(_SC_PAGESIZE));
}

/* The answer to a request head: the status line, headers and body, in *OUT (malloc'd). */
static int answer(struct metrics *m, const char *req, char **out, size_t *len)
{
	char *body = NULL;
	size_t blen = 0;
	struct numbers n;
	const char *status = "200 OK";
	FILE *f = open_memstream(&body, &blen);
	int r;

	if (!f)
		return -ENOMEM;
	if (!strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET /metrics?", 13)) {
		pthread_mutex_lock(&m->lock);
		n = m->n;
		for (int k = 0; k < BK_MAX; k++) {
			const struct cause_kind *ck = &m->causes[k];

			for (int i = 0, j = 0; i < METRICS_TRACKED && j < METRICS_FUNCTIONS; i++)
				if (ck->fn[i].function && ck->fn[i].shown)
					n.cause[k][j++] = (struct cause_row){
						.function = strdup(ck->fn[i].function),
						.ns = ck->fn[i].ns,
					};
			n.other_ns[k] = ck->other_ns;
			n.kind_ns[k] = ck->total_ns;
			n.evicted += ck->evicted;
		}
		pthread_mutex_unlock(&m->lock);
		render(f, &n);
		for (int k = 0; k < BK_MAX; k++)
			for (int i = 0; i < METRICS_FUNCTIONS; i++)
				free(n.cause[k][i].function);
	} else {
		status = "404 Not Found";
		fputs("gapscope: metrics are at /metrics\n", f);
	}
	if (fclose(f)) {
		free(body);
		return -ENOMEM;
	}
	r = asprintf(out,
		     "HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n%.*s",
		     status, blen, (int)blen, body);
	free(body);
	if (r < 0)
		return -ENOMEM;
	*len = r;
	return 0;
}

/*
 * The server: one thread, one poll(2) over the listening socket, a wake-up eventfd and at most
 * METRICS_CONNS connections, every socket non-blocking. A connection has METRICS_DEADLINE_MS
 * from its accept for its whole exchange (the request head read, up to 8 KiB, the answer
 * written), then it is closed: a client that trickles a byte at a time, or never sends, holds a
 * slot for that long and nothing else. Before, connections were served one after the other with
 * a 1 s timeout per recv(2): one slow client starved every scrape and held the recorder's exit.
 *
 * Against a flood of connections (4 local threads opening them as fast as they can, sending
 * nothing): the backlog is the kernel's largest, so that a scraper's handshake is not dropped
 * and retried a second later; a connection is read as it is accepted, and a whole request head
 * answered there, before it can lose its slot; with every slot taken, one that has sent nothing
 * goes first, the oldest, then one mid-request, and a newcomer that has sent nothing takes no
 * slot from one that has; and no peer address holds more than METRICS_PER_PEER slots (its own
 * go first). Before, a newcomer took the slot of the connection accepted first, whatever it was
 * doing, and a flood evicted scrapes: 3 of 20 failed at 5 s.
 */
struct conn {
	int fd; /* -1: a free slot */
	__u64 deadline_ns;
	struct sockaddr_storage peer;
	char req[8192];
	size_t len;
	char *out; /* the answer, being written */
	size_t out_len, out_off;
};

static void conn__close(struct conn *c)
{
	/* One that sent nothing is reset, not shut down: no FIN exchanged and no TIME_WAIT
	 * kept for it, half the cost of each connection of a flood. */
	static const struct linger reset = { .l_onoff = 1, .l_linger = 0 };

	if (c->fd >= 0 && !c->len)
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->len = c->out_len = c->out_off = 0;
}

/* Reads what C has; the answer is made once the head is whole. false: close C. */
static bool conn__read(struct metrics *m, struct conn *c)
{
	for (;;) {
		ssize_t r = recv(c->fd, c->req + c->len, sizeof(c->req) - 1 - c->len, 0);

		if (r < 0)
			return errno == EAGAIN || errno == EINTR;
		if (!r)
			return false;
		c->len += r;
		c->req[c->len] = 0;
		if (strstr(c->req, "\r\n\r\n"))
			return !answer(m, c->req, &c->out, &c->out_len);
		if (c->len == sizeof(c->req) - 1)
			return false; /* no head fits */
	}
}

/* Writes what the socket takes of the answer. false: done or failed, close C. */
static bool conn__write(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0)
			return errno == EAGAIN || errno == EINTR;
		c->out_off += w;
	}
	return false;
}

/* What C has done, for eviction: 0 nothing sent, 1 part of a head, 2 being answered. */
static int conn__stage(const struct conn *c)
{
	return c->out ? 2 : c->len ? 1 : 0;
}

static bool same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
	return true;
}

/*
 * The slot to evict for NEW (accepted, read once, not done), among all or, where NEW's peer holds
 * METRICS_PER_PEER already, among its own: the least along, then the oldest. NULL: NEW is the
 * one to go (it has sent less than any of them).
 */
static struct conn *victim_for(struct conn *conns, const struct conn *new)
{
	struct conn *victim = NULL, *own = NULL;
	int peers = 0;

	for (size_t i = 0; i < METRICS_CONNS; i++) {
		struct conn *c = &conns[i];

		if (c->fd < 0)
			continue;
		if (!victim || conn__stage(c) < conn__stage(victim) ||
		    (conn__stage(c) == conn__stage(victim) && c->deadline_ns < victim->deadline_ns))
			victim = c;
		if (!same_peer(&c->peer, &new->peer))
			continue;
		peers++;
		if (!own || conn__stage(c) < conn__stage(own) ||
		    (conn__stage(c) == conn__stage(own) && c->deadline_ns < own->deadline_ns))
			own = c;
	}
	if (peers >= METRICS_PER_PEER)
		victim = own;
	return victim && conn__stage(victim) >= conn__stage(new) ? victim : NULL;
}

/* The slot for NEW: a free one where its peer is under its cap, else one evicted (NULL: none). */
static struct conn *slot_for(struct metrics *m, struct conn *conns, const struct conn *new)
{
	int peers = 0;
	struct conn *c;

	for (size_t i = 0; i < METRICS_CONNS; i++)
		peers += conns[i].fd >= 0 && same_peer(&conns[i].peer, &new->peer);
	for (size_t i = 0; i < METRICS_CONNS && peers < METRICS_PER_PEER; i++)
		if (conns[i].fd < 0)
			return &conns[i];
	/*
	 * One that has sent nothing is read once more before it goes: a scraper accepted between
	 * its handshake and its request (microseconds apart) would otherwise be taken for one of
	 * the flood accepted after it. Each pass leaves one more connection along, or evicts.
	 */
	while ((c = victim_for(conns, new)) && !conn__stage(c)) {
		bool keep = conn__read(m, c);

		if (keep && c->out)
			keep = conn__write(c);
		if (!keep) {
			conn__close(c);
			return c;
		}
		if (!conn__stage(c))
			break;
	}
	return c;
}

/* Accepts what waits, at most a batch (the connections being answered get their turn). */
static void accept_some(struct metrics *m, struct conn *conns, __u64 now)
{
	struct conn new = { .fd = -1 };

	for (int n = 0; n < 4 * METRICS_CONNS; n++) {
		socklen_t sl = sizeof(new.peer);
		struct conn *slot;
		bool keep;

		new.fd = accept4(m->fd, (struct sockaddr *)&new.peer, &sl,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (new.fd < 0) {
			new.fd = -1;
			if (errno == ECONNABORTED || errno == EINTR || errno == EPROTO)
				continue; /* that one connection's */
			return;		  /* none waits, or none can be taken now (out of fds) */
		}
		new.deadline_ns = now + METRICS_DEADLINE_MS * 1000000ull;
		/* A scraper sends its request with the handshake's last packet: answered now. */
		keep = conn__read(m, &new);
		if (keep && new.out)
			keep = conn__write(&new);
		if (!keep || !(slot = slot_for(m, conns, &new))) {
			conn__close(&new);
			continue;
		}
		conn__close(slot);
		*slot = new;
		new.fd = -1;
		new.out = NULL;
		new.len = new.out_len = new.out_off = 0;
	}
}

static void *serve(void *arg)
{
	struct metrics *m = arg;
	struct conn conns[METRICS_CONNS];
	struct pollfd pfd[METRICS_CONNS + 2];

	for (size_t i = 0; i < METRICS_CONNS; i++)
		conns[i] = (struct conn){ .fd = -1 };
	for (;;) {
		__u64 now = clock__mono_ns(), next = now + 60 * NSEC_PER_SEC;
		int timeout;

		pfd[0] = (struct pollfd){ .fd = m->fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = m->wake, .events = POLLIN };
		for (size_t i = 0; i < METRICS_CONNS; i++) {
			struct conn *c = &conns[i];

			if (c->fd >= 0 && now >= c->deadline_ns)
				conn__close(c); /* its whole exchange took too long */
			if (c->fd >= 0 && c->deadline_ns < next)
				next = c->deadline_ns;
			pfd[2 + i] = (struct pollfd){ .fd = c->fd,
						      .events = c->out ? POLLOUT : POLLIN };
		}
		timeout = (int)((next - now + 999999) / 1000000);
		if (poll(pfd, METRICS_CONNS + 2, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break; /* metrics__free */
		now = clock__mono_ns();
		for (size_t i = 0; i < METRICS_CONNS; i++) {
			struct conn *c = &conns[i];
			bool keep;

			if (c->fd < 0 || !pfd[2 + i].revents)
				continue;
			keep = c->out ? conn__write(c) : conn__read(m, c);
			if (keep && c->out && c->out_off == 0)
				keep = conn__write(c);
			if (!keep)
				conn__close(c);
		}
		if (pfd[0].revents & POLLIN)
			accept_some(m, conns, now);
	}
	for (size_t i = 0; i < METRICS_CONNS; i++)
		conn__close(&conns[i]);
	return NULL;
}

/*
 * ADDR:PORT into HOST and PORT: the port a number from 1 to 65535 (getaddrinfo takes 99999 and
 * listens on 99999 mod 65536), the host as given ("[::1]" unbracketed; empty: every address).
 */
static int split_addr(const char *addr_port, char *host, size_t size, char *port)
{
	const char *colon = strrchr(addr_port, ':');
	long long p;
	size_t hl;

	if (!colon || numarg__int(colon + 1, 1, 65535, &p))
		return -EINVAL;
	hl = colon - addr_port;
	if (hl >= size)
		return -EINVAL;
	memcpy(host, addr_port, hl);
	host[hl] = 0;
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') { /* [::1] */
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	sprintf(port, "%lld", p);
	return 0;
}

/* What metrics__listen bound while the options were read, for metrics__new. */
static struct {
	const char *addr_port; /* NULL: nothing bound */
	int fd;
	bool other_processes;
	char port[8], shown[NI_MAXHOST];
} bound;

int metrics__listen(const char *addr_port, bool other_processes, char *why, size_t size)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char host[256];
	int one = 1, err, fd;

	if (split_addr(addr_port, host, sizeof(host), bound.port)) {
		snprintf(why, size, "--metrics wants ADDR:PORT with a port from 1 to 65535, got %s",
			 addr_port);
		return -EINVAL;
	}
	err = getaddrinfo(*host ? host : NULL, bound.port, &hints, &ai);
	if (err) {
		snprintf(why, size, "--metrics %s: %s", addr_port, gai_strerror(err));
		return -EINVAL;
	}
	/* The kernel's largest backlog: a flood of connections that fills it drops the
	 * handshakes of scrapes, which retry a second later (D29). */
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, SOMAXCONN) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		err = -errno;
		snprintf(why, size, "--metrics %s: %s", addr_port, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return err;
	}
	freeaddrinfo(ai);
	/* The address bound, as the kernel has it: "all interfaces" said where it is every one. */
	if (getnameinfo((struct sockaddr *)&sa, sl, bound.shown, sizeof(bound.shown), NULL, 0,
			NI_NUMERICHOST))
		snprintf(bound.shown, sizeof(bound.shown), "?");
	if (bound.addr_port)
		close(bound.fd);
	bound.addr_port = addr_port;
	bound.fd = fd;
	bound.other_processes = other_processes;
	return 0;
}

struct metrics *metrics__new(const char *addr_port)
{
	char why[512];
	struct metrics *m;

	if ((!bound.addr_port || strcmp(bound.addr_port, addr_port)) &&
	    metrics__listen(addr_port, false, why, sizeof(why))) {
		fprintf(stderr, "gapscope: %s\n", why);
		return NULL;
	}
	bound.addr_port = NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(bound.fd);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->fd = bound.fd;
	m->other_processes = bound.other_processes;
	m->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->wake < 0 || (errno = pthread_create(&m->thread, NULL, serve, m))) {
		fprintf(stderr, "gapscope: --metrics %s: %s\n", addr_port, strerror(errno));
		close(m->fd);
		if (m->wake >= 0)
			close(m->wake);
		free(m);
		return NULL;
	}
	m->running = true;
	if (!strcmp(bound.shown, "0.0.0.0") || !strcmp(bound.shown, "::"))
		fprintf(stderr,
			"gapscope: metrics on http://HOST:%s/metrics, HOST any address of this "
			"machine (bound to all interfaces: %s)\n",
			bound.port, bound.shown);
	else
		fprintf(stderr, "gapscope: metrics on http://%s%s%s:%s/metrics\n",
			strchr(bound.shown, ':') ? "[" : "", bound.shown,
			strchr(bound.shown, ':') ? "]" : "", bound.port);
	return m;
}

void metrics__free(struct metrics *m, double linger_s)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->n.done = true;
	pthread_mutex_unlock(&m->lock);
	if (linger_s > 0) {
		/* The last scrape's time, cut short by SIGINT, SIGTERM or SIGHUP (taken here). */
		__u64 end = clock__mono_ns() + (__u64)(linger_s * NSEC_PER_SEC), now;
		sigset_t stop, old;

		sigemptyset(&stop);
		sigaddset(&stop, SIGINT);
		sigaddset(&stop, SIGTERM);
		sigaddset(&stop, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &stop, &old);
		while ((now = clock__mono_ns()) < end) {
			struct timespec ts = { (time_t)((end - now) / NSEC_PER_SEC),
					       (long)((end - now) % NSEC_PER_SEC) };

			if (sigtimedwait(&stop, NULL, &ts) >= 0 || errno != EINTR)
				break;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	/* The server thread wakes at once, whatever its clients do, and closes them. */
	if (eventfd_write(m->wake, 1))
		shutdown(m->fd, SHUT_RDWR);
	pthread_join(m->thread, NULL);
	close(m->fd);
	close(m->wake);
	for (int k = 0; k < BK_MAX; k++)
		for (int i = 0; i < METRICS_TRACKED; i++)
			free(m->causes[k].fn[i].function);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
