// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "trace_out.h"
#include "procmaps.h"
#include "trace.h"

/* Whether the comma-separated list has the word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/*
 * The mount of the hierarchy that has controller (v1), or of cgroup v2 (controller NULL): its
 * mount point and its root within the hierarchy. 0, or -1 where none is mounted.
 */
static int hier_mount(const char *controller, char *mnt, size_t mlen, char *root, size_t rlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		char r[PATH_MAX], m[PATH_MAX], type[64], opts[1024];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*d %*d %*s %4095s %4095s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", type, opts) != 2)
			continue;
		if (controller ? strcmp(type, "cgroup") || !has_word(opts, controller) :
				 strcmp(type, "cgroup2"))
			continue;
		snprintf(mnt, mlen, "%s", m);
		snprintf(root, rlen, "%s", r);
		ret = 0;
	}
	fclose(f);
	return ret;
}

/* The directory of pid's cgroup for a v1 controller, or v2's (NULL). 0, or -1. */
static int cgroup_dir(pid_t pid, const char *controller, char *dir, size_t len, char *rel,
		      size_t rlen)
{
	char path[64], line[4096], mnt[PATH_MAX], root[PATH_MAX];
	int ret = -1;
	FILE *f;

	if (hier_mount(controller, mnt, sizeof(mnt), root, sizeof(root)))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
		size_t rl = strlen(root);

		if (!p)
			continue;
		/* "ID:CONTROLLERS:PATH"; v2's is "0::PATH" */
		*c = 0;
		*p++ = 0;
		p[strcspn(p, "\n")] = 0;
		if (controller ? !has_word(c + 1, controller) : strcmp(line, "0") || c[1])
			continue;
		/* The path is from the hierarchy's root; the mount may show a part of it. */
		if (strcmp(root, "/") && !strncmp(p, root, rl) && (!p[rl] || p[rl] == '/'))
			p += rl;
		snprintf(dir, len, "%s%s", mnt, strcmp(p, "/") ? p : "");
		snprintf(rel, rlen, "%s", p);
		ret = 0;
	}
	fclose(f);
	return ret;
}

static int read_line(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (!(f = fopen(path, "re")))
		return -1;
	ret = fgets(buf, len, f) ? 0 : -1;
	fclose(f);
	if (!ret)
		buf[strcspn(buf, "\n")] = 0;
	return ret;
}

/* A level's quota and period: 0 where it has a quota, 1 where none, -1 unreadable. */
static int read_quota(const char *dir, int version, __s64 *quota, __u64 *period)
{
	char buf[128], q[32];
	unsigned long long p;

	if (version == GS_CGROUP_V2) {
		if (read_line(dir, "cpu.max", buf, sizeof(buf)) ||
		    sscanf(buf, "%31s %llu", q, &p) != 2)
			return -1;
		*period = p;
		if (!strcmp(q, "max"))
			return *quota = -1, 1;
		*quota = strtoll(q, NULL, 10);
		return 0;
	}
	if (read_line(dir, "cpu.cfs_quota_us", q, sizeof(q)) ||
	    read_line(dir, "cpu.cfs_period_us", buf, sizeof(buf)))
		return -1;
	*quota = strtoll(q, NULL, 10);
	*period = strtoull(buf, NULL, 10);
	return *quota < 0 ? 1 : 0;
}

static void write_level(struct cgroup_watch *w, struct trace_out *o, const char *rel, int depth,
			int version, __s64 quota, __u64 period, const char *cpus,
			const char *cpuset)
{
	size_t pl = strlen(rel) + 1, cl = strlen(cpus) + 1, sl = strlen(cpuset) + 1;
	size_t size = (sizeof(struct gs_rec_cgroup) + pl + cl + sl + 7) & ~7ul;
	struct gs_rec_cgroup *r = calloc(1, size);

	if (!r)
		return;
	trace_out__hdr(&r->h, GS_REC_CGROUP, size, w->gpid);
	r->id = w->lv[w->n - 1].id;
	r->version = version;
	r->quota_us = quota;
	r->period_us = period;
	r->depth = depth;
	r->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	r->path_len = pl;
	r->cpus_len = cl;
	r->cpuset_len = sl;
	memcpy(r->text, rel, pl);
	memcpy(r->text + pl, cpus, cl);
	memcpy(r->text + pl + cl, cpuset, sl);
	trace_out__append(o, r, size);
	free(r);
	if (o->tw)
		trace__set_flags(o->tw, TRACE_F_CGROUP); /* a failure: read in time order only */
}

/* The CPUs the process may run on (affinity within its cpuset), "" unknown. */
static void allowed_cpus(pid_t pid, char *buf, size_t len)
{
	char path[64], line[512];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			char *p = line + 18;

			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = 0;
			snprintf(buf, len, "%s", p);
		}
	fclose(f);
}

/* The path of the cgroup up levels above rel ("/" at the top). */
static void level_path(const char *rel, int up, char *out, size_t len)
{
	snprintf(out, len, "%s", rel);
	for (int k = 0; k < up; k++) {
		char *s = strrchr(out, '/');

		if (!s || s == out) {
			snprintf(out, len, "/");
			return;
		}
		*s = 0;
	}
}

/* Whether the watched process still has its pid (exited and reaped, the pid may be another's). */
static bool same_process(const struct cgroup_watch *w)
{
	struct procmaps_stat st;
	char dir[64];

	snprintf(dir, sizeof(dir), "/proc/%d", (int)w->pid);
	return !procmaps__stat(dir, &st) && st.start == w->start;
}

/* Reads where the process is; writes its levels where that changed since the last time. */
static void cgroup__read(struct cgroup_watch *w, struct trace_out *o)
{
	char dir[PATH_MAX], rel[PATH_MAX], acct[PATH_MAX] = "", arel[PATH_MAX], cpus[256];
	char cpuset[256] = "", sdir[PATH_MAX], srel[PATH_MAX], sig[sizeof(w->sig)];
	char base[PATH_MAX], ldir[PATH_MAX], lrel[PATH_MAX], stat[PATH_MAX + 16];
	int version = GS_CGROUP_V1, depth = 0, any = 0;
	struct {
		__s64 quota;
		__u64 period;
		int has;
	} q[CGROUP_LEVELS];

	if (w->gone)
		return;
	if (cgroup_dir(w->pid, "cpu", dir, sizeof(dir), rel, sizeof(rel))) {
		version = GS_CGROUP_V2;
		if (cgroup_dir(w->pid, NULL, dir, sizeof(dir), rel, sizeof(rel)))
			return; /* no CPU controller the process is under: nothing to say */
		snprintf(stat, sizeof(stat), "%s/cpu.stat", dir);
		if (access(stat, R_OK))
			return;
		if (!cgroup_dir(w->pid, NULL, sdir, sizeof(sdir), srel, sizeof(srel)))
			read_line(sdir, "cpuset.cpus.effective", cpuset, sizeof(cpuset));
	} else {
		if (!cgroup_dir(w->pid, "cpuacct", acct, sizeof(acct), arel, sizeof(arel)) &&
		    strcmp(arel, rel))
			acct[0] = 0; /* elsewhere in its own hierarchy: not this cgroup's use */
		if (!cgroup_dir(w->pid, "cpuset", sdir, sizeof(sdir), srel, sizeof(srel)))
			read_line(sdir, "cpuset.effective_cpus", cpuset, sizeof(cpuset));
	}
	allowed_cpus(w->pid, cpus, sizeof(cpus));
	/* Read after the files: what they said was the process's own, not its pid's next owner's. */
	if (!same_process(w)) {
		w->gone = true;
		return;
	}
	/* The hierarchy's mount point: dir without the path. */
	base[0] = 0;
	if (strcmp(rel, "/"))
		snprintf(base, sizeof(base), "%.*s", (int)(strlen(dir) - strlen(rel)), dir);
	else
		snprintf(base, sizeof(base), "%s", dir);
	/* From the process's own cgroup up to the hierarchy's root: the quota of each. */
	for (depth = 0; depth < CGROUP_LEVELS; depth++) {
		level_path(rel, depth, lrel, sizeof(lrel));
		snprintf(ldir, sizeof(ldir), "%s%s", base, strcmp(lrel, "/") ? lrel : "");
		q[depth].has = !read_quota(ldir, version, &q[depth].quota, &q[depth].period);
		any |= q[depth].has;
		if (!strcmp(lrel, "/"))
			break;
	}
	snprintf(sig, sizeof(sig), "%d %s %s %s", version, rel, cpus, cpuset);
	for (int i = 0; i <= depth && i < CGROUP_LEVELS; i++) {
		size_t l = strlen(sig);

		snprintf(sig + l, sizeof(sig) - l, " %lld/%llu",
			 q[i].has ? (long long)q[i].quota : -1,
			 q[i].has ? (unsigned long long)q[i].period : 0ull);
	}
	if (!strcmp(sig, w->sig))
		return;
	snprintf(w->sig, sizeof(w->sig), "%s", sig);
	w->n = 0;
	for (int i = 0; i <= depth && i < CGROUP_LEVELS; i++) {
		struct cgroup_level *lv;

		if (!q[i].has && (any || i))
			continue;
		level_path(rel, i, lrel, sizeof(lrel));
		snprintf(ldir, sizeof(ldir), "%s%s", base, strcmp(lrel, "/") ? lrel : "");
		lv = &w->lv[w->n++];
		snprintf(lv->dir, sizeof(lv->dir), "%s", ldir);
		snprintf(lv->acct, sizeof(lv->acct), "%s", i ? "" : acct);
		lv->version = version;
		lv->id = w->next_id++;
		write_level(w, o, lrel, i, version, q[i].has ? q[i].quota : -1,
			    q[i].has ? q[i].period : 0, cpus, cpuset);
	}
}

void cgroup__watch(struct cgroup_watch *w, pid_t pid, __u32 gpid)
{
	struct procmaps_stat st;
	char dir[64];

	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->gpid = gpid;
	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	if (procmaps__stat(dir, &st))
		w->gone = true;
	else
		w->start = st.start;
}

void cgroup__sample(struct cgroup_watch *w, struct trace_out *o)
{
	if (!w || !w->pid)
		return;
	cgroup__read(w, o);
	for (int i = 0; i < w->n; i++) {
		const struct cgroup_level *lv = &w->lv[i];
		struct gs_rec_cpustat s = { .usage_ns = GS_CPUSTAT_NONE,
					    .nr_periods = GS_CPUSTAT_NONE,
					    .nr_throttled = GS_CPUSTAT_NONE,
					    .throttled_ns = GS_CPUSTAT_NONE };
		char path[PATH_MAX + 16], key[64], buf[64];
		unsigned long long v;
		FILE *f;

		snprintf(path, sizeof(path), "%s/cpu.stat", lv->dir);
		if (!(f = fopen(path, "re")))
			continue; /* removed */
		while (fscanf(f, "%63s %llu", key, &v) == 2) {
			if (!strcmp(key, "usage_usec"))
				s.usage_ns = v * 1000;
			else if (!strcmp(key, "nr_periods"))
				s.nr_periods = v;
			else if (!strcmp(key, "nr_throttled"))
				s.nr_throttled = v;
			else if (!strcmp(key, "throttled_usec"))
				s.throttled_ns = v * 1000;
			else if (!strcmp(key, "throttled_time")) /* v1: nanoseconds */
				s.throttled_ns = v;
		}
		fclose(f);
		if (lv->acct[0] && !read_line(lv->acct, "cpuacct.usage", buf, sizeof(buf)))
			s.usage_ns = strtoull(buf, NULL, 10);
		trace_out__hdr(&s.h, GS_REC_CPUSTAT, sizeof(s), w->gpid);
		s.id = lv->id;
		trace_out__append(o, &s, sizeof(s));
	}
}
