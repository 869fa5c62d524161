// SPDX-License-Identifier: GPL-2.0
/*
 * gapscope report: find the GPU's idle windows in a trace and the chain of waits behind each.
 * parse -> open the analysis (analysis.c) -> make DIR -> analyse -> summary.json, summary.txt,
 * folded stacks -> print.
 *
 * The trace's bytes are read (and their chunks decompressed) at most three times, which -v
 * counts (trace__reads):
 *   1. the pre-pass (analysis.c: prepass): one scan hands each record type to its consumers,
 *      the program's name (program.h) and, where the file's flags say it holds records
 *      written long after their time or at the end, the analysis's parts that take them:
 *      CUPTI's activity, perf maps, Python code objects, archived files, cgroups. It ends
 *      when every consumer is done: for a launched program without such records, at its
 *      first chunk;
 *   2. the time-ordered pass of the analysis;
 *   3. the timeline (render/perfetto.c), which draws the threads around the finished gaps.
 * Reading once instead means holding the records until the late ones or the gaps are known:
 * the decompressed trace, 71 MB for jax_arch.gsc's 15.5 MB (12 MB for the demo's 0.6 MB), where
 * a pass costs a read of the mapped file and its decompression.
 */
#include <argp.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "folded_out.h"
#include "summary.h"
#include "cli.h"
#include "escape.h"
#include "gapscope_cmd.h"
#include "numarg.h"
#include "outfile.h"
#include "pprof.h"
#include "debugcache.h"
#include "program.h"
#include "render_out.h"
#include "trace.h"

#define REPORT_OWN_MAX 64

struct report_env {
	const char *file;
	const char *dir; /* default: FILE.report */
	bool force;
	bool json;
	double min_gap_ms;
	unsigned int top;
	bool api_only;
	bool decided_only;
	double copy_gbps, copy_latency_us;
	const char *debug_dir;
	const char *debug_cache; /* --debug-cache DIR */
	const char *pprof;	 /* --pprof FILE */
	bool verbose;
	char *own[REPORT_OWN_MAX]; /* --own, allocated */
	size_t nown;
};

static const struct argp_option opts[] = {
	{ "output", 'o', "DIR", 0, "Write the report into DIR (default: FILE.report)", 0 },
	{ "force", 'f', NULL, 0, "Write into DIR even if it exists", 0 },
	{ "min-gap", 'g', "MS", 0, "Shortest idle window reported as a gap (default 1 ms)", 0 },
	{ "top", 't', "N", 0, "How many of the longest gaps to list with their chains (default 10)",
	  0 },
	{ "debug-dir", 'D', "DIR", 0,
	  "Debug files by build-id under DIR (.build-id/xx/rest.debug), before /usr/lib/debug", 0 },
	{ "debug-cache", 0x101, "DIR", 0,
	  "Keep decompressed copies of compressed debug files in DIR by build-id, and read them "
	  "from there (record --flight's dumps share one)",
	  0 },
	{ "api-only", 'A', NULL, 0,
	  "The API-inferred GPU timeline alone, also where the trace has CUPTI's kernel times", 0 },
	{ "copy-rate", 'C', "GBPS[,US]", 0,
	  "API-inferred tier: host<->device async copies take US (default 0) + bytes at GBPS on "
	  "their stream, as measured on the machine (default: not modelled)",
	  0 },
	{ "decided-only", 'S', NULL, 0,
	  "Of a trace recorded with --all-launches, read only the launches the default recording "
	  "keeps: the same run as it would have been recorded (a check that both give the same "
	  "gaps)",
	  0 },
	{ "own", 'O', "PATH", 0,
	  "Code under PATH (a file or folder; repeatable) is your own, though it lies in a "
	  "site-packages folder or a system library's: on-CPU time is named by your code's "
	  "innermost frame, a library's beneath it",
	  0 },
	{ "format", 'F', "text|json", 0, "What to print: summary.txt (default) or summary.json",
	  0 },
	{ "verbose", 'v', NULL, 0,
	  "Also say how the trace was read: passes over its bytes, bytes decompressed", 0 },
	{ "pprof", 'P', "FILE", 0,
	  "Also write the gaps' stacks as a gzipped pprof profile (go tool pprof, Pyroscope, "
	  "Parca): values in ns of gap time, labels gap, device, cause, cause_function, tier",
	  0 },
	{},
};

/* argp wraps help text at 79 columns: keep every line shorter. */
static const char doc[] =
	"Find the GPU's idle windows in a gapscope trace and the chain of waits\n"
	"behind each.\n"
	"\n"
	"Writes into DIR: summary.txt (also printed), summary.json, index.html (open\n"
	"it from the file system), timeline.json (Perfetto UI),\n"
	"gaps.speedscope.json, and per gap gaps/NNNN.folded and gaps/NNNN.svg, with\n"
	"gaps/all.folded and gaps/all.svg for all gaps.\n"
	"\n"
	"EXAMPLES:\n"
	"  gapscope report t.gsc                 # writes t.gsc.report/\n"
	"  gapscope report t.gsc -o r --min-gap 5 --top 3\n"
	"  gapscope report t.gsc -f --format json | jq '.causes[0]'\n";

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct report_env *env = state->input;

	switch (key) {
	case 'o':
		env->dir = arg;
		break;
	case 'f':
		env->force = true;
		break;
	case 'A':
		env->api_only = true;
		break;
	case 'S':
		env->decided_only = true;
		break;
	case 'D':
		env->debug_dir = arg;
		break;
	case 0x101:
		env->debug_cache = arg;
		break;
	case 'P':
		env->pprof = arg;
		break;
	case 'v':
		env->verbose = true;
		break;
	case 'O': {
		/* As the trace names files: absolute, a relative PATH taken from here. */
		char *abs = *arg == '/' ? strdup(arg) : realpath(arg, NULL);

		if (!*arg || !abs)
			argp_error(state, "--own: %s: %s", arg,
				   *arg ? strerror(errno) : "empty path");
		if (env->nown == REPORT_OWN_MAX)
			argp_error(state, "--own: at most %d paths", REPORT_OWN_MAX);
		env->own[env->nown++] = abs;
		break;
	}
	case 'C': {
		/* A pinned copy runs at a few to some hundreds of GB/s, simcuda's at 0.017: a
		 * rate far below would have copies outlast the run. */
		char gbps[64], *comma;

		snprintf(gbps, sizeof(gbps), "%s", arg);
		comma = strchr(gbps, ',');
		if (comma)
			*comma = 0;
		env->copy_latency_us = 0;
		if (strlen(arg) >= sizeof(gbps) ||
		    numarg__double(gbps, 0.001, 10000, &env->copy_gbps) ||
		    (comma && numarg__double(comma + 1, 0, 10000, &env->copy_latency_us)))
			argp_error(
				state,
				"--copy-rate: GB/s (0.001 to 10000) and optional microseconds (0 to "
				"10000), not %s",
				arg);
		break;
	}
	case 'g':
		if (numarg__double(arg, 0, 1e9, &env->min_gap_ms))
			argp_error(state, "--min-gap: milliseconds (0 to 1e9), not %s", arg);
		break;
	case 't': {
		long long v;

		if (numarg__int(arg, 0, 1000000, &v))
			argp_error(state, "--top: a count (0 to 1000000), not %s", arg);
		env->top = v;
		break;
	}
	case 'F':
		if (!strcmp(arg, "json"))
			env->json = true;
		else if (!strcmp(arg, "text"))
			env->json = false;
		else
			argp_error(state, "--format: text or json, not %s", arg);
		break;
	case ARGP_KEY_ARG:
		if (env->file)
			argp_error(state, "one trace file at a time");
		env->file = arg;
		break;
	case ARGP_KEY_END:
		if (!env->file)
			argp_error(state, "which trace file?");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * DIR (outfile.h: 0700, never through a link, the caller's own), an existing one only with -f;
 * its fd, taken once: every file of the report is created relative to it, so that a directory
 * renamed away and a link planted at its name (by the owner of a parent that others may write)
 * change nothing. -errno after saying why.
 */
static int make_dir(int pfd, const char *name, const char *dir, bool force)
{
	int fd = outfile__mkdirat(pfd, name, force);

	if (fd == -EEXIST && !force)
		fprintf(stderr, "gapscope: %s exists (use -f to write into it)\n", dir);
	else if (fd == -ELOOP)
		fprintf(stderr, "gapscope: %s is a symbolic link: not written through\n", dir);
	else if (fd == -EPERM)
		fprintf(stderr, "gapscope: %s belongs to another user: not written into\n", dir);
	else if (fd < 0)
		fprintf(stderr, "gapscope: cannot create %s: %s\n", dir, strerror(-fd));
	return fd;
}

/*
 * A report written with -f into an older one: its per-gap files go first, or gaps that this
 * report does not have would stay beside it (gaps/NNNN.{folded,svg}, gaps/all.*). Regular files
 * of those names only, never through a link.
 */
static int clear_gaps(int gfd)
{
	int fd = dup(gfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int err = 0;

	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		size_t n = strspn(de->d_name, "0123456789");
		const char *ext = de->d_name + n;
		struct stat st;

		if (!n && strncmp(de->d_name, "all", 3))
			continue;
		if (!n)
			ext += 3;
		if (strcmp(ext, ".svg") && strcmp(ext, ".folded"))
			continue;
		if (fstatat(gfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (unlinkat(gfd, de->d_name, 0) && errno != ENOENT)
			err = -errno;
	}
	closedir(d);
	return err;
}

/* DIR and DIR/gaps, their fds in *DFD and *GFD; -1 after saying why. */
static int make_dirs(const char *dir, bool force, int *dfd, int *gfd)
{
	char gaps[PATH_MAX];
	const char *name;
	int pfd, err;

	if ((size_t)snprintf(gaps, sizeof(gaps), "%s/gaps", dir) >= sizeof(gaps)) {
		fprintf(stderr, "gapscope: %s: path too long\n", dir);
		return -1;
	}
	pfd = outfile__parent(dir, &name);
	if (pfd < 0 || !*name) {
		fprintf(stderr, "gapscope: cannot create %s: %s\n", dir,
			strerror(pfd < 0 ? -pfd : EINVAL));
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	*dfd = make_dir(pfd, name, dir, force);
	close(pfd);
	if (*dfd < 0)
		return -1;
	/* gaps/ inside a directory of ours: ours too, unless -f found it there. */
	*gfd = make_dir(*dfd, "gaps", gaps, true);
	if (*gfd < 0)
		return -1;
	err = force ? clear_gaps(*gfd) : 0;
	if (err)
		fprintf(stderr, "gapscope: cannot clear %s: %s\n", gaps, strerror(-err));
	return err ? -1 : 0;
}

/* on_gap: to the folded stacks' writer, made with DIR once the trace has opened. */
static int folded_gap(const struct gap *g, void *fo)
{
	return folded_out__gap(g, *(struct folded_out **)fo);
}

/* -v: what the reader counted over the whole report, against the file's size. */
static void print_reads(const char *file)
{
	struct trace_reads r;
	struct stat st;

	trace__reads(&r);
	fprintf(stderr,
		"gapscope: %s: %llu passes over the trace (%llu opens, %llu chunks): %llu of its "
		"%lld bytes read, %llu decompressed\n",
		file, (unsigned long long)r.passes, (unsigned long long)r.opens,
		(unsigned long long)r.chunks, (unsigned long long)r.bytes,
		stat(file, &st) ? -1LL : (long long)st.st_size, (unsigned long long)r.raw_bytes);
}

static int write_file(int dfd, const char *dir, const char *name, const struct analysis *a,
		      const struct report_out_opts *o, const char *program, bool json)
{
	char path[PATH_MAX];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = outfile__fopenat(dfd, name, true);
	if (!f) {
		fprintf(stderr, "gapscope: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	err = json ? summary_json__write_program(a, program, f) : summary_txt__write(a, o, f);
	err = outfile__fclose(f) ?: err ? -EIO : 0;
	if (err) {
		unlinkat(dfd, name, 0); /* not left cut short */
		fprintf(stderr, "gapscope: cannot write %s: %s\n", path, strerror(-err));
		return -1;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_env env = { .min_gap_ms = ANALYSIS_MIN_GAP_NS / 1e6, .top = 10 };
	static const struct argp_child children[] = { { &cli__argp, 0, NULL, 0 }, {} };
	const struct argp argp = { .options = opts,
				   .parser = parse_opt,
				   .args_doc = "FILE",
				   .doc = doc,
				   .children = children };
	struct analysis_opts aopts = ANALYSIS_OPTS_DEFAULT;
	struct report_out_opts oopts;
	struct render_out_opts ropts = {};
	struct analysis *a = NULL;
	struct folded_out *fo = NULL;
	char err[512], dir[PATH_MAX], gaps[PATH_MAX], program[256];
	struct program_scan ps;
	struct trace_consumer pc[PROGRAM_CONSUMERS];
	int ret = 1, dfd = -1, gfd = -1;

	if (argp_parse(&argp, argc, argv, ARGP_NO_HELP, NULL, &env))
		return 2;
	if (env.debug_cache && !debugcache__set(env.debug_cache))
		return 2;
	aopts.min_gap_ns = (__u64)(env.min_gap_ms * 1e6);
	aopts.api_only = env.api_only;
	aopts.decided_only = env.decided_only;
	aopts.copy_gbps = env.copy_gbps;
	aopts.copy_latency_us = env.copy_latency_us;
	aopts.debug_dir = env.debug_dir;
	aopts.own = (const char *const *)env.own;
	aopts.nown = env.nown;
	ropts.timeline.debug_dir = env.debug_dir;
	oopts.top = env.top;
	if (env.dir)
		snprintf(dir, sizeof(dir), "%s", env.dir);
	else
		snprintf(dir, sizeof(dir), "%s.report", env.file);

	/* The trace must open (and hold records) before DIR is made: a bad input leaves nothing
	 * behind. The gaps' stacks go to DIR, made after. */
	aopts.on_gap = folded_gap;
	aopts.ctx = &fo;
	/* The program's name comes in the analysis's pre-pass. */
	program__consumers(&ps, program, sizeof(program), pc);
	aopts.prepass = pc;
	aopts.nprepass = PROGRAM_CONSUMERS;
	a = analysis__open(env.file, &aopts, err, sizeof(err));
	if (!a) {
		fprintf(stderr, "gapscope: %s\n", err);
		goto out;
	}
	if (program__scanned(pc))
		*program = 0; /* named by the analysis below, which reads the same file */
	if (make_dirs(dir, env.force, &dfd, &gfd))
		goto out;
	snprintf(gaps, sizeof(gaps), "%.*s/gaps", (int)sizeof(gaps) - 6, dir);
	fo = folded_out__new(gfd);
	if (!fo) {
		fprintf(stderr, "gapscope: cannot write under %s: %s\n", gaps, strerror(errno));
		goto out;
	}
	if (analysis__read(a, env.file, err, sizeof(err))) {
		fprintf(stderr, "gapscope: %s\n", err);
		goto out;
	}
	for (size_t i = 0; i < a->nnotes; i++) {
		char note[ESC_TEXT_MAX];

		fprintf(stderr, "gapscope: warning: %s: %s\n", env.file,
			esc__text(note, sizeof(note), a->notes[i], SIZE_MAX));
	}
	if (folded_out__finish(fo, a)) {
		fprintf(stderr, "gapscope: cannot write the folded stacks under %s\n", gaps);
		goto out;
	}
	if (write_file(dfd, dir, "summary.json", a, &oopts, program, true) ||
	    write_file(dfd, dir, "summary.txt", a, &oopts, program, false))
		goto out;
	if (render_out__write(dfd, dir, env.file, a, &ropts, NULL))
		goto out;
	if (env.pprof && (errno = -pprof__from_report(a, gfd, env.pprof, env.force))) {
		fprintf(stderr, "gapscope: cannot write %s: %s\n", env.pprof,
			errno == EEXIST ? "exists (use -f to replace it)" : strerror(errno));
		goto out;
	}
	if (env.json)
		summary_json__write_program(a, program, stdout);
	else
		summary_txt__write(a, &oopts, stdout);
	if (env.verbose)
		print_reads(env.file);
	ret = 0;
out:
	folded_out__free(fo);
	analysis__free(a);
	if (gfd >= 0)
		close(gfd);
	if (dfd >= 0)
		close(dfd);
	for (size_t i = 0; i < env.nown; i++)
		free(env.own[i]);
	return ret;
}
