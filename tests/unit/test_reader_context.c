// SPDX-License-Identifier: GPL-2.0
/*
 * The trace context (reports/analysis/context.c) fed records made here: mappings replace what they
 * overlap as mmap does, an mmap event does not hide the full path of the same mapping; kernel
 * symbols; thread names from fork, comm, exec and the target record; kernel names of launches
 * from lookups, cuKernelGetFunction and handles, with the trust decision about handle names with
 * and without the pre-scan; the recorder's counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"
#include "ksyms.h"
#include "strtab.h"
#include "idmap.h"
#include "addrmaps.h"
#include "perfmap.h"
#include "proc.h"
#include "knames.h"
#include "context.h"
#include "testlib.h"

union rec {
	struct gs_hdr h;
	struct gs_rec_map map;
	struct gs_rec_ksym ksym;
	struct gs_rec_probe probe;
	struct gs_rec_target target;
	struct gs_rec_losses losses;
	struct mmap_event mmap;
	struct fork_event fork;
	struct comm_event comm;
	struct exec_event exec;
	struct cu_name_event name;
	struct cu_event cu;
	char buf[1024];
};

static union rec *rec(__u32 type, size_t size, __u32 tgid)
{
	static union rec r;

	memset(&r, 0, sizeof(r));
	r.h.type = type;
	r.h.size = (size + 7) & ~7ul;
	r.h.tgid = tgid;
	r.h.tid = tgid;
	return &r;
}

static void map(struct gs_ctx *ctx, __u32 tgid, __u64 start, __u64 end, __u64 pgoff,
		const char *path)
{
	union rec *r = rec(GS_REC_MAP, sizeof(struct gs_rec_map) + strlen(path) + 1, tgid);

	r->map.start = start;
	r->map.end = end;
	r->map.pgoff = pgoff;
	r->map.ino = start;
	r->map.build_id_len = 3;
	memcpy(r->map.build_id, "\xab\xcd\xef", 3);
	strcpy(r->map.path, path);
	ctx__note(ctx, &r->h);
}

/* The path and file offset of addr, as "path+0xoff", or "-". */
static const char *where(struct gs_ctx *ctx, __u32 tgid, __u64 addr)
{
	static char buf[256];
	const struct ctx_map *m = ctx__map(ctx, tgid, addr);

	if (!m)
		return "-";
	snprintf(buf, sizeof(buf), "%s+0x%llx", m->path,
		 (unsigned long long)(addr - m->start + m->pgoff));
	return buf;
}

#define CHECK_STR(a, b)                                                                      \
	do {                                                                                 \
		const char *_a = (a), *_b = (b);                                             \
		CHECK(_a && !strcmp(_a, _b), "'%s', expected '%s'", _a ? _a : "(null)", _b); \
	} while (0)

static void test_maps(void)
{
	struct gs_ctx *ctx = ctx__new();
	union rec *r;

	map(ctx, 10, 0x10000, 0x50000, 0x1000, "/lib/a.so");
	map(ctx, 10, 0x60000, 0x70000, 0, "/lib/c.so");
	/* b.so mapped over the middle of a.so: a.so keeps its head and tail. */
	map(ctx, 10, 0x20000, 0x30000, 0, "/lib/b.so");
	CHECK_STR(where(ctx, 10, 0x10000), "/lib/a.so+0x1000");
	CHECK_STR(where(ctx, 10, 0x1ffff), "/lib/a.so+0x10fff");
	CHECK_STR(where(ctx, 10, 0x20000), "/lib/b.so+0x0");
	CHECK_STR(where(ctx, 10, 0x2fff0), "/lib/b.so+0xfff0");
	CHECK_STR(where(ctx, 10, 0x30000), "/lib/a.so+0x21000");
	CHECK_STR(where(ctx, 10, 0x4ffff), "/lib/a.so+0x40fff");
	CHECK_STR(where(ctx, 10, 0x50000), "-");
	CHECK_STR(where(ctx, 10, 0x65000), "/lib/c.so+0x5000");
	CHECK_STR(where(ctx, 11, 0x20000), "-"); /* another process */
	/* One mapping over several: all of b.so and the start of c.so go. */
	map(ctx, 10, 0x1f000, 0x61000, 0x7000, "/lib/d.so");
	CHECK_STR(where(ctx, 10, 0x1e000), "/lib/a.so+0xf000");
	CHECK_STR(where(ctx, 10, 0x25000), "/lib/d.so+0xd000");
	CHECK_STR(where(ctx, 10, 0x60fff), "/lib/d.so+0x48fff");
	CHECK_STR(where(ctx, 10, 0x61000), "/lib/c.so+0x1000");
	CHECK_EQ_U64(ctx__map(ctx, 10, 0x25000)->build_id_len, 3);
	CHECK(!memcmp(ctx__map(ctx, 10, 0x25000)->build_id, "\xab\xcd\xef", 3), "build-id");

	/* An mmap event of a mapping already recorded: the full path stays. */
	r = rec(GS_EV_MMAP, sizeof(struct mmap_event), 10);
	r->mmap.addr = 0x60000 + 0x1000;
	r->mmap.len = 0xf000;
	r->mmap.pgoff = 0x1000;
	r->mmap.ino = 0x60000;
	strcpy(r->mmap.name, "c.so");
	ctx__note(ctx, &r->h);
	CHECK_STR(where(ctx, 10, 0x62000), "/lib/c.so+0x2000");
	CHECK(!ctx__map(ctx, 10, 0x62000)->from_mmap, "from the map record");
	/* A new one: known by its file name. */
	r->mmap.addr = 0x90000;
	r->mmap.len = 0x2000;
	r->mmap.pgoff = 0x3000;
	strcpy(r->mmap.name, "late.so");
	ctx__note(ctx, &r->h);
	CHECK_STR(where(ctx, 10, 0x91000), "late.so+0x4000");
	CHECK(ctx__map(ctx, 10, 0x91000)->from_mmap, "from the mmap event");
	ctx__free(ctx);
}

static void ksym(struct gs_ctx *ctx, __u64 addr, const char *name)
{
	union rec *r = rec(GS_REC_KSYM, sizeof(struct gs_rec_ksym) + strlen(name) + 1, 0);

	r->ksym.addr = addr;
	strcpy(r->ksym.name, name);
	ctx__note(ctx, &r->h);
}

static void test_ksyms_comms(void)
{
	struct gs_ctx *ctx = ctx__new();
	union rec *r;
	const char *argv = "/usr/bin/prog\0--fast\0";

	ksym(ctx, 0xffffffff81000300, "schedule");
	ksym(ctx, 0xffffffff81000100, "do_futex");
	ksym(ctx, 0xffffffff81000200, "futex_wait");
	CHECK(ctx__ksym(ctx, 0xffffffff810000ff) == NULL, "below the first symbol");
	CHECK_STR(ctx__ksym(ctx, 0xffffffff81000100)->name, "do_futex");
	CHECK_STR(ctx__ksym(ctx, 0xffffffff810002ff)->name, "futex_wait");
	CHECK_STR(ctx__ksym(ctx, 0xffffffff81000400)->name, "schedule");

	/* The target record names its process after the program until the trace renames it. */
	r = rec(GS_REC_TARGET, sizeof(struct gs_rec_target) + 21, 50);
	r->target.mode = GS_TARGET_LAUNCH;
	r->target.argc = 2;
	memcpy(r->target.argv, argv, 21);
	ctx__note(ctx, &r->h);
	CHECK_STR(ctx__comm(ctx, 50), "prog");
	CHECK_EQ_U64(ctx__target(ctx)->tgid, 50);
	CHECK_EQ_U64(ctx__target(ctx)->argc, 2);
	CHECK_STR(ctx__target(ctx)->argv[1], "--fast");

	r = rec(GS_EV_EXEC, sizeof(struct exec_event), 50);
	strcpy(r->exec.comm, "prog-exec");
	ctx__note(ctx, &r->h);
	CHECK_STR(ctx__comm(ctx, 50), "prog-exec");
	r = rec(GS_EV_FORK, sizeof(struct fork_event), 50);
	r->fork.child_tid = 51;
	r->fork.child_tgid = 50;
	strcpy(r->fork.comm, "prog-exec");
	ctx__note(ctx, &r->h);
	CHECK_STR(ctx__comm(ctx, 51), "prog-exec");
	/* A comm event names its own thread; a full 16-byte name stays whole. */
	r = rec(GS_EV_COMM, sizeof(struct comm_event), 50);
	r->h.tid = 51;
	memcpy(r->comm.comm, "gpu-worker-00001", 16);
	ctx__note(ctx, &r->h);
	CHECK_STR(ctx__comm(ctx, 51), "gpu-worker-00001");
	CHECK_STR(ctx__comm(ctx, 50), "prog-exec");
	CHECK(ctx__comm(ctx, 52) == NULL, "a thread never named");
	for (__u32 tid = 1000; tid < 3000; tid++) {
		r = rec(GS_EV_COMM, sizeof(struct comm_event), 50);
		r->h.tid = tid;
		snprintf(r->comm.comm, sizeof(r->comm.comm), "t%u", tid);
		ctx__note(ctx, &r->h);
	}
	CHECK_STR(ctx__comm(ctx, 2345), "t2345");
	CHECK_STR(ctx__comm(ctx, 51), "gpu-worker-00001");

	/* Losses: the last record counts. */
	r = rec(GS_REC_LOSSES, sizeof(struct gs_rec_losses) + 3 * 8, 50);
	r->losses.n = 3;
	r->losses.count[0] = 4;
	r->losses.count[2] = 5;
	ctx__note(ctx, &r->h);
	r->losses.count[0] = 7;
	ctx__note(ctx, &r->h);
	{
		__u32 n;
		const __u64 *c = ctx__losses(ctx, &n);

		CHECK(c && n == 3 && c[0] == 7 && c[2] == 5, "losses");
		CHECK_EQ_U64(ctx__lost_total(ctx), 12);
		CHECK(ctx__lost_types(ctx, &n) == NULL && n == 0, "no lost-types record");
		CHECK(ctx__end(ctx) == NULL && ctx__sampler(ctx) == NULL, "no end, no sampler");
	}
	ctx__free(ctx);
}

static void probe(struct gs_ctx *ctx, struct trace_writer *w, __u32 id, const char *lib,
		  const char *sym)
{
	size_t ll = strlen(lib) + 1, sl = strlen(sym) + 1;
	union rec *r = rec(GS_REC_PROBE, sizeof(struct gs_rec_probe) + ll + sl, 50);

	r->probe.id = id;
	r->probe.family = GS_PROBE_CUDA;
	memcpy(r->probe.names, lib, ll);
	memcpy(r->probe.names + ll, sym, sl);
	if (ctx)
		ctx__note(ctx, &r->h);
	if (w)
		CHECK_EQ_U64(trace__append(w, r, r->h.size), 0);
}

static void name_ev(struct gs_ctx *ctx, struct trace_writer *w, __u32 fn, __u64 handle,
		    const char *name, __u16 flags, int ret)
{
	union rec *r = rec(GS_EV_CU_NAME, sizeof(struct cu_name_event), 50);

	r->h.flags = flags;
	r->name.fn = fn;
	r->name.handle = handle;
	r->name.ret = ret;
	strcpy(r->name.name, name);
	if (ctx)
		ctx__note(ctx, &r->h);
	if (w)
		CHECK_EQ_U64(trace__append(w, r, r->h.size), 0);
}

static const char *kname(struct gs_ctx *ctx, __u64 handle)
{
	static char buf[300];
	bool by_handle, unconfirmed;
	const char *n = ctx__kernel_name(ctx, handle, &by_handle, &unconfirmed);

	snprintf(buf, sizeof(buf), "%s%s%s", n ? n : "?", by_handle ? "(handle)" : "",
		 unconfirmed ? "?" : "");
	return buf;
}

static void test_kernel_names(void)
{
	struct gs_ctx *ctx = ctx__new();
	char dir[] = "/tmp/gs-test-ctx.XXXXXX", path[256];
	struct trace_writer *w;
	union rec *r;

	probe(ctx, NULL, 1, "/drv/libcuda.so.1", "cuModuleGetFunction");
	probe(ctx, NULL, 2, "/drv/libcuda.so.1", "cuKernelGetFunction");
	CHECK_STR(ctx__probe(ctx, 2)->sym, "cuKernelGetFunction");
	CHECK_STR(ctx__probe(ctx, 2)->lib, "/drv/libcuda.so.1");
	CHECK(ctx__probe(ctx, 3) == NULL, "unknown probe");

	name_ev(ctx, NULL, 1, 0xf1, "fft_kernel", 0, 0);
	name_ev(ctx, NULL, 1, 0xf2, "failed_lookup", 0, 500); /* CUDA_ERROR_NOT_FOUND */
	CHECK_STR(kname(ctx, 0xf1), "fft_kernel");
	CHECK_STR(kname(ctx, 0xf2), "?");
	/* cuKernelGetFunction: the CUfunction 0xf3 of the CUkernel 0xf1. */
	r = rec(GS_EV_CUDA, sizeof(struct cu_event), 50);
	r->cu.fn = 2;
	r->cu.kind = CU_K_KERNEL_FUNCTION;
	r->cu.handle = 0xf3;
	r->cu.aux = 0xf1;
	ctx__note(ctx, &r->h);
	CHECK_STR(kname(ctx, 0xf3), "fft_kernel");
	/* A name read from a handle, of a library no lookup contradicted. */
	CHECK(ctx__handle_names_trusted(ctx, 1), "trusted");
	CHECK(!ctx__handle_names_trusted(ctx, 9), "an unknown probe's library is trusted");
	name_ev(ctx, NULL, 1, 0xf4, "ntt_kernel", CU_NF_BY_HANDLE, 0);
	CHECK_STR(kname(ctx, 0xf4), "ntt_kernel(handle)");
	/* A lookup's name contradicts its handle's: no more names from this library's handles. */
	name_ev(ctx, NULL, 1, 0xf5, "msm_kernel", CU_NF_CAL_DISAGREE, 0);
	CHECK(!ctx__handle_names_trusted(ctx, 1), "still trusted after a contradiction");
	name_ev(ctx, NULL, 1, 0xf6, "wrong_kernel", CU_NF_BY_HANDLE, 0);
	CHECK_STR(kname(ctx, 0xf6), "?");
	CHECK_STR(kname(ctx, 0xf5), "msm_kernel");
	ctx__free(ctx);

	/* The same trace through the pre-scan: the contradiction counts from the first record. */
	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(path, sizeof(path), "%s/names.gsc", dir);
	w = trace__create(path, true);
	CHECK(w, "create");
	probe(NULL, w, 1, "/drv/libcuda.so.1", "cuModuleGetFunction");
	probe(NULL, w, 7, "/other/libcuda.so.1", "cuModuleGetFunction");
	name_ev(NULL, w, 1, 0xf4, "ntt_kernel", CU_NF_BY_HANDLE, 0);
	name_ev(NULL, w, 1, 0xf5, "msm_kernel", CU_NF_CAL_DISAGREE, 0);
	CHECK_EQ_U64(trace__finish(w), 0);
	ctx = ctx__new();
	CHECK_EQ_U64(ctx__prescan(ctx, path), 0);
	CHECK(ctx__probe(ctx, 1) == NULL, "the pre-scan left probes behind");
	probe(ctx, NULL, 1, "/drv/libcuda.so.1", "cuModuleGetFunction");
	probe(ctx, NULL, 7, "/other/libcuda.so.1", "cuModuleGetFunction");
	CHECK(!ctx__handle_names_trusted(ctx, 1), "distrusted from the start");
	CHECK(ctx__handle_names_trusted(ctx, 7), "another library distrusted");
	name_ev(ctx, NULL, 1, 0xf4, "ntt_kernel", CU_NF_BY_HANDLE, 0);
	CHECK_STR(kname(ctx, 0xf4), "?");
	name_ev(ctx, NULL, 7, 0xe4, "other_kernel", CU_NF_BY_HANDLE, 0);
	CHECK_STR(kname(ctx, 0xe4), "other_kernel(handle)");
	CHECK(ctx__prescan(ctx, "/nonexistent/trace.gsc") < 0, "prescan of no file");
	ctx__free(ctx);
	unlink(path);
	rmdir(dir);
}

static void lookup(struct gs_ctx *ctx, __u64 handle, __u64 owner, const char *name)
{
	union rec *r = rec(GS_EV_CU_NAME, sizeof(struct cu_name_event), 50);

	r->h.flags = GS_F_RET;
	r->name.fn = 1;
	r->name.handle = handle;
	r->name.owner = owner;
	strcpy(r->name.name, name);
	ctx__note(ctx, &r->h);
}

static void unload(struct gs_ctx *ctx, __u64 owner, int ret)
{
	union rec *r = rec(GS_EV_CUDA, sizeof(struct cu_event), 50);

	r->h.flags = GS_F_RET;
	r->cu.fn = 3;
	r->cu.kind = CU_K_UNLOAD;
	r->cu.handle = owner;
	r->cu.ret = ret;
	ctx__note(ctx, &r->h);
}

/* An unload puts the names of the handles it may have freed in doubt, until confirmed again. */
static void test_unloads(void)
{
	struct gs_ctx *ctx = ctx__new();
	union rec *r;

	probe(ctx, NULL, 1, "/drv/libcuda.so.1", "cuModuleGetFunction");
	probe(ctx, NULL, 2, "/drv/libcuda.so.1", "cuKernelGetFunction");
	lookup(ctx, 0xa1, 0x100, "k_a");
	lookup(ctx, 0xb1, 0x200, "k_b");
	name_ev(ctx, NULL, 1, 0xc1, "k_c", CU_NF_BY_HANDLE, 0);
	/* cuKernelGetFunction: 0xa2 comes from 0xa1, so from module 0x100 too. */
	r = rec(GS_EV_CUDA, sizeof(struct cu_event), 50);
	r->cu.fn = 2;
	r->cu.kind = CU_K_KERNEL_FUNCTION;
	r->cu.handle = 0xa2;
	r->cu.aux = 0xa1;
	ctx__note(ctx, &r->h);
	unload(ctx, 0x100, 400); /* failed (CUDA_ERROR_INVALID_HANDLE): nothing freed */
	CHECK_STR(kname(ctx, 0xa1), "k_a");
	CHECK_STR(kname(ctx, 0xc1), "k_c(handle)");
	unload(ctx, 0x100, 0);
	CHECK_STR(kname(ctx, 0xa1), "k_a?");
	CHECK_STR(kname(ctx, 0xa2), "k_a?");
	CHECK_STR(kname(ctx, 0xb1), "k_b");	     /* its module is still loaded */
	CHECK_STR(kname(ctx, 0xc1), "k_c(handle)?"); /* its module is unknown */
	/* Read from the handle since: the handle's name now; a lookup since: that one. */
	name_ev(ctx, NULL, 1, 0xa1, "k_new", CU_NF_BY_HANDLE, 0);
	CHECK_STR(kname(ctx, 0xa1), "k_new(handle)");
	lookup(ctx, 0xa2, 0x100, "k_again"); /* module 0x100 loaded again at the same address */
	CHECK_STR(kname(ctx, 0xa2), "k_again");
	name_ev(ctx, NULL, 1, 0xc1, "k_c", CU_NF_BY_HANDLE, 0);
	CHECK_STR(kname(ctx, 0xc1), "k_c(handle)");
	unload(ctx, 0x200, 0);
	CHECK_STR(kname(ctx, 0xb1), "k_b?");
	CHECK_STR(kname(ctx, 0xa2), "k_again");
	CHECK_STR(kname(ctx, 0xa1), "k_new(handle)?");
	ctx__free(ctx);
}

int main(void)
{
	test_maps();
	test_ksyms_comms();
	test_kernel_names();
	test_unloads();
	TEST_PASS();
}
