// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "links.h"
#include "vec.h"

int links__add(struct links *k, struct bpf_link *l)
{
	if (array__grow((void **)&k->l, &k->cap, sizeof(*k->l), k->n + 1, 256)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	k->l[k->n++] = l;
	return 0;
}

int links__add_fd(struct links *k, int fd)
{
	int *n = realloc(k->fds, (k->nfds + 1) * sizeof(*n));

	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	k->fds = n;
	k->fds[k->nfds++] = fd;
	return 0;
}

int links__close_fd(struct links *k, int fd)
{
	for (size_t i = 0; i < k->nfds; i++)
		if (k->fds[i] == fd) {
			k->fds[i] = k->fds[--k->nfds];
			return close(fd) ? -errno : 0;
		}
	return -ENOENT;
}

struct detach_work {
	struct links *k;
	size_t next; /* atomic: links first, then fds */
};

static void *detach_worker(void *arg)
{
	struct detach_work *w = arg;
	struct links *k = w->k;
	size_t i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < k->n + k->nfds) {
		if (i < k->n)
			bpf_link__destroy(k->l[i]);
		else
			close(k->fds[i - k->n]);
	}
	return NULL;
}

/* links__detach_later's threads, which links__detach_all waits for. */
static pthread_mutex_t later_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t later_done = PTHREAD_COND_INITIALIZER;
static unsigned int later_running;

static void detach_now(struct links *k);

static void *detach_later_main(void *arg)
{
	struct links *k = arg;

	detach_now(k);
	free(k->l);
	free(k->fds);
	free(k);
	pthread_mutex_lock(&later_lock);
	later_running--;
	pthread_cond_broadcast(&later_done);
	pthread_mutex_unlock(&later_lock);
	return NULL;
}

void links__detach_later(struct links *k, const int *fds, size_t n, struct bpf_link *const *ls,
			 size_t nl)
{
	struct links *gone = calloc(1, sizeof(*gone));
	pthread_attr_t attr;
	pthread_t th;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < k->nfds; j++)
			if (k->fds[j] == fds[i]) {
				k->fds[j] = k->fds[--k->nfds];
				if (!gone || links__add_fd(gone, fds[i]))
					close(fds[i]); /* no memory: let go of here */
				break;
			}
	for (size_t i = 0; i < nl; i++)
		for (size_t j = 0; j < k->n; j++)
			if (k->l[j] == ls[i]) {
				k->l[j] = k->l[--k->n];
				if (!gone)
					bpf_link__destroy(ls[i]);
				else
					links__add(gone, ls[i]); /* destroys it when it cannot */
				break;
			}
	if (!gone)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&later_lock);
	later_running++;
	pthread_mutex_unlock(&later_lock);
	if (pthread_create(&th, &attr, detach_later_main, gone))
		detach_later_main(gone); /* no thread: here, then */
	pthread_attr_destroy(&attr);
}

/*
 * Detaching a uprobe waits for an RCU grace period (uprobe_unregister_sync), tens of
 * milliseconds on the machines we run on: one link after the other, a libcuda with a hundred
 * probes took seconds to let go. Concurrent waiters share grace periods, so detach in parallel.
 */
static void detach_now(struct links *k)
{
	struct detach_work w = { .k = k };
	pthread_t threads[64];
	size_t nt = k->n + k->nfds < 64 ? k->n + k->nfds : 64, started = 0;

	for (; started < nt; started++)
		if (pthread_create(&threads[started], NULL, detach_worker, &w))
			break;
	detach_worker(&w);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	k->n = 0;
	k->nfds = 0;
}

void links__detach_all(struct links *k)
{
	detach_now(k);
	pthread_mutex_lock(&later_lock);
	while (later_running)
		pthread_cond_wait(&later_done, &later_lock);
	pthread_mutex_unlock(&later_lock);
}

void links__free(struct links *k)
{
	links__detach_all(k);
	free(k->l);
	free(k->fds);
	*k = (struct links){};
}
