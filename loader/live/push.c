// SPDX-License-Identifier: GPL-2.0
/* pprof profiles of the live analysis's gaps, per interval, pushed or written (push.h). */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "outfile.h"
#include "pprof.h"
#include "push.h"

#define BOUNDARY    "gapscope-pprof-7d1f3a"
/* What a push in flight gets at the recorder's exit before it is cut short. */
#define PUSH_EXIT_S 2

struct job {
	unsigned char *gz;
	size_t len;
	__u64 from_real, until_real; /* CLOCK_REALTIME ns */
	int err;		     /* set by the thread */
	int fd;			     /* its socket while it has one, -1; under fd_lock */
	bool cut;		     /* cut short at the recorder's exit */
};

struct push {
	char host[256], port[16], path[1024]; /* path with its query, if any */
	bool http;
	const char *dir;
	int dfd; /* dir, taken once: every profile is created under it */
	__u64 interval_ns, start_ns, real_off;
	struct pprof *pp;
	__u64 gaps;
	pthread_t thread;
	struct job *job;	 /* being sent, or NULL */
	pthread_mutex_t fd_lock; /* job->fd: closed by the thread, shut down at exit */
	__u64 sent, failed, skipped, written, not_written;
	bool said, said_write;
};

static int parse_url(struct push *p, const char *url)
{
	const char *h = url + 7, *slash, *colon;
	size_t hl;

	if (strncmp(url, "http://", 7))
		return -EINVAL;
	slash = strchr(h, '/');
	if (!slash)
		slash = h + strlen(h);
	colon = memchr(h, ':', slash - h);
	hl = (colon ? colon : slash) - h;
	if (!hl || hl >= sizeof(p->host))
		return -EINVAL;
	memcpy(p->host, h, hl);
	p->host[hl] = 0;
	snprintf(p->port, sizeof(p->port), "%.*s", colon ? (int)(slash - colon - 1) : 2,
		 colon ? colon + 1 : "80");
	snprintf(p->path, sizeof(p->path), "%s", *slash ? slash : "/");
	p->http = true;
	return *p->port ? 0 : -EINVAL;
}

static int send_all(int fd, const void *b, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = send(fd, (const char *)b + off, n - off, MSG_NOSIGNAL);

		if (w <= 0)
			return w < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno) : -EIO;
		off += w;
	}
	return 0;
}

/* POST the profile; 0 when the store answered 2xx. */
static int post(struct push *p, struct job *j)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	struct timeval tv = { 10, 0 };
	char head[2048], part[256], tail[64], status[64] = "";
	int fd, err, n, code = 0;
	ssize_t r;

	err = getaddrinfo(p->host, p->port, &hints, &ai);
	if (err)
		return -EHOSTUNREACH;
	pthread_mutex_lock(&p->fd_lock);
	fd = j->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pthread_mutex_unlock(&p->fd_lock);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		err = errno == EAGAIN || errno == EINPROGRESS ? -ETIMEDOUT : -errno;
		freeaddrinfo(ai);
		pthread_mutex_lock(&p->fd_lock);
		j->fd = -1;
		if (fd >= 0)
			close(fd);
		pthread_mutex_unlock(&p->fd_lock);
		return err;
	}
	freeaddrinfo(ai);
	snprintf(part, sizeof(part),
		 "--" BOUNDARY "\r\nContent-Disposition: form-data; name=\"profile\"; "
		 "filename=\"profile.pb.gz\"\r\nContent-Type: application/octet-stream\r\n\r\n");
	snprintf(tail, sizeof(tail), "\r\n--" BOUNDARY "--\r\n");
	n = snprintf(head, sizeof(head),
		     "POST %s%cname=gapscope.gaps&from=%llu&until=%llu&format=pprof"
		     "&spyName=gapscope HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: gapscope\r\n"
		     "Content-Type: multipart/form-data; boundary=" BOUNDARY "\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		     p->path, strchr(p->path, '?') ? '&' : '?',
		     (unsigned long long)(j->from_real / 1000000000ull),
		     (unsigned long long)(j->until_real / 1000000000ull), p->host, p->port,
		     strlen(part) + j->len + strlen(tail));
	err = send_all(fd, head, n)		       ?:
		      send_all(fd, part, strlen(part)) ?:
		      send_all(fd, j->gz, j->len)      ?:
							 send_all(fd, tail, strlen(tail));
	if (!err) {
		r = recv(fd, status, sizeof(status) - 1, 0);
		status[r > 0 ? r : 0] = 0;
		if (r < 0 && errno == EAGAIN)
			err = -ETIMEDOUT; /* SO_RCVTIMEO: the store took the request, never answered */
		else if (sscanf(status, "HTTP/%*s %d", &code) != 1 || code < 200 || code > 299)
			err = -EPROTO;
	}
	pthread_mutex_lock(&p->fd_lock);
	j->fd = -1;
	close(fd);
	pthread_mutex_unlock(&p->fd_lock);
	return err;
}

static void *push_thread(void *arg)
{
	struct push *p = arg;

	p->job->err = post(p, p->job);
	return NULL;
}

/* The thread's push, joined: counted, freed. */
static void count_job(struct push *p)
{
	if (p->job->cut)
		p->job->err = -ETIMEDOUT;
	if (p->job->err) {
		p->failed++;
		if (!p->said)
			fprintf(stderr,
				"gapscope: flight: pushing a profile to http://%s:%s%s failed: %s "
				"(counted from now on, not said again)\n",
				p->host, p->port, p->path, strerror(-p->job->err));
		p->said = true;
	} else {
		p->sent++;
	}
	free(p->job->gz);
	free(p->job);
	p->job = NULL;
}

/*
 * The profile of J into --pprof-dir, complete or not at all: a file that could not be written
 * whole (a full disk) is removed, counted and said once. Created with outfile.h's rules (0600,
 * O_EXCL, never through a link) under the directory taken at the start.
 */
static void write_profile(struct push *p, const struct job *j)
{
	char name[64], stamp[32];
	time_t sec = j->from_real / 1000000000ull;
	size_t off = 0;
	struct tm tm;
	int fd, err = 0;

	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(name, sizeof(name), "gapscope-gaps-%s.%03uZ.pb.gz", stamp,
		 (unsigned int)(j->from_real / 1000000 % 1000));
	fd = outfile__openat(p->dfd, name, false);
	if (fd < 0)
		err = fd;
	while (fd >= 0 && !err && off < j->len) {
		ssize_t w = write(fd, j->gz + off, j->len - off);

		if (w < 0 && errno != EINTR)
			err = -errno;
		else if (w > 0)
			off += w;
	}
	/* close(2) reports a write error that a file system defers (NFS, quota). */
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (fd >= 0 && err)
		unlinkat(p->dfd, name, 0);
	if (!err) {
		p->written++;
		return;
	}
	p->not_written++;
	if (!p->said_write)
		fprintf(stderr,
			"gapscope: flight: cannot write the profile %s/%s: %s (counted from now on, "
			"not said again)\n",
			p->dir, name, strerror(-err));
	p->said_write = true;
}

/* The interval [start, now) as a profile: written to dir, handed to a push thread. */
static void interval(struct push *p, __u64 now)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return;
	j->fd = -1;
	j->from_real = p->start_ns + p->real_off;
	j->until_real = now + p->real_off;
	if (pprof__encode(p->pp, j->from_real, now - p->start_ns, &j->gz, &j->len)) {
		free(j);
		return;
	}
	pprof__reset(p->pp);
	p->start_ns = now;
	if (p->dfd >= 0)
		write_profile(p, j);
	if (p->http) {
		p->job = j;
		if (!pthread_create(&p->thread, NULL, push_thread, p))
			return;
		p->job = NULL;
		p->failed++;
	}
	free(j->gz);
	free(j);
}

struct push *push__new(const char *url, const char *dir, double interval_s)
{
	struct push *p = calloc(1, sizeof(*p));

	if (p) {
		p->dfd = -1;
		pthread_mutex_init(&p->fd_lock, NULL);
	}
	if (!p || !(p->pp = pprof__new())) {
		free(p);
		fprintf(stderr, "gapscope: flight: out of memory\n");
		return NULL;
	}
	if (url && parse_url(p, url)) {
		fprintf(stderr, "gapscope: --push wants http://HOST[:PORT]/PATH, got %s\n", url);
		pprof__free(p->pp);
		free(p);
		return NULL;
	}
	p->dir = dir;
	if (dir && (p->dfd = outfile__dir("--pprof-dir", dir)) < 0) {
		pprof__free(p->pp);
		free(p);
		return NULL;
	}
	p->interval_ns = interval_s * 1e9;
	p->start_ns = clock__mono_ns();
	p->real_off = clock__real_ns() - p->start_ns;
	return p;
}

void push__gap(struct push *p, const struct gap *g)
{
	pprof__add_gap(p->pp, g, 0);
	p->gaps++;
}

void push__tick(struct push *p)
{
	__u64 now = clock__mono_ns();

	if (now - p->start_ns < p->interval_ns)
		return;
	if (p->job) {
		/* One push at a time: a store slower than the interval loses intervals, counted. */
		if (pthread_tryjoin_np(p->thread, NULL) == EBUSY) {
			p->skipped++;
			pprof__reset(p->pp);
			p->start_ns = now;
			return;
		}
		count_job(p);
	}
	interval(p, now);
}

/*
 * At the recorder's exit: the push in flight gets PUSH_EXIT_S more, then its socket is shut
 * down (a store that never answers held the exit 10 s per push, twice). Joined and counted.
 */
static void finish_job(struct push *p)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += PUSH_EXIT_S;
	if (pthread_timedjoin_np(p->thread, NULL, &ts)) {
		p->job->cut = true;
		pthread_mutex_lock(&p->fd_lock);
		if (p->job->fd >= 0)
			shutdown(p->job->fd, SHUT_RDWR);
		pthread_mutex_unlock(&p->fd_lock);
		pthread_join(p->thread, NULL);
	}
	count_job(p);
}

void push__free(struct push *p)
{
	if (!p)
		return;
	if (p->job)
		finish_job(p);
	interval(p, clock__mono_ns());
	if (p->job)
		finish_job(p);
	fprintf(stderr,
		"gapscope: flight: %llu gap profile(s) pushed, %llu failed, %llu skipped (the last "
		"push still going), %llu written, %llu not written\n",
		(unsigned long long)p->sent, (unsigned long long)p->failed,
		(unsigned long long)p->skipped, (unsigned long long)p->written,
		(unsigned long long)p->not_written);
	if (p->dfd >= 0)
		close(p->dfd);
	pthread_mutex_destroy(&p->fd_lock);
	pprof__free(p->pp);
	free(p);
}
