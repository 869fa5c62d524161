// SPDX-License-Identifier: GPL-2.0
/* Async runtimes' poll and wake functions: see runtimes.h. */
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "runtimes.h"

/*
 * tokio 1.x: the task vtable's poll (one instance per future type, arg0 the task header), the
 * waker vtable's wake functions (arg0 the same header), and the async locks' release. Names as rustc's legacy mangling gives
 * them, which is what Debian's rustc and stable rustc emit by default.
 */
static const struct rt_fn table[] = {
	{ "tokio", "tokio::runtime::task::raw::poll", "5tokio7runtime4task3raw4poll",
	  "tokio-runtime-w", RT_POLL },
	{ "tokio", "tokio::runtime::task::waker::wake_by_val", "5tokio7runtime4task5waker",
	  "tokio-runtime-w", RT_WAKE },
	{ "tokio", "tokio::runtime::task::waker::wake_by_ref", "5tokio7runtime4task5waker",
	  "tokio-runtime-w", RT_WAKE },
	/* Mutex, RwLock and Semaphore release their permits here; a Mutex's semaphore is its
	 * first field, so arg0 is the lock's own address */
	{ "tokio", "tokio::sync::batch_semaphore::Semaphore::add_permits_locked",
	  "15batch_semaphore9Semaphore18add_permits_locked", "tokio-runtime-w", RT_RELEASE },
	/* An acquire's poll (a Mutex's lock().await, ...): called from the task's own code, which
	 * its stack names, where a lock on the heap has no symbol to be named by */
	{ "tokio", "<tokio::sync::batch_semaphore::Acquire as core::future::future::Future>::poll",
	  "batch_semaphore..Acquire$u20$as$u20$core..future..future..Future$GT$4poll",
	  "tokio-runtime-w", RT_ACQUIRE },
};

#define NTABLE (sizeof(table) / sizeof(*table))

const struct rt_fn *runtimes__match(const char *sym)
{
	const struct rt_fn *hit = NULL;
	char *d = NULL;

	for (size_t i = 0; i < NTABLE && !hit; i++) {
		if (!strstr(sym, table[i].hint) && strcmp(sym, table[i].name))
			continue;
		if (!d && !(d = demangle(sym)))
			d = strdup(sym);
		if (d && !strcmp(d, table[i].name))
			hit = &table[i];
	}
	free(d);
	return hit;
}

const struct rt_fn *runtimes__by_name(const char *name)
{
	for (size_t i = 0; i < NTABLE; i++)
		if (!strcmp(name, table[i].name))
			return &table[i];
	return NULL;
}

const char *runtimes__by_thread(const char *comm)
{
	for (size_t i = 0; i < NTABLE; i++)
		if (comm && !strncmp(comm, table[i].thread, strlen(table[i].thread)))
			return table[i].runtime;
	return NULL;
}

bool runtimes__is_runtime_frame(const char *name)
{
	for (size_t i = 0; i < NTABLE; i++) {
		size_t n = strlen(table[i].runtime);

		if (!strncmp(name, table[i].runtime, n) && !strncmp(name + n, "::", 2))
			return true;
	}
	return false;
}
