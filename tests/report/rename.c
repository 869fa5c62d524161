// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for tests/cases/report_stripped.sh: every thread name a program sets becomes
 * "t" and a hash of it, so a report can lean on no name the program chose.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

int pthread_setname_np(pthread_t thread, const char *name)
{
	int (*real)(pthread_t, const char *) = dlsym(RTLD_NEXT, "pthread_setname_np");
	unsigned int h = 2166136261u;
	char buf[16];

	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(buf, sizeof(buf), "t%08x", h);
	return real ? real(thread, buf) : 0;
}
