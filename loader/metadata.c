// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "proc.h"
#include "clock.h"
#include "metadata.h"
#include "trace.h"
#include "trace_out.h"

void meta__clock(struct trace_out *o, unsigned int sample_freq)
{
	struct gs_rec_clock c = {};
	struct utsname u;

	trace_out__hdr(&c.h, GS_REC_CLOCK, sizeof(c), 0);
	c.mono_ns = clock__mono_ns();
	c.real_ns = clock__real_ns();
	c.boot_ns = clock__boot_ns();
	c.h.ts = c.mono_ns;
	c.sample_freq = sample_freq;
	c.ncpus = libbpf_num_possible_cpus();
	if (!uname(&u)) {
		snprintf(c.host, sizeof(c.host), "%.63s", u.nodename);
		snprintf(c.kernel, sizeof(c.kernel), "%.63s", u.release);
	}
	trace_out__append(o, &c, sizeof(c));
}

void meta__target(struct trace_out *o, pid_t pid, char **argv)
{
	size_t len = 0, off = 0;
	struct gs_rec_target *t;
	int argc = 0;

	for (; argv && argv[argc]; argc++)
		len += strlen(argv[argc]) + 1;
	t = calloc(1, sizeof(*t) + len + 8);
	if (!t)
		return;
	trace_out__hdr(&t->h, GS_REC_TARGET, sizeof(*t) + len, pid);
	t->mode = argv ? GS_TARGET_LAUNCH : GS_TARGET_ATTACH;
	t->argc = argc;
	for (int i = 0; i < argc; i++) {
		strcpy(t->argv + off, argv[i]);
		off += strlen(argv[i]) + 1;
	}
	trace_out__append(o, t, sizeof(*t) + len);
	free(t);
}

void meta__probe(struct trace_out *o, const struct meta_probe *mp)
{
	size_t ll = strlen(mp->lib) + 1, sl = strlen(mp->sym) + 1;
	struct gs_rec_probe *p = calloc(1, sizeof(*p) + ll + sl + 8);

	if (!p)
		return;
	trace_out__hdr(&p->h, GS_REC_PROBE, sizeof(*p) + ll + sl, mp->tgid);
	p->h.ts = mp->live_ns;
	p->id = mp->id;
	p->family = mp->family;
	p->kind = mp->kind;
	p->err = mp->err;
	p->offset = mp->offset;
	p->flags = mp->flags;
	p->pid = mp->pid;
	memcpy(p->names, mp->lib, ll);
	memcpy(p->names + ll, mp->sym, sl);
	trace_out__append(o, p, sizeof(*p) + ll + sl);
	free(p);
}

void meta__unprobed(struct trace_out *o, pid_t tgid, __u64 from_ns, __u32 why, __u32 links)
{
	struct gs_rec_unprobed r;

	memset(&r, 0, sizeof(r));
	trace_out__hdr(&r.h, GS_REC_UNPROBED, sizeof(r), tgid);
	r.h.ts = clock__mono_ns();
	r.from_ns = from_ns < r.h.ts ? from_ns : r.h.ts;
	r.why = why;
	r.links = links;
	trace_out__append(o, &r, sizeof(r));
}

void meta__kernel_probe(struct trace_out *o, pid_t tgid, int pid, const char *what)
{
	struct meta_probe p = {
		.id = o->next_probe_id++,
		.family = GS_PROBE_KERNEL,
		.live_ns = clock__mono_ns(),
		.tgid = tgid,
		.pid = pid,
		.lib = "kernel",
		.sym = what,
	};

	meta__probe(o, &p);
}

unsigned int meta__threads(struct trace_out *o, pid_t tgid)
{
	unsigned int written = 0;
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", tgid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct comm_event c;
		char cpath[300];
		ssize_t n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/comm", tgid, de->d_name);
		fd = open(cpath, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(&c, 0, sizeof(c));
		trace_out__hdr(&c.h, GS_EV_COMM, sizeof(c), trace_out__gpid(o, tgid, true));
		c.h.tid = trace_out__gpid(o, atoi(de->d_name), false);
		n = read(fd, c.comm, sizeof(c.comm) - 1);
		close(fd);
		if (n > 0 && c.comm[n - 1] == '\n')
			c.comm[n - 1] = 0;
		trace_out__append(o, &c, sizeof(c));
		written++;
	}
	closedir(d);
	return written;
}

void meta__ksym(struct trace_out *o, __u64 addr, const char *name)
{
	size_t len = strlen(name) + 1;
	struct gs_rec_ksym *rec = calloc(1, sizeof(*rec) + len + 8);

	if (!rec)
		return;
	trace_out__hdr(&rec->h, GS_REC_KSYM, sizeof(*rec) + len, 0);
	rec->addr = addr;
	memcpy(rec->name, name, len);
	trace_out__append(o, rec, sizeof(*rec) + len);
	free(rec);
}

void meta__exit(struct trace_out *o, pid_t pid, int status, const struct rusage *ru)
{
	struct gs_rec_exit x = {};

	trace_out__hdr(&x.h, GS_REC_PROC_EXIT, sizeof(x), pid);
	x.status = status;
	x.utime_ns = clock__timeval_ns(&ru->ru_utime);
	x.stime_ns = clock__timeval_ns(&ru->ru_stime);
	trace_out__append(o, &x, sizeof(x));
}

void meta__end(struct trace_out *o, pid_t pid, __u64 events)
{
	struct gs_rec_end end = {};

	trace_out__hdr(&end.h, GS_REC_END, sizeof(end), pid);
	end.events = events;
	end.records = o->tw ? trace__records(o->tw) : 0;
	trace_out__append(o, &end, sizeof(end));
}
