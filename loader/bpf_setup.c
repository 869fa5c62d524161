// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record.skel.h"
#include "bpf_setup.h"
#include "clock.h"
#include "pidns.h"
#include "links.h"
#include "metadata.h"
#include "trace_out.h"
#include "record_opts.h"
#include "snapshot.h"
#include "pystack.h"
#include "privs.h"
#include "trace.h"
#include "umulti.h"
#include "vec.h"

/*
 * /sys/kernel/btf/vmlinux readable and starting with a BTF header (magic 0xeB9F). Only the
 * header: parsing it (~50 ms) is what loading does, once, and a second parse just for this check
 * would double that.
 */
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

bool bpf_setup__check(void)
{
	if (!privs__check_record())
		return false;
	if (!kernel_btf_present()) {
		const char *why = access("/sys/kernel/btf/vmlinux", R_OK) ? strerror(errno) :
									    "unreadable";

		fprintf(stderr,
			"gapscope: kernel BTF not available (/sys/kernel/btf/vmlinux: %s); "
			"a kernel built with CONFIG_DEBUG_INFO_BTF is needed\n",
			why);
		return false;
	}
	return true;
}

void bpf_setup__mount_tracefs(bool verbose)
{
	struct stat st;

	if (!stat("/sys/kernel/tracing/events", &st) ||
	    !stat("/sys/kernel/debug/tracing/events", &st))
		return;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) && verbose)
		fprintf(stderr, "gapscope: cannot mount tracefs: %s\n", strerror(errno));
}

/*
 * Whether the kernel has filemap:mm_filemap_fault (Linux 6.11+): from tracefs, cheaper than a
 * second parse of the kernel's BTF. Without it the program is not loaded (its tp_btf target
 * would fail the whole object's load): a failed attach, counted, and the recording goes on.
 */
static bool filemap_fault_present(void)
{
	return !access("/sys/kernel/tracing/events/filemap/mm_filemap_fault", F_OK) ||
	       !access("/sys/kernel/debug/tracing/events/filemap/mm_filemap_fault", F_OK);
}

static int print_verbose(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return vfprintf(stderr, fmt, args);
}

static int print_none(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

void bpf_setup__libbpf_output(bool verbose)
{
	libbpf_set_print(verbose ? print_verbose : print_none);
}

/* What the recording asks for, set before the load: rodata, map sizes, programs not needed. */
static void configure(struct record_bpf *skel, const struct record_opts *o, bool umulti)
{
	if (umulti) {
		bpf_program__set_expected_attach_type(skel->progs.cu_entry,
						      GS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.cu_return,
						      GS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.probe_entry,
						      GS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.probe_return,
						      GS_BPF_TRACE_UPROBE_MULTI);
	} else if (o->verbose) {
		fprintf(stderr,
			"gapscope: no uprobe_multi links (Linux < 6.6): one link per probe\n");
	}
	skel->rodata->follow_children = o->follow_children;
	skel->rodata->launch_stacks = o->launch_stacks;
	skel->rodata->all_launches = o->all_launches;
	skel->rodata->stop_for_attach = o->cmd != NULL;
	skel->rodata->launch_caches =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_storage_get, NULL) >
			0 &&
		!getenv("GAPSCOPE_NO_LAUNCH_CACHES"); /* tests: the path of a kernel without */
	if (!skel->rodata->launch_caches && o->verbose)
		fprintf(stderr, "gapscope: no task storage for uprobes: every launch streamed\n");
	/* What this recording will not attach is not loaded (each program is verified: ~15-40 ms). */
	if (o->sampler == GS_SAMPLER_TIMER) {
		bpf_program__set_autoload(skel->progs.tick_sample, false);
		bpf_program__set_autoload(skel->progs.tick_taken, false);
	}
	if (!filemap_fault_present() || getenv("GAPSCOPE_NO_FILEMAP_FAULT")) {
		if (o->verbose)
			fprintf(stderr, "gapscope: no filemap:mm_filemap_fault tracepoint: faults "
					"name no file\n");
		bpf_program__set_autoload(skel->progs.filemap_fault, false);
	}
	if (!o->lock_holds) {
		bpf_program__set_autoload(skel->progs.lock_entry, false);
		bpf_program__set_autoload(skel->progs.lock_return, false);
		bpf_program__set_autoload(skel->progs.unlock_entry, false);
	}
	bpf_map__set_max_entries(skel->maps.events, o->ringbuf_mb << 20);
	/* Snapshot slots: SNAP_SLOTS per CPU (snapshot.h), ~70 KiB each. */
	if (o->snap_bytes && libbpf_num_possible_cpus() > 0)
		bpf_map__set_max_entries(skel->maps.snap_bufs,
					 SNAP_SLOTS * libbpf_num_possible_cpus());
	/* Python frames' scratch records: PY_SLOTS per CPU (pystack.bpf.h), ~1 KiB each. */
	if (libbpf_num_possible_cpus() > 0)
		bpf_map__set_max_entries(skel->maps.py_bufs, PY_SLOTS * libbpf_num_possible_cpus());
	/*
	 * Per-thread maps that only calls of rare functions fill (an executable mmap, a probed
	 * libc or CUDA call with a return probe) allocate their elements when used: preallocated,
	 * each cost ~6-12 ms of start-up. The scheduler's and futex's maps, updated at every
	 * switch or wait, stay preallocated.
	 */
	bpf_map__set_map_flags(skel->maps.mmaps, BPF_F_NO_PREALLOC);
	bpf_map__set_map_flags(skel->maps.probe_calls, BPF_F_NO_PREALLOC);
	bpf_map__set_map_flags(skel->maps.calls, BPF_F_NO_PREALLOC);
}

struct record_bpf *bpf_setup__open_load(const struct record_opts *o, bool *umulti)
{
	struct record_bpf *skel = record_bpf__open();
	int err;

	if (!skel) {
		fprintf(stderr, "gapscope: cannot open BPF objects: %s\n", strerror(errno));
		return NULL;
	}
	*umulti = umulti__supported() && !getenv("GAPSCOPE_NO_UPROBE_MULTI");
	configure(skel, o, *umulti);
	err = record_bpf__load(skel);
	if (err) {
		fprintf(stderr, "gapscope: cannot load BPF programs: %s%s\n", strerror(-err),
			o->verbose >= 2 ? "" : " (run with -vv for libbpf's log)");
		record_bpf__destroy(skel);
		return NULL;
	}
	if (o->snap_bytes) {
		struct snap_cfg cfg = { .bytes = o->snap_bytes,
					.min_block_ns = o->snap_min_block_ns };
		__u32 zero = 0;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.snap_cfg), &zero, &cfg, BPF_ANY))
			fprintf(stderr, "gapscope: warning: no stack snapshots: %s\n",
				strerror(errno));
	}
	return skel;
}

int bpf_setup__watch_tgid(struct record_bpf *skel, pid_t tgid)
{
	__u32 one = 1, key = tgid;
	__u64 now = clock__mono_ns();

	/* First when: a sleep that began before it is seen only as it ends (asleep_before). */
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.watched_since), &key, &now, BPF_ANY))
		return -errno;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.tgids), &key, &one, BPF_ANY);
}

void bpf_setup__unwatch_tgid(struct record_bpf *skel, pid_t tgid)
{
	__u32 key = tgid;

	bpf_map_delete_elem(bpf_map__fd(skel->maps.tgids), &key);
	bpf_map_delete_elem(bpf_map__fd(skel->maps.watched_since), &key);
}

bool bpf_setup__watching(struct record_bpf *skel, pid_t tgid)
{
	__u32 key = tgid, val;

	return !bpf_map_lookup_elem(bpf_map__fd(skel->maps.tgids), &key, &val);
}

int bpf_setup__attach_tracepoints(struct record_bpf *skel, struct links *links, struct trace_out *o,
				  pid_t tgid, int pid, __u64 *failed)
{
	struct bpf_program *prog;

	if (bpf_program__fd(skel->progs.filemap_fault) < 0)
		(*failed)++; /* left out at the load: the kernel lacks it */
	/* Each link joins the others, so that they are let go of in parallel at the end: each
	 * waits for a grace period when destroyed (links__detach_all). */
	bpf_object__for_each_program(prog, skel->obj)
	{
		const char *sec = bpf_program__section_name(prog);
		struct bpf_link *l;
		int err;

		if (bpf_program__fd(prog) < 0 || strncmp(sec, "tp", 2) ||
		    prog == skel->progs.tick_sample || prog == skel->progs.tick_taken ||
		    prog == skel->progs.sigfwd_kill)
			continue;
		l = bpf_program__attach(prog);
		/* Kept apart: it folds the launch caches of exiting threads until
		 * bpf_setup__fold_launches has folded the others' */
		if (prog == skel->progs.cu_thread_exit && l) {
			skel->links.cu_thread_exit = l;
			meta__kernel_probe(o, tgid, pid, sec);
			continue;
		}
		if (!l && prog == skel->progs.filemap_fault) {
			(*failed)++; /* optional: faults then name no file */
			continue;
		}
		err = l ? links__add(links, l) : -errno;
		if (err) {
			fprintf(stderr, "gapscope: cannot attach tracepoints: %s\n",
				strerror(-err));
			return err;
		}
		meta__kernel_probe(o, tgid, pid, sec);
	}
	skel->bss->sched_live_ns = clock__mono_ns();
	return 0;
}

/* What task iterators wrote (bpf_setup__peek_launches), one run after another. */
struct iter_out {
	char *buf;
	size_t len, cap;
};

/*
 * Runs the task iterator prog to its end, over the threads of process pid only where pid is
 * not 0 (Linux 6.1), its output appended to *out (where out is not NULL). 0 or -errno.
 */
static int run_task_iter(struct bpf_program *prog, pid_t pid, struct iter_out *out)
{
	union bpf_iter_link_info li = { .task.pid = pid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &li, .link_info_len = sizeof(li));
	struct bpf_link *l = bpf_program__attach_iter(prog, pid ? &opts : NULL);
	int fd = l ? bpf_iter_create(bpf_link__fd(l)) : -1, err = 0;
	struct iter_out none = {};

	if (fd < 0)
		err = -errno;
	if (!out)
		out = &none;
	/* Each read runs the program over more tasks; the end is EOF. */
	while (fd >= 0) {
		ssize_t r;

		if (array__grow((void **)&out->buf, &out->cap, 1, out->len + 4096, 65536)) {
			err = -ENOMEM;
			break;
		}
		r = read(fd, out->buf + out->len, out->cap - out->len);
		if (r == 0)
			break;
		if (r < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		out->len += r > 0 ? r : 0;
	}
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(l);
	free(none.buf);
	return err;
}

int bpf_setup__fold_launches(struct record_bpf *skel)
{
	int err = skel->rodata->launch_caches ? run_task_iter(skel->progs.cu_fold, 0, NULL) : 0;

	bpf_link__destroy(skel->links.cu_thread_exit);
	skel->links.cu_thread_exit = NULL;
	return err;
}

int bpf_setup__peek_launches(struct record_bpf *skel, struct gs_launch_count **e, size_t *n)
{
	int fd = bpf_map__fd(skel->maps.tgids), err = 0;
	bool by_process = pidns__initial();
	struct iter_out out = {};
	__u32 key, *prev = NULL;

	*e = NULL;
	*n = 0;
	if (!skel->rodata->launch_caches)
		return 0;
	/*
	 * The targets' threads only, process by process: a host's every task each second would be
	 * the recorder's cost on a busy machine. All of them where the recorder's ids are not the
	 * BPF side's (a pid namespace) or the kernel cannot pick a process.
	 */
	while (by_process && !err && !bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		err = run_task_iter(skel->progs.cu_peek, key, &out);
		if (err == -ESRCH || err == -ENOENT)
			err = 0; /* gone meanwhile */
	}
	if (err || !by_process) {
		out.len = 0;
		err = run_task_iter(skel->progs.cu_peek, 0, &out);
	}
	*e = (struct gs_launch_count *)out.buf; /* the iterator writes them as the trace has them */
	*n = err ? 0 : out.len / sizeof(**e);
	return err;
}

void bpf_setup__destroy(struct record_bpf *skel)
{
	record_bpf__destroy(skel);
}
