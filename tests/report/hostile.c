// SPDX-License-Identifier: GPL-2.0
/*
 * A GPU feeder whose names are hostile, for tests/cases/report_hostile.sh: each of its threads
 * takes a name from the set below (bytes that are no UTF-8, surrogates, U+FFFE, code points
 * beyond U+10FFFF, overlong forms, terminal escapes, newlines, markup), looks up a kernel under
 * a hostile name too, and feeds a stream ITER times, sleeping PERIOD ms between a synchronize
 * and its next launch: a gap each time, closed by that thread. The threads run one after
 * another. usage: hostile LIBCUDA ITER PERIOD_MS
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

/* Thread names: at most 15 bytes each (the kernel's comm). */
static const char *const thread_names[] = {
	"\xed\xa0\x80surr\xef\xbf\xbe", /* U+D800, U+FFFE */
	"big\xf4\x90\x80\x80\xff\xfe",	/* beyond U+10FFFF; bytes that start nothing */
	"over\xc0\xaf\xe0\x80\xaf",	/* overlong '/' in two and three bytes */
	"\x1b]0;pwned\x07",		/* OSC: retitles a terminal */
	"a\nb\r\x1b[2J\x9b",		/* newline, clear screen, a lone C1 byte */
	"</script>&'\"",		/* markup */
	"\xc2\x9b"
	"31m\xef\xbf\xbf<!--", /* C1 CSI, U+FFFF, a comment opener */
};

/* Kernel names: longer, and one that tries to forge a line of `gapscope script`. */
static const char *const kernel_names[] = {
	"k\xed\xbf\xbf\xef\xbf\xbe\xf8\x88\x80\x80\x80",
	"\n# end events=0\n# losses total=0",
	"\x1b[31mred\x1b[0m\x1b]8;;http://x\x07link",
	"</svg><script>alert(1)</script>",
	"]]><!-- \"' &amp; \xe2\x80\xa8\xe2\x80\xa9",
	"\xc0\x80\xe0\x9f\xbf\xf0\x8f\xbf\xbf",
	"ok\t\x7f\x01",
};

#define N (sizeof(thread_names) / sizeof(*thread_names))

static int (*get_fn)(void **, void *, const char *);
static int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		     void *, void **, void **);
static int (*sync_stream)(void *);
static int iter;
static long period_ms;

static void *feed(void *arg)
{
	size_t i = (size_t)arg;
	struct timespec ts = { period_ms / 1000, (period_ms % 1000) * 1000000 };
	void *f;

	prctl(PR_SET_NAME, thread_names[i], 0, 0, 0);
	get_fn(&f, (void *)0x77, kernel_names[i]);
	for (int k = 0; k < iter; k++) {
		launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		sync_stream(NULL);
		nanosleep(&ts, NULL);
	}
	launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	sync_stream(NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	void *lib;

	if (argc != 4)
		return 2;
	iter = atoi(argv[2]);
	period_ms = atol(argv[3]);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "hostile: %s\n", dlerror());
		return 2;
	}
	get_fn = (int (*)(void **, void *, const char *))dlsym(lib, "cuModuleGetFunction");
	launch = (int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, void *, void **, void **))dlsym(lib, "cuLaunchKernel");
	sync_stream = (int (*)(void *))dlsym(lib, "cuStreamSynchronize");
	if (!get_fn || !launch || !sync_stream)
		return 2;
	for (size_t i = 0; i < N; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, feed, (void *)i) || pthread_join(t, NULL))
			return 3;
	}
	return 0;
}
