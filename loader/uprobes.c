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
#include "trace_out.h"
#include "pidns.h"
#include "procmaps.h"
#include "resolve.h"
#include "trace.h"
#include "umulti.h"
#include "uprobes_int.h"
#include "vec.h"

/*
 * A file with probes, by inode: its symbols read and its probes collected once (their ids, the
 * trace's probe records), then attached for each process of the recording that maps it.
 */
struct probed_file {
	dev_t dev;
	ino_t ino;
	char *path;
	struct pending *p; /* its probes */
	size_t n;
	__u32 cu_lib;
	bool said; /* its probe records written, with its first process's attach */
};

/*
 * A process of the recording with its own links, each filtered by the kernel to the process's
 * memory, so that no other process on the host traps on a probed call (DESIGN.md, "Uprobes
 * belong to the recorded processes"). Its links are let go of when it exits.
 */
struct uproc {
	pid_t pid;     /* the links' filter, in our namespace; -1: none (get_proc) */
	pid_t tgid;    /* global, as the BPF side and the trace know it */
	size_t *files; /* indexes into uprobes.files attached for it */
	size_t nfiles;
	int *fds; /* uprobe_multi links */
	size_t nfds;
	struct bpf_link **bl; /* perf-event uprobes */
	size_t nbl;
};

/* A hot lookup's links in one process, until it is retired (fds -1 after). */
struct lookup_probe {
	int fd[2]; /* entry, return: kept in u->links as well */
	pid_t tgid;
	size_t file, idx; /* its probe: uprobes.files[file].p[idx] */
};

/* One process's attach of one file: the probes' outcomes, the links it makes. */
struct attach_ctx {
	struct uprobes *u;
	struct uproc *pr;
	struct probed_file *f;
	size_t fi;
	const char *path; /* the file, as this process sees it */
	int *err;	  /* per probe of f */
	unsigned int made;
};

/* A uprobe_multi link FD (or -errno) made for A's process: kept, or -errno. */
static int keep_fd(struct attach_ctx *a, int fd)
{
	struct uproc *pr = a->pr;
	int *n;

	if (fd < 0)
		return fd;
	n = realloc(pr->fds, (pr->nfds + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	pr->fds = n;
	if (links__add_fd(a->u->links, fd))
		return -ENOMEM;
	pr->fds[pr->nfds++] = fd;
	a->made++;
	return fd;
}

/* A perf-event uprobe of PROG at OFF in A's file, filtered by A's process. */
static int attach_one(struct attach_ctx *a, struct bpf_program *prog, bool ret, __u64 off, __u32 id)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = id, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, a->pr->pid, a->path, off, &o);
	struct bpf_link **n;

	if (!l)
		return -errno;
	n = realloc(a->pr->bl, (a->pr->nbl + 1) * sizeof(*n));
	if (!n) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	a->pr->bl = n;
	if (links__add(a->u->links, l))
		return -ENOMEM;
	a->pr->bl[a->pr->nbl++] = l;
	a->made++;
	return 0;
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

/* One uprobe_multi link for the probes of A's file that use PROG (entry or return). */
static void attach_batch(struct attach_ctx *a, struct bpf_program *prog, bool cuda, bool ret)
{
	struct probed_file *f = a->f;
	__u64 *offs = calloc(f->n, sizeof(__u64)), *cookies = calloc(f->n, sizeof(__u64));
	size_t n = 0;
	int fd;

	for (size_t i = 0; offs && cookies && i < f->n; i++) {
		struct pending *p = &f->p[i];

		if (a->err[i] || p->family == GS_PROBE_LOCK ||
		    (p->family == GS_PROBE_CUDA) != cuda || (ret && !p->ret) || p->lookup)
			continue;
		offs[n] = p->offset;
		cookies[n++] = p->id;
	}
	if (n) {
		fd = keep_fd(a, umulti__attach(bpf_program__fd(prog), a->path, offs, cookies, n,
					       ret, a->pr->pid));
		for (size_t i = 0; fd < 0 && i < f->n; i++)
			for (size_t j = 0; j < n; j++)
				if (cookies[j] == f->p[i].id)
					a->err[i] = fd;
	}
	free(offs);
	free(cookies);
}

/* Whether the lookups of library slot LIB may go: their names agreed often enough (uprobes.h). */
static bool lookups_trusted(struct uprobes *u, __u32 lib)
{
	struct cu_handle_stats st;

	return !bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.cu_libs), &lib, &st) && !st.off &&
	       st.agree >= LOOKUP_TRUST;
}

/* Each hot lookup as links of its own (entry and return), kept to be retired. */
static void attach_lookups(struct attach_ctx *a)
{
	struct uprobes *u = a->u;
	struct probed_file *f = a->f;

	for (size_t i = 0; i < f->n; i++) {
		struct pending *p = &f->p[i];
		__u64 cookie = p->id;
		struct lookup_probe *l;
		int fd[2];

		if (!p->lookup || a->err[i] || p->retired)
			continue;
		l = realloc(u->lookups, (u->nlookups + 1) * sizeof(*l));
		if (!l) {
			a->err[i] = -ENOMEM;
			continue;
		}
		u->lookups = l;
		/* Kept with the process's others too: its exit, or the end, lets go of them. */
		fd[0] = keep_fd(a, umulti__attach(bpf_program__fd(u->skel->progs.cu_entry), a->path,
						  &p->offset, &cookie, 1, false, a->pr->pid));
		fd[1] = fd[0] < 0 ?
				fd[0] :
				keep_fd(a, umulti__attach(bpf_program__fd(u->skel->progs.cu_return),
							  a->path, &p->offset, &cookie, 1, true,
							  a->pr->pid));
		if (fd[1] < 0) {
			a->err[i] = fd[1];
			continue;
		}
		u->lookups[u->nlookups++] =
			(struct lookup_probe){ { fd[0], fd[1] }, a->pr->tgid, a->fi, i };
	}
}

static struct uproc *find_proc(struct uprobes *u, pid_t tgid)
{
	for (size_t i = 0; i < u->nprocs; i++)
		if (u->procs[i].tgid == tgid)
			return &u->procs[i];
	return NULL;
}

/* FD, a link of process TGID, closed: not the process's to let go of any more. */
static void forget_fd(struct uprobes *u, pid_t tgid, int fd)
{
	struct uproc *pr = find_proc(u, tgid);

	for (size_t i = 0; pr && i < pr->nfds; i++)
		if (pr->fds[i] == fd) {
			pr->fds[i] = pr->fds[--pr->nfds];
			return;
		}
}

void uprobes__retire_lookups(struct uprobes *u)
{
	for (size_t i = 0; i < u->nlookups; i++) {
		struct lookup_probe *l = &u->lookups[i];
		struct probed_file *f = &u->files[l->file];
		struct pending *p = &f->p[l->idx];
		struct meta_probe mp;
		__u64 now;

		if (l->fd[0] < 0 || !lookups_trusted(u, f->cu_lib))
			continue;
		/* Before: the breakpoints go at once, the close returns after an RCU grace period. */
		now = clock__mono_ns();
		forget_fd(u, l->tgid, l->fd[0]);
		forget_fd(u, l->tgid, l->fd[1]);
		links__close_fd(u->links, l->fd[0]);
		links__close_fd(u->links, l->fd[1]);
		l->fd[0] = l->fd[1] = -1;
		if (p->retired)
			continue; /* said with another process's */
		p->retired = true;
		mp = (struct meta_probe){
			.id = p->id,
			.family = GS_PROBE_CUDA,
			.kind = p->kind,
			.live_ns = now,
			.offset = p->offset,
			.flags = GS_PROBE_F_RET | GS_PROBE_F_RETIRED,
			.tgid = l->tgid,
			.pid = l->tgid,
			.lib = f->path ? f->path : "?",
			.sym = p->sym ? p->sym : "?",
		};
		meta__probe(u->out, &mp);
	}
}

/* --lock-holds: a program per function (lock entry and return, unlock entry). */
static void attach_locks(struct attach_ctx *a)
{
	struct record_bpf *skel = a->u->skel;

	for (size_t i = 0; i < a->f->n; i++) {
		struct pending *p = &a->f->p[i];
		bool unlock = p->sym && !strcmp(p->sym, "pthread_mutex_unlock");

		if (p->family != GS_PROBE_LOCK || a->err[i])
			continue;
		a->err[i] = attach_one(a,
				       unlock ? skel->progs.unlock_entry : skel->progs.lock_entry,
				       false, p->offset, p->id);
		if (!a->err[i] && p->ret)
			a->err[i] = attach_one(a, skel->progs.lock_return, true, p->offset, p->id);
	}
}

/* Without uprobe_multi: a link per probe and direction. */
static void attach_singly(struct attach_ctx *a)
{
	struct record_bpf *skel = a->u->skel;

	for (size_t i = 0; i < a->f->n; i++) {
		struct pending *p = &a->f->p[i];
		bool cuda = p->family == GS_PROBE_CUDA;

		if (p->family == GS_PROBE_LOCK || (p->lookup && p->retired))
			continue;
		if (!a->err[i])
			a->err[i] = attach_one(
				a, cuda ? skel->progs.cu_entry : skel->progs.probe_entry, false,
				p->offset, p->id);
		if (!a->err[i] && p->ret)
			a->err[i] = attach_one(
				a, cuda ? skel->progs.cu_return : skel->progs.probe_return, true,
				p->offset, p->id);
	}
}

/*
 * Attaches A's file for A's process. The first process's attach is the file's: its probe records
 * written and what attached said; a later process's failures are counted and said with its pid.
 */
static void attach_for(struct attach_ctx *a, const char *shown)
{
	struct uprobes *u = a->u;
	struct probed_file *f = a->f;
	size_t ncuda = 0, len = 0;
	char *names = NULL, said[ESC_TEXT_MAX], whose[32] = "";
	__u64 live;

	for (size_t i = 0; i < f->n; i++)
		a->err[i] = f->p[i].err;
	attach_locks(a);
	if (u->umulti) {
		attach_batch(a, u->skel->progs.cu_entry, true, false);
		attach_batch(a, u->skel->progs.cu_return, true, true);
		attach_lookups(a);
		attach_batch(a, u->skel->progs.probe_entry, false, false);
		attach_batch(a, u->skel->progs.probe_return, false, true);
	} else {
		attach_singly(a);
	}
	live = clock__mono_ns();
	if (f->said)
		snprintf(whose, sizeof(whose), " for pid %d", a->pr->pid);
	for (size_t i = 0; i < f->n; i++) {
		struct pending *p = &f->p[i];
		struct meta_probe mp = {
			.id = p->id,
			.family = p->family,
			.kind = p->kind,
			.err = a->err[i],
			.live_ns = a->err[i] ? 0 : live,
			.offset = p->offset,
			.flags = p->ret ? GS_PROBE_F_RET : 0,
			.tgid = a->pr->tgid,
			.pid = a->pr->pid,
			.lib = shown,
			.sym = p->sym,
		};

		if (!f->said)
			meta__probe(u->out, &mp);
		if (a->err[i]) {
			u->attach_failed++;
			fprintf(stderr, "gapscope: warning: cannot attach to %s in %s%s: %s\n",
				p->sym, esc__text(said, sizeof(said), shown, SIZE_MAX), whose,
				a->err[i] == -ENOENT ? "no such function" : strerror(-a->err[i]));
		} else if (p->family == GS_PROBE_CUDA && !f->said) {
			char *nn = realloc(names, len + strlen(p->sym) + 2);

			if (nn) {
				names = nn;
				len += sprintf(names + len, " %s", p->sym);
			}
			ncuda++;
		}
	}
	/* What it attached to, one line, the first time; the functions with -v. */
	if (ncuda)
		fprintf(stderr, "gapscope: %s: %zu CUDA probes%s",
			esc__text(said, sizeof(said), shown, SIZE_MAX), ncuda,
			u->verbose && names ? ":\n " : "\n");
	if (names && u->verbose)
		fprintf(stderr, "%s\n", names);
	u->cuda_probes += ncuda;
	f->said = true;
	free(names);
}

/* What a new file gets: its probes collected, once; attached per process (attach_for). */
static void collect_file(struct uprobes *u, struct probed_file *f, const char *path,
			 const char *shown)
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
	f->p = fp.p;
	f->n = fp.n;
	f->cu_lib = fp.cu_lib;
}

/*
 * The process of global TGID (PID in our namespace), added when new. A process filter follows the
 * main thread's memory: a process whose main thread has exited (pthread_exit) has none to follow
 * (Linux 6.18's uprobe_multi filter compares the leader's, NULL then; programs loaded for
 * uprobe_multi cannot take a perf-event uprobe on a live thread instead). Its probes go into
 * every process, filtered in BPF, as before probes were per process: said once, with the cost.
 */
static struct uproc *get_proc(struct uprobes *u, pid_t pid, pid_t tgid)
{
	struct uproc *pr = find_proc(u, tgid), *n;
	char dir[PATH_MAX];

	if (pr || !tgid || pid <= 0)
		return pr;
	n = realloc(u->procs, (u->nprocs + 1) * sizeof(*n));
	if (!n)
		return NULL;
	u->procs = n;
	pr = &u->procs[u->nprocs++];
	*pr = (struct uproc){ .pid = pid, .tgid = tgid };
	procmaps__dir(pid, dir, sizeof(dir));
	if (strstr(dir, "/task/")) {
		pr->pid = -1; /* no filter */
		fprintf(stderr,
			"gapscope: warning: pid %d's main thread has exited: its library probes go "
			"into every process on the host, filtered in BPF (each call of a probed function "
			"by another process traps: microseconds)\n",
			pid);
	}
	return pr;
}

int uprobes__attach_file(struct uprobes *u, pid_t pid, pid_t tgid, const char *path,
			 const char *shown, __u64 kdev, __u64 kino)
{
	struct uproc *pr = get_proc(u, pid, tgid);
	struct probed_file *f = NULL, *n;
	struct file_key key = {};
	struct attach_ctx a;
	struct stat st;
	size_t fi, *nf;
	__u32 one = 1;

	if (!pr)
		return -ENOMEM;
	if (stat(path, &st))
		return -errno;
	for (fi = 0; fi < u->nfiles; fi++)
		if (u->files[fi].dev == st.st_dev && u->files[fi].ino == st.st_ino) {
			f = &u->files[fi];
			break;
		}
	if (!f) {
		n = realloc(u->files, (u->nfiles + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		u->files = n;
		f = &u->files[u->nfiles++];
		*f = (struct probed_file){ .dev = st.st_dev,
					   .ino = st.st_ino,
					   .path = strdup(shown) };
		collect_file(u, f, path, shown);
	}
	for (size_t i = 0; i < pr->nfiles; i++)
		if (pr->files[i] == fi)
			goto mark; /* attached for this process already */
	nf = realloc(pr->files, (pr->nfiles + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	pr->files = nf;
	pr->files[pr->nfiles++] = fi;
	if (f->n) {
		a = (struct attach_ctx){ .u = u, .pr = pr, .f = f, .fi = fi, .path = path };
		a.err = calloc(f->n, sizeof(*a.err));
		if (!a.err)
			return -ENOMEM;
		attach_for(&a, shown);
		u->links_made += a.made;
		free(a.err);
	}
mark:
	/* Tell the mmap hook this inode is covered for this process, in the kernel's encoding. */
	key.dev = kdev ? kdev : ((__u64)major(st.st_dev) << 20 | minor(st.st_dev));
	key.ino = kino ? kino : st.st_ino;
	key.tgid = tgid;
	bpf_map_update_elem(bpf_map__fd(u->skel->maps.attached), &key, &one, BPF_ANY);
	return 0;
}

/* Lets go of process PR's links (on threads of their own) and of its marks. */
static void let_go_of(struct uprobes *u, struct uproc *pr)
{
	int fd = bpf_map__fd(u->skel->maps.attached);

	for (size_t i = 0; i < pr->nfiles; i++) {
		const struct probed_file *f = &u->files[pr->files[i]];
		struct file_key key = {
			.dev = (__u64)major(f->dev) << 20 | minor(f->dev),
			.ino = f->ino,
			.tgid = pr->tgid,
		};

		bpf_map_delete_elem(fd, &key);
	}
	for (size_t i = 0; i < u->nlookups; i++)
		if (u->lookups[i].tgid == pr->tgid)
			u->lookups[i].fd[0] = u->lookups[i].fd[1] = -1;
	links__detach_later(u->links, pr->fds, pr->nfds, pr->bl, pr->nbl);
	free(pr->fds);
	free(pr->bl);
	free(pr->files);
	pr->fds = NULL;
	pr->bl = NULL;
	pr->files = NULL;
	pr->nfds = pr->nbl = pr->nfiles = 0;
}

void uprobes__process_gone(struct uprobes *u, pid_t tgid)
{
	struct uproc *pr = find_proc(u, tgid);

	if (!pr)
		return;
	let_go_of(u, pr);
	*pr = u->procs[--u->nprocs];
}

void uprobes__process_joined(struct uprobes *u, pid_t pid, pid_t tgid, __u64 since, __u32 why)
{
	struct uproc *pr = find_proc(u, tgid);
	__u64 before = u->links_made;

	/* A new image (exec) from a thread other than the main one: the thread that execs takes
	 * the process's id, the filtered task is gone: its links start again. */
	if (pr && why == GS_UNPROBED_EXEC) {
		let_go_of(u, pr);
		*pr = u->procs[--u->nprocs];
	} else if (pr) {
		return; /* probed already */
	}
	uprobes__attach_mapped(u, pid);
	meta__unprobed(u->out, tgid, since, why, u->links_made - before);
	if (u->verbose)
		fprintf(stderr, "gapscope: pid %d: %llu probe links after %.3f ms unprobed\n", pid,
			(unsigned long long)(u->links_made - before),
			(clock__mono_ns() - since) / 1e6);
}

struct host_fn {
	pid_t tgid;
	__u64 fn;
};

/* One function's entry or return, through the generic probe programs, for A's process. */
static int attach_generic(struct attach_ctx *a, bool ret, __u64 off, __u32 id)
{
	struct uprobes *u = a->u;
	struct bpf_program *prog = ret ? u->skel->progs.probe_return : u->skel->progs.probe_entry;
	__u64 cookie = id;
	int fd;

	if (!u->umulti)
		return attach_one(a, prog, ret, off, id);
	fd = keep_fd(a, umulti__attach(bpf_program__fd(prog), a->path, &off, &cookie, 1, ret,
				       a->pr->pid));
	return fd < 0 ? fd : 0;
}

void uprobes__host_fn(struct uprobes *u, pid_t tgid, pid_t pid, __u64 fn)
{
	char path[2 * PATH_MAX + 64], dir[PATH_MAX], sym[64];
	struct procmaps_entry e = {};
	struct uproc *pr = get_proc(u, pid, tgid);
	struct attach_ctx a = { .u = u, .pr = pr, .path = path };
	struct procmaps it;
	struct host_fn *n;
	bool found = false;
	__u64 off = 0;
	int err;

	for (size_t i = 0; i < u->nhost_fns; i++)
		if (u->host_fns[i].tgid == tgid && u->host_fns[i].fn == fn)
			return;
	if (u->nhost_fns >= HOST_FNS_MAX || !fn || !pr)
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
			.tgid = tgid,
			.pid = pr->pid,
			.lib = found ? e.path : "?",
			.sym = sym,
		};

		snprintf(sym, sizeof(sym), "host function 0x%llx", (unsigned long long)fn);
		err = found ? attach_generic(&a, false, off, mp.id) : -ENOENT;
		if (!err)
			err = attach_generic(&a, true, off, mp.id);
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

	/* its own symbols: an async runtime's tasks */
	uprobes__attach_file(u, u->pid, u->tgid, exe, exe, 0, 0);
	if (!resolve__library(exe, "libc.so.6", lib, sizeof(lib)))
		uprobes__attach_file(u, u->pid, u->tgid, lib, lib, 0, 0);
	if (!resolve__library(exe, "libcuda.so.1", lib, sizeof(lib)))
		uprobes__attach_file(u, u->pid, u->tgid, lib, lib, 0, 0);
	for (int i = 0; i < u->nspecs; i++)
		if (!probe_spec__resolve(&u->specs[i], exe, lib, sizeof(lib)))
			uprobes__attach_file(u, u->pid, u->tgid, lib, lib, 0, 0);
}

void uprobes__attach_mapped(struct uprobes *u, pid_t pid)
{
	char open_path[2 * PATH_MAX + 64];
	struct procmaps_entry e;
	pid_t tgid = u->ns ? pidns__global(u->ns, pid, true) : pid;
	struct procmaps it;
	char dir[PATH_MAX];

	if (!tgid || procmaps__open(&it, pid))
		return;
	procmaps__dir(pid, dir, sizeof(dir));
	while (procmaps__next(&it, &e)) {
		if (!e.ino || !(e.prot & PROCMAPS_X) || e.path[0] != '/')
			continue;
		/* Through the process's root: right also for a process in a container. */
		snprintf(open_path, sizeof(open_path), "%s/root%s", dir, e.path);
		uprobes__attach_file(u, pid, tgid, open_path, e.path, 0, 0);
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
	/* Their links are u->links', let go of with the recording's others. */
	for (size_t i = 0; i < u->nprocs; i++) {
		free(u->procs[i].fds);
		free(u->procs[i].bl);
		free(u->procs[i].files);
	}
	free(u->procs);
	u->procs = NULL;
	u->nprocs = 0;
	for (size_t i = 0; i < u->nfiles; i++) {
		free(u->files[i].path);
		for (size_t j = 0; j < u->files[i].n; j++)
			free(u->files[i].p[j].sym);
		free(u->files[i].p);
	}
	free(u->files);
	u->files = NULL;
	u->nfiles = 0;
	free(u->lookups);
	u->lookups = NULL;
	u->nlookups = 0;
}
