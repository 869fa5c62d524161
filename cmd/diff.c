// SPDX-License-Identifier: GPL-2.0
/*
 * gapscope diff A B: two recordings' gap time by root cause, before (A) and after (B). Each of A
 * and B is a trace (analysed as `report` does, with its defaults) or a report's summary.json;
 * the rows are summary.json's causes, (kind, function), worded as summary.txt words them.
 * read A and B -> what is comparable (program, devices) -> rows by change -> text or JSON ->
 * --fail-if-grows.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "cli.h"
#include "duration.h"
#include "escape.h"
#include "gapscope_cmd.h"
#include "numarg.h"
#include "program.h"
#include "shortname.h"

#define DIFF_EX_USAGE 64	   /* sysexits.h's EX_USAGE, as argp's own errors */
#define DIFF_JSON_MAX (1ull << 30) /* a summary.json of a long flight recording is tens of MiB */
#define DIFF_DEVICES  64

struct diff_env {
	const char *a, *b;
	bool json;
	double grow_pct; /* --fail-if-grows; < 0: not given */
	int last;	 /* the argument argp looked at last, for a usage error */
	char usage[256]; /* the first usage error */
};

struct row {
	char kind[32];
	char *function; /* NULL: none */
	__u64 ns;
	double share;
};

struct side {
	const char *path;
	char program[256]; /* "" not known */
	__u64 duration_ns, gap_ns;
	__u32 dev[DIFF_DEVICES];
	__u64 dev_gap_ns[DIFF_DEVICES];
	size_t ndev;
	struct row *rows;
	size_t nrows;
};

static const struct argp_option opts[] = {
	{ "format", 'F', "text|json", 0, "What to print: a table (default) or JSON", 0 },
	{ "fail-if-grows", 'G', "PCT", 0,
	  "Exit 1 when a cause's gap time in B exceeds its gap time in A by more than PCT percent "
	  "of A's total gap time (naming each such cause)",
	  0 },
	{},
};

/* argp wraps help text at 79 columns: keep every line shorter. */
static const char doc[] =
	"Compare two recordings' GPU gap time by root cause: A before, B after.\n"
	"\n"
	"A and B are each a trace (analysed as 'gapscope report' does, with its\n"
	"defaults) or a report's summary.json. Per cause (kind and name, as the\n"
	"report prints them): gap time and share of all gap time in A and in B, and\n"
	"the change, largest change first.\n"
	"\n"
	"Recordings of different programs (summary.json's \"program\"): only their\n"
	"totals are shown, causes are not compared. Of different devices: each\n"
	"side's gap time is over other devices, so causes are compared by share.\n"
	"\n"
	"--fail-if-grows PCT: exit 1 when some cause grew by more than PCT percent\n"
	"of A's gap time: B's ns - A's ns > PCT / 100 * A's total gap ns (for A\n"
	"with no gap time: any growth). Of recordings not comparable (different\n"
	"programs or devices), also exit 1: nothing can be judged.\n"
	"\n"
	"Exit status: 0, 1 (a cause grew, or A or B could not be read), 64 (usage).\n"
	"\n"
	"EXAMPLES:\n"
	"  gapscope diff before.gsc after.gsc\n"
	"  gapscope diff before.report/summary.json after.gsc --format json\n"
	"  gapscope diff base.gsc new.gsc --fail-if-grows 10   # a CI gate\n";

static error_t usage_error(struct argp_state *state, const char *fmt, const char *arg)
{
	struct diff_env *env = state->input;

	if (!*env->usage)
		snprintf(env->usage, sizeof(env->usage), fmt, arg);
	return EINVAL;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct diff_env *env = state->input;

	env->last = state->next;
	switch (key) {
	case 'F':
		if (!strcmp(arg, "json"))
			env->json = true;
		else if (!strcmp(arg, "text"))
			env->json = false;
		else
			return usage_error(state, "--format: text or json, not %s", arg);
		break;
	case 'G':
		if (numarg__double(arg, 0, 1e6, &env->grow_pct))
			return usage_error(state,
					   "--fail-if-grows: a percentage (0 to 1e6), not %s", arg);
		break;
	case ARGP_KEY_ARG:
		if (!env->a)
			env->a = arg;
		else if (!env->b)
			env->b = arg;
		else
			return usage_error(state, "two recordings, A and B: '%s' is a third", arg);
		break;
	case ARGP_KEY_END:
		if (!env->b)
			return usage_error(state, "%s",
					   "which two recordings? (gapscope diff A B)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int add_row(struct side *s, const char *kind, const char *function, __u64 ns, double share)
{
	struct row *r = realloc(s->rows, (s->nrows + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	s->rows = r;
	r += s->nrows;
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	r->function = function ? strdup(function) : NULL;
	if (function && !r->function)
		return -ENOMEM;
	r->ns = ns;
	r->share = share;
	s->nrows++;
	return 0;
}

static int add_dev(struct side *s, __u32 id, __u64 gap_ns)
{
	if (s->ndev == DIFF_DEVICES)
		return -E2BIG;
	s->dev[s->ndev] = id;
	s->dev_gap_ns[s->ndev++] = gap_ns;
	return 0;
}

/* A trace, analysed as report analyses it by default (analysis.h's floor and depth). */
static int read_trace(struct side *s, char *err, size_t errlen)
{
	struct analysis_opts o = ANALYSIS_OPTS_DEFAULT;
	struct trace_consumer pc[PROGRAM_CONSUMERS];
	struct program_scan ps;
	struct analysis *a;
	int ret = 0;

	/* The program's name comes in the analysis's pre-pass. */
	program__consumers(&ps, s->program, sizeof(s->program), pc);
	o.prepass = pc;
	o.nprepass = PROGRAM_CONSUMERS;
	a = analysis__run(s->path, &o, err, errlen);
	if (!a)
		return -EIO;
	if ((ret = program__scanned(pc))) {
		snprintf(err, errlen, "cannot read %s: %s", s->path, strerror(-ret));
		analysis__free(a);
		return -EIO;
	}
	s->duration_ns = a->duration_ns;
	s->gap_ns = a->gap_ns;
	for (size_t i = 0; i < a->ndevices && !ret; i++)
		ret = add_dev(s, a->devices[i].id, a->devices[i].split.gaps_ns);
	for (size_t i = 0; i < a->ncauses && !ret; i++)
		/* summary.json's rounding, so that both give the same rows */
		ret = add_row(s, blame_kind__name(a->causes[i].kind), a->causes[i].function,
			      a->causes[i].ns,
			      (double)(long long)(a->causes[i].share * 1e4 + 0.5) / 1e4);
	analysis__free(a);
	if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
	return ret;
}

/* A non-negative JSON integer (jansson keeps integers exact to 2^63: ns counts pass 2^53). */
static bool json_u64(const json_t *j, __u64 *v)
{
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (__u64)json_integer_value(j);
	return true;
}

/* A report's summary.json: the keys `report` writes (ARCHITECTURE.md, "gapscope report"). */
static int read_json(struct side *s, json_t *j, char *err, size_t errlen)
{
	json_t *v = json_object_get(j, "version"), *devs = json_object_get(j, "devices");
	json_t *causes = json_object_get(j, "causes");
	size_t i;
	int ret;

	if (!json_is_number(v) || json_number_value(v) != 1 ||
	    !json_u64(json_object_get(j, "gap_ns"), &s->gap_ns) ||
	    !json_u64(json_object_get(j, "duration_ns"), &s->duration_ns) || !json_is_array(devs) ||
	    !json_is_array(causes)) {
		snprintf(err, errlen, "not a gapscope summary.json (version 1)");
		return -EINVAL;
	}
	v = json_object_get(j, "program");
	if (json_is_string(v))
		snprintf(s->program, sizeof(s->program), "%s", json_string_value(v));
	json_array_foreach(devs, i, v)
	{
		__u64 id, gaps;

		if (!json_u64(json_object_get(v, "id"), &id) || id > UINT32_MAX ||
		    !json_u64(json_object_get(json_object_get(v, "idle_split"), "gaps_ns"),
			      &gaps)) {
			snprintf(err, errlen, "devices[%zu]: no id or idle_split.gaps_ns", i);
			return -EINVAL;
		}
		if ((ret = add_dev(s, (__u32)id, gaps))) {
			snprintf(err, errlen, "more than %d devices", DIFF_DEVICES);
			return ret;
		}
	}
	json_array_foreach(causes, i, v)
	{
		json_t *kind = json_object_get(v, "kind"), *fn = json_object_get(v, "function");
		json_t *share = json_object_get(v, "share");
		__u64 ns;

		/* no JSON_ALLOW_NUL: a string's value is all of it */
		if (!json_is_string(kind) || !(json_is_string(fn) || json_is_null(fn)) ||
		    !json_u64(json_object_get(v, "ns"), &ns) || !json_is_number(share)) {
			snprintf(err, errlen, "causes[%zu]: no kind, function, ns or share", i);
			return -EINVAL;
		}
		if ((ret = add_row(s, json_string_value(kind), json_string_value(fn), ns,
				   json_number_value(share)))) {
			snprintf(err, errlen, "%s", strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* A or B: summary.json where the file starts with '{', else a trace. */
static int read_side(struct side *s, char *err, size_t errlen)
{
	FILE *f = fopen(s->path, "re");
	char why[ESC_TEXT_MAX];
	json_error_t jerr;
	struct stat st;
	json_t *j;
	int c, ret;

	if (!f) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return -errno;
	}
	while ((c = getc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	if (c != '{') {
		fclose(f);
		return read_trace(s, err, errlen);
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || (__u64)st.st_size > DIFF_JSON_MAX) {
		snprintf(err, errlen, "not a regular file of at most 1 GiB");
		fclose(f);
		return -EINVAL;
	}
	/*
	 * The stream checked above, not the path again. Strict: a key twice is an error (which
	 * one would count?), as are text after the object, a NUL in a string, invalid UTF-8, a
	 * lone surrogate; jansson bounds the nesting (2048) itself.
	 */
	rewind(f);
	j = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (!j) {
		/* jansson quotes the text it stopped at: one line, whatever the file holds; its
		 * words for a NUL name the flag that would allow it, not the fault */
		snprintf(err, errlen, "line %d, column %d: %s", jerr.line, jerr.column,
			 json_error_code(&jerr) == json_error_null_character ?
				 "\\u0000 (NUL) in a string" :
				 esc__text(why, sizeof(why), jerr.text, SIZE_MAX));
		return -EINVAL;
	}
	ret = read_json(s, j, err, errlen);
	json_decref(j);
	return ret;
}

static void side_free(struct side *s)
{
	for (size_t i = 0; i < s->nrows; i++)
		free(s->rows[i].function);
	free(s->rows);
}

/* ---- comparing ------------------------------------------------------------------------------ */

struct cmp {
	const char *kind, *function;
	__u64 a_ns, b_ns;
	double a_share, b_share;
	bool by_share; /* devices differ: ordered by the change of share */
};

static bool same_cause(const struct row *r, const char *kind, const char *function)
{
	return !strcmp(r->kind, kind) &&
	       (r->function && function ? !strcmp(r->function, function) : r->function == function);
}

static double change(const struct cmp *c)
{
	return c->by_share ? c->b_share - c->a_share : (double)c->b_ns - (double)c->a_ns;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct cmp *a = x, *b = y;
	double da = change(a), db = change(b);
	int k;

	da = da < 0 ? -da : da;
	db = db < 0 ? -db : db;
	if (da != db)
		return da > db ? -1 : 1;
	if ((k = strcmp(a->kind, b->kind)))
		return k;
	return strcmp(a->function ? a->function : "", b->function ? b->function : "");
}

/* The rows of both sides, one per (kind, function), largest change first. */
static struct cmp *compare(const struct side *a, const struct side *b, bool by_share, size_t *n)
{
	struct cmp *v = calloc(a->nrows + b->nrows + 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return NULL;
	for (int side = 0; side < 2; side++) {
		const struct side *s = side ? b : a;

		for (size_t i = 0; i < s->nrows; i++) {
			const struct row *r = &s->rows[i];
			size_t j;

			for (j = 0; j < k; j++)
				if (same_cause(r, v[j].kind, v[j].function))
					break;
			if (j == k) {
				v[k].kind = r->kind;
				v[k].function = r->function;
				v[k].by_share = by_share;
				k++;
			}
			if (side) {
				v[j].b_ns += r->ns;
				v[j].b_share += r->share;
			} else {
				v[j].a_ns += r->ns;
				v[j].a_share += r->share;
			}
		}
	}
	qsort(v, k, sizeof(*v), cmp_rows);
	*n = k;
	return v;
}

static bool same_devices(const struct side *a, const struct side *b)
{
	if (a->ndev != b->ndev)
		return false;
	for (size_t i = 0; i < a->ndev; i++) {
		size_t j;

		for (j = 0; j < b->ndev && b->dev[j] != a->dev[i]; j++)
			;
		if (j == b->ndev)
			return false;
	}
	return true;
}

/* ---- output -------------------------------------------------------------------------------- */

/* A cause's name as summary.txt prints it. */
static const char *row_name(const struct cmp *c, char *buf, size_t size)
{
	char fn[SHORTNAME_MAX];

	if (!c->function)
		snprintf(fn, sizeof(fn), "(no function)");
	else if (!strcmp(c->kind, "preempted"))
		snprintf(fn, sizeof(fn), "by %s", c->function);
	else
		shortname(c->function, fn, sizeof(fn));
	return esc__text(buf, size, fn, SIZE_MAX);
}

/* A span as summary.txt writes it (duration.h), into BUF; a sign where SIGNED. */
static const char *ms(char *buf, size_t size, __s64 ns, bool sign)
{
	size_t n = sign && size > 1;

	if (n)
		buf[0] = ns < 0 ? '-' : ns > 0 ? '+' : ' ';
	dur__fmt(buf + n, size - n, (__u64)(ns < 0 ? -ns : ns));
	return buf;
}

static void print_devs(FILE *out, const struct side *s)
{
	for (size_t i = 0; i < s->ndev; i++)
		fprintf(out, "%s%u", i ? "," : "", s->dev[i]);
}

static void text_side(FILE *out, const char *tag, const struct side *s)
{
	char t[ESC_TEXT_MAX], d[32], g[32];

	fprintf(out, "%s: %s: %s, %s, device%s ", tag, esc__text(t, sizeof(t), s->path, SIZE_MAX),
		*s->program ? s->program : "program not named",
		ms(d, sizeof(d), (__s64)s->duration_ns, false), s->ndev == 1 ? "" : "s");
	print_devs(out, s);
	fprintf(out, ", gaps %s (%.1f%% of the run)\n", ms(g, sizeof(g), (__s64)s->gap_ns, false),
		s->duration_ns ? 100.0 * s->gap_ns / s->duration_ns : 0.0);
}

static void text_out(FILE *out, const struct side *a, const struct side *b, bool programs,
		     bool devices, const struct cmp *rows, size_t n)
{
	char x[32], y[32], z[32], name[ESC_TEXT_MAX];

	text_side(out, "A", a);
	text_side(out, "B", b);
	if (!programs) {
		fprintf(out, "A and B record different programs (%s, %s): causes not compared\n",
			a->program, b->program);
		return;
	}
	if (!devices) {
		fprintf(out, "A and B have different devices: only the devices in both are "
			     "compared, and causes by their share of each side's gap time\n");
	} else {
		fprintf(out, "gap time %s -> %s (%s)\n", ms(x, sizeof(x), (__s64)a->gap_ns, false),
			ms(y, sizeof(y), (__s64)b->gap_ns, false),
			ms(z, sizeof(z), (__s64)b->gap_ns - (__s64)a->gap_ns, true));
	}
	for (size_t i = 0; i < a->ndev; i++)
		for (size_t j = 0; j < b->ndev; j++)
			if (a->dev[i] == b->dev[j])
				fprintf(out, "device %u: gaps %s -> %s (%s)\n", a->dev[i],
					ms(x, sizeof(x), (__s64)a->dev_gap_ns[i], false),
					ms(y, sizeof(y), (__s64)b->dev_gap_ns[j], false),
					ms(z, sizeof(z),
					   (__s64)b->dev_gap_ns[j] - (__s64)a->dev_gap_ns[i],
					   true));
	if (!n)
		return;
	fprintf(out, "\nroot causes (gap time and share of gap time, A -> B):\n");
	fprintf(out, "  %10s  %9s %6s  %9s %6s  %-12s %s\n", "change", "A", "", "B", "", "kind",
		"name");
	for (size_t i = 0; i < n; i++) {
		const struct cmp *c = &rows[i];
		char share[16];

		if (devices)
			ms(z, sizeof(z), (__s64)c->b_ns - (__s64)c->a_ns, true);
		else
			snprintf(z, sizeof(z), "%+.1f pt", 100 * (c->b_share - c->a_share));
		snprintf(share, sizeof(share), "%.1f%%", 100 * c->a_share);
		fprintf(out, "  %10s  %9s %6s", z, ms(x, sizeof(x), (__s64)c->a_ns, false), share);
		snprintf(share, sizeof(share), "%.1f%%", 100 * c->b_share);
		fprintf(out, "  %9s %6s  %-12s %s\n", ms(y, sizeof(y), (__s64)c->b_ns, false),
			share, c->kind, row_name(c, name, sizeof(name)));
	}
}

static void json_side(FILE *out, const char *key, const struct side *s)
{
	fprintf(out, "\"%s\":{\"path\":", key);
	esc__json(out, s->path, false);
	fprintf(out, ",\"program\":");
	if (*s->program)
		esc__json(out, s->program, false);
	else
		fputs("null", out);
	fprintf(out, ",\"duration_ns\":%" PRIu64 ",\"gap_ns\":%" PRIu64 ",\"devices\":[",
		(uint64_t)s->duration_ns, (uint64_t)s->gap_ns);
	for (size_t i = 0; i < s->ndev; i++)
		fprintf(out, "%s{\"id\":%u,\"gap_ns\":%" PRIu64 "}", i ? "," : "", s->dev[i],
			(uint64_t)s->dev_gap_ns[i]);
	fprintf(out, "]}");
}

static void json_out(FILE *out, const struct side *a, const struct side *b, bool programs,
		     bool devices, const struct cmp *rows, size_t n, const struct cmp *grown,
		     size_t ngrown, bool gate)
{
	char name[ESC_TEXT_MAX];

	fputc('{', out);
	json_side(out, "a", a);
	fputc(',', out);
	json_side(out, "b", b);
	fprintf(out, ",\"same_program\":%s,\"same_devices\":%s,\"causes_compared\":%s",
		programs ? "true" : "false", devices ? "true" : "false",
		programs ? (devices ? "\"ns\"" : "\"share\"") : "null");
	fprintf(out, ",\"causes\":[");
	for (size_t i = 0; i < n; i++) {
		const struct cmp *c = &rows[i];

		fprintf(out, "%s\n{\"kind\":\"%s\",\"function\":", i ? "," : "", c->kind);
		if (c->function)
			esc__json(out, c->function, false);
		else
			fputs("null", out);
		fprintf(out, ",\"name\":");
		esc__json(out, row_name(c, name, sizeof(name)), false);
		fprintf(out,
			",\"a_ns\":%" PRIu64 ",\"b_ns\":%" PRIu64
			",\"a_share\":%.4f,\"b_share\":%.4f"
			",\"delta_share\":%.4f,\"delta_ns\":",
			(uint64_t)c->a_ns, (uint64_t)c->b_ns, c->a_share, c->b_share,
			c->b_share - c->a_share);
		if (devices)
			fprintf(out, "%" PRId64, (int64_t)c->b_ns - (int64_t)c->a_ns);
		else
			fputs("null", out);
		fputc('}', out);
	}
	fprintf(out, "]");
	if (gate) {
		fprintf(out, ",\"grown\":[");
		for (size_t i = 0; i < ngrown; i++) {
			fprintf(out, "%s{\"kind\":\"%s\",\"function\":", i ? "," : "",
				grown[i].kind);
			if (grown[i].function)
				esc__json(out, grown[i].function, false);
			else
				fputs("null", out);
			fprintf(out, ",\"delta_ns\":%" PRId64 "}",
				(int64_t)grown[i].b_ns - (int64_t)grown[i].a_ns);
		}
		fprintf(out, "]");
	}
	fprintf(out, "}\n");
}

int cmd_diff(int argc, char **argv)
{
	struct diff_env env = { .grow_pct = -1 };
	static const struct argp_child children[] = { { &cli__argp, 0, NULL, 0 }, {} };
	const struct argp argp = { .options = opts,
				   .parser = parse_opt,
				   .args_doc = "A B",
				   .doc = doc,
				   .children = children };
	struct side a = {}, b = {};
	struct cmp *rows = NULL, *grown = NULL;
	size_t n = 0, ngrown = 0;
	char err[512], t[ESC_TEXT_MAX];
	bool programs, devices, gate;
	unsigned flags = ARGP_NO_HELP | ARGP_NO_ERRS;
	int ret = 1;

	/* One line for every usage error (argp's own take two): its messages off, but where help
	 * is asked for. */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ||
		    !strcmp(argv[i], "--usage") || !strcmp(argv[i], "-V") ||
		    !strcmp(argv[i], "--version"))
			flags = ARGP_NO_HELP;
	if (argp_parse(&argp, argc, argv, flags, NULL, &env)) {
		if (*env.usage)
			fprintf(stderr, "gapscope diff: %s\n", env.usage);
		else
			fprintf(stderr,
				"gapscope diff: bad option or missing value: '%s' (see --help)\n",
				esc__text(t, sizeof(t),
					  env.last > 0 && env.last <= argc ? argv[env.last - 1] :
									     "?",
					  SIZE_MAX));
		return DIFF_EX_USAGE;
	}
	a.path = env.a;
	b.path = env.b;
	for (int s = 0; s < 2; s++) {
		struct side *x = s ? &b : &a;

		if (read_side(x, err, sizeof(err))) {
			fprintf(stderr, "gapscope diff: %s: %s\n",
				esc__text(t, sizeof(t), x->path, SIZE_MAX), err);
			goto out;
		}
	}
	programs = !*a.program || !*b.program || !strcmp(a.program, b.program);
	devices = same_devices(&a, &b);
	gate = env.grow_pct >= 0;
	if (programs) {
		rows = compare(&a, &b, !devices, &n);
		grown = calloc(n + 1, sizeof(*grown));
		if (!rows || !grown) {
			fprintf(stderr, "gapscope diff: out of memory\n");
			goto out;
		}
	}
	/* B's ns - A's ns > PCT% of A's gap time (any growth where A had none) */
	if (gate && programs && devices)
		for (size_t i = 0; i < n; i++)
			if (rows[i].b_ns > rows[i].a_ns &&
			    (double)(rows[i].b_ns - rows[i].a_ns) > env.grow_pct / 100 * a.gap_ns)
				grown[ngrown++] = rows[i];
	if (env.json)
		json_out(stdout, &a, &b, programs, devices, rows, n, grown, ngrown, gate);
	else
		text_out(stdout, &a, &b, programs, devices, rows, n);
	ret = 0;
	if (gate && (!programs || !devices)) {
		fprintf(stderr,
			"gapscope diff: --fail-if-grows: A and B record different %s: nothing to "
			"judge\n",
			programs ? "devices" : "programs");
		ret = 1;
	}
	for (size_t i = 0; i < ngrown; i++) {
		char x[32], name[ESC_TEXT_MAX];

		fprintf(stderr, "gapscope diff: %s %s grew by %s, more than %g%% of A's gap time\n",
			grown[i].kind, row_name(&grown[i], name, sizeof(name)),
			ms(x, sizeof(x), (__s64)grown[i].b_ns - (__s64)grown[i].a_ns, false),
			env.grow_pct);
		ret = 1;
	}
out:
	free(rows);
	free(grown);
	side_free(&a);
	side_free(&b);
	return ret;
}
