/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames read from a live CPython (3.10 to 3.13) where the user stack is taken for blame:
 * at CPU samples and at the end of long waits, beside the stack snapshot (snapshot.h). The BPF
 * side finds the thread's PyThreadState in the interpreter's list of threads (matched by
 * pthread_self(), the thread's fs base) and walks its frames from the current one to the first,
 * recording each frame's code object and instruction offset: GS_EV_PYSTACK, tied to the event
 * it completes by thread, event type and start time, as a snapshot is. The recorder names each
 * code object once, from the process's memory while it lives (GS_REC_PYCODE, loader/pycode.c),
 * and the report puts the frames in place of the interpreter's own (reports/symbols/pyframes.c).
 *
 * Where the interpreter's structures are comes per process (map py_procs): from the
 * interpreter's own debug offsets (3.13), else a table per version (loader/pyoffsets.c).
 *
 * With the frames, whether the thread's interpreter is running its cyclic garbage collector
 * (the GC state's `collecting`, PYSTACK_F_GC): a collection runs inside whatever allocation or
 * gc.collect() call set it off, under that Python frame, and the report names the time as the
 * collector's, not that function's own. The flag is the interpreter's, not the thread's: a
 * collection holds the GIL, so a stack is marked only where its thread is the GIL's last
 * holder too (another thread may run meanwhile in C code that let the GIL go, or wait for it).
 */
#ifndef GAPSCOPE_PYSTACK_H
#define GAPSCOPE_PYSTACK_H

#include "gapscope.h"

#define PY_FRAMES_MAX	 64  /* frames a record holds: deeper stacks are cut at the root */
#define PY_THREADS_MAX	 256 /* thread states looked at to find a thread's */
#define PY_INTERPS_MAX	 4   /* interpreters looked at (subinterpreters) */
#define PY_TSTATE_CACHED 8192
#define PY_SLOTS	 4 /* scratch records per CPU: 3 for process context, 1 for interrupts */

/* How a frame says where it is in its code (struct py_offsets.instr_kind). */
#define PY_INSTR_LASTI 1 /* 3.10: an int, the index of the last instruction (code units) */
#define PY_INSTR_PTR   2 /* 3.11+: a pointer into the code object's instructions */

/* How one eval loop's frames are told apart (struct py_offsets.entry_kind). */
#define PY_ENTRY_EVERY	1 /* 3.10: every frame is its own _PyEval_EvalFrameDefault */
#define PY_ENTRY_FLAG	2 /* 3.11: a frame's is_entry byte marks the first of a loop's frames */
#define PY_ENTRY_CSTACK 3 /* 3.12+: a shim frame owned by the C stack sits below a loop's frames */

#define PY_OWNED_BY_CSTACK 3 /* 3.12, 3.13: enum _frameowner FRAME_OWNED_BY_CSTACK */

/*
 * Where things are in one process's interpreter: offsets in bytes into its structures. Set by
 * the recorder when it finds the interpreter mapped (loader/pycode.c), keyed by tgid.
 */
struct py_offsets {
	__u64 runtime;	      /* address of _PyRuntime in the process */
	__u32 version;	      /* major << 8 | minor */
	__u32 rt_interp_head; /* _PyRuntime.interpreters.head */
	__u32 interp_next;    /* PyInterpreterState.next */
	__u32 interp_threads; /* PyInterpreterState's list of thread states: head */
	__u32 ts_next;	      /* PyThreadState.next */
	__u32 ts_thread_id;   /* PyThreadState.thread_id: pthread_self() of its thread */
	__u32 ts_frame;	      /* PyThreadState: current frame (3.10, 3.13) or cframe (3.11, 3.12) */
	__u32 cframe_current; /* _PyCFrame.current_frame; unused without a cframe */
	__u32 fr_previous;    /* frame: its caller's frame */
	__u32 fr_code;	      /* frame: its code object */
	__u32 fr_instr;	      /* frame: f_lasti (3.10), prev_instr (3.11, 3.12), instr_ptr */
	__u32 fr_entry;	      /* frame: is_entry (3.11) or owner (3.12+) */
	__u32 code_adaptive;  /* code object: its first instruction (3.11+) */
	__u32 ts_interp;      /* PyThreadState.interp */
	__u32 interp_gc;      /* PyInterpreterState: gc.collecting (an int); 0: not known */
	__u32 gil_holder;     /* the GIL's last_holder, in _PyRuntime or (gil_in_interp) in
			       * PyInterpreterState; 0: not known */
	__u8 has_cframe;
	__u8 instr_kind; /* PY_INSTR_* */
	__u8 entry_kind; /* PY_ENTRY_* */
	__u8 gil_in_interp;
};

/* struct py_frame.flags */
#define PYF_EVAL_FIRST (1u << 0) /* the outermost frame one _PyEval_EvalFrameDefault call runs */

struct py_frame {
	__u64 code;   /* PyCodeObject in the process */
	__u32 offset; /* bytes from the code's first instruction to the one running (or last run) */
	__u32 flags;  /* PYF_* */
};

/* struct pystack_event.status */
#define PYSTACK_F_TRUNCATED (1u << 0) /* more frames than PY_FRAMES_MAX: the root ones missing */
#define PYSTACK_F_READ	    (1u << 1) /* a read failed: the frames from there on are missing */
#define PYSTACK_F_GC	    (1u << 2) /* the interpreter was running its cyclic collector */

struct pystack_event {
	struct gs_hdr h; /* ts, tid: those of the event it completes */
	__u64 end_ns;	 /* that event's end: a reader orders the record just before it */
	__u32 of_type;	 /* GS_EV_* of the event it completes */
	__u32 n;	 /* frames that follow, innermost first */
	__u32 status;	 /* PYSTACK_F_* */
	__u32 pad;
	struct py_frame f[PY_FRAMES_MAX]; /* n of them in the trace */
};

#endif
