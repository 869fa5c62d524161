// SPDX-License-Identifier: MIT
/*
 * zkengine: a compact stand-in for a Groth16 proving daemon, the target gapscope profiles.
 * This file is the command line only; pipeline.c runs the engine.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "zkengine.h"

const char *argp_program_version = "zkengine 0.1";

static const char doc[] =
	"zkengine -- a Groth16-style prover's GPU section, as a profiling target.\n"
	"\n"
	"USAGE: zkengine [--device auto|cuda|sim] [--partitions N] [--log2n K]\n"
	"         [--gpus G] [--gpu-workers W] [--synth-threads T] [--scenario NAME]\n"
	"         [--verify] [--truth FILE] [--seed S] [--without WHAT]\n"
	"\n"
	"Per partition: random a, b over the BLS12-381 scalar field, c = a*b on a\n"
	"domain of 2^K points; then on the GPU the H polynomial: iNTT of a, b, c,\n"
	"coset NTT, (a*b - c)/Z, iNTT.  The GPU is driven through the CUDA driver\n"
	"API: the real libcuda.so.1, or simcuda (simcuda/libcuda.so.1 next to this\n"
	"binary), a simulated driver running CPU versions of the same kernels.\n"
	"\n"
	"EXAMPLES:\n"
	"  zkengine --device sim --partitions 8 --log2n 12 --verify\n"
	"  zkengine --device cuda --log2n 22 --partitions 4 --verify"
	"\v"
	"Scenarios: fixed, tracker-trim, gpu-lock-wide, starved, pageable,\n"
	"oversubscribed, parallel-waits.  parallel-waits' twins, each with one of its\n"
	"two waits' causes taken away: --without trim (the recorder trims after\n"
	"releasing the tracker lock), --without slow-producer (the producer's batch\n"
	"takes a fortieth of the time).\n"
	"Exit status: 0 success, 1 runtime or verification failure, 2 bad arguments.";

enum {
	OPT_DEVICE = 'd',
	OPT_PARTITIONS = 'n',
	OPT_LOG2N = 'k',
	OPT_GPUS = 'g',
	OPT_GPU_WORKERS = 'w',
	OPT_SYNTH = 't',
	OPT_SCENARIO = 's',
	OPT_VERIFY = 'v',
	OPT_TRUTH = 0x100,
	OPT_SEED,
	OPT_HOLD_LAST,
	OPT_WITHOUT,
};

static const struct argp_option options[] = {
	{ "device", OPT_DEVICE, "DEV", 0, "auto (default), cuda or sim", 0 },
	{ "partitions", OPT_PARTITIONS, "N", 0, "partitions to prove (default 16)", 0 },
	{ "log2n", OPT_LOG2N, "K", 0,
	  "domain of 2^K points per partition, 4..26 (default 8 on simcuda, 22 on a GPU)", 0 },
	{ "gpus", OPT_GPUS, "G", 0, "GPUs to use (default 1)", 0 },
	{ "gpu-workers", OPT_GPU_WORKERS, "W", 0,
	  "GPU worker threads per GPU (default 2; 1 for parallel-waits)", 0 },
	{ "synth-threads", OPT_SYNTH, "T", 0,
	  "synthesis threads (default: 1 for starved, else 4 on simcuda, CPUs - 2 on a GPU)", 0 },
	{ "scenario", OPT_SCENARIO, "NAME", 0, "cause of GPU idle to reproduce (default fixed)",
	  0 },
	{ "verify", OPT_VERIFY, NULL, 0, "check every result against the GMP reference", 0 },
	{ "truth", OPT_TRUTH, "FILE", 0, "write the engine's ground truth (JSON lines) to FILE",
	  0 },
	{ "seed", OPT_SEED, "S", 0, "seed of the random inputs (default: from getrandom)", 0 },
	{ "without", OPT_WITHOUT, "WHAT", 0,
	  "parallel-waits only: trim or slow-producer, the twin without that cause (may be "
	  "given twice)",
	  0 },
	{ "hold-last", OPT_HOLD_LAST, NULL, 0,
	  "hand out the last partition only once standard input reaches its end (a test's way "
	  "to decide when a run ends, whatever the machine's speed)",
	  0 },
	{ 0 },
};

/* Defaults in one place. */
static struct zk_opts env = {
	.device = GPU_AUTO,
	.partitions = 16,
	.log2n = 0, /* per backend */
	.gpus = 1,
	.gpu_workers = 0,   /* by scenario: see pipeline.c */
	.synth_threads = 0, /* by scenario and machine: see pipeline.c */
	.scenario = SCENARIO_FIXED,
};
static bool seed_given;

static const char *const scenario_names[] = {
#define ZK_SCENARIO_NAME(id, name) [SCENARIO_##id] = name,
	ZK_SCENARIOS(ZK_SCENARIO_NAME)
};

const char *zk_scenario_name(enum zk_scenario s)
{
	return s < SCENARIO_COUNT ? scenario_names[s] : "?";
}

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("zkengine: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static unsigned long long parse_num(const char *opt, const char *arg, unsigned long long lo,
				    unsigned long long hi)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-')
		usage_error("--%s %s: not a number", opt, arg);
	if (v < lo || v > hi)
		usage_error("--%s %s: out of range (%llu..%llu)", opt, arg, lo, hi);
	return v;
}

static int last_arg; /* index of the argument argp looked at last, for error messages */

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	last_arg = state->next;
	switch (key) {
	case OPT_DEVICE:
		if (!strcmp(arg, "auto"))
			env.device = GPU_AUTO;
		else if (!strcmp(arg, "cuda"))
			env.device = GPU_CUDA;
		else if (!strcmp(arg, "sim"))
			env.device = GPU_SIM;
		else
			usage_error("--device %s: unknown device (auto, cuda or sim)", arg);
		break;
	case OPT_PARTITIONS:
		env.partitions = (unsigned)parse_num("partitions", arg, 1, 1000000);
		break;
	case OPT_LOG2N:
		env.log2n = (unsigned)parse_num("log2n", arg, ZK_MIN_LOG2N, ZK_MAX_LOG2N);
		break;
	case OPT_GPUS:
		env.gpus = (unsigned)parse_num("gpus", arg, 1, 64);
		break;
	case OPT_GPU_WORKERS:
		env.gpu_workers = (unsigned)parse_num("gpu-workers", arg, 1, 64);
		break;
	case OPT_SYNTH:
		env.synth_threads = (unsigned)parse_num("synth-threads", arg, 1, 1024);
		break;
	case OPT_SCENARIO: {
		int i;
		for (i = 0; i < SCENARIO_COUNT; i++)
			if (!strcmp(arg, scenario_names[i]))
				break;
		if (i == SCENARIO_COUNT)
			usage_error("--scenario %s: unknown scenario (fixed, tracker-trim, "
				    "gpu-lock-wide, starved, pageable, oversubscribed, "
				    "parallel-waits)",
				    arg);
		env.scenario = (enum zk_scenario)i;
		break;
	}
	case OPT_VERIFY:
		env.verify = true;
		break;
	case OPT_TRUTH:
		if (!*arg)
			usage_error("--truth: empty file name");
		env.truth = arg;
		break;
	case OPT_SEED:
		env.seed = parse_num("seed", arg, 0, ULLONG_MAX);
		seed_given = true;
		break;
	case OPT_HOLD_LAST:
		env.hold_last = true;
		break;
	case OPT_WITHOUT:
		if (!strcmp(arg, "trim"))
			env.without |= ZK_WITHOUT_TRIM;
		else if (!strcmp(arg, "slow-producer"))
			env.without |= ZK_WITHOUT_SLOW_PRODUCER;
		else
			usage_error("--without %s: trim or slow-producer", arg);
		break;
	case ARGP_KEY_ARG:
		usage_error("unexpected argument '%s'", arg);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static bool wants_help(const char *arg)
{
	static const char *const help[] = { "--help", "--usage", "--version", "-?", "-V" };
	for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
		if (!strncmp(arg, help[i], strlen(help[i])))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = options, .parser = parse_opt, .doc = doc };

	/* argp's own error messages take two lines (error + "Try --help"); ours take one, so parse
	 * with ARGP_NO_ERRS.  That flag also silences --help, --usage and --version, so a command
	 * line asking for those is parsed the ordinary way. */
	unsigned flags = ARGP_NO_ERRS;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (wants_help(argv[i]))
			flags = 0;
	error_t err = argp_parse(&argp, argc, argv, flags, NULL, NULL);
	if (err) {
		const char *bad = last_arg > 0 && last_arg <= argc ? argv[last_arg - 1] : "?";
		usage_error("bad option or missing value: '%s' (see --help)", bad);
	}
	if (env.without && env.scenario != SCENARIO_PARALLEL_WAITS)
		usage_error("--without: only with --scenario parallel-waits");
	if (!seed_given && getrandom(&env.seed, sizeof(env.seed), 0) != sizeof(env.seed)) {
		fprintf(stderr, "zkengine: getrandom: %m\n");
		return 1;
	}
	return pipeline__run(&env);
}
