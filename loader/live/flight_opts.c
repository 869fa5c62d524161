// SPDX-License-Identifier: GPL-2.0
/* record --flight's options: an argp child of record's (options.c), into a struct flight_opts. */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flight.h"
#include "metrics.h"
#include "numarg.h"

/* The help's figures from the constants the code uses. */
#define STR_(x)	    #x
#define STR(x)	    STR_(x)
#define STICKY_MB   STR(MEMLIMIT_STICKY_MB)
#define ANALYSIS_MB STR(MEMLIMIT_ANALYSIS_MB)
#define FLIGHT_MB   STR(FLIGHT_MB_DEFAULT)
#define FUNCTIONS   STR(METRICS_FUNCTIONS)
#define HALF_LIFE_S STR(METRICS_HALF_LIFE_S)

enum {
	OPT_FLIGHT = 0x200,
	OPT_FLIGHT_MB,
	OPT_TRIGGER_GAP,
	OPT_BEFORE,
	OPT_AFTER,
	OPT_PER_HOUR,
	OPT_MAX_MB,
	OPT_DIR,
	OPT_NO_REPORT,
	OPT_METRICS,
	OPT_LINGER,
	OPT_METRICS_OTHER,
	OPT_PUSH,
	OPT_PPROF_DIR,
	OPT_PUSH_INTERVAL,
	OPT_REPLAY,
};

void flight_opts__defaults(struct flight_opts *o)
{
	*o = (struct flight_opts){
		.mem_mb = FLIGHT_MB_DEFAULT,
		.before_s = 2,
		.after_s = 1,
		.max_per_hour = 12,
		.max_total_mb = 1024,
		.dir = ".",
		.push_interval_s = 60,
	};
}

/* argp wraps help text at 79 columns: keep every line shorter. */
static const struct argp_option opts[] = {
	{ NULL, 0, NULL, 0,
	  "Flight recorder: runs until stopped, keeps the last SECONDS in memory, analyses "
	  "as it goes and writes the window around a trigger as a trace with its report. "
	  "Memory: at most --flight-mb of trace (the dumps being written included), " STICKY_MB
	  " MiB for what every dump needs and " ANALYSIS_MB " MiB for the live "
	  "analysis, besides what any recording needs (MEMORY above). "
	  "SIGUSR1 is kept by the recorder in flight mode (a dump of now), not passed on to "
	  "the command. -o FILE also writes the whole recording.",
	  1 },
	{ "flight", OPT_FLIGHT, "SECONDS", 0, "Keep only the last SECONDS of trace, in memory", 1 },
	{ "flight-mb", OPT_FLIGHT_MB, "MB", 0,
	  "At most this many MiB of trace kept (default " FLIGHT_MB ": the oldest goes "
	  "first past it)",
	  1 },
	{ "trigger-gap", OPT_TRIGGER_GAP, "MS", 0,
	  "Dump the window around every GPU gap of at least MS milliseconds (default: SIGUSR1 "
	  "only)",
	  1 },
	{ "dump-before", OPT_BEFORE, "S", 0, "Seconds before a gap (or SIGUSR1) dumped (default 2)",
	  1 },
	{ "dump-after", OPT_AFTER, "S", 0, "Seconds after it dumped (default 1)", 1 },
	{ "dump-max-per-hour", OPT_PER_HOUR, "N", 0, "At most N dumps an hour (default 12)", 1 },
	{ "dump-max-mb", OPT_MAX_MB, "MB", 0,
	  "At most MB MiB on disk for the dumps in all, as du counts it: their traces and their "
	  "reports (default 1024; a trace or report that would pass it is removed and counted, "
	  "and no dump starts once it is reached)",
	  1 },
	{ "dump-dir", OPT_DIR, "DIR", 0,
	  "Where dumps go (default .): gapscope-flight-TIME.gsc and its .report/", 1 },
	{ "dump-no-report", OPT_NO_REPORT, NULL, 0, "Dumps without a report beside them", 1 },
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0,
	  "Prometheus metrics of the live analysis on http://ADDR:PORT/metrics (default off). "
	  "A kind of cause has a series for each of its " FUNCTIONS " functions with the most "
	  "recent gap time (a gap's weight halves every " HALF_LIFE_S " s), re-ranked as gaps "
	  "come; the others' time while not among them is function=\"other\"",
	  1 },
	{ "metrics-other-processes", OPT_METRICS_OTHER, NULL, 0,
	  "Name the processes outside the recording that took the target's CPU in the metrics' "
	  "labels (by default \"another process\"; never their pids)",
	  1 },
	{ "metrics-linger", OPT_LINGER, "S", 0,
	  "Keep answering /metrics S seconds after the recording ends (a last scrape; SIGINT, "
	  "SIGTERM or SIGHUP ends it sooner)",
	  1 },
	{ "push", OPT_PUSH, "URL", 0,
	  "POST a pprof profile of the gaps' stacks every --push-interval to URL, as "
	  "Pyroscope's /ingest takes them (http://HOST:PORT/ingest)",
	  1 },
	{ "pprof-dir", OPT_PPROF_DIR, "DIR", 0,
	  "Write that profile every interval to DIR too (gapscope-gaps-TIME.pb.gz)", 1 },
	{ "push-interval", OPT_PUSH_INTERVAL, "S", 0, "Seconds a profile covers (default 60)", 1 },
	{ "replay", OPT_REPLAY, "TRACE", 0,
	  "No target: feed TRACE's records through the flight recorder as it would have had "
	  "them live, its timestamps the clock, as fast as it reads (to try the options on a "
	  "recording)",
	  1 },
	{},
};

/* The numbers go through numarg.h, as record's own do. */
static double seconds(struct argp_state *state, const char *what, const char *arg, double max)
{
	double v;

	if (numarg__double(arg, 0, max, &v))
		argp_error(state, "%s: not a number from 0 to %g: %s", what, max, arg);
	return v;
}

static unsigned int count(struct argp_state *state, const char *what, const char *arg)
{
	long long v;

	if (numarg__int(arg, 1, 1000000, &v))
		argp_error(state, "%s: not a count from 1 to 1000000: %s", what, arg);
	return v;
}

/* --metrics-other-processes, for metrics__listen (read with --metrics at the end). */
static bool metrics_other;

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct flight_opts *o = state->input;

	switch (key) {
	case OPT_FLIGHT:
		o->seconds = seconds(state, "--flight", arg, 86400);
		if (o->seconds < 1)
			argp_error(state, "--flight: at least 1 second, not %s", arg);
		break;
	case OPT_FLIGHT_MB:
		o->mem_mb = count(state, "--flight-mb", arg);
		o->dump_opts = true;
		break;
	case OPT_TRIGGER_GAP:
		o->trigger_gap_ms = seconds(state, "--trigger-gap", arg, 86400e3);
		if (!(o->trigger_gap_ms > 0))
			argp_error(state, "--trigger-gap: more than 0 ms, not %s", arg);
		o->dump_opts = true;
		break;
	case OPT_BEFORE:
		o->before_s = seconds(state, "--dump-before", arg, 86400);
		o->dump_opts = true;
		break;
	case OPT_AFTER:
		o->after_s = seconds(state, "--dump-after", arg, 86400);
		o->dump_opts = true;
		break;
	case OPT_PER_HOUR:
		o->max_per_hour = count(state, "--dump-max-per-hour", arg);
		o->dump_opts = true;
		break;
	case OPT_MAX_MB:
		o->max_total_mb = count(state, "--dump-max-mb", arg);
		o->dump_opts = true;
		break;
	case OPT_DIR:
		o->dir = arg;
		o->dump_opts = true;
		break;
	case OPT_NO_REPORT:
		o->no_report = true;
		o->dump_opts = true;
		break;
	case OPT_METRICS:
		o->metrics = arg;
		o->dump_opts = true;
		break;
	case OPT_METRICS_OTHER:
		metrics_other = true;
		o->dump_opts = true;
		break;
	case OPT_LINGER:
		o->metrics_linger_s = seconds(state, "--metrics-linger", arg, 3600);
		o->dump_opts = true;
		break;
	case OPT_PUSH:
		o->push_url = arg;
		o->dump_opts = true;
		break;
	case OPT_PPROF_DIR:
		o->pprof_dir = arg;
		o->dump_opts = true;
		break;
	case OPT_PUSH_INTERVAL:
		o->push_interval_s = seconds(state, "--push-interval", arg, 86400);
		if (o->push_interval_s < 1)
			argp_error(state, "--push-interval: at least 1 second, not %s", arg);
		o->dump_opts = true;
		break;
	case OPT_REPLAY:
		o->replay = arg;
		o->dump_opts = true;
		break;
	case ARGP_KEY_END:
		if (o->dump_opts && !o->seconds)
			argp_error(state, "the flight recorder's options need --flight SECONDS");
		if (o->seconds && o->before_s + o->after_s >= o->seconds)
			argp_error(state,
				   "--dump-before + --dump-after (%g s) must be less than --flight "
				   "(%g s)",
				   o->before_s + o->after_s, o->seconds);
		if (metrics_other && !o->metrics)
			argp_error(state, "--metrics-other-processes needs --metrics ADDR:PORT");
		/* Bound now: a malformed address or a port in use is refused as any option is,
		 * before the recording starts. */
		if (o->metrics) {
			char why[512];
			int err = metrics__listen(o->metrics, metrics_other, why, sizeof(why));

			if (err == -EINVAL)
				argp_error(state, "%s", why);
			else if (err)
				argp_failure(state, argp_err_exit_status, 0, "%s", why);
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp flight_argp = { .options = opts, .parser = parse_opt };
