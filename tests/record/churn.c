// SPDX-License-Identifier: GPL-2.0
/*
 * A recording target that churns for tests/cases/record_churn.sh: it re-executes itself, loads
 * the stand-in libcuda late, then in phases creates and ends short-lived threads, loads and
 * unloads a small library (tests/record/churn_plugin.c), forks children that make probed calls
 * and exit, and forks children that exec a second image of this program making probed calls. At
 * the end it forks a child that outlives it, waiting for a signal, so the test can read the
 * probed addresses of a live process after the recording ended. Each phase launches with a grid
 * of its own, so the trace's launches can be told apart; the counts it made are printed as
 * key=value lines.
 *
 *   churn --cuda LIB --plugin LIB [--reexec] [--threads N] [--batch B] [--dlopens N]
 *         [--forks N] [--execs N] [--calls K] [--linger] [--probed]
 *   churn --child LIB --calls K [--probed]     (the image the --execs children run)
 *
 * With --probed, each child calls only once it has received SIGUSR1: the test sends it when the
 * recorder says the child's own probes are in place (a recorder following children probes each
 * as it is born, loader/uprobes.h). The children are born with SIGUSR1 blocked, so that a signal
 * sent early waits for them, across the exec too.
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
#include <sys/wait.h>
#include <unistd.h>

typedef int (*get_fn)(void **, void *, const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);
typedef uint64_t (*plugin_fn)(uint64_t);

enum { GRID_MAIN = 1, GRID_THREAD = 2, GRID_FORK = 3, GRID_EXEC = 4 };

static launch_fn launch;
static void *kernel;
static unsigned long thread_launches, thread_trims;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "churn: %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void load_cuda(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		fprintf(stderr, "churn: %s\n", dlerror());
		exit(2);
	}
	launch = sym(lib, "cuLaunchKernel");
	((get_fn)sym(lib, "cuModuleGetFunction"))(&kernel, (void *)0x77, "churn_kernel");
}

/* One launch with GRID as its x dimension and one malloc_trim: 1 when both were made. */
static int calls(unsigned grid)
{
	if (launch(kernel, grid, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))
		return 0;
	free(malloc(4096));
	malloc_trim(0);
	return 1;
}

static void *thread_main(void *arg)
{
	int n = calls(GRID_THREAD);

	pthread_mutex_lock(&count_lock);
	thread_launches += n;
	thread_trims += n;
	pthread_mutex_unlock(&count_lock);
	return NULL;
}

static void threads(int n, int batch)
{
	pthread_t *t = calloc(batch, sizeof(*t));
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int done = 0; done < n;) {
		int k = n - done < batch ? n - done : batch;

		for (int i = 0; i < k; i++)
			if (pthread_create(&t[i], &attr, thread_main, NULL)) {
				fprintf(stderr, "churn: pthread_create failed\n");
				exit(2);
			}
		for (int i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		done += k;
	}
	free(t);
	printf("threads=%d\nthread_launches=%lu\nthread_trims=%lu\n", n, thread_launches,
	       thread_trims);
}

/* Whether PATH is mapped in this process now. */
static bool mapped(const char *path)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, path) != NULL;
	if (f)
		fclose(f);
	return found;
}

static void dlopens(const char *plugin, int n)
{
	int called = 0, unmapped = 0;

	for (int i = 0; i < n; i++) {
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "churn: %s\n", dlerror());
			exit(2);
		}
		((plugin_fn)sym(h, "churn_fn"))(i);
		called++;
		dlclose(h);
		/* Every 100th: the library really went (a dlclose may keep it). */
		if (i % 100 == 0)
			unmapped += !mapped(plugin);
	}
	printf("dlopens=%d\nplugin_calls=%d\nunmapped_checks=%d/%d\n", n, called, unmapped,
	       (n + 99) / 100);
}

static bool probed_wait;
static volatile sig_atomic_t probed;

static void on_probed(int sig)
{
	(void)sig;
	probed = 1;
}

/* With --probed: until the test says the recorder has put this process's probes in place. */
static void wait_probed(void)
{
	sigset_t none;

	if (!probed_wait)
		return;
	signal(SIGUSR1, on_probed);
	sigemptyset(&none);
	alarm(60); /* the test has failed by then */
	while (!probed)
		sigsuspend(&none);
	alarm(0);
}

/* N children at once, each making K calls and exiting; or exec'ing --child with K calls. */
static void children(int n, int k, const char *self, const char *cuda, bool exec)
{
	sigset_t usr1, before;

	char kbuf[16];
	int ok = 0;

	snprintf(kbuf, sizeof(kbuf), "%d", k);
	fflush(stdout);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &before); /* the children's: until they wait for it */
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0) {
			fprintf(stderr, "churn: fork failed\n");
			exit(2);
		}
		if (p)
			continue;
		if (exec) {
			if (probed_wait)
				execl(self, self, "--child", cuda, "--calls", kbuf, "--probed",
				      (char *)NULL);
			else
				execl(self, self, "--child", cuda, "--calls", kbuf, (char *)NULL);
			_exit(3);
		}
		wait_probed();
		for (int j = 0; j < k; j++)
			if (!calls(GRID_FORK))
				_exit(4);
		_exit(0);
	}
	sigprocmask(SIG_SETMASK, &before, NULL);
	for (int i = 0; i < n; i++) {
		int st;

		if (wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	printf("%s=%d\n%s_calls=%d\n", exec ? "execs" : "forks", ok, exec ? "exec" : "fork",
	       ok * k);
}

static void on_term(int sig)
{
	_exit(0);
}

/*
 * A child that outlives us, the probed libraries mapped, until a SIGTERM. It first tells us
 * whether it sees a breakpoint at cuLaunchKernel's entry while recorded (what the test's check
 * of the probed addresses after the recording must see no more).
 */
static void linger(const char *plugin)
{
	unsigned char int3 = 2;
	sigset_t none;
	int fd[2];
	pid_t p;

	if (!dlopen(plugin, RTLD_NOW | RTLD_LOCAL) || pipe(fd)) {
		fprintf(stderr, "churn: cannot load %s or make a pipe\n", plugin);
		exit(2);
	}
	signal(SIGTERM, on_term);
	fflush(stdout);
	p = fork();
	if (p < 0)
		exit(2);
	if (!p) {
		wait_probed(); /* followed: its own probes, not those inherited, then looked at */
		int3 = *(volatile unsigned char *)launch == 0xcc;
		if (write(fd[1], &int3, 1) != 1)
			_exit(2);
		close(fd[1]);
		/* A test that died before its SIGTERM must not leave us behind for long. */
		alarm(300);
		sigemptyset(&none);
		for (;;)
			sigsuspend(&none);
	}
	close(fd[1]);
	if (read(fd[0], &int3, 1) != 1)
		int3 = 2;
	printf("linger=%d\nlinger_int3=%d\n", p, int3);
}

int main(int argc, char **argv)
{
	const char *cuda = NULL, *plugin = NULL, *child = NULL;
	int nthreads = 0, batch = 50, ndlopens = 0, nforks = 0, nexecs = 0, k = 1;
	bool reexec = false, do_linger = false;
	char self[4096];
	ssize_t len;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cuda") && i + 1 < argc)
			cuda = argv[++i];
		else if (!strcmp(argv[i], "--plugin") && i + 1 < argc)
			plugin = argv[++i];
		else if (!strcmp(argv[i], "--child") && i + 1 < argc)
			child = argv[++i];
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			batch = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dlopens") && i + 1 < argc)
			ndlopens = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--forks") && i + 1 < argc)
			nforks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--execs") && i + 1 < argc)
			nexecs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			k = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reexec"))
			reexec = true;
		else if (!strcmp(argv[i], "--linger"))
			do_linger = true;
		else if (!strcmp(argv[i], "--probed"))
			probed_wait = true;
		else {
			fprintf(stderr, "churn: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (probed_wait)
		signal(SIGUSR1,
		       on_probed); /* the child left behind is told too: not to die of it */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || batch < 1)
		return 2;
	self[len] = 0;
	if (child) {
		wait_probed();
		load_cuda(child);
		for (int j = 0; j < k; j++)
			if (!calls(GRID_EXEC))
				return 4;
		return 0;
	}
	if (!cuda || !plugin) {
		fprintf(stderr, "churn: --cuda and --plugin are needed\n");
		return 2;
	}
	if (reexec) {
		/* The same arguments but this one: the recording goes on in the new image. */
		char **args = calloc(argc + 1, sizeof(*args));
		int n = 0;

		for (int i = 0; i < argc; i++)
			if (strcmp(argv[i], "--reexec"))
				args[n++] = i ? argv[i] : self;
		printf("reexec pid=%d\n", getpid());
		fflush(stdout);
		execv(self, args);
		perror("churn: execv");
		return 2;
	}
	printf("pid=%d\n", getpid());
	load_cuda(cuda);
	printf("main_calls=%d\n", calls(GRID_MAIN));
	threads(nthreads, batch);
	dlopens(plugin, ndlopens);
	children(nforks, k, self, cuda, false);
	children(nexecs, k, self, cuda, true);
	if (do_linger)
		linger(plugin);
	fflush(stdout);
	return 0;
}
