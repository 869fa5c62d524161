// SPDX-License-Identifier: GPL-2.0
/*
 * The report's reader of record --archive's files (reports/symbols/archived.c): a file in parts is put
 * together and written out where libdwfl can open it; a part damaged, missing or out of order
 * makes the file unused and counted; records of garbage never crash it.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "trace.h"
#include "archived.h"
#include "testlib.h"

#define FILE_BYTES 150000

static __u8 content[FILE_BYTES];

/* The record of part seq of a file with build-id fill byte bid, path "/x/lib.so". */
static struct gs_rec_archive *part(__u8 bid, __u32 seq, __u64 off, __u32 len, __u32 crc,
				   size_t *size)
{
	static const char path[] = "/x/lib.so";
	struct gs_rec_archive *r;

	*size = sizeof(*r) + sizeof(path) + len;
	r = calloc(1, *size);
	r->h.type = GS_REC_ARCHIVE;
	r->h.size = *size;
	r->total = FILE_BYTES;
	r->offset = off;
	r->len = len;
	r->seq = seq;
	r->crc = crc;
	r->path_len = sizeof(path);
	r->build_id_len = 20;
	memset(r->build_id, bid, 20);
	memcpy(r->data, path, sizeof(path));
	memcpy(r->data + sizeof(path), content + off, len);
	return r;
}

/* Adds the file of build-id bid in GS_ARCHIVE_CHUNK parts; flip: a byte of part 1 changed. */
static void add_file(struct report_archive *a, __u8 bid, bool flip, bool skip_part1)
{
	__u32 crc = crc32(0, content, FILE_BYTES), seq = 0;

	for (__u64 off = 0; off < FILE_BYTES; off += GS_ARCHIVE_CHUNK, seq++) {
		__u32 len = FILE_BYTES - off < GS_ARCHIVE_CHUNK ? FILE_BYTES - off :
								  GS_ARCHIVE_CHUNK;
		size_t size;
		struct gs_rec_archive *r = part(bid, seq, off, len, crc, &size);

		if (flip && seq == 1)
			r->data[r->path_len + 100] ^= 1;
		if (!(skip_part1 && seq == 1))
			CHECK(!report_archive__add(a, &r->h), "add");
		free(r);
	}
}

int main(void)
{
	struct report_archive *a = report_archive__new();
	__u8 bid[20], other[20];
	const char *f, *chosen;
	char buf[64], kept[4096];
	struct stat st;
	FILE *fp;

	srand(7);
	for (size_t i = 0; i < FILE_BYTES; i++)
		content[i] = rand();
	add_file(a, 0x11, false, false); /* whole */
	add_file(a, 0x22, true, false);	 /* a byte changed: the CRC tells */
	add_file(a, 0x33, false, true);	 /* a part missing: out of order */
	/* Garbage: lengths, offsets, paths and sizes of every kind; none may crash the reader. */
	for (int i = 0; i < 20000; i++) {
		size_t size = sizeof(struct gs_rec_archive) + rand() % 256;
		struct gs_rec_archive *r = calloc(1, size);
		__u8 *p = (__u8 *)r;

		for (size_t k = sizeof(r->h); k < size; k++)
			p[k] = rand() % 4 ? rand() % 3 : rand();
		r->h.type = GS_REC_ARCHIVE;
		r->h.size = rand() % 8 ? size : rand() % size;
		r->build_id[0] = 0x44 + rand() % 4; /* other build-ids than the files' */
		if (rand() % 2)
			r->total = rand() % 512;
		CHECK(!report_archive__add(a, &r->h), "garbage add %d", i);
		free(r);
	}
	CHECK(!report_archive__finish(a), "finish");
	CHECK_EQ_U64(report_archive__stats(a)->files >= 1, 1);
	CHECK(report_archive__stats(a)->bad >= 2, "damaged files counted: %llu",
	      (unsigned long long)report_archive__stats(a)->bad);

	memset(bid, 0x11, sizeof(bid));
	f = report_archive__file(a, bid, sizeof(bid));
	CHECK(f && !stat(f, &st) && st.st_size == FILE_BYTES && (st.st_mode & 0777) == 0600,
	      "the whole file written out");
	fp = fopen(f, "rb");
	CHECK(fp && fread(buf, 1, sizeof(buf), fp) == sizeof(buf) && !memcmp(buf, content, 64),
	      "its bytes");
	fclose(fp);
	memset(other, 0x22, sizeof(other));
	CHECK(!report_archive__file(a, other, sizeof(other)), "a file with a byte changed is used");
	memset(other, 0x33, sizeof(other));
	CHECK(!report_archive__file(a, other, sizeof(other)), "a file missing a part is used");
	CHECK(!report_archive__file(NULL, bid, sizeof(bid)), "no archive, no file");

	/* Missing here: the archived file, once counted; no archive for the build: the path. */
	CHECK_EQ_U64(report_archive__stats(a)->used, 0);
	chosen = report_archive__choose(a, "/nonexistent/lib.so", bid, sizeof(bid));
	CHECK(chosen == f, "a missing file is read from the archive");
	CHECK(report_archive__choose(a, "/nonexistent/lib.so", bid, sizeof(bid)) == f, "cached");
	CHECK_EQ_U64(report_archive__stats(a)->used, 1);
	memset(other, 0x22, sizeof(other));
	CHECK(!strcmp(report_archive__choose(a, "/nonexistent/x.so", other, 20),
		      "/nonexistent/x.so"),
	      "nothing archived for the build: the path");
	/* There, but another build (this test's own binary has another build-id). */
	CHECK(report_archive__choose(a, "/proc/self/exe", bid, sizeof(bid)) == f,
	      "a file of another build is read from the archive");

	snprintf(kept, sizeof(kept), "%s", f);
	report_archive__free(a);
	CHECK(stat(kept, &st) && errno == ENOENT, "the folder's files go with the archive");
	TEST_PASS();
}
