// SPDX-License-Identifier: GPL-2.0
/*
 * A recording target with known behaviour for tests/cases/record_*.sh: it loads a libcuda late
 * with dlopen, makes a known number of driver calls with known arguments, contends a pthread mutex
 * (the holder releases only once the waiter is asleep in the kernel: no timing assumption), calls
 * malloc_trim a known number of times and burns a known amount of CPU. It prints what it did as
 * key=value lines, for the test to compare with the trace.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*get_fn)(void **, void *, const char *);
typedef int (*kfn)(void **, void *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);
typedef struct {
	unsigned gx, gy, gz, bx, by, bz, shmem;
	void *stream;
	void *attrs;
	unsigned n;
} launch_config;
typedef int (*launch_ex_fn)(const launch_config *, void *, void **, void **);
typedef int (*sync_fn)(void *);
typedef int (*void_fn)(void);
typedef int (*copy_fn)(uint64_t, const void *, size_t, void *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t waiter_tid;
static volatile int sigints;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "target: %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	return p ? p[2] : '?';
}

static void *waiter(void *arg)
{
	pthread_setname_np(pthread_self(), "gs-waiter");
	waiter_tid = syscall(SYS_gettid);
	pthread_mutex_lock(&lock); /* blocks: main holds it */
	pthread_mutex_unlock(&lock);
	return NULL;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void burn(double seconds)
{
	double end = cpu_seconds() + seconds;
	volatile uint64_t x = 1;

	while (cpu_seconds() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
}

static volatile int sigterms;

static void on_sigint(int sig)
{
	if (sig == SIGINT)
		sigints++;
	else
		sigterms++;
}

int main(int argc, char **argv)
{
	const char *lib_path = NULL;
	int launches = 0, trims = 0, syncs = 0, exit_code = 0;
	double burn_s = 0;
	bool contend = false, wait_sigint = false, then_sigterm = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dlopen") && i + 1 < argc)
			lib_path = argv[++i];
		else if (!strcmp(argv[i], "--launches") && i + 1 < argc)
			launches = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--syncs") && i + 1 < argc)
			syncs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--trims") && i + 1 < argc)
			trims = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--burn") && i + 1 < argc)
			burn_s = atof(argv[++i]);
		else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			exit_code = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--contend"))
			contend = true;
		else if (!strcmp(argv[i], "--wait-sigint"))
			wait_sigint = true;
		else if (!strcmp(argv[i], "--then-sigterm"))
			then_sigterm = true;
		else {
			fprintf(stderr, "target: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	printf("pid=%d\n", getpid());

	if (lib_path) {
		void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
		void *f = NULL, *k = NULL, *kf = NULL;

		if (!lib) {
			fprintf(stderr, "target: %s\n", dlerror());
			return 2;
		}
		((get_fn)sym(lib, "cuModuleGetFunction"))(&f, (void *)0x77, "gs_test_kernel");
		((get_fn)sym(lib, "cuLibraryGetKernel"))(&k, (void *)0x78, "gs_lib_kernel");
		((kfn)sym(lib, "cuKernelGetFunction"))(&kf, k);
		launch_fn launch = sym(lib, "cuLaunchKernel");
		launch_fn launch_ptsz = sym(lib, "cuLaunchKernel_ptsz");
		launch_ex_fn launch_ex = sym(lib, "cuLaunchKernelEx");
		launch_config cfg = { 11, 12, 13, 64, 2, 1, 96, (void *)0x5678, NULL, 0 };

		printf("kernel_handle=%p\nlib_kernel_function=%p\n", f, kf);
		for (int i = 0; i < launches; i++) {
			launch(f, 7, 8, 9, 32, 1, 1, 48, (void *)0x1234, NULL, NULL);
			launch_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
			launch_ex(&cfg, kf, NULL, NULL);
		}
		for (int i = 0; i < syncs; i++) {
			((copy_fn)sym(lib, "cuMemcpyHtoDAsync_v2"))(0x1000, &cfg, 4096,
								    (void *)0x1234);
			((sync_fn)sym(lib, "cuStreamSynchronize"))((void *)0x1234);
			((void_fn)sym(lib, "cuCtxSynchronize"))();
			((sync_fn)sym(lib, "cuCtxSynchronize_v2"))((void *)0xc0);
			((sync_fn)sym(lib, "cuEventQuery"))((void *)0xe0);
			((get_fn)sym(lib, "cuCtxGetCurrent"))(&f, NULL, NULL);
		}
	}
	printf("launches=%d\nsyncs=%d\n", launches, syncs);

	if (contend) {
		pthread_t t;

		pthread_mutex_lock(&lock);
		pthread_create(&t, NULL, waiter, NULL);
		/* Release only once the waiter sleeps in the kernel on the lock. */
		while (!waiter_tid || thread_state(waiter_tid) != 'S')
			sched_yield();
		burn(0.002);
		pthread_mutex_unlock(&lock);
		pthread_join(t, NULL);
		printf("holder_tid=%d\nwaiter_tid=%d\nlock=%p\n", getpid(), waiter_tid,
		       (void *)&lock);
	}

	for (int i = 0; i < trims; i++) {
		free(malloc(1 << 20));
		malloc_trim(0);
	}
	printf("trims=%d\n", trims);
	if (burn_s > 0) {
		burn(burn_s);
		printf("burned=%.3f\n", burn_s);
	}
	if (wait_sigint) {
		sigset_t none;

		signal(SIGINT, on_sigint);
		signal(SIGTERM, on_sigint);
		printf("ready\n");
		fflush(stdout);
		sigemptyset(&none);
		while (!sigints)
			sigsuspend(&none);
		/*
		 * --then-sigterm: then until a SIGTERM, sent to the recorder alone once we said so,
		 * is passed on. A signal to our group reaches the recorder no later than us, and it
		 * takes its pending signals lowest number first: a second SIGINT that it passed on
		 * would be here before that SIGTERM.
		 */
		if (then_sigterm) {
			printf("sigint\n");
			fflush(stdout);
			while (!sigterms)
				sigsuspend(&none);
		}
		printf("sigints=%d\n", sigints);
		fflush(stdout);
		return 42;
	}
	fflush(stdout);
	return exit_code;
}
