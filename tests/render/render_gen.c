// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a report directory from generated data through the renderers alone (folded sets,
 * flame graphs, speedscope, index.html), shaped like a tracker-trim report: GPU workers
 * blocked on the tracker lock while a finalizer holding it sits in malloc_trim.
 *
 *   render_gen DIR            a small report: 2 GPUs, 20 s, 8 gaps
 *   render_gen --hour DIR     an hour on 2 GPUs: millions of kernels, ~3000 gaps, wide stacks
 *   render_gen --empty DIR    2 GPUs busy for 20 s without a gap, no events lost
 *   render_gen --from DIR     render a report directory's summary.json and folded files
 *   render_gen --svg IN.folded OUT.svg [TITLE]
 *
 * Prints what was downsampled to keep the files small.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "duration.h"
#include "flamegraph.h"
#include "folded.h"
#include "html.h"
#include "speedscope.h"

#define MS   1000000ull
/* Times are CLOCK_MONOTONIC, as the analysis reports them: the trace starts at BASE. */
#define BASE (73512ull * 1000 * MS)

static __u64 rng = 88172645463325252ull;

static __u64 rnd(__u64 n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

struct gap {
	unsigned int id, device;
	__u64 start, end;
	const char *tier, *worker;
	unsigned int finalizer;
	struct folded *f;
};

static void die(const char *what)
{
	fprintf(stderr, "render_gen: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void add(struct folded *f, __u64 w, int n, ...)
{
	const char *frames[64];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		frames[i] = va_arg(ap, const char *);
	va_end(ap);
	if (folded__add(f, frames, n, w))
		die("folded__add");
}

/* The gap's stacks: the closer's own, its lock wait continued into the lock holder's. */
static struct folded *gap__stacks(const struct gap *g, bool hour)
{
	struct folded *f = folded__new();
	__u64 d = g->end - g->start, wait = d * 9 / 10, trim = wait * 97 / 100;
	char fin[32], woken[48];

	if (!f)
		die("folded__new");
	snprintf(fin, sizeof(fin), "finalizer-%u", g->finalizer);
	snprintf(woken, sizeof(woken), "[woken by %s]", fin);
	add(f, d - wait - d / 50, 5, g->worker, "start_thread", "gpu_worker_main", "prove_start",
	    "cuLaunchKernel");
	add(f, d / 50, 6, g->worker, "start_thread", "gpu_worker_main", "prove_start",
	    "std::vector<fr_t>::operator[](size_t) const & \"a<b>\"", "memcpy");
	add(f, trim * 2 / 3, 13, g->worker, "start_thread", "gpu_worker_main", "tracker_mark_busy",
	    "pthread_mutex_lock", "__lll_lock_wait", "futex_wait_queue_[k]", "[lock tracker_lock]",
	    woken, fin, "finalizer_main", "process_partition_result", "malloc_trim");
	add(f, trim / 3, 15, g->worker, "start_thread", "gpu_worker_main", "tracker_mark_busy",
	    "pthread_mutex_lock", "__lll_lock_wait", "futex_wait_queue_[k]", "[lock tracker_lock]",
	    woken, fin, "finalizer_main", "process_partition_result", "malloc_trim", "madvise",
	    "do_madvise_[k]");
	add(f, wait - trim, 10, g->worker, "start_thread", "gpu_worker_main", "tracker_mark_busy",
	    "pthread_mutex_lock", "__lll_lock_wait", "futex_wait_queue_[k]", "[lock tracker_lock]",
	    woken, "--");
	if (hour) {
		/* Many distinct deep stacks, so the all-gaps graph has far more frames than fit. */
		char names[24][32];
		const char *fr[26] = { g->worker, "start_thread" };

		for (int s = 0; s < 12; s++) {
			int depth = 4 + rnd(20);

			for (int k = 0; k < depth; k++) {
				snprintf(names[k], sizeof(names[k]), "synth_fn_%llu",
					 (unsigned long long)rnd(4000));
				fr[2 + k] = names[k];
			}
			if (folded__add(f, fr, 2 + depth, 1000 + rnd(200000)))
				die("folded__add");
		}
	}
	return f;
}

static void gap__json(FILE *out, const struct gap *g, bool last)
{
	__u64 d = g->end - g->start, wait = d * 9 / 10, trim = wait * 97 / 100;

	fprintf(out,
		"{\"id\":%u,\"device\":%u,\"start_ns\":%llu,\"end_ns\":%llu,"
		"\"duration_ns\":%llu,\"tier\":\"%s\",\"start_edge\":\"cuStreamSynchronize returned\","
		"\"end_edge\":\"cuLaunchKernel by %s\",\"closer\":{\"tid\":%u,\"comm\":\"%s\"},\n"
		" \"chain\":[{\"tid\":%u,\"comm\":\"%s\",\"state\":\"blocked\",\"kind\":\"lock\","
		"\"ns\":%llu,\"lock\":\"tracker_lock\",\"detail\":\"held by finalizer-%u\","
		"\"frames\":[\"__lll_lock_wait\","
		"\"pthread_mutex_lock\",\"tracker_mark_busy\",\"gpu_worker_main\"]},\n"
		"  {\"tid\":%u,\"comm\":\"finalizer-%u\",\"state\":\"on_cpu\","
		"\"kind\":\"malloc_trim\",\"ns\":%llu,\"function\":\"malloc_trim\","
		"\"frames\":[\"malloc_trim\",\"process_partition_result\",\"finalizer_main\"]}],\n"
		" \"cause\":{\"kind\":\"malloc_trim\",\"function\":\"malloc_trim\","
		"\"comm\":\"finalizer-%u\",\"ns\":%llu},\"roots\":[{\"kind\":\"malloc_trim\","
		"\"function\":\"malloc_trim\",\"ns\":%llu},{\"kind\":\"on_cpu\",\"function\":"
		"\"prove_start\",\"ns\":%llu}],\"folded\":\"gaps/%04u.folded\",\"svg\":\"gaps/%04u.svg\"}%s\n",
		g->id, g->device, (unsigned long long)(BASE + g->start),
		(unsigned long long)(BASE + g->end), (unsigned long long)d, g->tier, g->worker,
		4100 + g->device * 2, g->worker, 4100 + g->device * 2, g->worker,
		(unsigned long long)wait, g->finalizer, 4200 + g->finalizer, g->finalizer,
		(unsigned long long)trim, g->finalizer, (unsigned long long)trim,
		(unsigned long long)trim, (unsigned long long)(d - wait), g->id, g->id,
		last ? "" : ",");
}

static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		die(path);
	return f;
}

static void close_out(FILE *f, const char *what)
{
	if (fclose(f))
		die(what);
}

/* Busy intervals of one device: kernels back to back with short holes, none inside gaps. */
static struct html_interval *device__busy(const struct gap *gaps, size_t ng, unsigned int dev,
					  __u64 duration, bool hour, size_t *n)
{
	size_t cap = hour ? duration / (MS / 2) : duration / MS * 2, k = 0, gi = 0;
	struct html_interval *iv = malloc(cap * sizeof(*iv));
	__u64 t = 5 * MS;

	if (!iv)
		die("malloc");
	while (t < duration && k < cap) {
		__u64 len = hour ? 600000 + rnd(600000) : 2 * MS + rnd(6 * MS);

		while (gi < ng && (gaps[gi].device != dev || gaps[gi].end <= t))
			gi++;
		if (gi < ng && t + len > gaps[gi].start) {
			if (gaps[gi].start > t)
				iv[k++] = (struct html_interval){ t, gaps[gi].start };
			t = gaps[gi].end;
			continue;
		}
		iv[k++] = (struct html_interval){ t, t + len };
		t += len + (hour ? 20000 + rnd(150000) : 50000 + rnd(400000));
	}
	for (size_t i = 0; i < k; i++) {
		iv[i].start_ns += BASE;
		iv[i].end_ns += BASE;
	}
	*n = k;
	return iv;
}

static int cmp_gap(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int gen_report(const char *dir, bool hour, bool empty)
{
	__u64 duration = hour ? 3600000 * MS : 20000 * MS, gap_ns = 0;
	size_t ng = 0, cap = hour ? 4000 : 16;
	struct gap *gaps = calloc(cap, sizeof(*gaps));
	static const char *const workers[] = { "gpu-worker-0", "gpu-worker-1", "gpu-worker-2",
					       "gpu-worker-3" };
	struct folded *all = folded__new(), **profiles;
	const char **pnames;
	struct html_svg *svgs;
	char path[4096], name[64], title[256], sub[128], t1[32], t2[32];
	size_t nsvg = 0, svg_omitted = 0, svg_max = 0;
	FILE *out;

	if (!gaps || !all)
		die("malloc");
	snprintf(path, sizeof(path), "%s/gaps", dir);
	if ((mkdir(dir, 0755) && errno != EEXIST) || (mkdir(path, 0755) && errno != EEXIST))
		die(path);
	/* Gaps on both devices: every 1-3 s for the hour, 8 spread over the small run. */
	for (unsigned int dev = 0; dev < 2 && !empty; dev++) {
		for (__u64 t = (dev + 1) * 1500 * MS; t + 600 * MS < duration;) {
			struct gap *g = &gaps[ng++];

			g->device = dev;
			g->start = t;
			g->end = t + (hour ? 20 * MS + rnd(480 * MS) : 120 * MS + rnd(500 * MS));
			g->tier = rnd(3) ? "api" : "cupti";
			g->worker = workers[dev * 2 + rnd(2)];
			g->finalizer = rnd(4);
			t = g->end +
			    (hour ? 1000 * MS + rnd(2000 * MS) : 4000 * MS + rnd(1000 * MS));
			if (ng == cap || (!hour && ng == 4 * (dev + 1)))
				break;
		}
	}
	qsort(gaps, ng, sizeof(*gaps), cmp_gap);
	profiles = calloc(ng + 1, sizeof(*profiles));
	pnames = calloc(ng + 1, sizeof(*pnames));
	svgs = calloc(ng + 1, sizeof(*svgs));
	if (!profiles || !pnames || !svgs)
		die("malloc");

	for (size_t i = 0; i < ng; i++) {
		struct gap *g = &gaps[i];
		struct flame_opts o = { .title = title, .subtitle = sub };
		struct flame_stats fs;

		g->id = i + 1;
		g->f = gap__stacks(g, hour);
		gap_ns += g->end - g->start;
		if (folded__merge(all, g->f))
			die("folded__merge");
		dur__fmt(t1, sizeof(t1), g->end - g->start);
		dur__fmt(t2, sizeof(t2), (g->end - g->start) * 9 / 10);
		snprintf(title, sizeof(title),
			 "%s blocked %s on lock tracker_lock \xe2\x86\x90 held "
			 "by finalizer-%u, in malloc_trim",
			 g->worker, t2, g->finalizer);
		snprintf(sub, sizeof(sub), "gap %u on GPU %u: %s from %.3f s (%s)", g->id,
			 g->device, t1, g->start / 1e9, g->tier);
		snprintf(name, sizeof(name), "gaps/%04u.folded", g->id);
		out = open_out(dir, name);
		if (folded__write(out, g->f))
			die(name);
		close_out(out, name);
		svgs[nsvg] = (struct html_svg){ .gap = g->id, .duration_ns = g->end - g->start };
		if (flamegraph__render(g->f, &o, (char **)&svgs[nsvg].svg, &svgs[nsvg].svg_len,
				       &fs))
			die("flamegraph__render");
		svg_omitted += fs.frames_omitted;
		snprintf(name, sizeof(name), "gaps/%04u.svg", g->id);
		svgs[nsvg].path = strdup(name);
		out = open_out(dir, name);
		fwrite(svgs[nsvg].svg, 1, svgs[nsvg].svg_len, out);
		close_out(out, name);
		if (svgs[nsvg].svg_len > svg_max)
			svg_max = svgs[nsvg].svg_len;
		nsvg++;
		profiles[i + 1] = g->f;
		pnames[i + 1] = strdup(strchr(sub, ':') ? sub : title);
	}

	printf("gap svgs: %zu, largest %zu bytes, %zu frames left out\n", ng, svg_max, svg_omitted);

	/* All gaps together. */
	{
		struct flame_opts o = { .title = "All gaps", .subtitle = sub };
		struct flame_stats fs;

		dur__fmt(t1, sizeof(t1), gap_ns);
		snprintf(sub, sizeof(sub), "%zu gaps, %s of GPU idle time", ng, t1);
		out = open_out(dir, "gaps/all.folded");
		if (folded__write(out, all))
			die("all.folded");
		close_out(out, "all.folded");
		svgs[nsvg] = (struct html_svg){ .gap = 0, .path = "gaps/all.svg" };
		if (flamegraph__render(all, &o, (char **)&svgs[nsvg].svg, &svgs[nsvg].svg_len, &fs))
			die("flamegraph__render");
		out = open_out(dir, "gaps/all.svg");
		fwrite(svgs[nsvg].svg, 1, svgs[nsvg].svg_len, out);
		close_out(out, "all.svg");
		printf("all.svg: %zu frames of %zu drawn, %zu left out (%llu ns), %zu bytes\n",
		       fs.frames, folded__nodes(all), fs.frames_omitted,
		       (unsigned long long)fs.ns_omitted, svgs[nsvg].svg_len);
		nsvg++;
		profiles[0] = all;
		pnames[0] = "all gaps";
	}
	out = open_out(dir, "gaps.speedscope.json");
	if (speedscope__write(out, "generated report", (const struct folded *const *)profiles,
			      pnames, ng + 1))
		die("speedscope__write");
	close_out(out, "gaps.speedscope.json");

	/* summary.json, in DESIGN.md's shape. */
	{
		char *sum;
		size_t sum_len;
		struct html_device devs[2];
		struct html_stats st;
		__u64 busy[2] = {};
		FILE *s = open_memstream(&sum, &sum_len);

		for (unsigned int dev = 0; dev < 2; dev++) {
			struct html_interval *iv;
			size_t n;

			iv = device__busy(gaps, ng, dev, duration, hour, &n);
			for (size_t i = 0; i < n; i++)
				busy[dev] += iv[i].end_ns - iv[i].start_ns;
			devs[dev] = (struct html_device){ .id = dev, .busy = iv, .n = n };
		}
		fprintf(s,
			"{\"version\":1,\"start_ns\":%llu,\"duration_ns\":%llu,\"lost_events\":%d,\n"
			"\"losses\":{\"ringbuf\":%d,\"stack\":%d,\"attach_failed\":0},\n"
			"\"notes\":[%s],\n\"devices\":[",
			BASE, (unsigned long long)duration, empty ? 0 : 3, empty ? 0 : 2,
			empty ? 0 : 1,
			empty ? "" :
				"\"3 events lost: 2 ring-buffer reserves, 1 unreadable stack\"");
		for (unsigned int dev = 0; dev < 2; dev++)
			fprintf(s,
				"%s{\"id\":%u,\"busy_ns\":%llu,\"idle_ns\":%llu,"
				"\"busy_pct\":%.2f}",
				dev ? "," : "", dev, (unsigned long long)busy[dev],
				(unsigned long long)(duration - busy[dev]),
				100.0 * busy[dev] / duration);
		fputs("],\n\"gaps\":[\n", s);
		for (size_t i = 0; i < ng; i++)
			gap__json(s, &gaps[i], i + 1 == ng);
		/* What fixing each would buy: the trim most of its time, the lock all of it, the
		 * on-CPU work nothing (another wait bounds it), as recover.c gives them. */
		if (!ng)
			fprintf(s, "],\n\"causes\":[],\n\"run_ns\":%llu,\"hops\":[]}\n",
				(unsigned long long)(2 * duration));
		else
			fprintf(s,
				"],\n\"causes\":[{\"kind\":\"malloc_trim\",\"function\":"
				"\"malloc_trim\",\"ns\":%llu,\"share\":0.873,\"recoverable_ns\":%llu,"
				"\"recoverable_range_ns\":[%llu,%llu]},{\"kind\":\"lock\","
				"\"function\":\"tracker_mark_busy\",\"ns\":%llu,\"share\":0.027,"
				"\"recoverable_ns\":%llu,\"recoverable_range_ns\":[%llu,%llu]},"
				"{\"kind\":\"on_cpu\",\"function\":\"prove_start\",\"ns\":%llu,"
				"\"share\":0.1,\"recoverable_ns\":0,\"recoverable_range_ns\":[0,%llu]}],"
				"\n\"run_ns\":%llu,\"hops\":[]}\n",
				(unsigned long long)(gap_ns * 873 / 1000),
				(unsigned long long)(gap_ns * 800 / 1000),
				(unsigned long long)(gap_ns * 800 / 1000),
				(unsigned long long)(gap_ns * 873 / 1000),
				(unsigned long long)(gap_ns * 27 / 1000),
				(unsigned long long)(gap_ns * 27 / 1000),
				(unsigned long long)(gap_ns * 27 / 1000),
				(unsigned long long)(gap_ns * 27 / 1000),
				(unsigned long long)(gap_ns / 10),
				(unsigned long long)(gap_ns / 10),
				(unsigned long long)(2 * duration));
		if (fclose(s))
			die("summary");
		out = open_out(dir, "summary.json");
		fwrite(sum, 1, sum_len, out);
		close_out(out, "summary.json");

		out = open_out(dir, "index.html");
		if (html__write(out,
				&(struct html_input){ .title = hour ? "generated hour-long report" :
								      "generated report",
						      .summary_json = sum,
						      .summary_len = sum_len,
						      .devices = devs,
						      .ndevices = 2,
						      .svgs = svgs,
						      .nsvgs = nsvg },
				&st))
			die("html__write");
		close_out(out, "index.html");
		dur__fmt(t1, sizeof(t1), st.merge_ns);
		printf("index.html: %zu bytes; busy intervals %zu -> %zu (idle holes under %s "
		       "merged); flame graphs %zu inline, %zu by path\n",
		       st.bytes, st.intervals_in, st.intervals_out, st.merge_ns ? t1 : "0 ns",
		       st.svgs_inline, st.svgs_linked);
	}
	return 0;
}

/* A whole file, NUL-terminated. */
static char *slurp(const char *path, size_t *len)
{
	FILE *in = fopen(path, "r");
	char *buf = NULL;

	*len = 0;
	if (!in)
		return NULL;
	if (getdelim(&buf, len, '\0', in) < 0) {
		free(buf);
		buf = NULL;
	} else {
		*len = strlen(buf);
	}
	fclose(in);
	return buf;
}

/* A number after "key": in the gap object of summary.json that starts at obj. */
static __u64 json_u64(const char *obj, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(obj, k);
	return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

/*
 * Renders what `gapscope report` wrote into DIR (summary.json, gaps/NNNN.folded) through the
 * renderers: gaps/NNNN.svg, gaps/all.svg, gaps.speedscope.json and index.html (without busy
 * intervals, which summary.json does not hold).
 */
static int from_report(const char *dir)
{
	char path[4096], name[64], title[96], sub[96], t1[32];
	struct html_svg *svgs = NULL;
	struct folded **sets = NULL;
	const char **names = NULL;
	size_t n = 0, sum_len;
	char *sum;
	FILE *out;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	sum = slurp(path, &sum_len);
	if (!sum)
		die(path);
	for (unsigned int id = 0;; id++) {
		struct flame_opts o = { .title = title, .subtitle = sub };
		const char *obj = NULL;
		char key[32];

		if (id)
			snprintf(name, sizeof(name), "gaps/%04u", id);
		else
			snprintf(name, sizeof(name), "gaps/all");
		snprintf(path, sizeof(path), "%s/%s.folded", dir, name);
		svgs = realloc(svgs, (n + 1) * sizeof(*svgs));
		sets = realloc(sets, (n + 1) * sizeof(*sets));
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!svgs || !sets || !names)
			die("realloc");
		sets[n] = folded__read_file(path);
		if (!sets[n]) {
			if (errno == ENOENT && id)
				break;
			die(path);
		}
		snprintf(key, sizeof(key), "{\"id\":%u,", id);
		obj = id ? strstr(sum, key) : NULL;
		dur__fmt(t1, sizeof(t1),
			 obj ? json_u64(obj, "duration_ns") : folded__total(sets[n]));
		snprintf(title, sizeof(title), id ? "gap %u" : "All gaps", id);
		snprintf(sub, sizeof(sub), "%s idle", t1);
		svgs[n] = (struct html_svg){ .gap = id,
					     .path = strdup(path + strlen(dir) + 1),
					     .duration_ns = obj ? json_u64(obj, "duration_ns") :
								  0 };
		strcpy(strrchr((char *)svgs[n].path, '.'), ".svg");
		if (flamegraph__render(sets[n], &o, (char **)&svgs[n].svg, &svgs[n].svg_len, NULL))
			die("flamegraph__render");
		out = open_out(dir, svgs[n].path);
		fwrite(svgs[n].svg, 1, svgs[n].svg_len, out);
		close_out(out, svgs[n].path);
		/* As `gapscope report` may: the page reads the graphs back from their files. */
		free((char *)svgs[n].svg);
		svgs[n].svg = NULL;
		names[n] = strdup(title);
		n++;
	}
	out = open_out(dir, "gaps.speedscope.json");
	if (speedscope__write(out, dir, (const struct folded *const *)sets, names, n))
		die("speedscope__write");
	close_out(out, "gaps.speedscope.json");
	out = open_out(dir, "index.html");
	if (html__write(out,
			&(struct html_input){ .title = dir,
					      .summary_json = sum,
					      .summary_len = sum_len,
					      .svgs = svgs,
					      .nsvgs = n,
					      .with_dir = true,
					      .dir_fd = open(dir, O_RDONLY | O_DIRECTORY) },
			NULL))
		die("html__write");
	close_out(out, "index.html");
	printf("%s: %zu flame graphs, speedscope, index.html\n", dir, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "--svg")) {
		struct folded *f = folded__read_file(argv[2]);
		struct flame_opts o = { .title = argc > 4 ? argv[4] : argv[2] };
		FILE *out;

		if (!f)
			die(argv[2]);
		out = fopen(argv[3], "w");
		if (!out || flamegraph__write_svg(out, f, &o, NULL) || fclose(out))
			die(argv[3]);
		folded__free(f);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--hour"))
		return gen_report(argv[2], true, false);
	if (argc == 3 && !strcmp(argv[1], "--from"))
		return from_report(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--empty"))
		return gen_report(argv[2], false, true);
	if (argc == 2 && argv[1][0] != '-')
		return gen_report(argv[1], false, false);
	fprintf(stderr,
		"usage: render_gen [--hour|--empty|--from] DIR | render_gen --svg IN.folded OUT.svg "
		"[TITLE]\n");
	return 2;
}
