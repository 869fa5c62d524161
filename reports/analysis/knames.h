/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel names by CUfunction / CUkernel handle, for the trace context (context.h): from lookups
 * (cuModuleGetFunction, cuLibraryGetKernel, passed on by cuKernelGetFunction) and read from
 * handles (record -p). Each name keeps the module (library) it came from where known and how
 * many unloads the trace had shown when it was learned: an unload frees the handles of what it
 * unloads, which the driver may give out again for another kernel without a lookup we see, so
 * a name learned before an unload that may have freed its handle is in doubt until confirmed.
 */
#ifndef GAPSCOPE_KNAMES_H
#define GAPSCOPE_KNAMES_H

#include <stdbool.h>
#include <linux/types.h>

#include "idmap.h"
#include "strtab.h"

struct knames {
	struct idmap lookup_ids, handle_ids; /* handle -> names: struct kname */
	struct vec names;
	__u64 unloads;		 /* successful unloads so far */
	struct idmap unload_ids; /* owner -> unload_gens: __u64, its last unload */
	struct vec unload_gens;
};

/* name (interned, outliving the table) for handle, from a lookup in owner or (by_handle) read
 * from the handle, owner unknown (0). */
void knames__set(struct knames *k, bool by_handle, __u64 handle, const char *name, __u64 owner);
/* cuKernelGetFunction: func gets the name kernel has, as it has it. */
void knames__alias(struct knames *k, __u64 func, __u64 kernel);
/* A successful unload of owner (a CUmodule or CUlibrary). */
void knames__unload(struct knames *k, __u64 owner);
/* As ctx__kernel_name (context.h). */
const char *knames__get(const struct knames *k, __u64 handle, bool *by_handle, bool *unconfirmed);
void knames__free(struct knames *k);

#endif
