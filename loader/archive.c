// SPDX-License-Identifier: GPL-2.0
/* record --archive: reduced ELF files into the trace (archive.h). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <gelf.h>
#include <libelf.h>
#include <zlib.h>

#include "escape.h"
#include "archive.h"
#include "elfx.h"
#include "trace_out.h"
#include "procmaps.h"
#include "trace.h"
#include "vec.h"

struct archive_file {
	int fd;
	pid_t tgid;
	char *path;
	__u8 bid[32];
	__u32 bid_len;
};

/* Kept always: CFI, symbols, the build-id and the debug link (SHT_NOTE/.gnu_debuglink). */
static const char *const base_sections[] = {
	".eh_frame", ".eh_frame_hdr",  ".debug_frame",	     ".symtab",	       ".strtab", ".dynsym",
	".dynstr",   ".gnu_debuglink", ".note.gnu.build-id", ".gnu_debugdata",
};

/* Kept under ARCHIVE_DWARF_CAP: what file:line and inlined frames are read from. */
static const char *const dwarf_sections[] = {
	".debug_info",	   ".debug_abbrev",   ".debug_line",	    ".debug_str",
	".debug_line_str", ".debug_rnglists", ".debug_ranges",	    ".debug_loclists",
	".debug_loc",	   ".debug_addr",     ".debug_str_offsets", ".debug_aranges",
};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

static bool named(const char *name, const char *const *set, size_t n)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(name, set[i]))
			return true;
	return false;
}

void archive__note(struct archive *a, pid_t tgid, __u64 start, __u64 end, const char *path,
		   const __u8 *bid, __u32 bid_len)
{
	struct archive_file *f;
	char dir[PATH_MAX], mf[PATH_MAX + 64];
	__u8 got[32];
	int fd;

	if (!bid_len || bid_len > sizeof(got) || path[0] != '/' || a->n >= ARCHIVE_MAX_FILES)
		return;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].bid_len == bid_len && !memcmp(a->v[i].bid, bid, bid_len))
			return;
	procmaps__dir(tgid, dir, sizeof(dir));
	snprintf(mf, sizeof(mf), "%s/map_files/%llx-%llx", dir, (unsigned long long)start,
		 (unsigned long long)end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* map_files needs CAP_SYS_ADMIN: the path, if it is still the build recorded. */
		if (elfx__build_id(path, got, sizeof(got)) != bid_len || memcmp(got, bid, bid_len))
			return;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return;
	}
	if (array__grow((void **)&a->v, &a->cap, sizeof(*a->v), a->n + 1, 32)) {
		close(fd);
		return;
	}
	f = &a->v[a->n];
	*f = (struct archive_file){
		.fd = fd, .tgid = tgid, .path = strdup(path), .bid_len = bid_len
	};
	memcpy(f->bid, bid, bid_len);
	if (f->path)
		a->n++;
	else
		close(fd);
}

/* Whether section i of in (named name) is copied, given whether DWARF is. */
static bool kept(const char *name, size_t i, size_t shstrndx, bool dwarf)
{
	return i == shstrndx || named(name, base_sections, NELEMS(base_sections)) ||
	       (dwarf && named(name, dwarf_sections, NELEMS(dwarf_sections)));
}

/* The bytes the kept sections take (without DWARF when dwarf is false). */
static size_t kept_bytes(Elf *in, size_t shstrndx, bool dwarf)
{
	Elf_Scn *scn = NULL;
	size_t sum = 0;

	while ((scn = elf_nextscn(in, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    kept(elf_strptr(in, shstrndx, sh.sh_name), elf_ndxscn(scn), shstrndx, dwarf))
			sum += sh.sh_size;
	}
	return sum;
}

/*
 * Copies in's headers and sections into out, laid out by hand (ELF_F_LAYOUT): the program
 * headers must stay as they are, pointing at the original file's offsets.
 */
static int copy_elf(Elf *in, Elf *out, bool dwarf)
{
	size_t phnum, shstrndx;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	__u64 off;

	if (!gelf_getehdr(in, &eh) || elf_getphdrnum(in, &phnum) ||
	    elf_getshdrstrndx(in, &shstrndx) || shstrndx >= SHN_LORESERVE ||
	    !gelf_newehdr(out, gelf_getclass(in)))
		return -ENOEXEC;
	elf_flagelf(out, ELF_C_SET, ELF_F_LAYOUT);
	if (phnum && !gelf_newphdr(out, phnum))
		return -ENOEXEC;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(in, i, &ph) || !gelf_update_phdr(out, i, &ph))
			return -ENOEXEC;
	}
	off = eh.e_ehsize + (__u64)phnum * eh.e_phentsize;
	while ((scn = elf_nextscn(in, scn))) {
		Elf_Scn *os = elf_newscn(out);
		Elf_Data *d, *od;
		GElf_Shdr sh;
		__u64 align;

		if (!os || !gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type == SHT_NOBITS ||
		    !kept(elf_strptr(in, shstrndx, sh.sh_name), elf_ndxscn(scn), shstrndx, dwarf)) {
			/* In place, without its bytes: as a separate debug file has it. */
			sh.sh_type = SHT_NOBITS;
			sh.sh_offset = off;
			if (!gelf_update_shdr(os, &sh))
				return -ENOEXEC;
			continue;
		}
		d = elf_rawdata(scn, NULL);
		if (!d || d->d_size != sh.sh_size || !(od = elf_newdata(os)))
			return -ENOEXEC;
		align = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
		off = (off + align - 1) / align * align;
		*od = (Elf_Data){ .d_buf = d->d_buf,
				  .d_type = ELF_T_BYTE,
				  .d_size = d->d_size,
				  .d_align = align,
				  .d_version = EV_CURRENT };
		sh.sh_offset = off;
		off += sh.sh_size;
		if (!gelf_update_shdr(os, &sh))
			return -ENOEXEC;
	}
	eh.e_phoff = phnum ? eh.e_ehsize : 0;
	eh.e_shoff = (off + 7) & ~7ULL;
	if (!gelf_update_ehdr(out, &eh))
		return -ENOEXEC;
	return elf_update(out, ELF_C_WRITE) < 0 ? -EIO : 0;
}

void *archive__reduce(int fd, size_t *size, int *dwarf_kept)
{
	Elf *in = NULL, *out = NULL;
	size_t shstrndx;
	void *buf = NULL;
	int mfd = -1, err = -ENOEXEC;
	struct stat st;
	bool dwarf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		goto out;
	/* Read, not mapped: the target's owner may truncate the file meanwhile (elfread.h). */
	in = elf_begin(fd, ELF_C_READ, NULL);
	if (!in || elf_kind(in) != ELF_K_ELF || elf_getshdrstrndx(in, &shstrndx))
		goto out;
	dwarf = kept_bytes(in, shstrndx, true) <= ARCHIVE_DWARF_CAP;
	err = -EFBIG;
	if (kept_bytes(in, shstrndx, false) > ARCHIVE_FILE_MAX)
		goto out;
	err = -errno;
	mfd = memfd_create("archive", MFD_CLOEXEC);
	if (mfd < 0)
		goto out;
	err = -ENOEXEC;
	out = elf_begin(mfd, ELF_C_WRITE, NULL);
	if (!out || (err = copy_elf(in, out, dwarf)))
		goto out;
	elf_end(out);
	out = NULL;
	err = -EIO;
	if (fstat(mfd, &st) || !st.st_size || !(buf = malloc(st.st_size)))
		goto out;
	if (pread(mfd, buf, st.st_size, 0) != st.st_size) {
		free(buf);
		buf = NULL;
		goto out;
	}
	*size = st.st_size;
	*dwarf_kept = dwarf;
	err = 0;
out:
	if (out)
		elf_end(out);
	if (in)
		elf_end(in);
	if (mfd >= 0)
		close(mfd);
	errno = -err;
	return buf;
}

/* One file's records: its bytes in GS_ARCHIVE_CHUNK parts, each with the build-id and path. */
static void write_file(struct trace_out *o, const struct archive_file *f, const __u8 *buf,
		       size_t size, bool dwarf)
{
	size_t plen = strlen(f->path) + 1;
	struct gs_rec_archive *r = malloc(sizeof(*r) + plen + GS_ARCHIVE_CHUNK + 8);
	__u32 crc = crc32(0, buf, size), seq = 0;

	if (!r)
		return;
	for (size_t off = 0; off < size; off += GS_ARCHIVE_CHUNK) {
		size_t len = size - off < GS_ARCHIVE_CHUNK ? size - off : GS_ARCHIVE_CHUNK;
		size_t rsize = sizeof(*r) + plen + len;

		memset(r, 0, sizeof(*r));
		trace_out__hdr(&r->h, GS_REC_ARCHIVE, rsize, f->tgid);
		r->total = size;
		r->offset = off;
		r->len = len;
		r->seq = seq++;
		r->crc = crc;
		r->flags = dwarf ? GS_ARCHIVE_F_DWARF : 0;
		r->path_len = plen;
		r->build_id_len = f->bid_len;
		memcpy(r->build_id, f->bid, f->bid_len);
		memcpy(r->data, f->path, plen);
		memcpy(r->data + plen, buf + off, len);
		trace_out__append(o, r, rsize);
	}
	free(r);
}

size_t archive__write_all(struct archive *a, struct trace_out *o)
{
	size_t files = 0, bytes = 0, no_dwarf = 0;

	for (size_t i = 0; i < a->n; i++) {
		struct archive_file *f = &a->v[i];
		int dwarf = 0;
		size_t size;
		void *buf = archive__reduce(f->fd, &size, &dwarf);

		if (!buf) {
			char said[ESC_TEXT_MAX];

			fprintf(stderr, "gapscope: warning: %s not archived: %s\n",
				esc__text(said, sizeof(said), f->path, SIZE_MAX), strerror(errno));
			continue;
		}
		write_file(o, f, buf, size, dwarf);
		free(buf);
		files++;
		bytes += size;
		no_dwarf += !dwarf;
	}
	/* The report then reads them first (trace.h, TRACE_F_ARCHIVE). */
	if (files && o->tw && trace__set_flags(o->tw, TRACE_F_ARCHIVE))
		fprintf(stderr, "gapscope: warning: %s: cannot mark the trace's archive\n",
			o->path);
	fprintf(stderr, "gapscope: archive: %zu files, %.1f MB kept in the trace", files,
		bytes / 1e6);
	if (no_dwarf)
		fprintf(stderr, " (%zu without their DWARF, over %u MiB)", no_dwarf,
			ARCHIVE_DWARF_CAP >> 20);
	fputc('\n', stderr);
	return files;
}

void archive__free(struct archive *a)
{
	for (size_t i = 0; i < a->n; i++) {
		close(a->v[i].fd);
		free(a->v[i].path);
	}
	free(a->v);
	*a = (struct archive){};
}
