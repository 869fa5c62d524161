// SPDX-License-Identifier: GPL-2.0
/* Python interpreters in recorded processes, and their code objects named: see pycode.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "escape.h"
#include "record.skel.h"
#include "trace_out.h"
#include "pycode.h"
#include "pyoffsets.h"
#include "trace.h"
#include "vec.h"

#define PY_NAME_MAX  1024	/* characters of a name or file kept */
#define PY_TABLE_MAX (64 << 10) /* bytes of a line table read */

struct pyproc {
	pid_t tgid;
	bool done;  /* an interpreter found (or refused): later mappings are not looked at */
	bool armed; /* the BPF side told (or given up): pycode__tick looks no more */
	unsigned int tries;
	char shown[256];
	struct py_layout l;
	__u64 code_type; /* PyCode_Type in the process, 0: not checked */
};

struct code_key {
	__u64 code;
	__u32 tgid;
	__u32 used;
};

struct pycode {
	struct record_bpf *skel;
	struct trace_out *out;
	struct pyproc *procs;
	size_t nprocs, capprocs;
	struct code_key *seen; /* open addressing, a power of two */
	size_t nseen, capseen;
	bool marked; /* TRACE_F_PYCODE set */
};

struct pycode *pycode__new(struct record_bpf *skel, struct trace_out *out)
{
	struct pycode *pc = calloc(1, sizeof(*pc));

	if (pc) {
		pc->skel = skel;
		pc->out = out;
	}
	return pc;
}

void pycode__free(struct pycode *pc)
{
	if (!pc)
		return;
	free(pc->procs);
	free(pc->seen);
	free(pc);
}

static struct pyproc *proc_find(struct pycode *pc, pid_t tgid)
{
	for (size_t i = 0; i < pc->nprocs; i++)
		if (pc->procs[i].tgid == tgid)
			return &pc->procs[i];
	return NULL;
}

static struct pyproc *proc_add(struct pycode *pc, pid_t tgid)
{
	if (array__grow((void **)&pc->procs, &pc->capprocs, sizeof(*pc->procs), pc->nprocs + 1, 8))
		return NULL;
	pc->procs[pc->nprocs] = (struct pyproc){ .tgid = tgid };
	return &pc->procs[pc->nprocs++];
}

static int peek(pid_t tgid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };

	return process_vm_readv(tgid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* One more pycode loss: the per-CPU counter's first CPU, which BPF never writes for it. */
static void count_loss(struct pycode *pc)
{
	int ncpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(pc->skel->maps.losses);
	__u32 key = GS_LOSS_PYCODE;
	__u64 *v;

	if (ncpus <= 0 || !(v = calloc(ncpus, sizeof(*v))))
		return;
	if (!bpf_map_lookup_elem(fd, &key, v)) {
		v[0]++;
		bpf_map_update_elem(fd, &key, v, BPF_ANY);
	}
	free(v);
}

#define RT_SCAN	    1024 /* bytes of _PyRuntime looked through for the interpreters' list */
#define INTERP_SCAN 8192 /* bytes of PyInterpreterState looked through for its threads' */

/* A thread state at ts that is the head of interp's list: its prev NULL, its interp interp. */
static bool is_head(pid_t tgid, __u64 ts, __u64 interp)
{
	__u64 v[3]; /* PyThreadState: prev, next, interp, in every version read here */

	return ts && !(ts & 7) && !peek(tgid, ts, v, sizeof(v)) && !v[0] && v[2] == interp;
}

/*
 * The two offsets that find a thread's state, checked against the running interpreter: the
 * version's own first; where those do not hold (a build of its own, a layout the table has
 * wrong), the first pair in the structures' first bytes that does. 1: found; 0: not (yet: an
 * interpreter that has not started has no thread); -1: the process cannot be read.
 */
static int find_threads(pid_t tgid, struct py_offsets *o, bool *moved)
{
	static __u64 rt[RT_SCAN / 8], is[INTERP_SCAN / 8];
	__u64 interp = 0, ts = 0;

	*moved = false;
	if (peek(tgid, o->runtime + o->rt_interp_head, &interp, 8))
		return -1;
	if (interp && !peek(tgid, interp + o->interp_threads, &ts, 8) && is_head(tgid, ts, interp))
		return 1;
	if (peek(tgid, o->runtime, rt, sizeof(rt)))
		return -1;
	for (__u32 i = 0; i < RT_SCAN / 8; i++) {
		if (!rt[i] || (rt[i] & 7) || peek(tgid, rt[i], is, sizeof(is)))
			continue;
		for (__u32 k = 0; k < INTERP_SCAN / 8; k++) {
			if (!is_head(tgid, is[k], rt[i]))
				continue;
			o->rt_interp_head = i * 8;
			o->interp_threads = k * 8;
			*moved = true;
			return 1;
		}
	}
	return 0;
}

#define ARM_TRIES 200 /* looks, 50 ms apart, for an interpreter's first thread: 10 s */

/*
 * Whether the collector's flag is where the layout says: an int of 0 or 1 in the running
 * interpreter, in a layout whose thread states were where the version has them (a build of its
 * own that moved those moved this too). Its GIL's last holder, where the layout has one, is
 * none yet or a thread state of that interpreter; where not, it is not looked at (*gil false).
 */
static bool gc_flag_holds(pid_t tgid, const struct py_offsets *o, bool moved, bool *gil)
{
	__u64 interp = 0, holder = 0, back = 0;
	__s32 v = -1;

	*gil = false;
	if (!o->interp_gc || moved || peek(tgid, o->runtime + o->rt_interp_head, &interp, 8) ||
	    !interp || peek(tgid, interp + o->interp_gc, &v, sizeof(v)) || (v != 0 && v != 1))
		return false;
	*gil = o->gil_holder &&
	       !peek(tgid, (o->gil_in_interp ? interp : o->runtime) + o->gil_holder, &holder, 8) &&
	       (!holder ||
		(!(holder & 7) && !peek(tgid, holder + o->ts_interp, &back, 8) && back == interp));
	return true;
}

/* The BPF side told where the interpreter is, once it runs (or given up). */
static void arm(struct pycode *pc, struct pyproc *p)
{
	bool moved, gil;
	int ret = find_threads(p->tgid, &p->l.bpf, &moved);
	char said[ESC_TEXT_MAX]; /* the interpreter's path, for a terminal */

	if (!ret && ++p->tries < ARM_TRIES)
		return; /* not started yet: pycode__tick looks again */
	p->armed = true;
	if (ret <= 0) {
		fprintf(stderr,
			"gapscope: warning: pid %d: Python %u.%u (%s): no thread state where its "
			"version has them: no Python frames\n",
			p->tgid, p->l.major, p->l.minor,
			esc__text(said, sizeof(said), p->shown, SIZE_MAX));
		return;
	}
	if (!gc_flag_holds(p->tgid, &p->l.bpf, moved, &gil))
		p->l.bpf.interp_gc = 0;
	if (!gil)
		p->l.bpf.gil_holder = 0;
	if (bpf_map_update_elem(bpf_map__fd(pc->skel->maps.py_procs), &(__u32){ p->tgid },
				&p->l.bpf, BPF_ANY)) {
		fprintf(stderr, "gapscope: warning: pid %d: no Python frames: %s\n", p->tgid,
			strerror(errno));
		return;
	}
	fprintf(stderr, "gapscope: pid %d: Python %u.%u (%s): frames read, offsets from %s%s%s\n",
		p->tgid, p->l.major, p->l.minor, esc__text(said, sizeof(said), p->shown, SIZE_MAX),
		p->l.from_debug ? "its debug offsets" : "the table",
		moved ? " (its thread states found elsewhere)" : "",
		!p->l.bpf.interp_gc  ? "; its collector not seen" :
		!p->l.bpf.gil_holder ? "; its collector seen, not its GIL's holder" :
				       "");
}

void pycode__map(struct pycode *pc, pid_t tgid, const char *file, const char *shown, __u64 start,
		 __u64 pgoff)
{
	const char *base = strrchr(shown, '/');
	struct pyproc *p = proc_find(pc, tgid);
	struct py_interp in;
	char err[128] = "";
	int ret;

	if ((p && p->done) || !strstr(base ? base : shown, "python"))
		return;
	ret = pyoffsets__probe(file, shown, pgoff, &in, err, sizeof(err));
	if (ret == -ENOENT ||
	    (ret && file != shown &&
	     (ret = pyoffsets__probe(shown, shown, pgoff, &in, err, sizeof(err))) == -ENOENT))
		return; /* no interpreter in this file (a python that maps a libpython) */
	if (!p && !(p = proc_add(pc, tgid)))
		return;
	p->done = true;
	if (ret) {
		p->armed = true;
		char said[ESC_TEXT_MAX];

		fprintf(stderr, "gapscope: warning: pid %d: %s: %s: no Python frames\n", tgid,
			esc__text(said, sizeof(said), shown, SIZE_MAX),
			err[0] ? err : strerror(-ret));
		return;
	}
	snprintf(p->shown, sizeof(p->shown), "%s", shown);
	p->l = in.layout;
	p->l.bpf.runtime = start + (in.runtime_vaddr - in.map_vaddr);
	p->code_type = in.code_type_vaddr ? start + (in.code_type_vaddr - in.map_vaddr) : 0;
	arm(pc, p);
}

void pycode__tick(struct pycode *pc)
{
	for (size_t i = 0; i < pc->nprocs; i++)
		if (pc->procs[i].done && !pc->procs[i].armed)
			arm(pc, &pc->procs[i]);
}

void pycode__exec(struct pycode *pc, pid_t tgid)
{
	struct pyproc *p = proc_find(pc, tgid);

	if (!p)
		return;
	bpf_map_delete_elem(bpf_map__fd(pc->skel->maps.py_procs), &(__u32){ tgid });
	*p = pc->procs[--pc->nprocs];
	/* Its code objects' addresses mean other code from now on. */
	for (size_t i = 0; i < pc->capseen; i++)
		if (pc->seen[i].used && pc->seen[i].tgid == (__u32)tgid)
			pc->seen[i].tgid = 0; /* no process has tgid 0: never found again */
}

static size_t slot_of(const struct pycode *pc, __u32 tgid, __u64 code)
{
	__u64 h = (code >> 4) * 0x9e3779b97f4a7c15ull ^ tgid;

	return (h ^ (h >> 29)) & (pc->capseen - 1);
}

/* Whether (tgid, code) was seen before; it is from now on. */
static bool seen(struct pycode *pc, __u32 tgid, __u64 code)
{
	size_t i;

	if (2 * (pc->nseen + 1) > pc->capseen) {
		size_t cap = array__cap(pc->capseen, sizeof(*pc->seen), pc->capseen + 1, 1024);
		struct code_key *old = pc->seen, *v = cap ? calloc(cap, sizeof(*v)) : NULL;

		if (!v)
			return true; /* out of memory: named no more */
		size_t oldcap = pc->capseen;

		pc->seen = v;
		pc->capseen = cap;
		for (size_t k = 0; k < oldcap; k++) {
			if (!old[k].used)
				continue;
			for (i = slot_of(pc, old[k].tgid, old[k].code); v[i].used;
			     i = (i + 1) & (cap - 1))
				;
			v[i] = old[k];
		}
		free(old);
	}
	for (i = slot_of(pc, tgid, code); pc->seen[i].used; i = (i + 1) & (pc->capseen - 1))
		if (pc->seen[i].tgid == tgid && pc->seen[i].code == code)
			return true;
	pc->seen[i] = (struct code_key){ .code = code, .tgid = tgid, .used = 1 };
	pc->nseen++;
	return false;
}

/* A str object's text as UTF-8 into buf (at most PY_NAME_MAX characters): 0, or -1. */
static int read_str(pid_t tgid, const struct py_layout *l, __u64 addr, char *buf, size_t cap)
{
	__u8 hdr[80];
	__u64 len = 0;
	__u32 state = 0, kind, i, o = 0;
	static __u8 raw[4 * PY_NAME_MAX];

	if (!addr || peek(tgid, addr, hdr, sizeof(hdr)))
		return -1;
	memcpy(&len, hdr + l->str_length, 8);
	memcpy(&state, hdr + l->str_state, 4);
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -1; /* not compact: a string made by a C extension, not a code object's */
	if (len > PY_NAME_MAX)
		len = PY_NAME_MAX;
	if (peek(tgid, addr + ((state >> 6) & 1 ? l->str_ascii_data : l->str_compact_data), raw,
		 len * kind))
		return -1;
	for (i = 0; i < len; i++) {
		__u32 c = kind == 1 ? raw[i] : kind == 2 ? ((__u16 *)raw)[i] : ((__u32 *)raw)[i];

		if (o + 5 > cap)
			break;
		if (c < 0x80) {
			buf[o++] = c;
		} else if (c < 0x800) {
			buf[o++] = 0xc0 | c >> 6;
			buf[o++] = 0x80 | (c & 63);
		} else if (c < 0x10000) {
			buf[o++] = 0xe0 | c >> 12;
			buf[o++] = 0x80 | ((c >> 6) & 63);
			buf[o++] = 0x80 | (c & 63);
		} else {
			buf[o++] = 0xf0 | c >> 18;
			buf[o++] = 0x80 | ((c >> 12) & 63);
			buf[o++] = 0x80 | ((c >> 6) & 63);
			buf[o++] = 0x80 | (c & 63);
		}
	}
	buf[o] = 0;
	return 0;
}

/* The code object at code, read and written as a GS_REC_PYCODE: 0, or -1. */
static int name_code(struct pycode *pc, const struct pyproc *p, __u64 code)
{
	static char name[4 * PY_NAME_MAX + 8], file[4 * PY_NAME_MAX + 8];
	static __u8 obj[512], tab[PY_TABLE_MAX];
	const struct py_layout *l = &p->l;
	struct gs_pyline *lines = NULL;
	struct gs_rec_pycode *r;
	__u64 type, names, files, table, tlen = 0;
	__s32 first;
	__u32 nlines = 0;
	size_t nlen, flen, size;

	size_t need = l->co_linetable;

	need = l->co_name > need ? l->co_name : need;
	need = l->co_filename > need ? l->co_filename : need;
	if (need + 8 > sizeof(obj) || peek(p->tgid, code, obj, need + 8))
		return -1;
	memcpy(&type, obj + 8, 8);
	if (p->code_type && type != p->code_type)
		return -1; /* freed since, and the memory holds something else */
	memcpy(&names, obj + l->co_name, 8);
	memcpy(&files, obj + l->co_filename, 8);
	memcpy(&table, obj + l->co_linetable, 8);
	memcpy(&first, obj + l->co_firstlineno, 4);
	if (read_str(p->tgid, l, names, name, sizeof(name)) ||
	    read_str(p->tgid, l, files, file, sizeof(file)))
		return -1;
	if (table && !peek(p->tgid, table + l->bytes_size, &tlen, 8) && tlen <= PY_TABLE_MAX &&
	    !peek(p->tgid, table + l->bytes_data, tab, tlen))
		pyoffsets__lines(l->lines, tab, tlen, first, &lines, &nlines);
	nlen = strlen(name) + 1;
	flen = strlen(file) + 1;
	size = sizeof(*r) + nlines * sizeof(*lines) + nlen + flen;
	r = calloc(1, size + 8);
	if (!r) {
		free(lines);
		return -1;
	}
	trace_out__hdr(&r->h, GS_REC_PYCODE, size, p->tgid);
	r->code = code;
	r->firstlineno = first;
	r->nlines = nlines;
	r->name_len = nlen;
	r->file_len = flen;
	if (nlines)
		memcpy(r->lines, lines, nlines * sizeof(*lines));
	memcpy((char *)(r->lines + nlines), name, nlen);
	memcpy((char *)(r->lines + nlines) + nlen, file, flen);
	trace_out__append(pc->out, r, size);
	free(r);
	free(lines);
	if (!pc->marked && pc->out->tw) {
		pc->marked = true;
		if (trace__set_flags(pc->out->tw, TRACE_F_PYCODE))
			fprintf(stderr,
				"gapscope: warning: %s: cannot mark the trace's Python code\n",
				pc->out->path);
	}
	return 0;
}

void pycode__event(struct pycode *pc, const struct gs_hdr *h)
{
	const struct pystack_event *e = (const void *)h;
	const struct pyproc *p;
	__u32 n;

	if (h->size < offsetof(struct pystack_event, f) || !(p = proc_find(pc, h->tgid)))
		return;
	n = (h->size - offsetof(struct pystack_event, f)) / sizeof(struct py_frame);
	if (n > e->n)
		n = e->n;
	for (__u32 i = 0; i < n; i++)
		if (e->f[i].code && !seen(pc, h->tgid, e->f[i].code) &&
		    name_code(pc, p, e->f[i].code))
			count_loss(pc);
}
