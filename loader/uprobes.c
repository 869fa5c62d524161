// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "escape.h"
#include "cuda.h"
#include "proc.h"
#include "record.skel.h"
#include "clock.h"
#include "cuda_fns.h"
#include "elfx.h"
#include "links.h"
#include "metadata.h"
#include "procmaps.h"
#include "resolve.h"
#include "trace.h"
#include "umulti.h"
#include "uprobes_int.h"
#include "vec.h"

/* A file probed already, by inode. */
struct probed_file {
	dev_t dev;
	ino_t ino;
	char *path;
};

/* A hot lookup's links, until it is retired (fds -1 after). */
struct lookup_probe {
	int fd[2]; /* entry, return: kept in u->links as well */
	__u32 lib, id, kind;
	__u64 offset;
	char *lib_path, *sym;
};

static int attach_one(struct uprobes *u, struct bpf_program *prog, bool ret, const char *path,
		      __u64 off, __u32 id)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = id, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, u->pid, path, off, &o);

	if (!l)
		return -errno;
	return links__add(u->links, l);
}

struct pending *file_probes__add(struct file_probes *fp, __u32 family, const char *sym,
				 __u64 offset)
{
	struct pending *p;

	for (size_t i = 0; i < fp->n; i++)
		if (fp->p[i].offset == offset && fp->p[i].family == family)
			return NULL; /* an alias of a function already probed */
	if (array__grow((void **)&fp->p, &fp->cap, sizeof(*fp->p), fp->n + 1, 64))
		return NULL;
	p = &fp->p[fp->n++];
	*p = (struct pending){ .family = family, .offset = offset, .sym = strdup(sym) };
	p->id = fp->u->out->next_probe_id++;
	return p;
}

static int cuda_sym(const struct elfx_sym *s, void *ctx)
{
	struct file_probes *fp = ctx;
	struct cu_fn_desc d;
	struct pending *p;

	if (!cuda_fns__lookup(s->name, &d) || fp->u->out->next_probe_id >= CU_MAX_FNS)
		return 0;
	p = file_probes__add(fp, GS_PROBE_CUDA, s->name, s->offset);
	if (!p)
		return 0;
	p->kind = d.kind;
	p->ret = d.flags & CU_F_RET;
	p->lookup = d.kind == CU_K_KERNEL_FUNCTION && fp->u->umulti && !fp->u->keep_lookups;
	d.lib = fp->cu_lib;
	p->err = bpf_map_update_elem(bpf_map__fd(fp->u->skel->maps.cu_fns), &p->id, &d, BPF_ANY);
	return 0;
}

static struct pending *add_interval(struct file_probes *fp, __u32 family, const char *path,
				    const char *sym)
{
	__u64 off = 0;
	int err = elfx__sym_offset(path, sym, &off);
	struct pending *p = file_probes__add(fp, family, sym, off);

	if (p) {
		p->ret = true;
		p->err = err;
	}
	return p;
}

/* One uprobe_multi link for the probes of FP that use PROG (entry or return). */
static void attach_batch(struct file_probes *fp, const char *path, struct bpf_program *prog,
			 bool cuda, bool ret)
{
	__u64 *offs = calloc(fp->n, sizeof(__u64)), *cookies = calloc(fp->n, sizeof(__u64));
	size_t n = 0;
	int fd;

	for (size_t i = 0; offs && cookies && i < fp->n; i++) {
		struct pending *p = &fp->p[i];

		if (p->err || p->family == GS_PROBE_LOCK || (p->family == GS_PROBE_CUDA) != cuda ||
		    (ret && !p->ret) || p->lookup)
			continue;
		offs[n] = p->offset;
		cookies[n++] = p->id;
	}
	if (n) {
		fd = umulti__attach(bpf_program__fd(prog), path, offs, cookies, n, ret, fp->u->pid);
		if (fd >= 0 && links__add_fd(fp->u->links, fd))
			fd = -ENOMEM;
		for (size_t i = 0; fd < 0 && i < fp->n; i++)
			for (size_t j = 0; j < n; j++)
				if (cookies[j] == fp->p[i].id)
					fp->p[i].err = fd;
	}
	free(offs);
	free(cookies);
}

/* Each hot lookup as links of its own (entry and return), kept to be retired. */
static void attach_lookups(struct file_probes *fp, const char *path, const char *shown)
{
	struct uprobes *u = fp->u;

	for (size_t i = 0; i < fp->n; i++) {
		struct pending *p = &fp->p[i];
		__u64 cookie = p->id;
		struct lookup_probe *l;
		int fd[2];

		if (!p->lookup || p->err)
			continue;
		l = realloc(u->lookups, (u->nlookups + 1) * sizeof(*l));
		if (!l) {
			p->err = -ENOMEM;
			continue;
		}
		u->lookups = l;
		fd[0] = umulti__attach(bpf_program__fd(u->skel->progs.cu_entry), path, &p->offset,
				       &cookie, 1, false, u->pid);
		fd[1] = fd[0] < 0 ? fd[0] :
				    umulti__attach(bpf_program__fd(u->skel->progs.cu_return), path,
						   &p->offset, &cookie, 1, true, u->pid);
		if (fd[1] < 0) {
			p->err = fd[1];
			if (fd[0] >= 0)
				close(fd[0]);
			continue;
		}
		/* Kept with the others too: the end of the recording detaches them all at once. */
		if (links__add_fd(u->links, fd[0])) {
			close(fd[1]);
			p->err = -ENOMEM;
			continue;
		}
		if (links__add_fd(u->links, fd[1])) {
			links__close_fd(u->links, fd[0]);
			p->err = -ENOMEM;
			continue;
		}
		l = &u->lookups[u->nlookups++];
		*l = (struct lookup_probe){ { fd[0], fd[1] }, fp->cu_lib,    p->id,	    p->kind,
					    p->offset,	      strdup(shown), strdup(p->sym) };
	}
}

void uprobes__retire_lookups(struct uprobes *u)
{
	for (size_t i = 0; i < u->nlookups; i++) {
		struct lookup_probe *l = &u->lookups[i];
		struct cu_handle_stats st;
		struct meta_probe mp;
		__u64 now;

		if (l->fd[0] < 0 ||
		    bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.cu_libs), &l->lib, &st) ||
		    st.off || st.agree < LOOKUP_TRUST)
			continue;
		/* Before: the breakpoints go at once, the close returns after an RCU grace period. */
		now = clock__mono_ns();
		links__close_fd(u->links, l->fd[0]);
		links__close_fd(u->links, l->fd[1]);
		l->fd[0] = l->fd[1] = -1;
		mp = (struct meta_probe){
			.id = l->id,
			.family = GS_PROBE_CUDA,
			.kind = l->kind,
			.live_ns = now,
			.offset = l->offset,
			.flags = GS_PROBE_F_RET | GS_PROBE_F_RETIRED,
			.tgid = u->tgid,
			.pid = u->pid,
			.lib = l->lib_path ? l->lib_path : "?",
			.sym = l->sym ? l->sym : "?",
		};
		meta__probe(u->out, &mp);
	}
}

/* --lock-holds: a program per function (lock entry and return, unlock entry). */
static void attach_locks(struct file_probes *fp, const char *path)
{
	struct record_bpf *skel = fp->u->skel;

	for (size_t i = 0; i < fp->n; i++) {
		struct pending *p = &fp->p[i];
		bool unlock = p->sym && !strcmp(p->sym, "pthread_mutex_unlock");

		if (p->family != GS_PROBE_LOCK || p->err)
			continue;
		p->err = attach_one(fp->u,
				    unlock ? skel->progs.unlock_entry : skel->progs.lock_entry,
				    false, path, p->offset, p->id);
		if (!p->err && p->ret)
			p->err = attach_one(fp->u, skel->progs.lock_return, true, path, p->offset,
					    p->id);
	}
}

/* Without uprobe_multi: a link per probe and direction. */
static void attach_singly(struct file_probes *fp, const char *path)
{
	struct record_bpf *skel = fp->u->skel;

	for (size_t i = 0; i < fp->n; i++) {
		struct pending *p = &fp->p[i];
		bool cuda = p->family == GS_PROBE_CUDA;

		if (p->family == GS_PROBE_LOCK)
			continue;
		if (!p->err)
			p->err = attach_one(fp->u,
					    cuda ? skel->progs.cu_entry : skel->progs.probe_entry,
					    false, path, p->offset, p->id);
		if (!p->err && p->ret)
			p->err = attach_one(fp->u,
					    cuda ? skel->progs.cu_return : skel->progs.probe_return,
					    true, path, p->offset, p->id);
	}
}

/* Attach the collected probes, record them in the trace, say what attached. */
static void attach_pending(struct file_probes *fp, const char *path, const char *shown)
{
	struct uprobes *u = fp->u;
	size_t ncuda = 0, len = 0;
	char *names = NULL, said[ESC_TEXT_MAX];
	__u64 live;

	attach_locks(fp, path);
	if (u->umulti) {
		attach_batch(fp, path, u->skel->progs.cu_entry, true, false);
		attach_batch(fp, path, u->skel->progs.cu_return, true, true);
		attach_lookups(fp, path, shown);
		attach_batch(fp, path, u->skel->progs.probe_entry, false, false);
		attach_batch(fp, path, u->skel->progs.probe_return, false, true);
	} else {
		attach_singly(fp, path);
	}
	live = clock__mono_ns();
	for (size_t i = 0; i < fp->n; i++) {
		struct pending *p = &fp->p[i];
		struct meta_probe mp = {
			.id = p->id,
			.family = p->family,
			.kind = p->kind,
			.err = p->err,
			.live_ns = p->err ? 0 : live,
			.offset = p->offset,
			.flags = p->ret ? GS_PROBE_F_RET : 0,
			.tgid = u->tgid,
			.pid = u->pid,
			.lib = shown,
			.sym = p->sym,
		};

		meta__probe(u->out, &mp);
		if (p->err) {
			u->attach_failed++;
			fprintf(stderr, "gapscope: warning: cannot attach to %s in %s: %s\n",
				p->sym, esc__text(said, sizeof(said), shown, SIZE_MAX),
				p->err == -ENOENT ? "no such function" : strerror(-p->err));
		} else if (p->family == GS_PROBE_CUDA) {
			char *nn = realloc(names, len + strlen(p->sym) + 2);

			if (nn) {
				names = nn;
				len += sprintf(names + len, " %s", p->sym);
			}
			ncuda++;
		}
	}
	/* What it attached to, one line; the functions with -v. */
	if (ncuda)
		fprintf(stderr, "gapscope: %s: %zu CUDA probes%s",
			esc__text(said, sizeof(said), shown, SIZE_MAX), ncuda,
			u->verbose && names ? ":\n " : "\n");
	if (names && u->verbose)
		fprintf(stderr, "%s\n", names);
	u->cuda_probes += ncuda;
	free(names);
}

/* What a new file gets: its probes collected, then attached together. */
static void probe_file(struct uprobes *u, const char *path, const char *shown)
{
	char said[ESC_TEXT_MAX];
	/* Past CU_MAX_LIBS, libraries share the last slot: a disagreement in one turns kernel
	 * names from handles off for all of them. */
	struct file_probes fp = { .u = u,
				  .cu_lib = u->nfiles - 1 < CU_MAX_LIBS ? u->nfiles - 1 :
									  CU_MAX_LIBS - 1 };

	if (path__is_libcuda(shown)) {
		int err = elfx__for_each_dynsym(path, cuda_sym, &fp);

		if (err)
			fprintf(stderr, "gapscope: cannot read symbols of %s: %s\n",
				esc__text(said, sizeof(said), shown, SIZE_MAX), strerror(-err));
	}
	if (path__is_libc(shown)) {
		add_interval(&fp, GS_PROBE_LIBC, path, "malloc_trim");
		if (u->lock_holds) {
			struct pending *p;

			add_interval(&fp, GS_PROBE_LOCK, path, "pthread_mutex_lock");
			p = add_interval(&fp, GS_PROBE_LOCK, path, "pthread_mutex_unlock");
			if (p)
				p->ret = false; /* unlock entry alone ends the hold */
		}
	}
	for (int i = 0; i < u->nspecs; i++)
		if (probe_spec__matches(&u->specs[i], shown))
			add_interval(&fp, GS_PROBE_USER, path, u->specs[i].sym);
	if (!path__is_libcuda(shown) && !path__is_libc(shown))
		file_probes__add_tasks(&fp, path, shown);
	attach_pending(&fp, path, shown);
	for (size_t i = 0; i < fp.n; i++)
		free(fp.p[i].sym);
	free(fp.p);
}

int uprobes__attach_file(struct uprobes *u, const char *path, const char *shown, __u64 kdev,
			 __u64 kino)
{
	struct probed_file *n;
	struct file_key key;
	struct stat st;
	__u32 one = 1;

	if (stat(path, &st))
		return -errno;
	for (size_t i = 0; i < u->nfiles; i++)
		if (u->files[i].dev == st.st_dev && u->files[i].ino == st.st_ino)
			goto mark;
	n = realloc(u->files, (u->nfiles + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	u->files = n;
	u->files[u->nfiles++] = (struct probed_file){ st.st_dev, st.st_ino, strdup(shown) };
	probe_file(u, path, shown);
mark:
	/* Tell the mmap hook this inode is covered, in the kernel's dev_t encoding. */
	key.dev = kdev ? kdev : ((__u64)major(st.st_dev) << 20 | minor(st.st_dev));
	key.ino = kino ? kino : st.st_ino;
	bpf_map_update_elem(bpf_map__fd(u->skel->maps.attached), &key, &one, BPF_ANY);
	return 0;
}

struct host_fn {
	pid_t tgid;
	__u64 fn;
};

/* One function's entry or return, through the generic probe programs, as they were loaded. */
static int attach_generic(struct uprobes *u, bool ret, const char *path, __u64 off, __u32 id)
{
	struct bpf_program *prog = ret ? u->skel->progs.probe_return : u->skel->progs.probe_entry;
	__u64 cookie = id;
	int fd;

	if (!u->umulti)
		return attach_one(u, prog, ret, path, off, id);
	fd = umulti__attach(bpf_program__fd(prog), path, &off, &cookie, 1, ret, u->pid);
	if (fd >= 0 && links__add_fd(u->links, fd))
		fd = -ENOMEM;
	return fd < 0 ? fd : 0;
}

void uprobes__host_fn(struct uprobes *u, pid_t tgid, pid_t pid, __u64 fn)
{
	char path[2 * PATH_MAX + 64], dir[PATH_MAX], sym[64];
	struct procmaps_entry e = {};
	struct procmaps it;
	struct host_fn *n;
	bool found = false;
	__u64 off = 0;
	int err;

	for (size_t i = 0; i < u->nhost_fns; i++)
		if (u->host_fns[i].tgid == tgid && u->host_fns[i].fn == fn)
			return;
	if (u->nhost_fns >= HOST_FNS_MAX || !fn)
		return;
	n = realloc(u->host_fns, (u->nhost_fns + 1) * sizeof(*n));
	if (!n)
		return;
	u->host_fns = n;
	u->host_fns[u->nhost_fns++] = (struct host_fn){ tgid, fn }; /* tried once */
	if (procmaps__open(&it, pid))
		return;
	procmaps__dir(pid, dir, sizeof(dir));
	while (procmaps__next(&it, &e))
		if (fn >= e.start && fn < e.end && (e.prot & PROCMAPS_X) && e.path[0] == '/') {
			/* Through the process's root: right also for a process in a container. */
			snprintf(path, sizeof(path), "%s/root%s", dir, e.path);
			off = fn - e.start + e.pgoff;
			found = true;
			break;
		}
	{
		struct meta_probe mp = {
			.id = u->out->next_probe_id++,
			.family = GS_PROBE_HOST_FN,
			.offset = off,
			.flags = GS_PROBE_F_RET,
			.tgid = u->tgid,
			.pid = u->pid,
			.lib = found ? e.path : "?",
			.sym = sym,
		};

		snprintf(sym, sizeof(sym), "host function 0x%llx", (unsigned long long)fn);
		err = found ? attach_generic(u, false, path, off, mp.id) : -ENOENT;
		if (!err)
			err = attach_generic(u, true, path, off, mp.id);
		mp.err = err;
		mp.live_ns = err ? 0 : clock__mono_ns();
		meta__probe(u->out, &mp);
		if (err)
			u->attach_failed++;
	}
	procmaps__close(&it);
}

void uprobes__attach_predicted(struct uprobes *u, const char *exe)
{
	char lib[PATH_MAX];

	uprobes__attach_file(u, exe, exe, 0, 0); /* its own symbols: an async runtime's tasks */
	if (!resolve__library(exe, "libc.so.6", lib, sizeof(lib)))
		uprobes__attach_file(u, lib, lib, 0, 0);
	if (!resolve__library(exe, "libcuda.so.1", lib, sizeof(lib)))
		uprobes__attach_file(u, lib, lib, 0, 0);
	for (int i = 0; i < u->nspecs; i++)
		if (!probe_spec__resolve(&u->specs[i], exe, lib, sizeof(lib)))
			uprobes__attach_file(u, lib, lib, 0, 0);
}

void uprobes__attach_mapped(struct uprobes *u, pid_t pid)
{
	char open_path[2 * PATH_MAX + 64];
	struct procmaps_entry e;
	struct procmaps it;
	char dir[PATH_MAX];

	if (procmaps__open(&it, pid))
		return;
	procmaps__dir(pid, dir, sizeof(dir));
	while (procmaps__next(&it, &e)) {
		if (!e.ino || !(e.prot & PROCMAPS_X) || e.path[0] != '/')
			continue;
		/* Through the process's root: right also for a process in a container. */
		snprintf(open_path, sizeof(open_path), "%s/root%s", dir, e.path);
		uprobes__attach_file(u, open_path, e.path, 0, 0);
	}
	procmaps__close(&it);
}

void uprobes__watch(struct uprobes *u)
{
	static const char *const fixed[] = { "libcuda.so", "libc.so" };
	int fd = bpf_map__fd(u->skel->maps.watch);
	__u32 i = 0;

	for (size_t k = 0; k < sizeof(fixed) / sizeof(*fixed); k++, i++) {
		struct watch_name w = {};

		snprintf(w.prefix, sizeof(w.prefix), "%s", fixed[k]);
		w.len = strlen(w.prefix);
		bpf_map_update_elem(fd, &i, &w, BPF_ANY);
	}
	for (int p = 0; p < u->nspecs && i < PROC_WATCH_MAX; p++, i++) {
		struct watch_name w = {};

		probe_spec__lib_name(&u->specs[p], w.prefix, sizeof(w.prefix));
		w.len = strlen(w.prefix);
		bpf_map_update_elem(fd, &i, &w, BPF_ANY);
	}
}

__u32 uprobes__cuda_libs(const struct uprobes *u)
{
	__u32 n = 0;

	for (size_t i = 0; i < u->nfiles; i++)
		n += path__is_libcuda(u->files[i].path);
	return n;
}

void uprobes__free(struct uprobes *u)
{
	free(u->host_fns);
	for (size_t i = 0; i < u->nfiles; i++)
		free(u->files[i].path);
	free(u->files);
	u->files = NULL;
	u->nfiles = 0;
	for (size_t i = 0; i < u->nlookups; i++) {
		free(u->lookups[i].lib_path);
		free(u->lookups[i].sym);
	}
	free(u->lookups);
	u->lookups = NULL;
	u->nlookups = 0;
}
