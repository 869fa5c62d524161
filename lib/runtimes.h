/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Async runtimes' task functions, by name: where a task is polled and where it is woken. The
 * recorder probes every function of a target's executable whose demangled name is in the table
 * (loader/uprobes_tasks.c), as an interval with its first argument, the task's identity; the report
 * follows a task across the threads that polled and woke it (reports/analysis/tasks.c). Adding a runtime
 * is adding its rows (ARCHITECTURE.md says how), as long as its poll and wake functions are
 * real functions (a vtable's entries are) that take the task as their first argument.
 */
#ifndef GAPSCOPE_RUNTIMES_H
#define GAPSCOPE_RUNTIMES_H

#include <stdbool.h>

enum rt_fn_kind {
	RT_POLL = 1, /* one poll of a task: entry to return; arg0 = the task */
	RT_WAKE,     /* a task made runnable by the calling thread; arg0 = the task */
	RT_RELEASE,  /* an async lock released (its waiters woken inside); arg0 = the lock */
	RT_ACQUIRE,  /* an async lock's acquire polled: its stack is the await site */
};

struct rt_fn {
	const char *runtime; /* "tokio" */
	const char *name;    /* demangled, without a Rust hash */
	const char *hint;    /* a substring of the mangled name, to skip the rest cheaply */
	const char *thread;  /* its worker threads' default name (comm), to tell it is there */
	enum rt_fn_kind kind;
};

/* The row whose name is SYM's (mangled or not), NULL if none. */
const struct rt_fn *runtimes__match(const char *sym);
/* The row of a probed function by its recorded name (demangled), NULL if none. */
const struct rt_fn *runtimes__by_name(const char *name);
/* The runtime whose worker threads are named like COMM, NULL if none. */
const char *runtimes__by_thread(const char *comm);
/* Whether NAME (demangled) is a frame of a runtime in the table (its own code, not a task's). */
bool runtimes__is_runtime_frame(const char *name);

#endif
