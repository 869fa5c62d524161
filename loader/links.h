/* SPDX-License-Identifier: GPL-2.0 */
/* The recording's attachments: libbpf links and raw link fds, let go of together at the end. */
#ifndef GAPSCOPE_LINKS_H
#define GAPSCOPE_LINKS_H

#include <stddef.h>

struct bpf_link;

struct links {
	struct bpf_link **l;
	size_t n, cap;
	int *fds; /* uprobe_multi links (loader/umulti.h) */
	size_t nfds;
};

/* Keeps L (destroyed by links__detach_all); -ENOMEM and L destroyed when it cannot. */
int links__add(struct links *k, struct bpf_link *l);
/* Keeps a link FD; -ENOMEM and FD closed when it cannot. */
int links__add_fd(struct links *k, int fd);
/* Detaches the link FD (one links__add_fd kept) now: 0, or -ENOENT when it is not kept. */
int links__close_fd(struct links *k, int fd);
/*
 * Takes link FDS[N] and LS[NL] (kept by links__add_fd, links__add) out of K and detaches them
 * on a thread of their own, in parallel: a process that left the recording lets go of its links
 * without holding up the caller for their grace periods. Those not kept in K are left alone.
 */
void links__detach_later(struct links *k, const int *fds, size_t n, struct bpf_link *const *ls,
			 size_t nl);
/* Detaches everything, in parallel, after the links__detach_later still going; the container
 * stays usable (and empty). */
void links__detach_all(struct links *k);
void links__free(struct links *k);

#endif
