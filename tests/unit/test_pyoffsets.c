// SPDX-License-Identifier: GPL-2.0
/*
 * loader/pyoffsets.c against the local interpreter: the table's row of the version whose headers
 * this test is built with (python3-dev, Py_BUILD_CORE: the internal structures) equals the
 * compiler's own offsets; the interpreter's file is found to be that version with _PyRuntime and
 * PyCode_Type; its line tables, taken from code objects of the interpreter itself, decode to the
 * lines co_lines() gives at every instruction; 3.13's debug offsets are read from a buffer laid
 * out as 3.13 lays them, and refused when damaged.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>

#include "pyoffsets.h"
#include "testlib.h"

#define OFF(type, field) ((unsigned long long)offsetof(type, field))

static void check_table(void)
{
	struct py_layout l;
	const struct py_offsets *o = &l.bpf;

	CHECK(!pyoffsets__table(PY_MAJOR_VERSION, PY_MINOR_VERSION, &l), "no row for %d.%d",
	      PY_MAJOR_VERSION, PY_MINOR_VERSION);
	CHECK_EQ_U64(o->version, PY_MAJOR_VERSION << 8 | PY_MINOR_VERSION);
	CHECK_EQ_U64(o->rt_interp_head, OFF(_PyRuntimeState, interpreters.head));
	CHECK_EQ_U64(o->interp_next, OFF(PyInterpreterState, next));
	CHECK_EQ_U64(o->ts_next, OFF(PyThreadState, next));
	CHECK_EQ_U64(o->ts_thread_id, OFF(PyThreadState, thread_id));
	CHECK_EQ_U64(16, OFF(PyThreadState, interp)); /* pycode.c's check of a layout */
	CHECK_EQ_U64(o->ts_interp, OFF(PyThreadState, interp));
	CHECK_EQ_U64(o->interp_gc, OFF(PyInterpreterState, gc.collecting));
	CHECK_EQ_U64(200, OFF(struct _gc_runtime_state, collecting)); /* the table's comment */
#if PY_MINOR_VERSION <= 11
	CHECK_EQ_U64(o->gil_holder, OFF(_PyRuntimeState, ceval.gil.last_holder));
	CHECK_EQ_U64(o->gil_in_interp, 0);
#else
	CHECK_EQ_U64(o->gil_holder, OFF(PyInterpreterState, _gil.last_holder));
	CHECK_EQ_U64(o->gil_in_interp, 1);
#endif
	CHECK_EQ_U64(l.co_filename, OFF(PyCodeObject, co_filename));
	CHECK_EQ_U64(l.co_firstlineno, OFF(PyCodeObject, co_firstlineno));
	CHECK_EQ_U64(l.co_linetable, OFF(PyCodeObject, co_linetable));
	CHECK_EQ_U64(l.bytes_size, OFF(PyVarObject, ob_size));
	CHECK_EQ_U64(l.bytes_data, OFF(PyBytesObject, ob_sval));
	CHECK_EQ_U64(l.str_length, OFF(PyASCIIObject, length));
	CHECK_EQ_U64(l.str_state, OFF(PyASCIIObject, hash) + sizeof(Py_hash_t));
	CHECK_EQ_U64(l.str_ascii_data, sizeof(PyASCIIObject));
	CHECK_EQ_U64(l.str_compact_data, sizeof(PyCompactUnicodeObject));
#if PY_MINOR_VERSION == 10
	CHECK_EQ_U64(o->interp_threads, OFF(PyInterpreterState, tstate_head));
	CHECK_EQ_U64(o->ts_frame, OFF(PyThreadState, frame));
	CHECK_EQ_U64(o->fr_previous, OFF(PyFrameObject, f_back));
	CHECK_EQ_U64(o->fr_code, OFF(PyFrameObject, f_code));
	CHECK_EQ_U64(o->fr_instr, OFF(PyFrameObject, f_lasti));
	CHECK_EQ_U64(l.co_name, OFF(PyCodeObject, co_name));
	CHECK_EQ_U64(l.lines, PY_LINES_310);
#else
	CHECK_EQ_U64(o->interp_threads, OFF(PyInterpreterState, threads.head));
	CHECK_EQ_U64(o->ts_frame, OFF(PyThreadState, cframe));
	CHECK_EQ_U64(o->cframe_current, OFF(_PyCFrame, current_frame));
	CHECK_EQ_U64(o->fr_previous, OFF(_PyInterpreterFrame, previous));
	CHECK_EQ_U64(o->fr_code, OFF(_PyInterpreterFrame, f_code));
	CHECK_EQ_U64(o->fr_instr, OFF(_PyInterpreterFrame, prev_instr));
	CHECK_EQ_U64(o->code_adaptive, OFF(PyCodeObject, co_code_adaptive));
	CHECK_EQ_U64(l.co_name, OFF(PyCodeObject, co_qualname));
	CHECK_EQ_U64(l.lines, PY_LINES_311);
#if PY_MINOR_VERSION == 11
	CHECK_EQ_U64(o->fr_entry, OFF(_PyInterpreterFrame, is_entry));
	CHECK_EQ_U64(o->entry_kind, PY_ENTRY_FLAG);
#else
	CHECK_EQ_U64(o->fr_entry, OFF(_PyInterpreterFrame, owner));
	CHECK_EQ_U64(PY_OWNED_BY_CSTACK, FRAME_OWNED_BY_CSTACK);
#endif
#endif
}

/* The interpreter's file: this version, _PyRuntime and PyCode_Type found. */
static void check_probe(const char *exe)
{
	struct py_interp in;
	char err[128] = "";
	int ret = pyoffsets__probe(exe, exe, 0, &in, err, sizeof(err));

	if (ret == -ENOENT) {
		/* A python whose interpreter is in libpython: that file holds it. */
		char cmd[512], lib[400] = "";
		FILE *f;

		snprintf(cmd, sizeof(cmd),
			 "ldd %s | sed -n 's/.*=> \\(.*libpython[^ ]*\\).*/\\1/p'", exe);
		f = popen(cmd, "r");
		CHECK(f && fgets(lib, sizeof(lib), f), "%s: no _PyRuntime and no libpython", exe);
		pclose(f);
		lib[strcspn(lib, "\n")] = 0;
		ret = pyoffsets__probe(lib, lib, 0, &in, err, sizeof(err));
	}
	CHECK(!ret, "%s: %s", exe, err);
	CHECK_EQ_U64(in.layout.major, PY_MAJOR_VERSION);
	CHECK_EQ_U64(in.layout.minor, PY_MINOR_VERSION);
	CHECK(in.runtime_vaddr && in.code_type_vaddr, "symbols");
	CHECK(in.runtime_vaddr > in.map_vaddr, "_PyRuntime past the file's start");
}

/*
 * Code objects of the interpreter (a module's functions of every shape): for each, its line
 * table and co_lines(); the decoded table gives each instruction co_lines()'s line.
 */
static void check_lines(const char *exe)
{
	static const char prog[] =
		"import dis, json, threading, asyncio.base_events as m\n"
		"codes = []\n"
		"def walk(c):\n"
		"    codes.append(c)\n"
		"    for k in c.co_consts:\n"
		"        if hasattr(k, 'co_code'): walk(k)\n"
		"for mod in (threading, m, dis, json):\n"
		"    walk(compile(open(mod.__file__).read(), mod.__file__, 'exec'))\n"
		"for c in codes:\n"
		"    print(c.co_firstlineno, c.co_linetable.hex(), len(c.co_code),\n"
		"          ','.join('%d:%d:%d' % (s, e, -1 if l is None else l)\n"
		"                   for s, e, l in c.co_lines()))\n";
	char cmd[256], *line = NULL;
	size_t cap = 0, ncode = 0, ninstr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s -c \"$PYOFF_PROG\"", exe);
	setenv("PYOFF_PROG", prog, 1);
	f = popen(cmd, "r");
	CHECK(f, "cannot run %s", exe);
	while (getline(&line, &cap, f) > 0) {
		char *hex = NULL, *ranges = NULL, *save = NULL;
		int first, ncodebytes;
		__u8 *tab;
		size_t len;
		struct gs_pyline *v;
		__u32 n;

		CHECK(sscanf(line, "%d %ms %d %ms", &first, &hex, &ncodebytes, &ranges) >= 3, "%s",
		      line);
		len = strlen(hex) / 2;
		tab = malloc(len + 1);
		for (size_t i = 0; i < len; i++)
			sscanf(hex + 2 * i, "%2hhx", &tab[i]);
		CHECK(!pyoffsets__lines(PY_MINOR_VERSION >= 11 ? PY_LINES_311 : PY_LINES_310, tab,
					len, first, &v, &n),
		      "table %s", hex);
		for (char *r = ranges ? strtok_r(ranges, ",", &save) : NULL; r;
		     r = strtok_r(NULL, ",", &save)) {
			int s, e, want;

			CHECK(sscanf(r, "%d:%d:%d", &s, &e, &want) == 3, "%s", r);
			for (int off = s; off < e; off += 2, ninstr++) {
				__u32 k = 0;

				while (k < n && v[k].start <= (__u32)off)
					k++;
				CHECK(k > 0 && v[k - 1].line == want,
				      "line %d at offset %d of the code at line %d, expected %d",
				      k ? v[k - 1].line : -2, off, first, want);
			}
		}
		free(v);
		free(tab);
		free(hex);
		free(ranges);
		ncode++;
	}
	free(line);
	CHECK(!pclose(f), "%s failed", exe);
	CHECK(ncode > 100, "only %zu code objects", ncode);
	printf("lines: %zu code objects, %zu instructions as co_lines() says\n", ncode, ninstr);
}

/* A 3.13 _Py_DebugOffsets as 3.13 lays it out (words by section), and a damaged one. */
static void check_debug(void)
{
	__u64 w[DO_WORDS + 8] = {};
	struct py_layout l;

	memcpy(w, "xdebugpy", 8);
	w[1] = 0x030d01f0;		       /* 3.13.1 final */
	w[3] = 2048, w[5] = 616;	       /* runtime: size, interpreters.head */
	w[6] = 1 << 16, w[8] = 8, w[9] = 7360; /* interpreter: size, next, threads.head */
	w[10] = 7400, w[18] = 7200;	       /* interpreter: gc, GIL's holder */
	w[19] = 1000, w[21] = 8, w[22] = 16;   /* thread: next, interp */
	w[23] = 72, w[24] = 152;	       /* thread: current_frame, id */
	w[28] = 80, w[29] = 8, w[30] = 0, w[31] = 56, w[33] = 70;		     /* frame */
	w[34] = 208, w[35] = 112, w[37] = 128, w[38] = 136, w[39] = 68, w[43] = 200; /* code */
	w[71] = 240, w[72] = 200; /* gc: size, collecting */
	CHECK(!pyoffsets__from_debug(w, sizeof(w), &l), "3.13 layout refused");
	CHECK_EQ_U64(l.bpf.ts_interp, 16);
	CHECK_EQ_U64(l.bpf.interp_gc, 7600);
	CHECK_EQ_U64(l.bpf.gil_holder, 7200);
	CHECK_EQ_U64(l.bpf.gil_in_interp, 1);
	CHECK_EQ_U64(l.bpf.rt_interp_head, 616);
	CHECK_EQ_U64(l.bpf.interp_threads, 7360);
	CHECK_EQ_U64(l.bpf.ts_frame, 72);
	CHECK_EQ_U64(l.bpf.ts_thread_id, 152);
	CHECK_EQ_U64(l.bpf.fr_instr, 56);
	CHECK_EQ_U64(l.bpf.fr_entry, 70);
	CHECK_EQ_U64(l.bpf.code_adaptive, 200);
	CHECK_EQ_U64(l.co_name, 128);
	CHECK(l.from_debug && l.bpf.entry_kind == PY_ENTRY_CSTACK, "kind");
	w[72] = 240; /* collecting beyond the collector's state: frames still, no collector */
	CHECK(!pyoffsets__from_debug(w, sizeof(w), &l), "3.13 layout refused for its gc section");
	CHECK_EQ_U64(l.bpf.interp_gc, 0);
	w[72] = 200;
	w[29] = 90; /* previous beyond the frame's size */
	CHECK(pyoffsets__from_debug(w, sizeof(w), &l) == -EINVAL, "damaged layout taken");
	w[29] = 8;
	w[1] = 0x030e00f0; /* 3.14: not this layout */
	CHECK(pyoffsets__from_debug(w, sizeof(w), &l) == -EINVAL, "3.14 taken");
}

int main(void)
{
	const char *exe = "/usr/bin/python3";
	char *real = realpath(exe, NULL);

	check_table();
	check_probe(real ?: exe);
	free(real);
	check_lines(exe);
	check_debug();
	printf("ok: Python %d.%d's layout and line tables\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
	TEST_PASS();
}
