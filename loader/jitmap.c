// SPDX-License-Identifier: GPL-2.0
/* Perf maps into the trace (jitmap.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "jitmap.h"
#include "maprecords.h"
#include "trace_out.h"
#include "trace.h"

/* Appends one record of text[0, len), whole lines. */
static void write_rec(struct trace_out *o, pid_t tgid, __u32 seq, const char *text, size_t len)
{
	size_t size = sizeof(struct gs_rec_perf_map) + len;
	struct gs_rec_perf_map *r = calloc(1, size + 8);

	if (!r)
		return;
	trace_out__hdr(&r->h, GS_REC_PERF_MAP, size, trace_out__gpid(o, tgid, true));
	r->len = len;
	r->seq = seq;
	memcpy(r->text, text, len);
	trace_out__append(o, r, size);
	free(r);
}

/* The file's content, up to JITMAP_MAX_BYTES; NULL with errno set. */
static char *read_map(const char *path, pid_t tgid, size_t *len, bool *cut)
{
	struct stat st, pst;
	char proc[64], *buf;
	size_t n = 0, cap;
	ssize_t r;
	int fd;

	/* Not through a link, and not a FIFO that would block. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	snprintf(proc, sizeof(proc), "/proc/%d", tgid);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid && !stat(proc, &pst) && pst.st_uid != st.st_uid)) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	*cut = st.st_size > JITMAP_MAX_BYTES;
	cap = *cut ? JITMAP_MAX_BYTES : (size_t)st.st_size;
	buf = malloc(cap + 1);
	while (buf && n < cap && (r = read(fd, buf + n, cap - n)) > 0)
		n += r;
	close(fd);
	*len = n;
	return buf;
}

long jitmap__write(struct trace_out *o, pid_t tgid, const char *dir)
{
	char path[4096], *text;
	size_t len, off = 0;
	long lines = 0;
	__u32 seq = 0;
	bool cut;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, tgid);
	text = read_map(path, tgid, &len, &cut);
	if (!text)
		return errno == ENOENT ? 0 : -errno;
	/* Records of whole lines: a line cut by the size limit is dropped. */
	while (off < len) {
		size_t end = off + GS_PERF_MAP_CHUNK < len ? off + GS_PERF_MAP_CHUNK : len, k;

		for (k = end; k > off && text[k - 1] != '\n'; k--)
			;
		if (k == off) {
			/* No newline: the last line of the file, or one longer than a record. */
			if (end < len)
				break;
			k = end;
		}
		for (size_t i = off; i < k; i++)
			lines += text[i] == '\n';
		lines += k == len && text[len - 1] != '\n';
		write_rec(o, tgid, seq++, text + off, k - off);
		off = k;
	}
	if (cut || off < len)
		fprintf(stderr, "gapscope: warning: %s: only its first %zu bytes kept\n", path,
			off);
	free(text);
	return lines;
}

void jitmap__write_all(struct trace_out *o, const struct map_records *m, pid_t target)
{
	pid_t tgids[256];
	size_t n = map_records__tgids(m, tgids, 256);
	bool seen_target = false;

	for (size_t i = 0; i <= n; i++) {
		pid_t tgid = i < n ? tgids[i] : target;
		long k;

		if (i == n && seen_target)
			break;
		seen_target |= tgid == target;
		k = jitmap__write(o, tgid, "/tmp");
		/* The report then reads the maps first (trace.h, TRACE_F_PERF_MAP). */
		if (k > 0 && o->tw && trace__set_flags(o->tw, TRACE_F_PERF_MAP))
			fprintf(stderr,
				"gapscope: warning: %s: cannot mark the trace's perf maps\n",
				o->path);
		if (k > 0)
			fprintf(stderr,
				"gapscope: /tmp/perf-%d.map: %ld symbols of generated code kept\n",
				tgid, k);
		else if (k < 0)
			fprintf(stderr, "gapscope: warning: /tmp/perf-%d.map not kept: %s\n", tgid,
				strerror((int)-k));
	}
}
