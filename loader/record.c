// SPDX-License-Identifier: GPL-2.0
/*
 * gapscope record: attach the probes to a launched command (or a running process), consume the
 * ring buffer and append everything to the trace file.
 *
 * Lifecycle, top to bottom: parse -> check (output, privileges, BTF) -> open skeletons -> set
 * rodata -> load -> start the target stopped -> attach -> release the target -> poll -> write ->
 * cleanup.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "gapscope.h"
#include "cuda.h"
#include "futex.h"
#include "proc.h"
#include "sample.h"
#include "record.skel.h"
#include "cuda_fns.h"
#include "elfx.h"
#include "gapscope_cmd.h"
#include "ksyms.h"
#include "resolve.h"
#include "trace.h"
#include "umulti.h"

#define MAX_USER_PROBES 32

static struct env {
	const char *output;
	bool force;
	double duration;
	unsigned int freq;
	int sampler;		/* GS_SAMPLER_*, 0: the tick where the kernel allows, else the timer */
	const char *probes[MAX_USER_PROBES];
	int nprobes;
	bool lock_holds;
	bool follow_children;
	pid_t pid;
	char **cmd;
	bool verbose;
	unsigned int ringbuf_mb;
} env = {
	.output = "gapscope.gsc",
	.freq = 499,
	/*
	 * The ring buffer's pages are mapped twice into the recorder (the data area wraps) and all
	 * count as resident: 32 MiB is 64 MB of RSS. At the 512 KiB wakeup mark it still holds
	 * tens of milliseconds of the fastest storm this recorder can drain (tests/bench).
	 */
	.ringbuf_mb = 32,
};

enum {
	OPT_PROBE = 0x100,
	OPT_LOCK_HOLDS,
	OPT_FOLLOW,
	OPT_CUPTI,
	OPT_NO_CUPTI,
	OPT_NVML,
	OPT_ARCHIVE,
	OPT_DURATION,
	OPT_FREQ,
	OPT_SAMPLER,
	OPT_RINGBUF,
};

/* argp wraps help text at 79 columns: keep every line shorter. */
static const char doc[] =
	"Record CUDA driver calls, futex waits, malloc_trim, scheduling and CPU\n"
	"samples of a program, for 'gapscope report' and 'gapscope script'.\n"
	"\n"
	"USAGE: gapscope record [-o FILE] [-f] [--duration S] [--freq HZ]\n"
	"         [--probe LIB:SYM]... [--follow-children] (-p PID | -- CMD [ARGS])\n"
	"\n"
	"EXAMPLES:\n"
	"  gapscope record -- ./zkengine --device sim   # until it exits\n"
	"  gapscope record -o t.gsc -f -- python3 train.py\n"
	"  gapscope record -p 4242 --duration 10        # a running process\n"
	"  gapscope record --probe libc.so.6:free -- ./app   # time every free()\n"
	"\n"
	"Needs root (or CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n";

static const struct argp_option opts[] = {
	{ "output", 'o', "FILE", 0, "Trace file (default gapscope.gsc)", 0 },
	{ "force", 'f', NULL, 0, "Overwrite an existing trace file", 0 },
	{ "pid", 'p', "PID", 0, "Record a running process", 0 },
	{ "duration", OPT_DURATION, "S", 0, "Stop recording after S seconds", 0 },
	{ "freq", OPT_FREQ, "HZ", 0, "CPU samples per second per CPU, at most (default 499)", 0 },
	{ "sampler", OPT_SAMPLER, "tick|timer", 0,
	  "CPU samples at the scheduler tick (default: no added interrupt, at most CONFIG_HZ a "
	  "second) or from a cpu-clock timer (any rate, one interrupt per sample)",
	  0 },
	{ "probe", OPT_PROBE, "LIB:SYM", 0, "Also record calls of SYM in LIB as intervals", 0 },
	{ "lock-holds", OPT_LOCK_HOLDS, NULL, 0,
	  "pthread mutex hold times (uprobes on pthread_mutex_lock/unlock: three traps per pair)",
	  0 },
	{ "follow-children", OPT_FOLLOW, NULL, 0, "Also record processes the target forks", 0 },
	{ "cupti", OPT_CUPTI, NULL, 0, "CUPTI activity records (not yet supported)", 0 },
	{ "no-cupti", OPT_NO_CUPTI, NULL, 0, "No CUPTI", 0 },
	{ "nvml", OPT_NVML, NULL, 0, "NVML utilization samples (not yet supported)", 0 },
	{ "archive", OPT_ARCHIVE, NULL, 0, "Keep binaries for offline reports (not yet supported)",
	  0 },
	{ "ringbuf-mb", OPT_RINGBUF, "MB", 0, "Ring buffer size in MiB (default 32)", 0 },
	{ "verbose", 'v', NULL, 0, "libbpf debug output", 0 },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case 'o':
		env.output = arg;
		break;
	case 'f':
		env.force = true;
		break;
	case 'v':
		env.verbose = true;
		break;
	case 'p':
		errno = 0;
		env.pid = strtol(arg, &end, 10);
		if (errno || *end || env.pid <= 0)
			argp_error(state, "invalid pid: %s", arg);
		break;
	case OPT_DURATION:
		env.duration = strtod(arg, &end);
		if (*end || env.duration <= 0)
			argp_error(state, "invalid duration: %s", arg);
		break;
	case OPT_FREQ:
		env.freq = strtoul(arg, &end, 10);
		if (*end || !env.freq || env.freq > 100000)
			argp_error(state, "invalid frequency: %s", arg);
		break;
	case OPT_SAMPLER:
		if (!strcmp(arg, "tick"))
			env.sampler = GS_SAMPLER_TICK;
		else if (!strcmp(arg, "timer"))
			env.sampler = GS_SAMPLER_TIMER;
		else
			argp_error(state, "--sampler wants tick or timer, got %s", arg);
		break;
	case OPT_RINGBUF:
		env.ringbuf_mb = strtoul(arg, &end, 10);
		if (*end || !env.ringbuf_mb || (env.ringbuf_mb & (env.ringbuf_mb - 1)))
			argp_error(state, "ring buffer size must be a power of two: %s", arg);
		break;
	case OPT_PROBE:
		if (!strchr(arg, ':') || arg[0] == ':' || !strchr(arg, ':')[1])
			argp_error(state, "--probe wants LIB:SYM, got %s", arg);
		if (env.nprobes == MAX_USER_PROBES)
			argp_error(state, "at most %d --probe options", MAX_USER_PROBES);
		env.probes[env.nprobes++] = arg;
		break;
	case OPT_FOLLOW:
		env.follow_children = true;
		break;
	case OPT_LOCK_HOLDS:
		env.lock_holds = true;
		break;
	case OPT_CUPTI:
	case OPT_NVML:
	case OPT_ARCHIVE:
		fprintf(stderr, "gapscope: warning: %s is not supported yet, ignored\n",
			state->argv[state->next - 1]);
		break;
	case OPT_NO_CUPTI:
		break;
	case ARGP_KEY_ARG:
		/* The command and everything after it belong to the target. */
		env.cmd = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (!env.cmd && !env.pid)
			argp_error(state, "need -p PID or a command after --");
		if (env.cmd && env.pid)
			argp_error(state, "-p PID and a command exclude each other");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* An attached library file. */
struct lib {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct map_seen {
	__u32 tgid;
	__u64 start, end, ino, pgoff;
};

struct recorder {
	/*
	 * Every probe family in one object (bpf/bpf.mk links them): the family names are the one
	 * skeleton under the name of the family a map or program comes from.
	 */
	struct record_bpf *skel;
	struct record_bpf *proc, *cuda, *futex, *offcpu, *sample, *probe;
	struct ring_buffer *rb;
	struct trace_writer *tw;

	struct bpf_link **links;
	size_t nlinks, caplinks;
	int *mfds;		/* uprobe_multi links */
	size_t nmfds;
	bool umulti;
	int *perf_fds;
	int nperf;
	int sampler;		/* GS_SAMPLER_* in use */
	__u64 start_ns;		/* CLOCK_MONOTONIC when recording began */

	struct lib *libs;
	size_t nlibs;
	__u32 next_probe_id;
	int uprobe_pid; /* pid filter for uprobes: the target, or -1 with children */

	struct map_seen *maps;
	size_t nmaps, capmaps;
	struct ksyms *ksyms;
	pthread_t ksyms_thread;	/* reading them, while ksyms_loading */
	bool ksyms_loading;

	pid_t target;
	bool launched;
	bool target_gone;
	int status;
	struct rusage ru;

	__u64 events;
	__u64 attach_failed;
	__u64 cuda_probes;
	bool live; /* still recording */
	unsigned char *buf; /* compaction buffer */
	char exe[PATH_MAX];
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void hdr_init(struct gs_hdr *h, __u32 type, __u32 size, __u32 tgid)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->ts = now_ns(CLOCK_MONOTONIC);
	h->tgid = tgid;
	h->tid = tgid;
}

static void append(struct recorder *r, const void *rec, size_t size)
{
	int err;

	if (!r->tw)
		return;
	err = trace__append(r->tw, rec, size);
	if (err) {
		fprintf(stderr, "gapscope: cannot write %s: %s\n", env.output, strerror(-err));
		trace__finish(r->tw);
		r->tw = NULL;
	}
}

/* ---- trace metadata ---------------------------------------------------------------------- */

static void write_clock(struct recorder *r)
{
	struct gs_rec_clock c = {};
	struct utsname u;

	hdr_init(&c.h, GS_REC_CLOCK, sizeof(c), 0);
	c.mono_ns = now_ns(CLOCK_MONOTONIC);
	c.real_ns = now_ns(CLOCK_REALTIME);
	c.boot_ns = now_ns(CLOCK_BOOTTIME);
	c.h.ts = c.mono_ns;
	c.sample_freq = env.freq;
	c.ncpus = libbpf_num_possible_cpus();
	if (!uname(&u)) {
		snprintf(c.host, sizeof(c.host), "%.63s", u.nodename);
		snprintf(c.kernel, sizeof(c.kernel), "%.63s", u.release);
	}
	append(r, &c, sizeof(c));
}

static void write_target(struct recorder *r, pid_t pid, char **argv)
{
	size_t len = 0, off = 0;
	struct gs_rec_target *t;
	int argc = 0;

	for (; argv && argv[argc]; argc++)
		len += strlen(argv[argc]) + 1;
	t = calloc(1, sizeof(*t) + len + 8);
	if (!t)
		return;
	hdr_init(&t->h, GS_REC_TARGET, sizeof(*t) + len, pid);
	t->mode = argv ? GS_TARGET_LAUNCH : GS_TARGET_ATTACH;
	t->argc = argc;
	for (int i = 0; i < argc; i++) {
		strcpy(t->argv + off, argv[i]);
		off += strlen(argv[i]) + 1;
	}
	append(r, t, sizeof(*t) + len);
	free(t);
}

static void write_probe(struct recorder *r, __u32 id, __u32 family, __u32 kind, int err, __u64 live,
			__u64 offset, __u32 flags, const char *lib, const char *sym)
{
	size_t ll = strlen(lib) + 1, sl = strlen(sym) + 1;
	struct gs_rec_probe *p = calloc(1, sizeof(*p) + ll + sl + 8);

	if (!p)
		return;
	hdr_init(&p->h, GS_REC_PROBE, sizeof(*p) + ll + sl, r->target);
	p->h.ts = live;
	p->id = id;
	p->family = family;
	p->kind = kind;
	p->err = err;
	p->offset = offset;
	p->flags = flags;
	p->pid = r->uprobe_pid;
	memcpy(p->names, lib, ll);
	memcpy(p->names + ll, sym, sl);
	append(r, p, sizeof(*p) + ll + sl);
	free(p);
}

static bool is_cuda_lib(const char *name);

/* Kernel names from handles (bpf/cuda.h): the calibration and fallback counts so far. */
static void write_cu_handles(struct recorder *r)
{
	struct gs_rec_cu_handles c = {};
	int fd = bpf_map__fd(r->cuda->maps.cu_libs);

	hdr_init(&c.h, GS_REC_CU_HANDLES, sizeof(c), r->target);
	for (__u32 i = 0; i < CU_MAX_LIBS; i++) {
		struct cu_handle_stats st;

		if (bpf_map_lookup_elem(fd, &i, &st))
			continue;
		c.agree += st.agree;
		c.disagree += st.disagree;
		c.named += st.named;
		c.rejected += st.rejected;
		c.libs_off += !!st.off;
	}
	for (size_t i = 0; i < r->nlibs; i++)
		c.libs += is_cuda_lib(r->libs[i].path);
	append(r, &c, sizeof(c));
}

static void write_losses(struct recorder *r)
{
	int ncpus = libbpf_num_possible_cpus();
	size_t size = sizeof(struct gs_rec_losses) + GS_LOSS_MAX * sizeof(__u64);
	struct gs_rec_losses *l = calloc(1, size);
	__u64 *vals = calloc(ncpus, sizeof(__u64));
	int fd = bpf_map__fd(r->proc->maps.losses);

	if (!l || !vals)
		goto out;
	hdr_init(&l->h, GS_REC_LOSSES, size, r->target);
	l->n = GS_LOSS_MAX;
	for (__u32 i = 0; i < GS_LOSS_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			l->count[i] += vals[c];
	}
	/* Runs the kernel skipped because another BPF program was active on the CPU (a sample
	 * that fires inside a uprobe program, for example). */
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, r->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			l->count[GS_LOSS_RECURSION] += info.recursion_misses;
	}
	l->count[GS_LOSS_ATTACH] = r->attach_failed;
	append(r, l, size);

	/* The ring-buffer losses again, by event type. */
	size_t tsize = sizeof(struct gs_rec_lost_types) + GS_EV_MAX * sizeof(__u64);
	struct gs_rec_lost_types *t = calloc(1, tsize);

	fd = bpf_map__fd(r->proc->maps.lost_types);
	if (t) {
		hdr_init(&t->h, GS_REC_LOST_TYPES, tsize, r->target);
		t->n = GS_EV_MAX;
		for (__u32 i = 0; i < GS_EV_MAX; i++) {
			if (bpf_map_lookup_elem(fd, &i, vals))
				continue;
			for (int c = 0; c < ncpus; c++)
				t->count[i] += vals[c];
		}
		append(r, t, tsize);
		free(t);
	}
	write_cu_handles(r);
out:
	free(l);
	free(vals);
}

static __u64 total_losses(struct recorder *r, __u64 *by_kind)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *vals = calloc(ncpus, sizeof(__u64)), sum = 0;
	int fd = bpf_map__fd(r->proc->maps.losses);

	for (__u32 i = 0; vals && i < GS_LOSS_MAX; i++) {
		by_kind[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			by_kind[i] += vals[c];
		sum += by_kind[i];
	}
	by_kind[GS_LOSS_ATTACH] = r->attach_failed;
	free(vals);
	return sum + r->attach_failed;
}

/* ---- maps, build-ids, thread names ------------------------------------------------------- */

static bool map_seen(struct recorder *r, const struct map_seen *m)
{
	for (size_t i = 0; i < r->nmaps; i++) {
		const struct map_seen *s = &r->maps[i];

		if (s->tgid == m->tgid && s->start == m->start && s->end == m->end &&
		    s->ino == m->ino && s->pgoff == m->pgoff)
			return true;
	}
	if (r->nmaps == r->capmaps) {
		size_t cap = r->capmaps ? r->capmaps * 2 : 256;
		struct map_seen *n = realloc(r->maps, cap * sizeof(*n));

		if (!n)
			return true;
		r->maps = n;
		r->capmaps = cap;
	}
	r->maps[r->nmaps++] = *m;
	return false;
}

/* Records every file-backed mapping of tgid not recorded before (and [vdso]). */
static void scan_maps(struct recorder *r, pid_t tgid)
{
	char path[64], line[PATH_MAX + 256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", tgid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8], file[PATH_MAX] = "";
		struct map_seen m;
		struct gs_rec_map *rec;
		size_t plen;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]", &start, &end, perms,
			   &pgoff, &maj, &min, &ino, file) < 7)
			continue;
		char *name = file + strspn(file, " ");

		if (!ino && strcmp(name, "[vdso]"))
			continue;
		m = (struct map_seen){ tgid, start, end, ino, pgoff };
		if (map_seen(r, &m))
			continue;
		plen = strlen(name) + 1;
		rec = calloc(1, sizeof(*rec) + plen + 8);
		if (!rec)
			continue;
		hdr_init(&rec->h, GS_REC_MAP, sizeof(*rec) + plen, tgid);
		rec->start = start;
		rec->end = end;
		rec->pgoff = pgoff;
		rec->dev = makedev(maj, min);
		rec->ino = ino;
		rec->prot = (perms[0] == 'r' ? 1 : 0) | (perms[1] == 'w' ? 2 : 0) |
			    (perms[2] == 'x' ? 4 : 0);
		memcpy(rec->path, name, plen);
		if (ino) {
			/* Through map_files: the very file mapped, also in another mount namespace
			 * or after it was deleted. */
			char mf[128];

			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", tgid, start, end);
			rec->build_id_len =
				elfx__build_id(mf, rec->build_id, sizeof(rec->build_id));
		}
		append(r, rec, sizeof(*rec) + plen);
		free(rec);
	}
	fclose(f);
}

static void snapshot_threads(struct recorder *r, pid_t tgid)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", tgid);
	d = opendir(path);
	if (!d)
		return;
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
		hdr_init(&c.h, GS_EV_COMM, sizeof(c), tgid);
		c.h.tid = atoi(de->d_name);
		n = read(fd, c.comm, sizeof(c.comm) - 1);
		close(fd);
		if (n > 0 && c.comm[n - 1] == '\n')
			c.comm[n - 1] = 0;
		append(r, &c, sizeof(c));
	}
	closedir(d);
}

/* ---- uprobes ------------------------------------------------------------------------------ */

static int add_link(struct recorder *r, struct bpf_link *l)
{
	if (r->nlinks == r->caplinks) {
		size_t cap = r->caplinks ? r->caplinks * 2 : 256;
		struct bpf_link **n = realloc(r->links, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->links = n;
		r->caplinks = cap;
	}
	r->links[r->nlinks++] = l;
	return 0;
}

static int add_fd(struct recorder *r, int fd)
{
	int *n = realloc(r->mfds, (r->nmfds + 1) * sizeof(*n));

	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	r->mfds = n;
	r->mfds[r->nmfds++] = fd;
	return 0;
}

static int attach_one(struct recorder *r, struct bpf_program *prog, bool ret, const char *path,
		      __u64 off, __u32 id)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = id, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, r->uprobe_pid, path, off, &o);

	if (!l)
		return -errno;
	return add_link(r, l);
}

/* The probes one file gets, collected first, then attached together. */
struct pending {
	__u32 id;
	__u32 family;	/* enum gs_probe_family */
	__u32 kind;	/* enum cu_kind */
	bool ret;	/* with a return probe */
	__u64 offset;
	char *sym;
	int err;
};

struct file_probes {
	struct recorder *r;
	struct pending *p;
	size_t n, cap;
};

static struct pending *add_pending(struct file_probes *fp, __u32 family, const char *sym,
				   __u64 offset)
{
	struct pending *p;

	for (size_t i = 0; i < fp->n; i++)
		if (fp->p[i].offset == offset && fp->p[i].family == family)
			return NULL;	/* an alias of a function already probed */
	if (fp->n == fp->cap) {
		size_t cap = fp->cap ? fp->cap * 2 : 64;

		p = realloc(fp->p, cap * sizeof(*p));
		if (!p)
			return NULL;
		fp->p = p;
		fp->cap = cap;
	}
	p = &fp->p[fp->n++];
	*p = (struct pending){ .family = family, .offset = offset, .sym = strdup(sym) };
	p->id = fp->r->next_probe_id++;
	return p;
}

static int cuda_sym(const struct elfx_sym *s, void *ctx)
{
	struct file_probes *fp = ctx;
	struct recorder *r = fp->r;
	struct cu_fn_desc d;
	struct pending *p;

	if (!cuda_fns__lookup(s->name, &d) || r->next_probe_id >= CU_MAX_FNS)
		return 0;
	p = add_pending(fp, GS_PROBE_CUDA, s->name, s->offset);
	if (!p)
		return 0;
	p->kind = d.kind;
	p->ret = d.flags & CU_F_RET;
	/* The library being attached is the last one added (attach_file); past CU_MAX_LIBS,
	 * libraries share the last slot, so a disagreement in one turns names off for all. */
	d.lib = r->nlibs - 1 < CU_MAX_LIBS ? r->nlibs - 1 : CU_MAX_LIBS - 1;
	p->err = bpf_map_update_elem(bpf_map__fd(r->cuda->maps.cu_fns), &p->id, &d, BPF_ANY);
	return 0;
}

static struct pending *add_interval(struct file_probes *fp, __u32 family, const char *path,
				    const char *sym)
{
	__u64 off = 0;
	int err = elfx__sym_offset(path, sym, &off);
	struct pending *p = add_pending(fp, family, sym, off);

	if (p) {
		p->ret = true;
		p->err = err;
	}
	return p;
}

/* One uprobe_multi link for the probes of FP that use PROG (entry or return). */
static void attach_batch(struct recorder *r, struct file_probes *fp, const char *path,
			 struct bpf_program *prog, bool cuda, bool ret)
{
	__u64 *offs = calloc(fp->n, sizeof(__u64)), *cookies = calloc(fp->n, sizeof(__u64));
	size_t n = 0;
	int fd;

	for (size_t i = 0; offs && cookies && i < fp->n; i++) {
		struct pending *p = &fp->p[i];

		if (p->err || p->family == GS_PROBE_LOCK || (p->family == GS_PROBE_CUDA) != cuda ||
		    (ret && !p->ret))
			continue;
		offs[n] = p->offset;
		cookies[n++] = p->id;
	}
	if (n) {
		fd = umulti__attach(bpf_program__fd(prog), path, offs, cookies, n, ret,
				    r->uprobe_pid);
		if (fd >= 0 && add_fd(r, fd))
			fd = -ENOMEM;
		for (size_t i = 0; fd < 0 && i < fp->n; i++)
			for (size_t j = 0; j < n; j++)
				if (cookies[j] == fp->p[i].id)
					fp->p[i].err = fd;
	}
	free(offs);
	free(cookies);
}

/* Attach the collected probes, record them in the trace, say what attached. */
static void attach_pending(struct recorder *r, struct file_probes *fp, const char *path,
			   const char *shown)
{
	size_t ncuda = 0, len = 0;
	char *names = NULL;
	__u64 live;

	/* --lock-holds: a program per function (lock entry and return, unlock entry). */
	for (size_t i = 0; i < fp->n; i++) {
		struct pending *p = &fp->p[i];
		bool unlock = p->sym && !strcmp(p->sym, "pthread_mutex_unlock");

		if (p->family != GS_PROBE_LOCK || p->err)
			continue;
		p->err = attach_one(r, unlock ? r->probe->progs.unlock_entry :
						r->probe->progs.lock_entry,
				    false, path, p->offset, p->id);
		if (!p->err && p->ret)
			p->err = attach_one(r, r->probe->progs.lock_return, true, path, p->offset,
					    p->id);
	}
	if (r->umulti) {
		attach_batch(r, fp, path, r->cuda->progs.cu_entry, true, false);
		attach_batch(r, fp, path, r->cuda->progs.cu_return, true, true);
		attach_batch(r, fp, path, r->probe->progs.probe_entry, false, false);
		attach_batch(r, fp, path, r->probe->progs.probe_return, false, true);
	} else {
		for (size_t i = 0; i < fp->n; i++) {
			struct pending *p = &fp->p[i];
			bool cuda = p->family == GS_PROBE_CUDA;

			if (p->family == GS_PROBE_LOCK)
				continue;
			if (!p->err)
				p->err = attach_one(r, cuda ? r->cuda->progs.cu_entry :
							      r->probe->progs.probe_entry,
						    false, path, p->offset, p->id);
			if (!p->err && p->ret)
				p->err = attach_one(r, cuda ? r->cuda->progs.cu_return :
							      r->probe->progs.probe_return,
						    true, path, p->offset, p->id);
		}
	}
	live = now_ns(CLOCK_MONOTONIC);
	for (size_t i = 0; i < fp->n; i++) {
		struct pending *p = &fp->p[i];

		write_probe(r, p->id, p->family, p->kind, p->err, p->err ? 0 : live, p->offset,
			    p->ret ? GS_PROBE_F_RET : 0, shown, p->sym);
		if (p->err) {
			r->attach_failed++;
			fprintf(stderr, "gapscope: warning: cannot attach to %s in %s: %s\n", p->sym,
				shown, p->err == -ENOENT ? "no such function" : strerror(-p->err));
		} else if (p->family == GS_PROBE_CUDA) {
			char *nn = realloc(names, len + strlen(p->sym) + 2);

			if (nn) {
				names = nn;
				len += sprintf(names + len, " %s", p->sym);
			}
			ncuda++;
		}
	}
	if (ncuda)
		fprintf(stderr, "gapscope: %s: %zu CUDA probes:\n ", shown, ncuda);
	if (names)
		fprintf(stderr, "%s\n", names);
	r->cuda_probes += ncuda;
	free(names);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static bool is_cuda_lib(const char *name)
{
	return !strncmp(base_name(name), "libcuda.so", 10);
}

static bool is_libc(const char *name)
{
	return !strncmp(base_name(name), "libc.so", 7);
}

/* Whether a --probe LIB names this file (by path, or by file name). */
static bool probe_matches(const char *spec_lib, size_t len, const char *file)
{
	char lib[PATH_MAX];

	snprintf(lib, sizeof(lib), "%.*s", (int)len, spec_lib);
	if (strchr(lib, '/')) {
		char a[PATH_MAX], b[PATH_MAX];

		return realpath(lib, a) && realpath(file, b) && !strcmp(a, b);
	}
	return !strcmp(lib, base_name(file)) ||
	       (!strncmp(lib, base_name(file), strlen(lib)) && base_name(file)[strlen(lib)] == '.');
}

/*
 * Attach every probe that belongs in FILE, once per file (inode). PATH is what to open (it may
 * be /proc/PID/fd/N or /proc/PID/root/...), SHOWN what the trace calls it.
 */
static int attach_file(struct recorder *r, const char *path, const char *shown, __u64 kdev,
		       __u64 kino)
{
	struct stat st;
	struct file_key key;
	__u32 one = 1;

	if (stat(path, &st))
		return -errno;
	for (size_t i = 0; i < r->nlibs; i++)
		if (r->libs[i].dev == st.st_dev && r->libs[i].ino == st.st_ino)
			goto mark;
	struct lib *n = realloc(r->libs, (r->nlibs + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	r->libs = n;
	r->libs[r->nlibs++] = (struct lib){ st.st_dev, st.st_ino, strdup(shown) };

	struct file_probes fp = { .r = r };

	if (is_cuda_lib(shown)) {
		int err = elfx__for_each_dynsym(path, cuda_sym, &fp);

		if (err)
			fprintf(stderr, "gapscope: cannot read symbols of %s: %s\n", shown,
				strerror(-err));
	}
	if (is_libc(shown)) {
		add_interval(&fp, GS_PROBE_LIBC, path, "malloc_trim");
		if (env.lock_holds) {
			struct pending *p;

			add_interval(&fp, GS_PROBE_LOCK, path, "pthread_mutex_lock");
			p = add_interval(&fp, GS_PROBE_LOCK, path, "pthread_mutex_unlock");
			if (p)
				p->ret = false; /* unlock entry alone ends the hold */
		}
	}
	for (int i = 0; i < env.nprobes; i++) {
		const char *colon = strrchr(env.probes[i], ':');

		if (probe_matches(env.probes[i], colon - env.probes[i], shown))
			add_interval(&fp, GS_PROBE_USER, path, colon + 1);
	}
	attach_pending(r, &fp, path, shown);
	for (size_t i = 0; i < fp.n; i++)
		free(fp.p[i].sym);
	free(fp.p);
mark:
	/* Tell the mmap hook this inode is covered, in the kernel's dev_t encoding. */
	key.dev = kdev ? kdev : ((__u64)major(st.st_dev) << 20 | minor(st.st_dev));
	key.ino = kino ? kino : st.st_ino;
	bpf_map_update_elem(bpf_map__fd(r->proc->maps.attached), &key, &one, BPF_ANY);
	return 0;
}

static void set_watch(struct recorder *r)
{
	int fd = bpf_map__fd(r->proc->maps.watch);
	__u32 i = 0;

	const char *fixed[] = { "libcuda.so", "libc.so" };

	for (size_t k = 0; k < 2; k++, i++) {
		struct watch_name w = {};

		snprintf(w.prefix, sizeof(w.prefix), "%s", fixed[k]);
		w.len = strlen(w.prefix);
		bpf_map_update_elem(fd, &i, &w, BPF_ANY);
	}
	for (int p = 0; p < env.nprobes && i < PROC_WATCH_MAX; p++, i++) {
		const char *colon = strrchr(env.probes[p], ':');
		const char *lib = env.probes[p];
		struct watch_name w = {};

		for (const char *s = lib; s < colon; s++)
			if (*s == '/')
				lib = s + 1;
		snprintf(w.prefix, sizeof(w.prefix), "%.*s", (int)(colon - lib), lib);
		w.len = strlen(w.prefix);
		bpf_map_update_elem(fd, &i, &w, BPF_ANY);
	}
}

/* ---- events -------------------------------------------------------------------------------- */

static void handle_mmap(struct recorder *r, const struct mmap_event *ev)
{
	char fdpath[64], shown[PATH_MAX];
	ssize_t n;

	if (ev->flags & MMAP_F_WATCHED) {
		snprintf(fdpath, sizeof(fdpath), "/proc/%u/fd/%d", ev->h.tgid, ev->fd);
		n = readlink(fdpath, shown, sizeof(shown) - 1);
		if (n > 0) {
			shown[n] = 0;
			/* The fd link opens the very file mapped (also across mount namespaces). */
			attach_file(r, fdpath, shown, ev->dev, ev->ino);
		} else if (ev->flags & MMAP_F_STOPPED) {
			fprintf(stderr, "gapscope: warning: cannot attach to %s of pid %u: %s\n",
				ev->name, ev->h.tgid, strerror(errno));
		}
		if (ev->flags & MMAP_F_STOPPED)
			kill(ev->h.tgid, SIGCONT);
	}
	scan_maps(r, ev->h.tgid);
}

static void *ksyms_worker(void *arg)
{
	return ksyms__load();
}

/* The kernel's symbols, read by a thread started before the BPF load (~50 ms, off the path
 * to "recording"); the first kernel stack waits for it. */
static struct ksyms *get_ksyms(struct recorder *r)
{
	void *k = NULL;

	if (r->ksyms_loading) {
		r->ksyms_loading = false;
		if (!pthread_join(r->ksyms_thread, &k))
			r->ksyms = k;
	}
	return r->ksyms;
}

static void emit_ksyms(struct recorder *r, const __u64 *frames, unsigned int n)
{
	if (!n || !get_ksyms(r))
		return;
	for (unsigned int i = 0; i < n; i++) {
		struct ksym *k = ksyms__find(r->ksyms, frames[i]);
		struct gs_rec_ksym *rec;
		size_t len;

		if (!k || k->emitted)
			continue;
		k->emitted = true;
		len = strlen(k->name) + 1;
		rec = calloc(1, sizeof(*rec) + len + 8);
		if (!rec)
			continue;
		hdr_init(&rec->h, GS_REC_KSYM, sizeof(*rec) + len, 0);
		rec->addr = k->addr;
		memcpy(rec->name, k->name, len);
		append(r, rec, sizeof(*rec) + len);
		free(rec);
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	struct gs_hdr *h = data;

	if (size < sizeof(*h) || h->size > size)
		return 0;
	r->events++;
	switch (h->type) {
	case GS_EV_MMAP:
		if (h->size >= sizeof(struct mmap_event))
			handle_mmap(r, data);
		break;
	case GS_EV_EXEC:
		scan_maps(r, h->tgid);
		break;
	}
	if (h->flags & GS_F_STACK) {
		/* Compact the fixed-size stack arrays to the frames actually taken. */
		size_t fixed = h->size - sizeof(struct gs_stack);
		const struct gs_stack *st = (const void *)((char *)data + fixed);
		unsigned int nu = h->ustack_n, nk = h->kstack_n;
		struct gs_hdr *out = (void *)r->buf;

		if (h->size < sizeof(struct gs_stack) + sizeof(*h) || nu > GS_USTACK_MAX ||
		    nk > GS_KSTACK_MAX)
			return 0;
		emit_ksyms(r, st->kern, nk);
		memcpy(r->buf, data, fixed);
		memcpy(r->buf + fixed, st->user, nu * 8);
		memcpy(r->buf + fixed + nu * 8, st->kern, nk * 8);
		out->size = fixed + (nu + nk) * 8;
		append(r, out, out->size);
		return 0;
	}
	append(r, data, h->size);
	return 0;
}

/* ---- setup --------------------------------------------------------------------------------- */

static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};
	__u64 eff;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	eff = data[0].effective | (__u64)data[1].effective << 32;
	if (eff & (1ull << CAP_SYS_ADMIN))
		return 0;
	if ((eff & (1ull << CAP_BPF)) && (eff & (1ull << CAP_PERFMON)))
		return 0;
	return -EPERM;
}

/* Tracepoint ids live in tracefs, which a fresh machine may not have mounted. */
static void ensure_tracefs(void)
{
	struct stat st;

	if (!stat("/sys/kernel/tracing/events", &st) ||
	    !stat("/sys/kernel/debug/tracing/events", &st))
		return;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) && env.verbose)
		fprintf(stderr, "gapscope: cannot mount tracefs: %s\n", strerror(errno));
}

static int open_load(struct recorder *r)
{
	int err;

	r->skel = record_bpf__open();
	r->proc = r->cuda = r->futex = r->offcpu = r->sample = r->probe = r->skel;
	if (!r->skel) {
		err = -errno;
		fprintf(stderr, "gapscope: cannot open BPF objects: %s\n", strerror(errno));
		return err ? err : -EINVAL;
	}
	r->umulti = umulti__supported() && !getenv("GAPSCOPE_NO_UPROBE_MULTI");
	if (r->umulti) {
		bpf_program__set_expected_attach_type(r->cuda->progs.cu_entry,
						      GS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(r->cuda->progs.cu_return,
						      GS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(r->probe->progs.probe_entry,
						      GS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(r->probe->progs.probe_return,
						      GS_BPF_TRACE_UPROBE_MULTI);
	} else if (env.verbose) {
		fprintf(stderr, "gapscope: no uprobe_multi links (Linux < 6.6): one link per probe\n");
	}
	r->proc->rodata->follow_children = env.follow_children;
	r->proc->rodata->stop_for_attach = env.cmd != NULL;
	/* What this recording will not attach is not loaded (each program is verified: ~15-40 ms). */
	if (env.sampler == GS_SAMPLER_TIMER) {
		bpf_program__set_autoload(r->sample->progs.tick_sample, false);
		bpf_program__set_autoload(r->sample->progs.tick_taken, false);
	}
	if (!env.lock_holds) {
		bpf_program__set_autoload(r->probe->progs.lock_entry, false);
		bpf_program__set_autoload(r->probe->progs.lock_return, false);
		bpf_program__set_autoload(r->probe->progs.unlock_entry, false);
	}
	bpf_map__set_max_entries(r->proc->maps.events, env.ringbuf_mb << 20);
	/*
	 * Per-thread maps that only calls of rare functions fill (an executable mmap, a probed
	 * libc or CUDA call with a return probe) allocate their elements when used: preallocated,
	 * each cost ~6-12 ms of start-up. The scheduler's and futex's maps, updated at every
	 * switch or wait, stay preallocated.
	 */
	bpf_map__set_map_flags(r->proc->maps.mmaps, BPF_F_NO_PREALLOC);
	bpf_map__set_map_flags(r->probe->maps.probe_calls, BPF_F_NO_PREALLOC);
	bpf_map__set_map_flags(r->cuda->maps.calls, BPF_F_NO_PREALLOC);
	err = record_bpf__load(r->skel);
	if (err)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "gapscope: cannot load BPF programs: %s%s\n", strerror(-err),
		env.verbose ? "" : " (run with -v for libbpf's log)");
	return err;
}

static int attach_sampler(struct recorder *r);

static int attach_static(struct recorder *r)
{
	int err;

	/*
	 * The tracepoints: every loaded program but the uprobes and the sampler, which are
	 * attached per library and per CPU. Each link joins ours, so that detach_all() lets go
	 * of them in parallel: each waits for a grace period when destroyed.
	 */
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, r->skel->obj) {
		const char *sec = bpf_program__section_name(prog);
		struct bpf_link *l;

		if (bpf_program__fd(prog) < 0 || strncmp(sec, "tp", 2) ||
		    prog == r->sample->progs.tick_sample || prog == r->sample->progs.tick_taken)
			continue;
		l = bpf_program__attach(prog);
		if (!l || add_link(r, l)) {
			err = l ? -ENOMEM : -errno;
			bpf_link__destroy(l);
			fprintf(stderr, "gapscope: cannot attach tracepoints: %s\n", strerror(-err));
			return err;
		}
		write_probe(r, r->next_probe_id++, GS_PROBE_KERNEL, 0, 0, now_ns(CLOCK_MONOTONIC), 0,
			    0, "kernel", sec);
	}

	return attach_sampler(r);
}

/*
 * The tick sampler needs the tick's hrtimer function, to know the tick among all hrtimers, and
 * the interrupt's entry, to cut the interrupt's own frames off kernel stacks. Returns false,
 * with why, where this kernel has neither by these names.
 */
static bool tick_symbols(struct recorder *r, const char **why)
{
	static const char *const tick_fns[] = { "tick_nohz_handler", "tick_sched_timer" };
	struct ksyms *k = get_ksyms(r);
	struct ksym *fn = NULL, *entry;
	__u64 end, entry_end;

	if (!k) {
		*why = "/proc/kallsyms is unreadable";
		return false;
	}
	for (size_t i = 0; !fn && i < sizeof(tick_fns) / sizeof(*tick_fns); i++)
		fn = ksyms__by_name(k, tick_fns[i], &end);
	entry = ksyms__by_name(k, "asm_sysvec_apic_timer_interrupt", &entry_end);
	if (!fn || !entry) {
		*why = fn ? "no asm_sysvec_apic_timer_interrupt in kallsyms" :
			    "no tick_nohz_handler or tick_sched_timer in kallsyms";
		return false;
	}
	r->sample->bss->irq_entry_lo = entry->addr;
	r->sample->bss->irq_entry_hi = entry_end;
	r->sample->bss->tick_period_ns = 1000000000ull / env.freq;
	r->sample->bss->tick_fn = fn->addr; /* last: it arms tick_sample() */
	return true;
}

static int attach_tick(struct recorder *r)
{
	struct bpf_program *progs[] = { r->sample->progs.tick_sample, r->sample->progs.tick_taken };

	for (size_t i = 0; i < sizeof(progs) / sizeof(*progs); i++) {
		struct bpf_link *l = bpf_program__attach(progs[i]);

		if (!l || add_link(r, l)) {
			int err = l ? -ENOMEM : -errno;

			bpf_link__destroy(l);
			return err;
		}
	}
	write_probe(r, r->next_probe_id++, GS_PROBE_KERNEL, 0, 0, now_ns(CLOCK_MONOTONIC), 0, 0,
		    "kernel", "tp_btf/hrtimer_expire_entry+exit (tick sampler)");
	return 0;
}

/* CPU samples: at the scheduler tick, or one software cpu-clock event per CPU (period 1/freq). */
static int attach_sampler(struct recorder *r)
{
	const char *why = NULL;
	int err;

	if (env.sampler != GS_SAMPLER_TIMER) {
		if (!tick_symbols(r, &why)) {
			err = -ENOENT;
		} else if ((err = attach_tick(r))) {
			why = strerror(-err);
		} else {
			r->sampler = GS_SAMPLER_TICK;
			return 0;
		}
		if (env.sampler == GS_SAMPLER_TICK) {
			fprintf(stderr, "gapscope: cannot sample at the scheduler tick: %s\n", why);
			return err;
		}
		fprintf(stderr, "gapscope: note: sampling with cpu-clock timers (%s)\n", why);
	}
	r->sampler = GS_SAMPLER_TIMER;
	int ncpus = libbpf_num_possible_cpus();

	r->perf_fds = calloc(ncpus, sizeof(int));
	if (!r->perf_fds)
		return -ENOMEM;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_period = 1000000000ull / env.freq,
		};
		struct bpf_link *l;
		int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue; /* possible but offline CPU */
			err = -errno;
			fprintf(stderr, "gapscope: cannot open cpu-clock on CPU %d: %s\n", cpu,
				strerror(errno));
			return err;
		}
		r->perf_fds[r->nperf++] = fd;
		l = bpf_program__attach_perf_event(r->sample->progs.cpu_sample, fd);
		if (!l) {
			err = -errno;
			fprintf(stderr, "gapscope: cannot attach the sampler: %s\n",
				strerror(errno));
			return err;
		}
		add_link(r, l);
	}
	write_probe(r, r->next_probe_id++, GS_PROBE_KERNEL, 0, 0, now_ns(CLOCK_MONOTONIC), 0, 0,
		    "kernel", "perf_event/cpu-clock");
	return 0;
}

/* How the samples were taken and what one stands for; the tick's rate as measured. */
static void write_sampler(struct recorder *r)
{
	int ncpus = libbpf_num_possible_cpus();
	struct tick_state *st = calloc(ncpus, sizeof(*st));
	struct gs_rec_sampler s = {};
	__u32 zero = 0;

	hdr_init(&s.h, GS_REC_SAMPLER, sizeof(s), r->target);
	s.kind = r->sampler;
	s.freq = env.freq;
	if (r->sampler == GS_SAMPLER_TICK && st &&
	    !bpf_map_lookup_elem(bpf_map__fd(r->sample->maps.tick_states), &zero, st)) {
		__u64 best = 0;

		for (int i = 0; i < GS_TICK_HZ_N; i++) {
			__u64 hits = 0;

			for (int c = 0; c < ncpus; c++)
				hits += st[c].hz_hits[i];
			if (hits > best) {
				best = hits;
				s.tick_ns = 1000000000ull / gs_tick_hz[i];
			}
		}
	}
	free(st);
	/* A busy CPU ticks CONFIG_HZ times a second: none in a second means they go unrecognized. */
	if (r->sampler == GS_SAMPLER_TICK && !r->sample->bss->ticks_seen &&
	    now_ns(CLOCK_MONOTONIC) - r->start_ns > 1000000000ull)
		fprintf(stderr, "gapscope: warning: no scheduler tick was seen, so no CPU samples were "
				"taken (--sampler timer takes them from cpu-clock timers)\n");
	s.period_ns = 1000000000ull / env.freq;
	if (s.tick_ns > s.period_ns)
		s.period_ns = s.tick_ns;
	if (r->sampler)
		append(r, &s, sizeof(s));
}

struct detach_ctx {
	struct bpf_link **links;
	size_t n;
	int *fds;	/* uprobe_multi links: after the links, by the same workers */
	size_t nfds;
	size_t next;	/* atomic */
};

static void *detach_worker(void *arg)
{
	struct detach_ctx *d = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&d->next, 1, __ATOMIC_RELAXED)) < d->n + d->nfds) {
		if (i < d->n)
			bpf_link__destroy(d->links[i]);
		else
			close(d->fds[i - d->n]);
	}
	return NULL;
}

/*
 * Detaching a uprobe waits for an RCU grace period (uprobe_unregister_sync), tens of
 * milliseconds on the machines we run on: one link after the other, a libcuda with a hundred
 * probes took seconds to let go. Concurrent waiters share grace periods, so detach in parallel.
 */
static void detach_all(struct recorder *r)
{
	struct detach_ctx d = { .links = r->links, .n = r->nlinks, .fds = r->mfds, .nfds = r->nmfds };
	pthread_t threads[64];
	size_t nt = d.n + d.nfds < 64 ? d.n + d.nfds : 64, started = 0;

	for (; started < nt; started++)
		if (pthread_create(&threads[started], NULL, detach_worker, &d))
			break;
	detach_worker(&d);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	r->nlinks = 0;
	r->nmfds = 0;
}

static void cleanup(struct recorder *r)
{
	ring_buffer__free(r->rb);
	detach_all(r);
	free(r->links);
	free(r->mfds);
	for (int i = 0; i < r->nperf; i++)
		close(r->perf_fds[i]);
	free(r->perf_fds);
	record_bpf__destroy(r->skel);
	for (size_t i = 0; i < r->nlibs; i++)
		free(r->libs[i].path);
	free(r->libs);
	free(r->maps);
	ksyms__free(get_ksyms(r));
	free(r->buf);
}

/* Stop recording: probes off, everything still buffered into the trace, final records. */
static void finish(struct recorder *r)
{
	struct gs_rec_end end = {};

	if (!r->live)
		return;
	r->live = false;
	detach_all(r);
	ring_buffer__consume(r->rb);
	write_sampler(r);
	write_losses(r);
	hdr_init(&end.h, GS_REC_END, sizeof(end), r->target);
	end.events = r->events;
	end.records = r->tw ? trace__records(r->tw) : 0;
	append(r, &end, sizeof(end));
}

static void write_exit(struct recorder *r)
{
	struct gs_rec_exit x = {};

	hdr_init(&x.h, GS_REC_PROC_EXIT, sizeof(x), r->target);
	x.status = r->status;
	x.utime_ns = r->ru.ru_utime.tv_sec * 1000000000ull + r->ru.ru_utime.tv_usec * 1000ull;
	x.stime_ns = r->ru.ru_stime.tv_sec * 1000000000ull + r->ru.ru_stime.tv_usec * 1000ull;
	append(r, &x, sizeof(x));
}

/* Fork the target, stopped before exec until *go is written; exec errors come back on err. */
static pid_t spawn(char **cmd, int *go_fd, int *err_fd, const sigset_t *orig_mask)
{
	int go[2], ep[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(ep[0]);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up before starting us */
		execvp(cmd[0], cmd);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	*go_fd = go[1];
	*err_fd = ep[0];
	return pid;
}

/* Attach by file before exec, to what the child's dynamic loader will map. */
static void attach_predicted(struct recorder *r)
{
	char lib[PATH_MAX];

	if (!resolve__library(r->exe, "libc.so.6", lib, sizeof(lib)))
		attach_file(r, lib, lib, 0, 0);
	if (!resolve__library(r->exe, "libcuda.so.1", lib, sizeof(lib)))
		attach_file(r, lib, lib, 0, 0);
	for (int i = 0; i < env.nprobes; i++) {
		const char *colon = strrchr(env.probes[i], ':');
		char name[PATH_MAX];

		snprintf(name, sizeof(name), "%.*s", (int)(colon - env.probes[i]), env.probes[i]);
		if (!strcmp(base_name(name), base_name(r->exe)) || !strcmp(name, r->exe))
			attach_file(r, r->exe, r->exe, 0, 0);
		else if (!resolve__library(r->exe, name, lib, sizeof(lib)))
			attach_file(r, lib, lib, 0, 0);
	}
}

/* For -p: whatever the process has mapped already. */
static void attach_mapped(struct recorder *r, pid_t pid)
{
	char path[64], line[PATH_MAX + 256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char perms[8], file[PATH_MAX] = "", open_path[PATH_MAX + 64];
		unsigned long long ino;

		if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %llu %4095[^\n]", perms, &ino, file) < 3)
			continue;
		char *name = file + strspn(file, " ");

		if (!ino || perms[2] != 'x' || name[0] != '/')
			continue;
		/* Through the process's root: right also for a process in a container. */
		snprintf(open_path, sizeof(open_path), "/proc/%d/root%s", pid, name);
		attach_file(r, open_path, name, 0, 0);
	}
	fclose(f);
}

/*
 * The guardian. A launched target is stopped (SIGSTOP from BPF) while the recorder attaches to a
 * library it maps late; a recorder killed in that moment (SIGKILL, OOM) would leave it stopped
 * for good. So before any BPF object exists (it must hold no BPF fd, or it would keep the
 * programs alive) the recorder forks this tiny process: it receives a pidfd of the target over a
 * socket and blocks reading that socket. A clean recorder says 'q' first; an EOF without it means
 * the recorder died: SIGCONT to the target (through the pidfd, so never to a reused pid).
 */
struct guardian {
	pid_t pid;
	int sock;
};

static void guardian_main(int sock)
{
	char c = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	int pidfd = -1;
	ssize_t n;

	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		_exit(0); /* the recorder went before it started a target */
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&pidfd, CMSG_DATA(cm), sizeof(int));
	while ((n = read(sock, &c, 1)) < 0 && errno == EINTR)
		;
	if ((n <= 0 || c != 'q') && pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
	_exit(0);
}

static int guardian__start(struct guardian *g)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	g->pid = fork();
	if (g->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (g->pid == 0) {
		close(sv[0]);
		/* Nothing of the recorder's but the socket: no trace fd, no terminal input. */
		if (sv[1] != 3) {
			dup2(sv[1], 3);
			close(sv[1]);
		}
		syscall(SYS_close_range, 4, ~0u, 0);
		guardian_main(3);
	}
	close(sv[1]);
	g->sock = sv[0];
	return 0;
}

static int guardian__watch(struct guardian *g, pid_t target)
{
	int pidfd = syscall(SYS_pidfd_open, target, 0), err = 0;
	char c = 'p', ctl[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	if (pidfd < 0)
		return -errno;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pidfd, sizeof(int));
	if (sendmsg(g->sock, &msg, MSG_NOSIGNAL) != 1)
		err = -errno;
	close(pidfd);
	return err;
}

/* Clean end: every stopped thread got its SIGCONT already; the guardian leaves quietly. */
static void guardian__stop(struct guardian *g)
{
	if (g->pid <= 0)
		return;
	if (write(g->sock, "q", 1) != 1) {
		/* it is gone already */
	}
	close(g->sock);
	while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
		;
	g->pid = 0;
}

/* While recording, on a terminal only: one line, rewritten every second. */
static void status_line(struct recorder *r, __u64 elapsed_ns, double rate, __u64 lost)
{
	fprintf(stderr, "\rgapscope: recording %s%d: %.0f s, %.1fk events/s, %llu events, "
		"%llu lost\033[K",
		r->launched ? "" : "pid ", r->target, elapsed_ns / 1e9, rate / 1e3,
		(unsigned long long)r->events, (unsigned long long)lost);
	fflush(stderr);
}

/* /sys/kernel/btf/vmlinux readable and starting with a BTF header (magic 0xeB9F). */
static bool kernel_btf_present(void)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	__u16 magic = 0;
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, &magic, sizeof(magic)) == sizeof(magic) && magic == 0xeB9F;
	close(fd);
	return ok;
}

static bool proc_exists(pid_t pid)
{
	char p[64];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%d", pid);
	return !stat(p, &st);
}

int cmd_record(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_opt,
		.args_doc = "(-p PID | -- CMD [ARGS...])",
		.doc = doc,
	};
	struct recorder rec = { .uprobe_pid = -1 }, *r = &rec;
	struct guardian guard = {};
	sigset_t mask, orig_mask;
	int sfd = -1, tfd = -1, go_fd = -1, exec_fd = -1, err = 0;
	bool created = false, released = false;
	struct stat st;
	__u64 start_ns, by_kind[GS_LOSS_MAX], lost;

	err = argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL);
	if (err)
		return 1;
	libbpf_set_print(libbpf_print);

	/* Checks that need no privileges first, each a one-line error. */
	if (!env.force && !stat(env.output, &st)) {
		fprintf(stderr, "gapscope: %s exists (use -f to overwrite)\n", env.output);
		return 1;
	}
	if (env.cmd && (err = resolve__executable(env.cmd[0], r->exe, sizeof(r->exe)))) {
		fprintf(stderr, "gapscope: cannot run %s: %s\n", env.cmd[0], strerror(-err));
		return 1;
	}
	if (env.pid && !proc_exists(env.pid)) {
		fprintf(stderr, "gapscope: cannot attach to pid %d: no such process\n", env.pid);
		return 1;
	}
	if (check_privileges()) {
		fprintf(stderr,
			"gapscope: need root or CAP_BPF and CAP_PERFMON to load BPF "
			"programs (running as uid %d)\n",
			getuid());
		return 1;
	}
	/*
	 * Only the BTF header here: parsing it (~50 ms) is what loading does, once, and a second
	 * parse just for this check would double that.
	 */
	if (!kernel_btf_present()) {
		const char *why = access("/sys/kernel/btf/vmlinux", R_OK) ? strerror(errno) :
									    "unreadable";

		fprintf(stderr,
			"gapscope: kernel BTF not available (/sys/kernel/btf/vmlinux: %s); "
			"a kernel built with CONFIG_DEBUG_INFO_BTF is needed\n",
			why);
		return 1;
	}
	r->tw = trace__create(env.output, env.force);
	if (!r->tw) {
		fprintf(stderr, "gapscope: cannot create %s: %s\n", env.output, strerror(errno));
		return 1;
	}
	created = true;
	r->buf = malloc(sizeof(struct gs_stack) + 4096);
	if (!r->buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	ensure_tracefs();

	/* Signals arrive through a signalfd; the child gets the original mask back. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &orig_mask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/*
	 * Read beside the BPF load, not on the first kernel stack: that would stall the consumer
	 * while a thread may be stopped for a late attach. Started once the signals are blocked,
	 * so that the thread never takes one.
	 */
	r->ksyms_loading = !pthread_create(&r->ksyms_thread, NULL, ksyms_worker, NULL);
	if (!r->ksyms_loading)
		r->ksyms = ksyms__load();
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sfd < 0 || tfd < 0) {
		err = -errno;
		fprintf(stderr, "gapscope: %s\n", strerror(errno));
		goto cleanup;
	}

	if (env.cmd && (err = guardian__start(&guard))) {
		fprintf(stderr, "gapscope: cannot start the guardian: %s\n", strerror(-err));
		goto cleanup;
	}
	err = open_load(r);
	if (err)
		goto cleanup;

	if (env.cmd) {
		r->target = spawn(env.cmd, &go_fd, &exec_fd, &orig_mask);
		if (r->target < 0) {
			err = -errno;
			fprintf(stderr, "gapscope: cannot start %s: %s\n", env.cmd[0],
				strerror(errno));
			goto cleanup;
		}
		r->launched = true;
		err = guardian__watch(&guard, r->target);
		if (err) {
			fprintf(stderr, "gapscope: cannot start the guardian: %s\n",
				strerror(-err));
			goto cleanup;
		}
	} else {
		r->target = env.pid;
	}
	r->uprobe_pid = env.follow_children ? -1 : r->target;
	__u32 one = 1, tgid = r->target;

	err = bpf_map_update_elem(bpf_map__fd(r->proc->maps.tgids), &tgid, &one, BPF_ANY);
	if (err)
		goto cleanup;

	r->rb = ring_buffer__new(bpf_map__fd(r->proc->maps.events), on_event, r, NULL);
	if (!r->rb) {
		err = -errno;
		fprintf(stderr, "gapscope: cannot open the ring buffer: %s\n", strerror(errno));
		goto cleanup;
	}
	write_clock(r);
	write_target(r, r->target, env.cmd);
	snapshot_threads(r, r->target); /* a launched child is named like us until it execs */
	set_watch(r);
	err = attach_static(r);
	if (err)
		goto cleanup;
	if (env.cmd) {
		attach_predicted(r);
	} else {
		scan_maps(r, r->target);
		attach_mapped(r, r->target);
		if (!r->cuda_probes)
			fprintf(stderr,
				"gapscope: warning: pid %d has no libcuda mapped (yet): "
				"recording its host side\n",
				r->target);
		/* Threads started while the tracepoints were being attached. */
		snapshot_threads(r, r->target);
		/* Everything about the attach is on disk before we say so (tests read it). */
		if (r->tw && trace__flush(r->tw))
			fprintf(stderr, "gapscope: cannot write %s\n", env.output);
		fprintf(stderr, "gapscope: recording pid %d (Ctrl-C to stop)\n", r->target);
	}
	r->live = true;
	r->start_ns = start_ns = now_ns(CLOCK_MONOTONIC);

	if (env.cmd) {
		/* Go: the child execs now; a failed exec reports its errno on exec_fd. */
		char c = 1;
		int e;

		if (write(go_fd, &c, 1) != 1) {
			err = -errno;
			goto cleanup;
		}
		close(go_fd);
		go_fd = -1;
		released = true;
		if (read(exec_fd, &e, sizeof(e)) == sizeof(e)) {
			fprintf(stderr, "gapscope: cannot run %s: %s\n", env.cmd[0], strerror(e));
			waitpid(r->target, NULL, 0);
			r->target_gone = true;
			err = -e;
			goto cleanup;
		}
		close(exec_fd);
		exec_fd = -1;
	}

	/*
	 * Every 50 ms: consume the ring buffer (the BPF side does not wake us per event, see
	 * submit()); every 200 ms a chunk goes to the file and every second the loss counters, so
	 * a killed recorder loses little.
	 */
	struct itimerspec its = { { 0, 50000000 }, { 0, 50000000 } };

	timerfd_settime(tfd, 0, &its, NULL);
	int pidfd = env.pid ? syscall(SYS_pidfd_open, env.pid, 0) : -1;
	struct pollfd pfd[4] = {
		{ .fd = ring_buffer__epoll_fd(r->rb), .events = POLLIN },
		{ .fd = sfd, .events = POLLIN },
		{ .fd = tfd, .events = POLLIN },
		{ .fd = pidfd, .events = POLLIN },
	};
	unsigned int ticks = 0;
	bool stop = false, tty = isatty(STDERR_FILENO);
	__u64 last_events = 0, last_ns = start_ns;

	while (!stop) {
		if (poll(pfd, 4, -1) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		if (pfd[0].revents)
			ring_buffer__consume(r->rb);
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD) {
					pid_t w = r->launched ? wait4(r->target, &r->status,
								      WNOHANG, &r->ru) :
								0;

					if (w == r->target) {
						r->target_gone = true;
						stop = true;
					}
					continue;
				}
				if (!r->launched) {
					/* -p: a signal to the recorder ends the recording only. */
					stop = true;
					continue;
				}
				/*
				 * A terminal's Ctrl-C reaches the whole foreground process group,
				 * the target included (si_code SI_KERNEL): it needs no help. A
				 * signal sent to the recorder alone (kill) is passed on, so the
				 * target sees what it would see without gapscope.
				 */
				if (si.ssi_code != SI_KERNEL)
					kill(r->target, si.ssi_signo);
			}
		}
		if (pfd[2].revents) {
			__u64 n;

			if (read(tfd, &n, sizeof(n)) > 0) {
				ring_buffer__consume(r->rb);
				ticks++;
				if (ticks % 4 == 0 && r->tw && trace__flush(r->tw))
					fprintf(stderr, "gapscope: cannot write %s\n", env.output);
				if (ticks % 20 == 0)
					write_losses(r);
				if (tty && ticks % 20 == 0) {
					__u64 t = now_ns(CLOCK_MONOTONIC), kinds[GS_LOSS_MAX];

					status_line(r, t - start_ns,
						    (r->events - last_events) * 1e9 / (t - last_ns),
						    total_losses(r, kinds));
					last_events = r->events;
					last_ns = t;
				}
			}
			if (env.duration &&
			    now_ns(CLOCK_MONOTONIC) - start_ns >= env.duration * 1e9) {
				stop = true;
			}
		}
		if (pidfd >= 0 && pfd[3].revents) {
			r->target_gone = true;
			stop = true;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	if (tty && ticks >= 20)
		fputs("\r\033[K", stderr); /* the status line gives way to the summary */

	finish(r);
	if (r->launched && r->target_gone)
		write_exit(r);
	lost = total_losses(r, by_kind);
	if (r->tw) {
		__u64 bytes = trace__bytes(r->tw);

		err = trace__finish(r->tw);
		r->tw = NULL;
		if (err)
			fprintf(stderr, "gapscope: cannot write %s: %s\n", env.output,
				strerror(-err));
		fprintf(stderr, "gapscope: %llu events, %.1f MB written to %s, %llu lost",
			(unsigned long long)r->events, bytes / 1e6, env.output,
			(unsigned long long)lost);
		for (int i = 0; i < GS_LOSS_MAX; i++)
			if (by_kind[i])
				fprintf(stderr, " %s=%llu", gs_loss_names[i],
					(unsigned long long)by_kind[i]);
		fputc('\n', stderr);
	}

	/* The target outlives a --duration: wait for it, as without gapscope. */
	if (r->launched && !r->target_gone) {
		while (wait4(r->target, &r->status, 0, &r->ru) < 0 && errno == EINTR)
			;
		r->target_gone = true;
	}

cleanup:
	if (r->tw) {
		trace__finish(r->tw);
		r->tw = NULL;
		if (err && created && !released)
			unlink(env.output);
	}
	if (go_fd >= 0)
		close(go_fd); /* the child sees EOF and exits without running the command */
	if (exec_fd >= 0)
		close(exec_fd);
	if (r->launched && !r->target_gone)
		waitpid(r->target, &r->status, 0);
	cleanup(r);
	guardian__stop(&guard);
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	if (!r->launched || !released)
		return err ? 1 : 0;

	/* The target's exit status is ours; a signal death is re-raised (without a core). */
	if (WIFEXITED(r->status))
		return WEXITSTATUS(r->status);
	if (WIFSIGNALED(r->status)) {
		int sig = WTERMSIG(r->status);
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigdelset(&orig_mask, sig);
		sigprocmask(SIG_SETMASK, &orig_mask, NULL);
		raise(sig);
		return 128 + sig;
	}
	return 1;
}
