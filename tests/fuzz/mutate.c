// SPDX-License-Identifier: GPL-2.0
/*
 * A mutated-trace corpus for `make check-asan`: from each seed trace, N copies each changed in a
 * few places and given back the CRCs the writer would have given them (fuzz.h), so that every
 * mutation gets past the chunk checks into the record decoders. The same seed number gives the
 * same corpus. Mutations, 1 to 4 per copy:
 *
 *   a field of a record (uncompressed chunks, walked as the reader walks them): its type, size,
 *   timestamp, tid or another aligned word set to 0, 1, all ones, a sign bit, a size just past
 *   the record's, or a random value
 *   a few random bytes flipped anywhere after the file header
 *   the file cut short at a random offset
 *
 * usage: mutate SEED N OUTDIR TRACE...   (writes OUTDIR/BASENAME.K.gsc)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t pick(uint64_t n)
{
	return n ? next() % n : 0;
}

/* The offsets of the records of uncompressed chunks, up to MAX. */
static size_t records(const uint8_t *d, size_t size, size_t *at, size_t max)
{
	struct trace_file_hdr fh;
	size_t off, n = 0;

	if (size < sizeof(fh))
		return 0;
	memcpy(&fh, d, sizeof(fh));
	off = fh.hdr_size >= sizeof(fh) && fh.hdr_size <= size ? fh.hdr_size : sizeof(fh);
	off = (off + 7) & ~(size_t)7;
	while (size - off >= sizeof(struct trace_chunk_hdr)) {
		struct trace_chunk_hdr ch;
		size_t r, end;

		memcpy(&ch, d + off, sizeof(ch));
		if (ch.len > size - off - sizeof(ch))
			break;
		r = off + sizeof(ch);
		end = r + ch.len;
		while (!ch.raw_len && end - r >= sizeof(struct gs_hdr) && n < max) {
			struct gs_hdr h;

			memcpy(&h, d + r, sizeof(h));
			if (h.size < sizeof(h) || h.size > end - r)
				break;
			at[n++] = r;
			r += (h.size + 7) & ~7u;
		}
		off = end;
	}
	return n;
}

static void mutate_record(uint8_t *d, size_t size, const size_t *at, size_t n)
{
	static const uint64_t odd[] = { 0,	    1,	    0xffffffffffffffffull, 0x80000000ull,
					0x7fffffff, 0xffff, 0x8000000000000000ull };
	size_t r = at[pick(n)];
	struct gs_hdr h;
	size_t words, w;
	uint64_t v;

	memcpy(&h, d + r, sizeof(h));
	words = h.size / 4;
	w = pick(4) ? pick(words) : pick(2); /* a quarter of them: the type or the size */
	switch (pick(3)) {
	case 0:
		v = odd[pick(sizeof(odd) / sizeof(odd[0]))];
		break;
	case 1:
		v = h.size + 8 * (1 + pick(64)); /* past the record */
		break;
	default:
		v = next();
		break;
	}
	if (r + 4 * w + 4 <= size) {
		uint32_t v32 = v;

		memcpy(d + r + 4 * w, &v32, 4);
	}
}

int main(int argc, char **argv)
{
	static size_t at[1 << 20];
	char out[4096];

	if (argc < 5) {
		fprintf(stderr, "usage: mutate SEED N OUTDIR TRACE...\n");
		return 64;
	}
	for (int t = 4; t < argc; t++) {
		FILE *in = fopen(argv[t], "rb");
		uint8_t *seed = NULL, *d;
		long size;
		size_t nrec;
		const char *base = strrchr(argv[t], '/') ? strrchr(argv[t], '/') + 1 : argv[t];

		if (!in || fseek(in, 0, SEEK_END) || (size = ftell(in)) <= 0 ||
		    fseek(in, 0, SEEK_SET) || !(seed = malloc(size)) ||
		    fread(seed, 1, size, in) != (size_t)size) {
			fprintf(stderr, "mutate: cannot read %s\n", argv[t]);
			return 1;
		}
		fclose(in);
		nrec = records(seed, size, at, sizeof(at) / sizeof(at[0]));
		for (long k = 0; k < atol(argv[2]); k++) {
			size_t len = size;
			uint8_t *fixed;
			FILE *o;

			rng = (strtoull(argv[1], NULL, 0) + 1) * 0x9e3779b97f4a7c15ull ^
			      (uint64_t)(t * 1000003 + k);
			d = malloc(size);
			memcpy(d, seed, size);
			for (int m = 1 + pick(4); m--;) {
				uint64_t what = pick(10);

				if (what < 7 && nrec)
					mutate_record(d, len, at, nrec);
				else if (what < 9)
					d[sizeof(struct trace_file_hdr) +
					  pick(len - sizeof(struct trace_file_hdr))] ^= 1u
											<< pick(8);
				else
					len = sizeof(struct trace_file_hdr) +
					      pick(len - sizeof(struct trace_file_hdr));
			}
			fixed = fuzz_fix_crcs(d, len);
			snprintf(out, sizeof(out), "%s/%s.%ld.gsc", argv[3], base, k);
			o = fopen(out, "wb");
			if (!fixed || !o || fwrite(fixed, 1, len, o) != len || fclose(o)) {
				fprintf(stderr, "mutate: cannot write %s: %s\n", out,
					strerror(errno));
				return 1;
			}
			free(fixed);
			free(d);
		}
		free(seed);
	}
	return 0;
}
