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

/*
 * Detaching a uprobe waits for an RCU grace period (uprobe_unregister_sync), tens of
 * milliseconds on the machines we run on: one link after the other, a libcuda with a hundred
 * probes took seconds to let go. Concurrent waiters share grace periods, so detach in parallel.
 */
void links__detach_all(struct links *k)
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

void links__free(struct links *k)
{
	links__detach_all(k);
	free(k->l);
	free(k->fds);
	*k = (struct links){};
}
