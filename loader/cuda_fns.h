/* SPDX-License-Identifier: GPL-2.0 */
/* The CUDA driver functions gapscope probes, and where each carries its arguments. */
#ifndef GAPSCOPE_CUDA_FNS_H
#define GAPSCOPE_CUDA_FNS_H

#include <stdbool.h>
#include <linux/types.h>
#include "cuda.h"

/*
 * The description for an exported symbol, or false when gapscope does not probe it. _ptsz and
 * _ptds twins share their base's layout; a version of a probed family that the table does not
 * know (a future _v3) is probed for its timing only, with no arguments decoded.
 */
bool cuda_fns__lookup(const char *sym, struct cu_fn_desc *d);

#endif
