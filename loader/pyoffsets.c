// SPDX-License-Identifier: GPL-2.0
/* Where a CPython's structures are, and how its line tables read: see pyoffsets.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <libelf.h>

#include "elfread.h"
#include "pyoffsets.h"

/*
 * The table, x86-64, from the versions' own headers (Include/cpython/pystate.h, code.h,
 * frameobject.h, and the internal pycore_interp.h, pycore_frame.h, pycore_runtime.h, pycore_gc.h):
 * the same in every release of a version, which keeps these structures' layout within it. The
 * collector's flag is PyInterpreterState.gc (struct _gc_runtime_state) plus its `collecting`,
 * 200 bytes in, in every version here (the three generations and their statistics before it);
 * the GIL's last holder is _PyRuntime's (3.10, 3.11), then each interpreter's own (3.12: its
 * _gil, where the main interpreter's ceval.gil points).
 * tests/unit/test_pyoffsets.c holds the row of the local interpreter's version to its headers.
 */
static const struct py_layout table[] = {
	{
		.major = 3,
		.minor = 10,
		.bpf = { .version = 0x30a,
			 .rt_interp_head = 40,
			 .interp_next = 0,
			 .interp_threads = 8,
			 .ts_next = 8,
			 .ts_thread_id = 176,
			 .ts_frame = 24,
			 .fr_previous = 24, /* PyFrameObject.f_back */
			 .fr_code = 32,
			 .fr_instr = 96, /* f_lasti */
			 .ts_interp = 16,
			 .interp_gc = 616 + 200,
			 .gil_holder = 360, /* _PyRuntime.ceval.gil.last_holder */
			 .instr_kind = PY_INSTR_LASTI,
			 .entry_kind = PY_ENTRY_EVERY },
		.co_name = 112, /* no qualified name before 3.11 */
		.co_filename = 104,
		.co_firstlineno = 40,
		.co_linetable = 120,
		.str_ascii_data = 48,
		.str_compact_data = 72,
		.lines = PY_LINES_310,
	},
	{
		.major = 3,
		.minor = 11,
		.bpf = { .version = 0x30b,
			 .rt_interp_head = 40,
			 .interp_next = 0,
			 .interp_threads = 16,
			 .ts_next = 8,
			 .ts_thread_id = 152,
			 .ts_frame = 56, /* cframe */
			 .cframe_current = 8,
			 .has_cframe = 1,
			 .fr_previous = 48,
			 .fr_code = 32,
			 .fr_instr = 56, /* prev_instr */
			 .fr_entry = 68, /* is_entry */
			 .code_adaptive = 184,
			 .ts_interp = 16,
			 .interp_gc = 648 + 200,
			 .gil_holder = 368,
			 .instr_kind = PY_INSTR_PTR,
			 .entry_kind = PY_ENTRY_FLAG },
		.co_name = 128, /* co_qualname */
		.co_filename = 112,
		.co_firstlineno = 72,
		.co_linetable = 136,
		.str_ascii_data = 48,
		.str_compact_data = 72,
		.lines = PY_LINES_311,
	},
	{
		.major = 3,
		.minor = 12,
		.bpf = { .version = 0x30c,
			 .rt_interp_head = 40,
			 .interp_next = 0,
			 .interp_threads = 72,
			 .ts_next = 8,
			 .ts_thread_id = 136,
			 .ts_frame = 56, /* cframe */
			 .cframe_current = 0,
			 .has_cframe = 1,
			 .fr_previous = 8,
			 .fr_code = 0,
			 .fr_instr = 56, /* prev_instr */
			 .fr_entry = 70, /* owner */
			 .code_adaptive = 192,
			 .ts_interp = 16,
			 .interp_gc = 112 + 200,
			 .gil_holder = 1048, /* PyInterpreterState._gil.last_holder */
			 .gil_in_interp = 1,
			 .instr_kind = PY_INSTR_PTR,
			 .entry_kind = PY_ENTRY_CSTACK },
		.co_name = 128,
		.co_filename = 112,
		.co_firstlineno = 68,
		.co_linetable = 136,
		.str_ascii_data = 40, /* no wstr from 3.12 on */
		.str_compact_data = 56,
		.lines = PY_LINES_311,
	},
};

/* What every version here shares: PyObject, PyBytesObject, PyASCIIObject's first fields. */
static void common(struct py_layout *l)
{
	l->bytes_size = 16;
	l->bytes_data = 32;
	l->str_length = 16;
	l->str_state = 32;
}

int pyoffsets__table(unsigned int major, unsigned int minor, struct py_layout *out)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].major == major && table[i].minor == minor) {
			*out = table[i];
			common(out);
			return 0;
		}
	return -ENOENT;
}

/*
 * 3.13's _Py_DebugOffsets: every field a uint64_t, in sections that each start with their
 * structure's size (runtime, interpreter, thread, frame, code object, ...). Where each section
 * starts, in words: 3.13 as released (after the cookie, the version and free_threaded; thirteen
 * interpreter fields), and its pre-releases (no free_threaded, eleven interpreter fields). A
 * layout is taken only where every offset read lies inside its structure's size. The collector's
 * section (its size, then `collecting`) comes last, after nine sections of objects the release
 * lays out in 29 words; a pre-release's is not read (gc 0), and a release's that does not hold
 * together leaves the collector unread, the frames read still. The GIL's holder is the last of
 * the release's thirteen interpreter words.
 */
struct do_sections {
	int rt, is, ts, fr, co, gc;
};

static const struct do_sections do_layouts[] = {
	{ 3, 6, 19, 28, 34, 71 },
	{ 2, 5, 16, 25, 31, 0 },
};

static bool inside(const __u64 *w, int section, int field)
{
	return w[section] && w[section] < (1u << 24) && w[section + field] < w[section];
}

int pyoffsets__from_debug(const void *buf, size_t len, struct py_layout *out)
{
	const __u64 *w = buf;

	if (len < DO_WORDS * 8 || memcmp(buf, "xdebugpy", 8) || ((w[1] >> 24) & 0xff) != 3 ||
	    ((w[1] >> 16) & 0xff) != 13)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(do_layouts) / sizeof(do_layouts[0]); i++) {
		const struct do_sections *d = &do_layouts[i];

		if (!inside(w, d->rt, 2) || !inside(w, d->is, 2) || !inside(w, d->is, 3) ||
		    !inside(w, d->ts, 2) || !inside(w, d->ts, 3) || !inside(w, d->ts, 4) ||
		    !inside(w, d->ts, 5) || !inside(w, d->fr, 1) || !inside(w, d->fr, 2) ||
		    !inside(w, d->fr, 3) || !inside(w, d->fr, 5) || !inside(w, d->co, 1) ||
		    !inside(w, d->co, 3) || !inside(w, d->co, 4) || !inside(w, d->co, 5) ||
		    w[d->co + 9] > w[d->co] || w[d->co + 9] < w[d->co + 5])
			continue;
		*out = (struct py_layout){
			.major = 3,
			.minor = 13,
			.from_debug = true,
			.bpf = { .version = 0x30d,
				 .rt_interp_head = w[d->rt + 2],
				 .interp_next = w[d->is + 2],
				 .interp_threads = w[d->is + 3],
				 .ts_next = w[d->ts + 2],
				 .ts_frame = w[d->ts + 4], /* current_frame */
				 .ts_thread_id = w[d->ts + 5],
				 .fr_previous = w[d->fr + 1],
				 .fr_code = w[d->fr + 2],  /* f_executable */
				 .fr_instr = w[d->fr + 3], /* instr_ptr */
				 .fr_entry = w[d->fr + 5], /* owner */
				 .ts_interp = w[d->ts + 3],
				 .code_adaptive = w[d->co + 9],
				 .instr_kind = PY_INSTR_PTR,
				 .entry_kind = PY_ENTRY_CSTACK },
			.co_name = w[d->co + 3], /* co_qualname */
			.co_filename = w[d->co + 1],
			.co_linetable = w[d->co + 4],
			.co_firstlineno = w[d->co + 5],
			.str_ascii_data = 40,
			.str_compact_data = 56,
			.lines = PY_LINES_311,
		};
		/* interpreter_state.gc, then gc.collecting: an int inside its structure; the GIL's
		 * holder, gil_runtime_state_holder, in the interpreter. A free-threaded build (word
		 * 2) has none: its marks are the flag's alone. */
		if (d->gc && inside(w, d->is, 4) && inside(w, d->gc, 1) &&
		    w[d->gc + 1] + 4 <= w[d->gc] && w[d->is + 4] + w[d->gc] <= w[d->is]) {
			out->bpf.interp_gc = w[d->is + 4] + w[d->gc + 1];
			if (!w[2] && inside(w, d->is, 12)) {
				out->bpf.gil_holder = w[d->is + 12];
				out->bpf.gil_in_interp = 1;
			}
		}
		common(out);
		return 0;
	}
	return -EINVAL;
}

/* ---- the file ------------------------------------------------------------------------------- */

struct elf_syms {
	__u64 runtime, version, code_type;
};

/* The symbols looked for, from .dynsym and .symtab, read in windows (elfread.h). */
static void find_syms(struct elfread *r, struct elf_syms *s)
{
	const Elf64_Word types[] = { SHT_DYNSYM, SHT_SYMTAB };

	for (size_t k = 0; k < 2; k++) {
		struct elfread_syms t;

		if (elfread__syms_open(&t, r, types[k]))
			continue;
		for (size_t i = 0; i < t.n; i++) {
			const char *name;
			GElf_Sym sym;

			if (elfread__sym(&t, i, &sym))
				break;
			if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
			    !(name = elfread__sym_name(&t, sym.st_name)))
				continue;
			if (!strcmp(name, "_PyRuntime"))
				s->runtime = sym.st_value;
			else if (!strcmp(name, "Py_Version"))
				s->version = sym.st_value;
			else if (!strcmp(name, "PyCode_Type"))
				s->code_type = sym.st_value;
		}
		elfread__syms_close(&t);
	}
}

/* len bytes at vaddr as the file initializes them: 0, or -1 outside its loaded contents. */
static int read_vaddr(struct elfread *r, __u64 vaddr, void *buf, size_t len)
{
	size_t n;

	if (elf_getphdrnum(r->e, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(r->e, i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr + len > ph.p_vaddr + ph.p_filesz)
			continue;
		return elfread__pread(r, buf, len, ph.p_offset + (vaddr - ph.p_vaddr)) ? -1 : 0;
	}
	return -1;
}

/* The address that file offset off loads at. */
static int offset_vaddr(Elf *e, __u64 off, __u64 *vaddr)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off < ph.p_offset + (ph.p_filesz ? ph.p_filesz : 1)) {
			*vaddr = ph.p_vaddr + (off - ph.p_offset);
			return 0;
		}
	}
	return -1;
}

/* major.minor from a name such as python3.12, libpython3.10.so.1.0 or python3.11d. */
static int version_from_name(const char *shown, unsigned int *major, unsigned int *minor)
{
	const char *base = strrchr(shown, '/'), *p;

	base = base ? base + 1 : shown;
	p = strstr(base, "python");
	return p && sscanf(p + 6, "%u.%u", major, minor) == 2 ? 0 : -1;
}

int pyoffsets__probe(const char *path, const char *shown, __u64 pgoff, struct py_interp *out,
		     char *err, size_t errlen)
{
	struct elf_syms s = {};
	unsigned int major = 0, minor = 0;
	__u64 hex = 0, dbg[DO_WORDS];
	struct elfread r;
	int ret = -ENOENT, rc;

	/* The target's file, read with pread: its owner may truncate it meanwhile (elfread.h). */
	rc = elfread__open(&r, path);
	if (rc)
		return rc == -ENOEXEC ? -ENOENT : rc;
	find_syms(&r, &s);
	if (!s.runtime)
		goto out; /* the python of a shared libpython: the library has it */
	memset(out, 0, sizeof(*out));
	if (s.version && !read_vaddr(&r, s.version, &hex, sizeof(hex)) && hex) {
		major = (hex >> 24) & 0xff;
		minor = (hex >> 16) & 0xff;
	} else if (version_from_name(shown, &major, &minor)) {
		snprintf(err, errlen, "no version found in %s", shown);
		ret = -EINVAL;
		goto out;
	}
	if (major == 3 && minor == 13) {
		ret = read_vaddr(&r, s.runtime, dbg, sizeof(dbg)) ?
			      -EINVAL :
			      pyoffsets__from_debug(dbg, sizeof(dbg), &out->layout);
		if (ret)
			snprintf(err, errlen, "Python 3.13 without readable debug offsets");
	} else {
		ret = pyoffsets__table(major, minor, &out->layout);
		if (ret) {
			snprintf(err, errlen, "Python %u.%u not supported (3.10 to 3.13 are)",
				 major, minor);
			ret = -ENOTSUP;
		}
	}
	if (!ret && offset_vaddr(r.e, pgoff, &out->map_vaddr)) {
		snprintf(err, errlen, "no segment at offset 0x%llx", (unsigned long long)pgoff);
		ret = -EINVAL;
	}
	out->runtime_vaddr = s.runtime;
	out->code_type_vaddr = s.code_type;
out:
	if (elfread__changed(&r)) {
		snprintf(err, errlen, "changed while read");
		ret = -ESTALE;
	}
	elfread__close(&r);
	return ret;
}

/* ---- line tables ---------------------------------------------------------------------------- */

struct lines {
	struct gs_pyline *v;
	__u32 n, cap;
};

/* From start on, line (-1: none); a range of no bytes gives way to the next at its start. */
static int push(struct lines *l, __u32 start, int line)
{
	if (l->n && l->v[l->n - 1].start == start) {
		l->v[l->n - 1].line = line;
	} else if (!l->n || l->v[l->n - 1].line != line) {
		if (l->n == l->cap) {
			__u32 cap = l->cap ? 2 * l->cap : 32;
			struct gs_pyline *v = realloc(l->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			l->v = v;
			l->cap = cap;
		}
		l->v[l->n++] = (struct gs_pyline){ start, line };
	}
	/* Two neighbours of the same line are one range. */
	if (l->n >= 2 && l->v[l->n - 2].line == l->v[l->n - 1].line)
		l->n--;
	return 0;
}

/* 3.10: (bytes, line delta) pairs; a delta of -128 is a range without a line. */
static int lines_310(struct lines *l, const __u8 *p, size_t len, int line)
{
	__u32 end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		__u32 start = end;
		int d = (__s8)p[i + 1];

		end += p[i];
		if (d != -128)
			line += d;
		if (end > start && push(l, start, d == -128 ? -1 : line))
			return -ENOMEM;
	}
	return 0;
}

static int varint(const __u8 **p, const __u8 *end, unsigned int *v)
{
	unsigned int shift = 0;
	__u8 b;

	*v = 0;
	do {
		if (*p >= end || shift > 28)
			return -1;
		b = *(*p)++;
		*v |= (unsigned int)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return 0;
}

static int svarint(const __u8 **p, const __u8 *end, int *v)
{
	unsigned int u;

	if (varint(p, end, &u))
		return -1;
	*v = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
	return 0;
}

/* 3.11+: entries of (code units, what the line does); see CPython's Objects/locations.md. */
static int lines_311(struct lines *l, const __u8 *p, size_t len, int line)
{
	const __u8 *end = p + len;
	__u32 addr = 0;

	while (p < end) {
		__u8 b = *p++;
		int code = (b >> 3) & 15, d = 0, has = 1;
		unsigned int skip;

		if (!(b & 0x80))
			return -EINVAL;
		switch (code) {
		case 15: /* no location */
			has = 0;
			break;
		case 14: /* long: line delta, end line delta, columns */
			if (svarint(&p, end, &d) || varint(&p, end, &skip) ||
			    varint(&p, end, &skip) || varint(&p, end, &skip))
				return -EINVAL;
			break;
		case 13: /* no columns */
			if (svarint(&p, end, &d))
				return -EINVAL;
			break;
		case 10:
		case 11:
		case 12: /* one line, delta code - 10, two column bytes */
			d = code - 10;
			p += 2;
			break;
		default: /* short: the same line, one column byte */
			p += 1;
		}
		if (p > end)
			return -EINVAL;
		line += d;
		if (push(l, addr * 2, has ? line : -1))
			return -ENOMEM;
		addr += (b & 7) + 1;
	}
	return 0;
}

int pyoffsets__lines(int kind, const __u8 *tab, size_t len, int firstlineno, struct gs_pyline **out,
		     __u32 *n)
{
	struct lines l = {};
	int ret = kind == PY_LINES_310 ? lines_310(&l, tab, len, firstlineno) :
		  kind == PY_LINES_311 ? lines_311(&l, tab, len, firstlineno) :
					 -EINVAL;

	if (ret) {
		free(l.v);
		return ret;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}
