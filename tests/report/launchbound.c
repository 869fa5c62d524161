// SPDX-License-Identifier: GPL-2.0
/*
 * A launch-bound program for tests/cases/report_launchbound.sh, driven through simcuda: its
 * thread "launcher" makes BATCHES batches of LAUNCHES launches of a kernel that does nothing
 * (fr_scale on n = 0: simcuda's modelled 20 us + 1 us a thread, 32 threads), and before each
 * launch spends HOST_US microseconds of wall time on CPU in prepare_launch() (a stand-in for a
 * framework's launcher): the GPU idles between kernels in windows far under a millisecond. Each
 * batch ends with cuCtxSynchronize and a 5 ms sleep (a gap of its own, over the floor).
 *
 * With LOG set, each launch's thread and CLOCK_MONOTONIC start go to LOG as
 * {"kind":"launch","tid":T,"start_ns":N} lines (tests/report/add_cupti.c turns them into CUPTI
 * launch records). With --wait it prints "ready" and reads a line first (an attach meanwhile).
 *
 *   launchbound LIBCUDA BATCHES LAUNCHES HOST_US [LOG] [--wait]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../cuda_dl.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The host's work per launch: on CPU until host_ns of wall time have passed. */
static __attribute__((noinline)) uint64_t prepare_launch(uint64_t host_ns)
{
	uint64_t end = now_ns() + host_ns, x = 0;

	while (now_ns() < end)
		for (int i = 0; i < 64; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

int main(int argc, char **argv)
{
	static const uint32_t image[4] = { 0xBA55ED50u }; /* a fatbin's header, as simcuda wants */
	static unsigned char args[128];			  /* all zero: n = 0, nothing to compute */
	void *params[] = { args }, *mod, *f;
	struct timespec pause = { 0, 5000000 };
	int batches, launches, wait = argc > 1 && !strcmp(argv[argc - 1], "--wait");
	uint64_t host_ns, sink = 0;
	FILE *log = NULL;
	char line[16];
	pid_t tid;

	if (argc - wait < 5 || argc - wait > 6) {
		fprintf(stderr,
			"usage: launchbound LIBCUDA BATCHES LAUNCHES HOST_US [LOG] [--wait]\n");
		return 2;
	}
	batches = atoi(argv[2]);
	launches = atoi(argv[3]);
	host_ns = strtoull(argv[4], NULL, 10) * 1000;
	if (argc - wait == 6 && !(log = fopen(argv[5], "w"))) {
		perror("launchbound: LOG");
		return 2;
	}
	prctl(PR_SET_NAME, "launcher", 0, 0, 0);
	tid = (pid_t)syscall(SYS_gettid);
	cuda_dl_open("launchbound", argv[1]);
	cuda_dl_context();
	CU(cuModuleLoadData, &mod, image);
	CU(cuModuleGetFunction, &f, mod, "fr_scale");
	if (wait) {
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
	}
	for (int b = 0; b < batches; b++) {
		for (int i = 0; i < launches; i++) {
			uint64_t t;

			sink += prepare_launch(host_ns);
			t = now_ns();
			CU(cuLaunchKernel, f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
			if (log)
				fprintf(log, "{\"kind\":\"launch\",\"tid\":%d,\"start_ns\":%llu}\n",
					(int)tid, (unsigned long long)t);
		}
		CU(cuCtxSynchronize);
		nanosleep(&pause, NULL);
	}
	if (log && fclose(log))
		return 1;
	printf("launched %d (%llu)\n", batches * launches, (unsigned long long)(sink & 1));
	return 0;
}
