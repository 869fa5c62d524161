// SPDX-License-Identifier: GPL-2.0
/*
 * A GPU feeder whose CPU work runs in code it generates at run time, for
 * tests/cases/record_jit.sh. It writes two x86-64 functions into anonymous memory, with frame
 * pointers as a compiler sets them up (push rbp; mov rbp, rsp), names them in /tmp/perf-PID.map
 * as a JIT does for perf, and between submissions to a simcuda device (dlopen'ed from the path
 * given) spins PERIOD ms in them:
 *
 *   jit_work_outer(n)   calls jit_work_inner(n)
 *   jit_work_inner(n)   counts n down to zero
 *
 * so the GPU's idle time is on-CPU in jit_work_inner, called from jit_work_outer, called from
 * feed_from_jit. Prints "jit: pid PID" first, and the perf map's path.
 *
 * usage: jit LIBCUDA ITER PERIOD_MS
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../cuda_fr_scale.h"

typedef void (*jit_fn)(uint64_t n);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Machine code, x86-64. */
static const uint8_t inner_code[] = {
	0x55,		  /* push %rbp */
	0x48, 0x89, 0xe5, /* mov %rsp, %rbp */
	0x48, 0xff, 0xcf, /* 1: dec %rdi */
	0x75, 0xfb,	  /* jnz 1b */
	0x5d,		  /* pop %rbp */
	0xc3,		  /* ret */
};
static const uint8_t outer_code[] = {
	0x55,			      /* push %rbp */
	0x48, 0x89, 0xe5,	      /* mov %rsp, %rbp */
	0xe8, 0x00, 0x00, 0x00, 0x00, /* call jit_work_inner (rel32 set below) */
	0x5d,			      /* pop %rbp */
	0xc3,			      /* ret */
};

#define INNER_OFF 0x40
#define OUTER_OFF 0x100

static jit_fn inner, outer;

/* Generates the two functions and names them in /tmp/perf-PID.map. */
static void generate(void)
{
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			     0);
	int32_t rel = (INNER_OFF) - (OUTER_OFF + 9);
	char path[64];
	FILE *f;

	if (code == MAP_FAILED) {
		perror("jit: mmap");
		exit(1);
	}
	memset(code, 0xcc, 4096); /* int3 between the functions */
	memcpy(code + INNER_OFF, inner_code, sizeof(inner_code));
	memcpy(code + OUTER_OFF, outer_code, sizeof(outer_code));
	memcpy(code + OUTER_OFF + 5, &rel, sizeof(rel));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("jit: mprotect");
		exit(1);
	}
	inner = (jit_fn)(code + INNER_OFF);
	outer = (jit_fn)(code + OUTER_OFF);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f) {
		perror("jit: /tmp/perf-PID.map");
		exit(1);
	}
	fprintf(f, "%lx %zx jit_work_inner\n", (unsigned long)inner, sizeof(inner_code));
	fprintf(f, "%lx %zx jit_work_outer\n", (unsigned long)outer, sizeof(outer_code));
	fclose(f);
	printf("jit: perf map %s\n", path);
}

/* CPU work for ms milliseconds, all of it in the generated code. */
static __attribute__((noinline)) void feed_from_jit(unsigned int ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;

	do
		outer(2000000);
	while (now_ns() < end);
}

int main(int argc, char **argv)
{
	void *stream, *func;
	struct fr_scale_args args;
	int iter, period;

	if (argc < 4) {
		fprintf(stderr, "usage: jit LIBCUDA ITER PERIOD_MS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("jit: pid %d\n", getpid());
	iter = atoi(argv[2]);
	period = atoi(argv[3]);
	cuda_dl_open("jit", argv[1]);
	generate();
	cuda_dl_fr_scale(&func, &stream, &args);
	for (int i = 0; i < iter; i++) {
		void *params[] = { &args };

		feed_from_jit(period);
		for (int k = 0; k < 4; k++)
			CU(cuLaunchKernel, func, 1, 1, 1, ZK_BLOCK, 1, 1, 0, stream, params, NULL);
		CU(cuStreamSynchronize, stream);
	}
	printf("jit: %d iterations\n", iter);
	return 0;
}
