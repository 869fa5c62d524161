// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gapscope.h"
#include "numarg.h"
#include "options.h"
#include "outfile.h"
#include "snapshot.h"
#include "trace.h"

static const struct record_opts defaults = {
	.output = "gapscope.gsc",
	.freq = 499,
	/*
	 * The ring buffer's pages are mapped twice into the recorder (the data area wraps) and all
	 * count as resident: 16 MiB is 32 MB of RSS, a third of the plain recorder's 100 MB. What it
	 * must hold is what comes while the consumer is busy: launches are decided in the kernel,
	 * so a PyTorch loop streams about 3.4 MB/s, stack snapshots most of it (16 MiB: 4 s), and
	 * the fastest storm this recorder can drain fills it in tens of milliseconds at the 512 KiB
	 * wakeup mark (tests/bench). --ringbuf-mb raises it.
	 */
	.ringbuf_mb = 16,
	.snap_bytes = GS_SNAP_DEFAULT,
	.snap_min_block_ns = GS_SNAP_MIN_BLOCK,
	.cupti = -1,
};

/* The ring buffer's largest size: mapped twice, it is resident twice (see above). */
#define RINGBUF_MB_MAX 1024

enum {
	OPT_PROBE = 0x100,
	OPT_LOCK_HOLDS,
	OPT_FOLLOW,
	OPT_KEEP_LOOKUPS,
	OPT_ALL_LAUNCHES,
	OPT_UNCOMPRESSED,
	OPT_CGROUP,
	OPT_LAUNCH_STACKS,
	OPT_CUPTI,
	OPT_NO_CUPTI,
	OPT_NVML,
	OPT_ARCHIVE,
	OPT_DURATION,
	OPT_FREQ,
	OPT_SAMPLER,
	OPT_RINGBUF,
	OPT_SNAP,
	OPT_SNAP_MIN,
	OPT_NO_PYTHON,
};

/*
 * argp wraps help text at 79 columns: keep every line shorter. A format: the MEMORY paragraph's
 * figures are memlimit__need_mb's, filled in by help_filter, as the check at the start has them.
 */
static const char doc[] =
	"Record CUDA driver calls, futex waits, malloc_trim, scheduling and CPU\n"
	"samples of a program, for 'gapscope report' and 'gapscope script'.\n"
	"\n"
	"EXAMPLES:\n"
	"  gapscope record -- ./zkengine --device sim   # until it exits\n"
	"  gapscope record -o t.gsc -f -- python3 train.py\n"
	"  gapscope record -p 4242 --duration 10        # a running process\n"
	"  gapscope record --probe libc.so.6:free -- ./app   # time every free()\n"
	"\n"
	"PROCESSES: -- CMD records CMD alone (--follow-children adds what it forks);\n"
	"-p PID and --cgroup record the processes, their descendants and what they\n"
	"fork from then on.\n"
	"\n"
	"Needs root (or CAP_BPF and CAP_PERFMON) and a kernel with BTF. The trace\n"
	"is created mode 0600 (less the umask) and never written through a link;\n"
	"-f replaces only a regular file or a link.\n"
	"\n"
	"MEMORY: a recording needs about %d MiB and --ringbuf-mb more of its memory\n"
	"cgroup (%llu MiB by default); --flight adds --flight-mb, %d MiB for what every\n"
	"dump needs and %d MiB for the live analysis (%llu MiB by default). In a\n"
	"cgroup limited to less it does not start.\n"
	"\n"
	"EXIT STATUS: the command's own (its death by a signal is passed on as the\n"
	"same signal: 128+N in a shell; 127 if it could not be run); 0 with -p; but\n"
	"1 when the recording itself failed (a full disk cut the trace), whatever\n"
	"the command did.\n"
	"\n"
	"SIGNALS: the recorder keeps SIGCHLD, SIGPIPE (ignored: a closed stderr\n"
	"never stops it) and, in flight mode, SIGUSR1 (a dump). Every other one\n"
	"sent to gapscope alone is passed on to the command, but the terminal's\n"
	"stop signals (SIGTSTP, SIGTTIN, SIGTTOU); one sent to their process group\n"
	"reaches it once. With -p, one that would end gapscope ends the recording.\n";

static const struct argp_option opts[] = {
	{ "output", 'o', "FILE", 0, "Trace file (default gapscope.gsc)", 0 },
	{ "force", 'f', NULL, 0, "Replace an existing trace file (removed, not written through)",
	  0 },
	{ "pid", 'p', "PID", 0,
	  "Record a running process, with its descendants and what they fork from now on; may be "
	  "given several times (the recording ends when the first exits)",
	  0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "Also record every process of a cgroup and of the cgroups below it (a path under "
	  "/sys/fs/cgroup: a container, a systemd service), their descendants, and those that join "
	  "later (looked for every second); without -p the recording ends when the cgroup has no "
	  "process left",
	  0 },
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
	{ "follow-children", OPT_FOLLOW, NULL, 0,
	  "With -- CMD, also record the processes CMD forks (without it CMD alone; -p and --cgroup "
	  "always follow)",
	  0 },
	{ "launch-stacks", OPT_LAUNCH_STACKS, NULL, 0,
	  "User stacks of launches and other entry-only CUDA calls too (by default their caller's "
	  "address alone: the walk is a third of a launch probe's cost)",
	  0 },
	{ "all-launches", OPT_ALL_LAUNCHES, NULL, 0,
	  "Every launch in the trace (by default only those that can end a GPU gap, the first on "
	  "a thread and stream after any other CUDA call; all are counted exactly either way)",
	  0 },
	{ "uncompressed", OPT_UNCOMPRESSED, NULL, 0,
	  "Write the trace's chunks uncompressed (by default each is one zstd frame: about a "
	  "tenth of the size where threads are sampled), for tools that read the file's bytes",
	  0 },
	{ "keep-lookups", OPT_KEEP_LOOKUPS, NULL, 0,
	  "Keep probing cuKernelGetFunction after kernel handles have shown their names (by "
	  "default retired then: one trap per launch)",
	  0 },
	{ "cupti", OPT_CUPTI, NULL, 0,
	  "Exact kernel and copy times from CUPTI, injected into a launched command (the default "
	  "there; warns when the driver or CUPTI cannot)",
	  0 },
	{ "no-cupti", OPT_NO_CUPTI, NULL, 0, "No CUPTI", 0 },
	{ "nvml", OPT_NVML, NULL, 0, "NVML GPU utilization samples, 20 a second", 0 },
	{ "archive", OPT_ARCHIVE, NULL, 0,
	  "Keep what naming and unwinding need of every mapped ELF file (CFI, symbols, DWARF up "
	  "to 16 MiB a file) in the trace, for reports where the files are gone or rebuilt",
	  0 },
	{ "ringbuf-mb", OPT_RINGBUF, "MB", 0, "Ring buffer size in MiB (default 16)", 0 },
	{ "stack-snapshot", OPT_SNAP, "BYTES", 0,
	  "User stack bytes copied for DWARF unwinding at long waits, probed calls and samples "
	  "(default 16384, at most 65536; 0: frame pointers only)",
	  0 },
	{ "snapshot-min-block", OPT_SNAP_MIN, "MS", 0,
	  "Waits at least this long get a stack snapshot (default 1)", 0 },
	{ "no-python", OPT_NO_PYTHON, NULL, 0,
	  "No Python frames (by default read from every CPython 3.10-3.13 recorded, at samples "
	  "and long waits)",
	  0 },
	{ "verbose", 'v', NULL, 0,
	  "Per-library notes and the probed functions; twice (-vv): libbpf's debug output too", 0 },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct record_cmd_opts *c = state->input;
	struct record_opts *o = &c->o;
	long long v;
	double ms;

	switch (key) {
	case 'o':
		o->output = arg;
		o->output_given = true;
		break;
	case 'f':
		o->force = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case 'p': {
		pid_t pid;

		if (numarg__pid(arg, &pid))
			argp_error(state, "-p: a process id (1 to %d), not %s", NUMARG_PID_MAX,
				   arg);
		if (o->npids == GS_MAX_PIDS)
			argp_error(state, "-p: at most %d of them", GS_MAX_PIDS);
		o->pids[o->npids++] = pid;
		if (!o->pid)
			o->pid = pid;
		break;
	}
	case OPT_CGROUP:
		o->cgroup = arg;
		break;
	case OPT_DURATION:
		if (numarg__double(arg, 1e-3, 1e7, &o->duration))
			argp_error(state, "--duration: seconds (0.001 to 1e7), not %s", arg);
		break;
	case OPT_FREQ:
		if (numarg__int(arg, 1, 100000, &v))
			argp_error(state, "--freq: samples a second (1 to 100000), not %s", arg);
		o->freq = v;
		break;
	case OPT_SAMPLER:
		if (!strcmp(arg, "tick"))
			o->sampler = GS_SAMPLER_TICK;
		else if (!strcmp(arg, "timer"))
			o->sampler = GS_SAMPLER_TIMER;
		else
			argp_error(state, "--sampler wants tick or timer, got %s", arg);
		break;
	case OPT_RINGBUF:
		if (numarg__int(arg, 1, RINGBUF_MB_MAX, &v) || (v & (v - 1)))
			argp_error(state, "--ringbuf-mb: a power of two from 1 to %d, not %s",
				   RINGBUF_MB_MAX, arg);
		o->ringbuf_mb = v;
		break;
	case OPT_SNAP:
		if (numarg__int(arg, 0, GS_SNAP_MAX, &v))
			argp_error(state, "--stack-snapshot wants 0 to %d bytes, got %s",
				   GS_SNAP_MAX, arg);
		o->snap_bytes = v;
		break;
	case OPT_SNAP_MIN:
		if (numarg__double(arg, 0, 1e6, &ms))
			argp_error(state, "--snapshot-min-block: milliseconds (0 to 1e6), not %s",
				   arg);
		o->snap_min_block_ns = ms * 1e6;
		break;
	case OPT_PROBE: {
		struct probe_spec p;
		char why[PATH_MAX + 64];

		if (probe_spec__parse(arg, &p))
			argp_error(state, "--probe wants LIB:SYM, got %s", arg);
		if (probe_spec__check(&p, why, sizeof(why)))
			argp_error(state, "--probe %s: %s", arg, why);
		if (o->nprobes == MAX_USER_PROBES)
			argp_error(state, "at most %d --probe options", MAX_USER_PROBES);
		o->probes[o->nprobes++] = p;
		break;
	}
	case OPT_LAUNCH_STACKS:
		o->launch_stacks = true;
		break;
	case OPT_NO_PYTHON:
		o->no_python = true;
		break;
	case OPT_KEEP_LOOKUPS:
		o->keep_lookups = true;
		break;
	case OPT_ALL_LAUNCHES:
		o->all_launches = true;
		break;
	case OPT_UNCOMPRESSED:
		o->uncompressed = true;
		break;
	case OPT_FOLLOW:
		o->follow_children = true;
		break;
	case OPT_LOCK_HOLDS:
		o->lock_holds = true;
		break;
	case OPT_CUPTI:
		o->cupti = 1;
		break;
	case OPT_NO_CUPTI:
		o->cupti = 0;
		break;
	case OPT_NVML:
		o->nvml = true;
		break;
	case OPT_ARCHIVE:
		o->archive = true;
		break;
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &c->flight;
		break;
	case ARGP_KEY_ARG:
		/* The command and everything after it belong to the target. */
		o->cmd = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (c->flight.replay && (o->cmd || o->pid || o->cgroup))
			argp_error(state,
				   "--replay TRACE records no target: no -p, --cgroup or command");
		if (!o->cmd && !o->pid && !o->cgroup && !c->flight.replay)
			argp_error(state, "need -p PID, --cgroup PATH or a command after --");
		if (o->cmd && (o->pid || o->cgroup))
			argp_error(state, "-p PID or --cgroup and a command exclude each other");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static char *help_filter(int key, const char *text, void *input)
{
	struct flight_opts f;
	char *s;

	if (key != ARGP_KEY_HELP_PRE_DOC)
		return (char *)text;
	flight_opts__defaults(&f);
	if (asprintf(&s, doc, MEMLIMIT_FLOOR_MB, memlimit__need_mb(defaults.ringbuf_mb, 0),
		     MEMLIMIT_STICKY_MB, MEMLIMIT_ANALYSIS_MB,
		     memlimit__need_mb(defaults.ringbuf_mb, f.mem_mb)) < 0)
		return (char *)text;
	return s;
}

int record_opts__parse(int argc, char **argv, struct record_cmd_opts *c)
{
	static const struct argp_child children[] = { { &flight_argp, 0, NULL, 0 },
						      { &cli__argp, 0, NULL, 0 },
						      {} };
	static const struct argp argp = {
		.children = children,
		.options = opts,
		.parser = parse_opt,
		.args_doc = "(-p PID | --cgroup PATH | -- CMD [ARGS...])",
		.doc = doc,
		.help_filter = help_filter,
	};

	c->o = defaults;
	flight_opts__defaults(&c->flight);
	return argp_parse(&argp, argc, argv, ARGP_IN_ORDER | ARGP_NO_HELP, NULL, c) ? -EINVAL : 0;
}

int record_opts__check(const struct record_cmd_opts *c)
{
	const struct record_opts *o = &c->o;
	struct stat st;
	const char *what;

	/* --flight keeps the trace in memory; -o writes the whole recording too. */
	if (c->flight.seconds && o->archive) {
		fprintf(stderr, "gapscope: --archive and --flight exclude each other\n");
		return -EINVAL;
	}
	if (c->flight.seconds && access(c->flight.dir, W_OK | X_OK)) {
		fprintf(stderr, "gapscope: --dump-dir %s: %s\n", c->flight.dir, strerror(errno));
		return -EINVAL;
	}
	/* lstat: a link at the path exists too, even one that points nowhere. */
	if (!o->force && (!c->flight.seconds || o->output_given) && !lstat(o->output, &st)) {
		fprintf(stderr, "gapscope: %s exists (use -f to overwrite)\n", o->output);
		return -EEXIST;
	}
	if (o->force && outfile__replaceable(o->output, &what) < 0) {
		fprintf(stderr, "gapscope: %s is %s: -f replaces only a regular file or a link\n",
			o->output, what);
		return -EEXIST;
	}
	return 0;
}
