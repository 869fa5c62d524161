// SPDX-License-Identifier: GPL-2.0
/* Prometheus metrics of record --flight (metrics.h). */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "clock.h"
#include "gapscope.h"
#include "metrics.h"
#include "trace.h"

#define EV_KINDS (GS_EV_MAX + 1) /* the last: the recorder's own records */

/* Gap lengths, seconds: the histogram's upper bounds (+Inf after). */
static const double buckets[] = { 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30 };
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

struct cause_fn {
	const char *function; /* owned, NULL: unused slot */
	__u64 ns;
};

struct numbers {
	__u64 busy_ns[METRICS_DEVICES], seen_ns[METRICS_DEVICES];
	bool seen[METRICS_DEVICES];
	bool split[METRICS_DEVICES];
	struct idle_split parts[METRICS_DEVICES];
	double active_busy[METRICS_DEVICES];		      /* of the active window, 0..1 */
	__u64 gap_ns[METRICS_DEVICES][BK_MAX + 1];	      /* by main cause; BK_MAX: none */
	struct cause_fn cause[BK_MAX][METRICS_FUNCTIONS + 1]; /* the last: "other" */
	__u64 bucket[NBUCKETS + 1], gaps, gap_sum_ns;
	__u64 events[EV_KINDS];
	__u64 lost[GS_LOSS_MAX];
	__u64 dumps, ring_bytes;
	bool done;
};

struct metrics {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	struct numbers n; /* under lock */
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

static void add_cause(struct numbers *n, enum blame_kind k, const char *fn, __u64 ns)
{
	struct cause_fn *c = n->cause[k];
	int i;

	fn = fn ?: "";
	for (i = 0; i < METRICS_FUNCTIONS && c[i].function; i++)
		if (!strcmp(c[i].function, fn))
			break;
	if (i < METRICS_FUNCTIONS && !c[i].function)
		c[i].function = strdup(fn);
	if (i == METRICS_FUNCTIONS || !c[i].function)
		i = METRICS_FUNCTIONS; /* bounded: the rest are "other" */
	c[i].ns += ns;
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
			add_cause(&m->n, g->kinds[k].kind, g->kinds[k].function, g->kinds[k].ns);
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

/* A label value as the exposition format wants it: \, " and newline escaped. */
static void label(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
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
	     "Gap time each root cause explains, by kind and function (the report's causes).");
	for (int k = 0; k < BK_MAX; k++)
		for (int i = 0; i <= METRICS_FUNCTIONS; i++) {
			const struct cause_fn *c = &n->cause[k][i];

			if (!c->ns)
				continue;
			fprintf(f, "gapscope_gap_cause_seconds_total{kind=\"%s\",function=",
				blame_kind__name(k));
			label(f, i < METRICS_FUNCTIONS ? c->function : "other");
			fprintf(f, "} %.9f\n", c->ns / 1e9);
		}
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

/* One request: its head read (up to 8 KiB, a second at most), then the answer. */
static void answer(struct metrics *m, int c)
{
	struct timeval tv = { 1, 0 };
	char req[8192], *body = NULL;
	size_t len = 0, blen = 0;
	struct numbers n;
	const char *status = "200 OK";
	FILE *f;

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < sizeof(req) - 1) {
		ssize_t r = recv(c, req + len, sizeof(req) - 1 - len, 0);

		if (r <= 0)
			return;
		len += r;
		req[len] = 0;
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	f = open_memstream(&body, &blen);
	if (!f)
		return;
	if (!strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET /metrics?", 13)) {
		pthread_mutex_lock(&m->lock);
		n = m->n;
		for (int k = 0; k < BK_MAX; k++)
			for (int i = 0; i < METRICS_FUNCTIONS; i++)
				n.cause[k][i].function = m->n.cause[k][i].function ?
								 strdup(m->n.cause[k][i].function) :
								 NULL;
		pthread_mutex_unlock(&m->lock);
		render(f, &n);
		for (int k = 0; k < BK_MAX; k++)
			for (int i = 0; i < METRICS_FUNCTIONS; i++)
				free((char *)n.cause[k][i].function);
	} else {
		status = "404 Not Found";
		fputs("gapscope: metrics are at /metrics\n", f);
	}
	fclose(f);
	dprintf(c,
		"HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		"Content-Length: %zu\r\nConnection: close\r\n\r\n",
		status, blen);
	for (size_t off = 0; off < blen;) {
		ssize_t w = send(c, body + off, blen - off, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		off += w;
	}
	free(body);
}

static void *serve(void *arg)
{
	struct metrics *m = arg;

	for (;;) {
		int c = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break; /* shut down */
		}
		answer(m, c);
		close(c);
	}
	return NULL;
}

struct metrics *metrics__new(const char *addr_port)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char host[256];
	const char *port = strrchr(addr_port, ':');
	struct metrics *m;
	int one = 1, err;
	size_t hl;

	if (!port || !port[1]) {
		fprintf(stderr, "gapscope: --metrics wants ADDR:PORT, got %s\n", addr_port);
		return NULL;
	}
	hl = port - addr_port;
	if (hl >= sizeof(host))
		hl = sizeof(host) - 1;
	memcpy(host, addr_port, hl);
	host[hl] = 0;
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') { /* [::1] */
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	err = getaddrinfo(*host ? host : NULL, port + 1, &hints, &ai);
	if (err) {
		fprintf(stderr, "gapscope: --metrics %s: %s\n", addr_port, gai_strerror(err));
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		freeaddrinfo(ai);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (m->fd < 0 || setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(m->fd, ai->ai_addr, ai->ai_addrlen) || listen(m->fd, 16) ||
	    (errno = pthread_create(&m->thread, NULL, serve, m))) {
		fprintf(stderr, "gapscope: --metrics %s: %s\n", addr_port, strerror(errno));
		if (m->fd >= 0)
			close(m->fd);
		freeaddrinfo(ai);
		free(m);
		return NULL;
	}
	freeaddrinfo(ai);
	m->running = true;
	fprintf(stderr, "gapscope: metrics on http://%s/metrics\n", addr_port);
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
	shutdown(m->fd, SHUT_RDWR);
	pthread_join(m->thread, NULL);
	close(m->fd);
	for (int k = 0; k < BK_MAX; k++)
		for (int i = 0; i < METRICS_FUNCTIONS; i++)
			free((char *)m->n.cause[k][i].function);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
