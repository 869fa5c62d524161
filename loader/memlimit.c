// SPDX-License-Identifier: GPL-2.0
/* The memory cgroup's limit against what a recording needs: see memlimit.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memlimit.h"

/* A limit file's value in bytes; ULLONG_MAX for "max", none or unreadable. */
static unsigned long long read_limit(const char *dir, const char *file)
{
	char path[PATH_MAX + 128], buf[64];
	unsigned long long v = ULLONG_MAX;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return ULLONG_MAX;
	if (fgets(buf, sizeof(buf), f) && strncmp(buf, "max", 3))
		v = strtoull(buf, NULL, 10) ?: ULLONG_MAX;
	fclose(f);
	return v;
}

/* The smallest limit from the cgroup at ROOT + PATH up to ROOT. */
static unsigned long long smallest_limit(const char *root, const char *path, const char *file)
{
	char dir[PATH_MAX + 64];
	unsigned long long min = ULLONG_MAX, v;
	char *slash;

	snprintf(dir, sizeof(dir), "%s%s", root, path);
	for (;;) {
		v = read_limit(dir, file);
		if (v < min)
			min = v;
		slash = strrchr(dir + strlen(root), '/');
		if (!slash)
			break;
		*slash = 0;
	}
	return min;
}

/* This process's memory limit in bytes, ULLONG_MAX for none. */
static unsigned long long cgroup_limit(void)
{
	char line[PATH_MAX + 64];
	unsigned long long min = ULLONG_MAX, v;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return ULLONG_MAX;
	while (fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *path = ctrl ? strchr(ctrl + 1, ':') : NULL;

		if (!path)
			continue;
		*path++ = 0;
		path[strcspn(path, "\n")] = 0;
		if (!strcmp(path, "/"))
			path = "";
		ctrl++;
		if (!strcmp(line, "0") && !*ctrl) /* v2: "0::/path" */
			v = smallest_limit("/sys/fs/cgroup", path, "memory.max");
		else if (strstr(ctrl, "memory")) /* v1: "4:memory:/path" */
			v = smallest_limit("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes");
		else
			continue;
		if (v < min)
			min = v;
	}
	fclose(f);
	return min;
}

bool memlimit__check(unsigned int ringbuf_mb, unsigned int flight_mb)
{
	unsigned long long limit = cgroup_limit(), need = memlimit__need_mb(ringbuf_mb, flight_mb);

	if (limit == ULLONG_MAX || limit >= need << 20)
		return true;
	if (flight_mb)
		fprintf(stderr,
			"gapscope: the memory cgroup allows %llu MiB, a flight recording needs about "
			"%llu MiB (%d MiB, --ringbuf-mb %u, --flight-mb %u, %d MiB for what every "
			"dump needs, %d MiB for the live analysis): not started\n",
			limit >> 20, need, MEMLIMIT_FLOOR_MB, ringbuf_mb, flight_mb,
			MEMLIMIT_STICKY_MB, MEMLIMIT_ANALYSIS_MB);
	else
		fprintf(stderr,
			"gapscope: the memory cgroup allows %llu MiB, a recording needs about %llu "
			"MiB (%d MiB and --ringbuf-mb %u): not started\n",
			limit >> 20, need, MEMLIMIT_FLOOR_MB, ringbuf_mb);
	return false;
}
