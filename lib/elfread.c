// SPDX-License-Identifier: GPL-2.0
/* ELF files read with pread(2), never mapped: see elfread.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "elfread.h"
#include "escape.h"
#include "vec.h"

/* Symbols read at once: 768 KiB of a 64-bit table. */
#define SYMS_WINDOW	 32768
/*
 * A symbol table's names, read in windows of NAMES_WINDOW from the name asked for: a .symtab's
 * lie in the order of its symbols (libtorch_cpu.so's .strtab is 78 MB). A .dynsym's do not (its
 * symbols are sorted by hash), and a window then serves a name or two: after NAMES_JUDGE
 * windows that served fewer than NAMES_PER_WINDOW names each, the table is read whole, up to
 * NAMES_WHOLE_MAX. A name is read up to NAME_MAX_LEN.
 */
#define NAMES_WINDOW	 (1u << 20)
#define NAMES_JUDGE	 16
#define NAMES_PER_WINDOW 64
#define NAMES_WHOLE_MAX	 (256u << 20)
#define NAME_MAX_LEN	 (16u << 20)

int elfread__open(struct elfread *r, const char *path)
{
	int err;

	*r = (struct elfread){ .fd = -1 };
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0)
		return -errno;
	err = fstat(r->fd, &r->st) ? -errno : !S_ISREG(r->st.st_mode) ? -EINVAL : 0;
	if (err) {
		elfread__close(r);
		return err;
	}
	r->e = elf_begin(r->fd, ELF_C_READ, NULL);
	if (!r->e || elf_kind(r->e) != ELF_K_ELF) {
		err = elfread__changed(r) ? -ESTALE : -ENOEXEC;
		elfread__close(r);
		return err;
	}
	return 0;
}

void elfread__close(struct elfread *r)
{
	if (r->e)
		elf_end(r->e);
	if (r->fd >= 0)
		close(r->fd);
	r->e = NULL;
	r->fd = -1;
}

bool elfread__changed(struct elfread *r)
{
	struct stat now;

	if (!r->changed && r->fd >= 0 && !fstat(r->fd, &now) &&
	    (now.st_size != r->st.st_size || now.st_mtim.tv_sec != r->st.st_mtim.tv_sec ||
	     now.st_mtim.tv_nsec != r->st.st_mtim.tv_nsec))
		r->changed = true;
	return r->changed;
}

int elfread__pread(struct elfread *r, void *buf, size_t len, __u64 off)
{
	size_t done = 0;

	if (off > (__u64)r->st.st_size || len > (__u64)r->st.st_size - off)
		return -EINVAL;
	while (done < len) {
		ssize_t n = pread(r->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			/* Inside the file as it was opened, and no more to read: cut short. */
			r->changed = true;
			return -ESTALE;
		}
		done += n;
	}
	return 0;
}

const char *elfread__str(struct elfread *r, size_t shndx, __u64 off, char *buf, size_t size)
{
	Elf_Scn *scn = elf_getscn(r->e, shndx);
	GElf_Shdr sh;
	size_t len;

	if (!size || !scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    off >= sh.sh_size)
		return NULL;
	len = sh.sh_size - off < size - 1 ? sh.sh_size - off : size - 1;
	if (elfread__pread(r, buf, len, sh.sh_offset + off))
		return NULL;
	buf[len] = '\0';
	/* Unterminated at the table's end: not a string. */
	return memchr(buf, '\0', len) || len == size - 1 ? buf : NULL;
}

char *elfread__strdup(struct elfread *r, __u64 tab_off, __u64 tab_size, __u64 off)
{
	size_t want = 256;
	char *s = NULL;

	if (off >= tab_size)
		return NULL;
	/* A name is read in a few steps, not a window: names asked one by one are few. */
	for (;;) {
		size_t len = tab_size - off < want ? tab_size - off : want;
		char *n = realloc(s, len + 1);

		if (!n || elfread__pread(r, n, len, tab_off + off)) {
			free(n ?: s);
			return NULL;
		}
		s = n;
		s[len] = '\0';
		if (strlen(s) < len)
			return s;
		if (len < want || want >= NAME_MAX_LEN) {
			free(s);
			return NULL;
		}
		want *= 4;
	}
}

/*
 * A walk's buffers are mapped anonymous memory of their own, not the heap's: glibc serves a
 * block freed once from its heap after that, and the heap keeps what it grew by. Unmapped,
 * a walk's megabytes go back at its end.
 */
static void *buf_get(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void buf_put(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

int elfread__syms_open(struct elfread_syms *t, struct elfread *r, Elf64_Word type)
{
	size_t fsize = gelf_fsize(r->e, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr sh, strsh;
	__u64 end = r->st.st_size;

	*t = (struct elfread_syms){ .r = r, .is64 = gelf_getclass(r->e) == ELFCLASS64 };
	while ((scn = elf_nextscn(r->e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			break;
	if (!scn)
		return -ENOENT;
	strscn = elf_getscn(r->e, sh.sh_link);
	/* Tables that the file holds, whole, of entries of the size libelf converts. */
	if (!fsize || sh.sh_entsize != fsize || !strscn || !gelf_getshdr(strscn, &strsh) ||
	    strsh.sh_type != SHT_STRTAB || sh.sh_offset > end || sh.sh_size > end - sh.sh_offset ||
	    strsh.sh_offset > end || strsh.sh_size > end - strsh.sh_offset)
		return -ENOEXEC;
	t->shndx = elf_ndxscn(scn);
	t->n = sh.sh_size / fsize;
	t->off = sh.sh_offset;
	t->entsize = fsize;
	t->str_off = strsh.sh_offset;
	t->str_size = strsh.sh_size;
	t->win = buf_get(SYMS_WINDOW * fsize);
	return t->win ? 0 : -ENOMEM;
}

void elfread__syms_close(struct elfread_syms *t)
{
	buf_put(t->win, SYMS_WINDOW * t->entsize);
	buf_put(t->names, t->names_cap);
	t->win = NULL;
	t->names = NULL;
	t->names_cap = 0;
}

/* Symbols from i on into the window, converted to memory form. */
static int syms_window(struct elfread_syms *t, size_t i)
{
	Elf_Data d = { .d_type = ELF_T_SYM, .d_version = EV_CURRENT, .d_buf = t->win };
	size_t n = t->n - i < SYMS_WINDOW ? t->n - i : SYMS_WINDOW;
	GElf_Ehdr eh;
	int err;

	t->win_n = 0;
	err = elfread__pread(t->r, t->win, n * t->entsize, t->off + i * t->entsize);
	if (err)
		return err;
	d.d_size = n * t->entsize;
	/* In place: the file and memory forms of a symbol are the same size. */
	if (!gelf_getehdr(t->r->e, &eh) || !gelf_xlatetom(t->r->e, &d, &d, eh.e_ident[EI_DATA]))
		return -ENOEXEC;
	t->win_first = i;
	t->win_n = n;
	return 0;
}

int elfread__sym(struct elfread_syms *t, size_t i, GElf_Sym *sym)
{
	int err;

	if (i >= t->n)
		return -ERANGE;
	if ((i < t->win_first || i - t->win_first >= t->win_n) && (err = syms_window(t, i)))
		return err;
	i -= t->win_first;
	if (t->is64) {
		*sym = ((const Elf64_Sym *)t->win)[i];
	} else {
		const Elf32_Sym *s = &((const Elf32_Sym *)t->win)[i];

		*sym = (GElf_Sym){ s->st_name,	s->st_info,  s->st_other,
				   s->st_shndx, s->st_value, s->st_size };
	}
	return 0;
}

/* String table bytes [at, at + len) into the names buffer; 0 or an error. */
static int names_read(struct elfread_syms *t, __u64 at, size_t len)
{
	int err;

	if (len > t->names_cap) {
		char *n = buf_get(len);

		if (!n)
			return -ENOMEM;
		buf_put(t->names, t->names_cap);
		t->names = n;
		t->names_cap = len;
	}
	t->names_len = 0;
	err = elfread__pread(t->r, t->names, len, t->str_off + at);
	if (err)
		return err;
	t->names_at = at;
	t->names_len = len;
	return 0;
}

const char *elfread__sym_name(struct elfread_syms *t, __u32 st_name)
{
	size_t want = NAMES_WINDOW;

	if (st_name >= t->str_size)
		return NULL;
	t->names_served++;
	if (st_name >= t->names_at && st_name < t->names_at + t->names_len &&
	    memchr(t->names + (st_name - t->names_at), '\0',
		   t->names_len - (st_name - t->names_at)))
		return t->names + (st_name - t->names_at);
	/* Windows that serve a name or two: names in no order of their symbols. */
	if (++t->names_loads > NAMES_JUDGE && t->names_served < t->names_loads * NAMES_PER_WINDOW &&
	    t->names_len < t->str_size && t->str_size <= NAMES_WHOLE_MAX) {
		if (names_read(t, 0, t->str_size))
			return NULL;
		return memchr(t->names + st_name, '\0', t->str_size - st_name) ?
			       t->names + st_name :
			       NULL;
	}
	for (;;) {
		size_t len = t->str_size - st_name < want ? t->str_size - st_name : want;

		if (names_read(t, st_name, len))
			return NULL;
		if (memchr(t->names, '\0', len))
			return t->names;
		/* Unterminated at the table's end, or longer than any name worth reading. */
		if (len < want || want >= NAME_MAX_LEN)
			return NULL;
		want *= 2;
	}
}

/* A file said to have changed, by device and inode. */
struct said {
	dev_t dev;
	ino_t ino;
};

static struct said *said;
static size_t nsaid, capsaid;
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;

/* shown as its process names it: /proc/PID/root/PATH is PATH, a map_files link's target. */
static const char *process_path(const char *shown, char *buf, size_t size)
{
	unsigned int pid;
	int at = 0;
	ssize_t n;

	if (sscanf(shown, "/proc/%u/root%n", &pid, &at) == 1 && at && shown[at] == '/')
		return shown + at;
	if (sscanf(shown, "/proc/%u/map_files/%n", &pid, &at) == 1 && at &&
	    (n = readlink(shown, buf, size - 1)) > 0) {
		buf[n] = '\0';
		return buf;
	}
	return shown;
}

void elfread__say_changed(const struct elfread *r, const char *shown)
{
	char path[PATH_MAX], esc[ESC_TEXT_MAX];
	bool first = true;

	pthread_mutex_lock(&said_lock);
	for (size_t i = 0; i < nsaid && first; i++)
		first = said[i].dev != r->st.st_dev || said[i].ino != r->st.st_ino;
	if (first && !array__grow((void **)&said, &capsaid, sizeof(*said), nsaid + 1, 16))
		said[nsaid++] = (struct said){ r->st.st_dev, r->st.st_ino };
	pthread_mutex_unlock(&said_lock);
	if (first) {
		shown = process_path(shown, path, sizeof(path));
		fprintf(stderr, "gapscope: %s changed while read: its frames unnamed\n",
			esc__text(esc, sizeof(esc), shown, SIZE_MAX));
	}
}
