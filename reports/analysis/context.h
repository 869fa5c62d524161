/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace context: everything a reader needs to interpret records, kept apart from any output.
 * It is fed every record (ctx__note; reader.h says when the ordered reader does it) and
 * answers:
 *
 *   thread names      comm events, exec, fork (the child's name), the target record
 *   maps per process  map records (full paths, build-ids) and mmap events (file name only)
 *   kernel symbols    ksym records
 *   probes            probe records: id -> family, CUDA kind, library, symbol, live since
 *   kernel names      of CUDA launches: handle -> name from lookups (cuModuleGetFunction,
 *                     cuLibraryGetKernel, cuKernelGetFunction) and, where trusted, from handles;
 *                     in doubt after an unload that may have freed the handle
 *   recorder state    clock, sampler, losses, lost events by type, handle-name calibration,
 *                     the target's exit, the end record
 *
 * Names read from handles (record -p, bpf/cuda.h) are trusted only for a library where no lookup
 * contradicted the handle's name anywhere in the trace: ctx__prescan reads the trace once for the
 * contradictions, so the decision holds from the first record. Without the pre-scan a library is
 * distrusted from its first contradiction on. The pre-scan also takes the perf maps in.
 *
 * What the context answers is as of the records fed so far: strings it returns stay valid until
 * ctx__free.
 */
#ifndef GAPSCOPE_CONTEXT_H
#define GAPSCOPE_CONTEXT_H

#include <stdbool.h>
#include <linux/types.h>

#include "addrmaps.h"
#include "gapscope.h"
#include "ksyms.h"
#include "trace.h"

struct gs_ctx;

struct ctx_probe {
	__u32 id;
	__u32 family;  /* enum gs_probe_family */
	__u32 kind;    /* enum cu_kind for CUDA probes */
	__u32 flags;   /* GS_PROBE_F_* */
	__s32 err;     /* 0, or -errno of a failed attach */
	__u64 live_ns; /* probe live since (0 when the attach failed) */
	__u64 offset;
	const char *lib;
	const char *sym;
};

struct ctx_target {
	__u32 tgid; /* 0: no target record */
	__u32 mode; /* GS_TARGET_* */
	__u32 argc;
	const char *const *argv;
};

struct gs_ctx *ctx__new(void);
void ctx__free(struct gs_ctx *ctx);

/* Takes what a record tells about the trace; any record, of any type, in file order. */
void ctx__note(struct gs_ctx *ctx, const struct gs_hdr *rec);

/* Reads the trace at path for contradicted handle names (see above); 0 or -errno. */
int ctx__prescan(struct gs_ctx *ctx, const char *path);

/* A thread's name, NULL when the trace never named it. */
const char *ctx__comm(const struct gs_ctx *ctx, __u32 tid);

/*
 * A probe by its id (the fn of CUDA events, the id of probe events), NULL if unknown. Pointers
 * to probes and mappings hold until the next record is fed; strings until ctx__free.
 */
const struct ctx_probe *ctx__probe(const struct gs_ctx *ctx, __u32 id);

/*
 * The kernel name of a CUfunction or CUkernel handle, NULL if unknown. *by_handle (may be NULL)
 * says it was read from the handle rather than seen at a lookup; *unconfirmed (may be NULL) that
 * it was learned before an unload that may have freed the handle (cuModuleUnload of the module
 * it was looked up in; any unload for a name read from the handle), and no lookup or read of the
 * handle since confirmed it: the handle may now be another kernel's.
 */
const char *ctx__kernel_name(const struct gs_ctx *ctx, __u64 handle, bool *by_handle,
			     bool *unconfirmed);

/* Whether names read from handles through CUDA probe fn are used (see above). */
bool ctx__handle_names_trusted(const struct gs_ctx *ctx, __u32 fn);

/* The mapping of tgid that holds addr (the latest one recorded there), NULL if none. */
const struct ctx_map *ctx__map(struct gs_ctx *ctx, __u32 tgid, __u64 addr);
/* A mapping of tgid of the file with inode ino (a fault's file), NULL if none. */
const struct ctx_map *ctx__map_ino(struct gs_ctx *ctx, __u32 tgid, __u64 ino);

/*
 * The name a JIT gave the code of tgid at addr in its perf map (GS_REC_PERF_MAP, perfmap.h),
 * and addr's offset in it; NULL if none. The recorder writes perf maps last: ctx__prescan has
 * them from the start.
 */
const char *ctx__jit_symbol(struct gs_ctx *ctx, __u32 tgid, __u64 addr, __u64 *offset);

/* The kernel symbol at or below addr, NULL if none (valid until the next ksym record). */
const struct ksym *ctx__ksym(struct gs_ctx *ctx, __u64 addr);

const struct ctx_target *ctx__target(const struct gs_ctx *ctx);

/* The recorder's records, NULL until seen; the last one of each kind counts. */
const struct gs_rec_clock *ctx__clock(const struct gs_ctx *ctx);
const struct gs_rec_sampler *ctx__sampler(const struct gs_ctx *ctx);
const struct gs_rec_cu_handles *ctx__cu_handles(const struct gs_ctx *ctx);
const struct gs_rec_exit *ctx__exit(const struct gs_ctx *ctx);
const struct gs_rec_end *ctx__end(const struct gs_ctx *ctx);

/*
 * Loss counters of the last losses record: *n counters in enum gs_loss order (names in
 * gs_loss_names; a newer recorder may write more), NULL when the trace has none.
 */
const __u64 *ctx__losses(const struct gs_ctx *ctx, __u32 *n);
__u64 ctx__lost_total(const struct gs_ctx *ctx);

/* Ring-buffer losses by event type (enum gs_event_type), of the last lost-types record. */
const __u64 *ctx__lost_types(const struct gs_ctx *ctx, __u32 *n);

#endif
