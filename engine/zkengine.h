/* SPDX-License-Identifier: MIT */
/* zkengine's options, parsed in zkengine.c and run by pipeline.c. */
#ifndef ZK_ZKENGINE_H
#define ZK_ZKENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu.h"

#define ZK_MIN_LOG2N 4
#define ZK_MAX_LOG2N 26 /* 2 GiB per vector: a, b, c and the tables fit an H200 with room */

#define ZK_SCENARIOS(X)                     \
	X(FIXED, "fixed")                   \
	X(TRACKER_TRIM, "tracker-trim")     \
	X(GPU_LOCK_WIDE, "gpu-lock-wide")   \
	X(STARVED, "starved")               \
	X(PAGEABLE, "pageable")             \
	X(OVERSUBSCRIBED, "oversubscribed") \
	X(PARALLEL_WAITS, "parallel-waits")

#define ZK_SCENARIO_ENUM(id, name) SCENARIO_##id,
enum zk_scenario { ZK_SCENARIOS(ZK_SCENARIO_ENUM) SCENARIO_COUNT };

/* parallel-waits' twins (--without): each takes away one of the two waits' causes. */
#define ZK_WITHOUT_TRIM		 (1u << 0) /* the recorder trims after releasing the lock */
#define ZK_WITHOUT_SLOW_PRODUCER (1u << 1) /* the producer's batch takes a tenth of the time */

struct zk_opts {
	enum gpu_backend device;
	unsigned partitions;
	unsigned log2n;
	unsigned gpus;
	unsigned gpu_workers; /* per GPU; 0: by scenario (pipeline.c) */
	unsigned synth_threads;
	enum zk_scenario scenario;
	unsigned without; /* ZK_WITHOUT_* */
	bool verify;
	bool hold_last; /* the last partition waits for standard input's end */
	const char *truth;
	uint64_t seed;
};

const char *zk_scenario_name(enum zk_scenario s);

/* Run the engine with the parsed options; returns the process exit status. */
int pipeline__run(const struct zk_opts *o);

#endif
