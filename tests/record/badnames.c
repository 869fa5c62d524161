// SPDX-License-Identifier: GPL-2.0
/*
 * Threads named with bytes that are no UTF-8 (an overlong '/', a byte-order mark's bytes, a
 * surrogate) hold a lock the feeding thread needs, spinning: the gaps' causes name them
 * ("on_cpu NAME", "preempted NAME"), so the names reach the metrics' labels. The feeder launches
 * through the driver named by argv[1] (fakecuda, dlopened) for argv[2] seconds.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static const char *names[] = { "\xc0\xaf"
			       "ovl",
			       "\xff\xfe"
			       "x",
			       "\xed\xa0\x80"
			       "sur",
			       "ok-holder" };

static void *holder(void *a)
{
	prctl(PR_SET_NAME, names[(long)a % 4]);
	while (!stop) {
		pthread_mutex_lock(&mu);
		for (volatile long k = 0; k < 900000; k++)
			;
		pthread_mutex_unlock(&mu);
		usleep(500);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *h = argc == 3 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*fn)(void **, void *, const char *);
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		      void *, void **, void **);
	int (*sync)(void *);
	void *f, *params[1];
	pthread_t th[8];
	int arg = 0;

	if (!h) {
		fprintf(stderr, "usage: badnames LIBCUDA SECONDS (%s)\n", dlerror());
		return 2;
	}
	fn = dlsym(h, "cuModuleGetFunction");
	launch = dlsym(h, "cuLaunchKernel");
	sync = dlsym(h, "cuStreamSynchronize");
	if (!fn || !launch || !sync)
		return 2;
	params[0] = &arg;
	fn(&f, NULL, "k");
	for (long i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, holder, (void *)i);
	for (time_t t0 = time(NULL); time(NULL) - t0 < atoi(argv[2]);) {
		launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
		sync(NULL);
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
	}
	stop = 1;
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	return 0;
}
