// SPDX-License-Identifier: GPL-2.0
/* The files record --archive kept, for the report's symbols and unwinding: see archived.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <zlib.h>

#include "archived.h"
#include "decode.h"
#include "elfread.h"
#include "vec.h"

struct ar_file {
	__u8 bid[32];
	__u32 bid_len;
	__u64 total, got; /* bytes of the file, and put together so far */
	__u32 next_seq, crc;
	bool damaged;
	__u8 *buf;  /* NULL once written out */
	char *file; /* in the folder, once written */
	bool used;
};

struct ar_choice {
	char *path;
	__u8 bid[32];
	__u32 bid_len;
	const char *file; /* path's, an ar_file's, or NULL before the first ask */
};

struct report_archive {
	struct ar_file *v;
	size_t n, cap;
	struct ar_choice *ch;
	size_t nch, capch;
	char *dir; /* the private folder, once made */
	struct archive_stats st;
};

struct report_archive *report_archive__new(void)
{
	return calloc(1, sizeof(struct report_archive));
}

static struct ar_file *file_get(struct report_archive *a, const __u8 *bid, __u32 len)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].bid_len == len && !memcmp(a->v[i].bid, bid, len))
			return &a->v[i];
	if (array__grow((void **)&a->v, &a->cap, sizeof(*a->v), a->n + 1, 16))
		return NULL;
	a->v[a->n] = (struct ar_file){ .bid_len = len };
	memcpy(a->v[a->n].bid, bid, len);
	return &a->v[a->n++];
}

int report_archive__add(struct report_archive *a, const struct gs_hdr *h)
{
	const struct gs_rec_archive *r = gs_archive(h);
	size_t room;
	struct ar_file *f;

	if (!r || !a)
		return 0;
	room = gs_fixed_size(h) - sizeof(*r);
	if (!r->build_id_len || r->build_id_len > sizeof(r->build_id)) {
		a->st.bad++; /* no file to name: counted as one */
		return 0;
	}
	f = file_get(a, r->build_id, r->build_id_len);
	if (!f)
		return -ENOMEM;
	if (f->damaged || (f->total && f->got == f->total && !r->seq))
		return 0; /* written twice (another process): the first stands */
	/* The parts of one file, in order, agreeing on its size and CRC, within the record. */
	if (!r->path_len || r->path_len > room || r->len > room - r->path_len || !r->total ||
	    r->total > ARCHIVE_READ_MAX || r->seq != f->next_seq || r->offset != f->got ||
	    r->len > r->total - r->offset ||
	    (f->total && (f->total != r->total || f->crc != r->crc))) {
		f->damaged = true;
		free(f->buf);
		f->buf = NULL;
		return 0;
	}
	if (!f->buf) {
		f->buf = malloc(r->total);
		if (!f->buf)
			return -ENOMEM;
		f->total = r->total;
		f->crc = r->crc;
	}
	memcpy(f->buf + f->got, r->data + r->path_len, r->len);
	f->got += r->len;
	f->next_seq++;
	return 0;
}

/* Writes f's bytes to a file of its own in the folder. */
static int write_out(struct report_archive *a, struct ar_file *f)
{
	char name[2 * sizeof(f->bid) + 1];
	size_t off = 0, len;
	int fd;

	for (__u32 i = 0; i < f->bid_len; i++)
		sprintf(name + 2 * i, "%02x", f->bid[i]);
	len = strlen(a->dir) + 2 + strlen(name);
	f->file = malloc(len);
	if (!f->file)
		return -ENOMEM;
	snprintf(f->file, len, "%s/%s", a->dir, name);
	fd = open(f->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	while (fd >= 0 && off < f->total) {
		ssize_t w = write(fd, f->buf + off, f->total - off);

		if (w <= 0)
			break;
		off += w;
	}
	if (fd >= 0)
		close(fd);
	if (off == f->total)
		return 0;
	unlink(f->file);
	free(f->file);
	f->file = NULL;
	return -EIO;
}

int report_archive__finish(struct report_archive *a)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	int err = 0;

	for (size_t i = 0; i < a->n; i++) {
		struct ar_file *f = &a->v[i];

		if (!f->damaged && f->buf &&
		    (f->got != f->total || crc32(0, f->buf, f->total) != f->crc))
			f->damaged = true;
		if (f->damaged) {
			a->st.bad++;
			continue;
		}
		if (!f->buf)
			continue;
		if (!a->dir) {
			snprintf(dir, sizeof(dir), "%s/gapscope-archive.XXXXXX",
				 tmp && *tmp ? tmp : "/tmp");
			if (!mkdtemp(dir) || !(a->dir = strdup(dir))) {
				err = -errno ?: -ENOMEM;
				break;
			}
		}
		err = write_out(a, f);
		if (err)
			break;
		a->st.files++;
		free(f->buf);
		f->buf = NULL;
	}
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].buf);
		a->v[i].buf = NULL;
	}
	return err;
}

int report_archive__take(void *a, const struct gs_hdr *h)
{
	return gs_rec_check(h) ? report_archive__add(a, h) : 0;
}

const char *report_archive__file(struct report_archive *a, const __u8 *bid, __u32 len)
{
	for (size_t i = 0; a && bid && i < a->n; i++)
		if (a->v[i].file && a->v[i].bid_len == len && !memcmp(a->v[i].bid, bid, len))
			return a->v[i].file;
	return NULL;
}

void report_archive__used(struct report_archive *a, const char *file)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (a->v[i].file == file && !a->v[i].used) {
			a->v[i].used = true;
			a->st.used++;
		}
}

/* Whether the file at path is there and has build-id bid (read, not mapped: elfread.h). */
static bool local_matches(const char *path, const __u8 *bid, __u32 len)
{
	const void *got = NULL;
	struct elfread r;
	bool ok;

	if (elfread__open(&r, path))
		return false;
	ok = dwelf_elf_gnu_build_id(r.e, &got) == (ssize_t)len && !memcmp(got, bid, len) &&
	     !elfread__changed(&r);
	elfread__close(&r);
	return ok;
}

const char *report_archive__choose(struct report_archive *a, const char *path, const __u8 *bid,
				   __u32 len)
{
	const char *file = report_archive__file(a, bid, len);
	struct ar_choice *c;

	if (!file)
		return path; /* nothing to choose from */
	for (size_t i = 0; i < a->nch; i++)
		if (a->ch[i].bid_len == len && !memcmp(a->ch[i].bid, bid, len) &&
		    !strcmp(a->ch[i].path, path))
			return a->ch[i].file;
	if (array__grow((void **)&a->ch, &a->capch, sizeof(*a->ch), a->nch + 1, 16))
		return path;
	c = &a->ch[a->nch];
	*c = (struct ar_choice){ .path = strdup(path), .bid_len = len };
	if (!c->path)
		return path;
	memcpy(c->bid, bid, len);
	a->nch++;
	c->file = local_matches(path, bid, len) ? c->path : file;
	if (c->file == file)
		report_archive__used(a, file);
	return c->file;
}

const struct archive_stats *report_archive__stats(const struct report_archive *a)
{
	return &a->st;
}

void report_archive__warn(const struct report_archive *a, const char *path, FILE *out)
{
	if (a && a->st.bad)
		fprintf(out,
			"gapscope: warning: %s: %llu archived files damaged, not used (their "
			"frames named from this machine's files)\n",
			path, (unsigned long long)a->st.bad);
}

void report_archive__free(struct report_archive *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		if (a->v[i].file)
			unlink(a->v[i].file);
		free(a->v[i].file);
		free(a->v[i].buf);
	}
	for (size_t i = 0; i < a->nch; i++)
		free(a->ch[i].path);
	if (a->dir)
		rmdir(a->dir);
	free(a->dir);
	free(a->v);
	free(a->ch);
	free(a);
}
