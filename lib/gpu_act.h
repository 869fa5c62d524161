/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GPU activity as the CUPTI collector (loader/cupti/, loaded into a launched target through
 * CUDA_INJECTION64_PATH) hands it to the recorder, and as the trace keeps it (GS_REC_GPU_ACT:
 * a struct gs_hdr, then this record as it came).
 *
 * The collector converts each CUPTI activity record it wants into one struct gs_gpu_act and
 * sends them in batches over a SOCK_SEQPACKET socket the recorder created (its descriptor in
 * GS_CUPTI_FD_ENV): one message is whole records, so the recorder never sees half of one.
 * Times are CLOCK_MONOTONIC ns (CUPTI's timestamp callback), the clock of the BPF events.
 */
#ifndef GAPSCOPE_GPU_ACT_H
#define GAPSCOPE_GPU_ACT_H

#include <stdint.h>

#define GS_CUPTI_FD_ENV "GAPSCOPE_CUPTI_FD"
#define GS_CUPTI_LIB	"libgapscope-cupti.so"
#define GS_GPU_ACT_MSG	4096 /* the largest message */
#define GS_GPU_ACT_TEXT 256  /* the longest name or status text kept, NUL included */

enum gs_gpu_act_kind {
	GS_ACT_KERNEL = 1, /* a kernel ran: device, context, stream, start, end, name */
	GS_ACT_MEMCPY,	   /* a copy: bytes, aux = CUpti_ActivityMemcpyKind */
	GS_ACT_MEMSET,	   /* a memset: bytes */
	GS_ACT_LAUNCH,	   /* a driver launch call: aux = CUPTI cbid, tid, start, end */
	GS_ACT_NAME,	   /* a kernel name: aux = its id in GS_ACT_KERNEL records; text */
	GS_ACT_STATUS,	   /* the collector's state: aux = enum gs_cupti_status; text */
	GS_ACT_DROPPED,	   /* bytes = records CUPTI dropped (its buffers were full) */
	GS_ACT_KIND_MAX
};

enum gs_cupti_status {
	GS_CUPTI_ON = 1,  /* collecting; text: the libcupti loaded */
	GS_CUPTI_NO_LIB,  /* libcupti could not be loaded; text: why */
	GS_CUPTI_FAILED,  /* a CUPTI call failed; text: which and why */
	GS_CUPTI_FLUSHED, /* the final flush at the target's exit is done */
};

struct gs_gpu_act {
	uint16_t kind; /* enum gs_gpu_act_kind */
	uint16_t size; /* bytes of this record, text included, a multiple of 8 */
	uint32_t device;
	uint32_t context;     /* CUPTI's context id */
	uint32_t stream;      /* CUPTI's stream id */
	uint32_t correlation; /* the launching call's correlation id (GS_ACT_LAUNCH has it too) */
	uint32_t aux;	      /* by kind, see above */
	uint32_t pid;
	uint32_t tid; /* GS_ACT_LAUNCH: the calling thread (system thread id) */
	uint64_t start, end;
	uint64_t bytes;
	char text[]; /* GS_ACT_NAME, GS_ACT_STATUS: NUL-terminated, padded to 8 */
};

#endif
