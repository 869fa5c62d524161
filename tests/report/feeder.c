// SPDX-License-Identifier: GPL-2.0
/*
 * GPU feeders not shaped like zkengine, for tests/cases/report_programs.sh. One thread feeds
 * one stream of a simcuda device (dlopen'ed from the path given) ITER times; what it does
 * between two submissions is the GPU's idle time, and the mode says what that is:
 *
 *   sleep   paced by nanosleep (PERIOD ms)                         expected cause: sleep
 *   file    reads its next input from FILE (a FIFO another process
 *           writes every PERIOD ms)                                 expected cause: the
 *           writer's work (recorded: its sleep; else io, the writer named)
 *   graph   runs one kernel, captures its kernels into a graph, then
 *           replays it with cuGraphLaunch; before each replay it
 *           computes on the CPU for PERIOD ms                       expected cause: on_cpu,
 *           one gap per replay (the captured launches are no work)
 *   helper  hands each input to a helper thread and waits on a
 *           condition variable until the helper (computing on the
 *           CPU for PERIOD ms) signals it                           expected: on_cpu via cond
 *   deep    recurses DEEP_FRAMES calls deep (deep_recurse, a 1 KiB
 *           array in each frame) and sleeps PERIOD ms at the bottom
 *           (deep_bottom): a stack far deeper than any snapshot     expected cause: sleep
 *   cpu     computes for PERIOD ms (a fraction allowed) of its own
 *           CPU time before each submission: a quota's throttling
 *           or a CPU hog stretches it, the work stays the same. At
 *           0.5 ms, under the 1 ms a gap needs, its gaps are the
 *           time it could not run                                   expected: throttled
 *           under a CPU quota, preempted beside CPU hogs
 *   busy    two streams, each synchronized while the other has a
 *           kernel queued, for ITER ms: the device is never seen
 *           idle; then both synchronized, PERIOD ms of CPU work,
 *           and ITER ms more as before                              expected: one gap,
 *           on_cpu in compute_input
 *   xla     driven as XLA drives the driver: PERIOD ms of CPU work
 *           (the batch), a captured graph of 12 kernels replayed on one
 *           stream, an event recorded after it that a second stream
 *           waits for, a kernel and a host function on the second;
 *           the host thread waits on a condition variable that the
 *           host function (the driver's callback thread) signals:
 *           no synchronize. With hold: waits for a line on stdin
 *           first (a recorder attaches). With anon: the host function
 *           is a trampoline in anonymous memory (as a libffi closure,
 *           a Python callback, is), which no uprobe can reach: the
 *           only news of completion is the callback thread's wakeup
 *           by the one standing for the device (its interrupt), passed
 *           on to the host thread                                    expected: a gap per
 *           iteration (tests/cases/report_api_xla.sh)
 *   poll    launches a kernel that doubles an element of device
 *           memory (simcuda's is host memory: a host-mapped flag the
 *           GPU writes) and spins reading it until it changes; then
 *           PERIOD ms of CPU work; never a synchronize               expected: busy unknown
 *           (tests/cases/report_api_unknown.sh)
 *   free    allocates 64 MiB, launches and frees it: no
 *           synchronize but cuMemFree's own drain, after which it
 *           unmaps for ~4 ms; then PERIOD ms of CPU work            expected: a gap per
 *           iteration, from the drain (tests/cases/report_api_free.sh)
 *
 *   child   runs /bin/sleep for PERIOD ms as a child (fork, exec)
 *           and waits for it (waitpid)                              expected: the wait
 *           named for the child, its sleep where it is recorded
 *   heap    maps fresh memory (64 MiB, populated) and unmaps it,
 *           again and again for PERIOD ms (heap_churn)              expected: on_cpu
 *           heap_churn, its leaves the mapping and the unmapping
 *   fault   maps FILE (made here: 64 MiB of data, on disk) and reads
 *           PERIOD random pages of it (gather_rows), each step after
 *           dropping its pages from the page cache: every read a
 *           major fault that waits for the disk                     expected: fault, major,
 *           the file named (tests/cases/report_faults.sh)
 *
 * usage: feeder LIBCUDA MODE ITER PERIOD_MS [FILE | hold | anon ...]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cuda_fr_scale.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * CPU work for ms milliseconds, in a function of its own. The clock is read rarely and through
 * the vDSO: samples land in the loop, where the frame-pointer walk finds this function.
 */
static volatile uint64_t sink; /* the work's result, so the compiler keeps the work */

static __attribute__((noinline)) void compute_input(unsigned int ms)
{
	uint64_t x = sink, end = now_ns() + ms * 1000000ull;

	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (now_ns() < end);
	sink = x;
}

/* child mode: a tool run per step, as subprocess.run does. */
static __attribute__((noinline)) void run_child(unsigned int ms)
{
	char secs[32];
	pid_t pid;
	int st;

	snprintf(secs, sizeof(secs), "%u.%03u", ms / 1000, ms % 1000);
	pid = fork();
	if (pid < 0) {
		perror("feeder: fork");
		exit(1);
	}
	if (!pid) {
		execl("/bin/sleep", "sleep", secs, (char *)NULL);
		_exit(127);
	}
	printf("feeder: child %d\n", (int)pid); /* the pids a report must name */
	fflush(stdout);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "feeder: /bin/sleep failed\n");
		exit(1);
	}
}

/* heap mode: fresh memory mapped (its pages populated) and unmapped for ms milliseconds. */
static __attribute__((noinline)) void heap_churn(unsigned int ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;

	do {
		void *p = mmap(NULL, (size_t)64 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (p == MAP_FAILED) {
			perror("feeder: mmap");
			exit(1);
		}
		munmap(p, (size_t)64 << 20);
	} while (now_ns() < end);
}

/* fault mode: the dataset, and where gather_rows reads it. */
#define FAULT_FILE_SIZE ((size_t)64 << 20)
static int fault_fd = -1;
static volatile unsigned char *fault_map;

/*
 * Writes FILE whole (every page data: a hole would read as zeros with no I/O), flushed, and maps
 * it for random reads (no readahead: one page a fault).
 */
static void fault_open(const char *path)
{
	static unsigned char chunk[1 << 20];

	fault_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fault_fd < 0) {
		perror("feeder: open");
		exit(1);
	}
	for (size_t off = 0; off < FAULT_FILE_SIZE; off += sizeof(chunk)) {
		memset(chunk, (int)(off >> 20) + 1, sizeof(chunk));
		if (write(fault_fd, chunk, sizeof(chunk)) != sizeof(chunk)) {
			perror("feeder: write");
			exit(1);
		}
	}
	if (fsync(fault_fd)) {
		perror("feeder: fsync");
		exit(1);
	}
	fault_map = mmap(NULL, FAULT_FILE_SIZE, PROT_READ, MAP_SHARED, fault_fd, 0);
	if (fault_map == MAP_FAILED || madvise((void *)fault_map, FAULT_FILE_SIZE, MADV_RANDOM)) {
		perror("feeder: mmap");
		exit(1);
	}
}

/*
 * One step's rows: n random pages read through the mapping, after the file's pages were unmapped
 * and dropped from the page cache (this file's only: clean, so the drop is sure), so that each
 * read faults and waits for the disk.
 */
static __attribute__((noinline)) void gather_rows(unsigned int n)
{
	static uint64_t seed = 88172645463325252ull;
	uint64_t x = 0;

	if (madvise((void *)fault_map, FAULT_FILE_SIZE, MADV_DONTNEED) ||
	    posix_fadvise(fault_fd, 0, 0, POSIX_FADV_DONTNEED)) {
		perror("feeder: drop the file's pages");
		exit(1);
	}
	for (unsigned int i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		x += fault_map[(seed % (FAULT_FILE_SIZE / 4096)) * 4096 + (seed >> 52)];
	}
	sink += x;
}

/* cpu mode: us microseconds of this thread's CPU time, however long they take. */
static __attribute__((noinline)) void compute_cpu(uint64_t us)
{
	struct timespec ts;
	uint64_t x = sink, end;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec * 1000000000ull + ts.tv_nsec + us * 1000;
	do {
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while (ts.tv_sec * 1000000000ull + ts.tv_nsec < end);
	sink = x;
}

/* deep mode: the stack a snapshot cannot hold. */
#define DEEP_FRAMES 2000

static __attribute__((noinline)) void deep_bottom(unsigned int ms)
{
	struct timespec ts = { 0, ms * 1000000l };

	nanosleep(&ts, NULL);
}

static __attribute__((noinline)) uint64_t deep_recurse(int depth, unsigned int ms)
{
	volatile char pad[1024]; /* the frame's size: a snapshot holds few of them */
	uint64_t r;

	pad[depth % sizeof(pad)] = (char)depth;
	if (depth == 0)
		deep_bottom(ms);
	r = depth ? deep_recurse(depth - 1, ms) : 0;
	return r + pad[(depth * 7) % sizeof(pad)]; /* used after the call: no tail call */
}

static void *stream, *stream2, *func;
static struct fr_scale_args args;

static void launch_on(void *s)
{
	void *params[] = { &args };

	CU(cuLaunchKernel, func, 1, 1, 1, ZK_BLOCK, 1, 1, 0, s, params, NULL);
}

static void launch(void)
{
	launch_on(stream);
}

/* busy mode: ms milliseconds of launches on two streams, each synchronized while the other has
 * a kernel queued, so that no synchronize finds the device without work. */
static void busy_for(unsigned int ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;

	launch_on(stream2);
	while (now_ns() < end) {
		launch_on(stream);
		CU(cuStreamSynchronize, stream2);
		launch_on(stream2);
		CU(cuStreamSynchronize, stream);
	}
	CU(cuStreamSynchronize, stream2);
}

/* helper mode: one input at a time through a condition variable. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int step_done; /* xla mode: set by the host function */

static void step_finished(void *arg)
{
	pthread_mutex_lock(&mu);
	*(int *)arg = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static int ready, done, period;

/*
 * A jump to fn in an anonymous executable page, the shape of a libffi closure or JIT code: a
 * host function the recorder cannot probe (no file maps it). NULL where this machine has no
 * such stub here or the page cannot be made.
 */
static void (*anon_trampoline(void (*fn)(void *)))(void *)
{
#if defined(__x86_64__)
	unsigned char stub[16] = { 0x48, 0xb8 }; /* movabs $fn, %rax; jmp *%rax */
	uintptr_t a = (uintptr_t)fn;

	memcpy(stub + 2, &a, sizeof(a));
	stub[10] = 0xff;
	stub[11] = 0xe0;
#elif defined(__aarch64__)
	unsigned char stub[16] = { 0x50, 0x00, 0x00, 0x58,   /* ldr x16, #8 */
				   0x00, 0x02, 0x1f, 0xd6 }; /* br x16 */
	uintptr_t a = (uintptr_t)fn;

	memcpy(stub + 8, &a, sizeof(a));
#else
	return NULL;
#endif
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		return NULL;
	memcpy(page, stub, sizeof(stub));
	__builtin___clear_cache((char *)page, (char *)page + sizeof(stub));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		return NULL;
	return (void (*)(void *))page;
}

static void *helper_main(void *arg)
{
	pthread_setname_np(pthread_self(), "helper");
	for (;;) {
		pthread_mutex_lock(&mu);
		while (ready && !done)
			pthread_cond_wait(&cv, &mu);
		if (done) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		pthread_mutex_unlock(&mu);
		compute_input(period);
		pthread_mutex_lock(&mu);
		ready = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
}

int main(int argc, char **argv)
{
	void *graph = NULL, *exec = NULL;
	const char *mode;
	int iter, fd = -1;
	pthread_t helper;
	char buf[4096];

	if (argc < 5) {
		fprintf(stderr,
			"usage: feeder LIBCUDA sleep|file|graph|helper|deep|cpu|busy|xla|poll|free|child|heap|fault ITER PERIOD_MS [FILE]\n");
		return 2;
	}
	mode = argv[2];
	iter = atoi(argv[3]);
	period = atoi(argv[4]);
	cuda_dl_missing = 77; /* this driver lacks a function: the test skips the mode */
	cuda_dl_open("feeder", argv[1]);
	pthread_setname_np(pthread_self(), "feeder");
	cuda_dl_fr_scale(&func, &stream, &args);
	if (!strcmp(mode, "graph")) {
		cuda_dl_sym(
			"cuGraphLaunch"); /* skip before capturing if the driver cannot replay */
		/* Work done and synchronized first: the captured launches that follow do not run,
		 * so the device stays idle until the first replay (a gap only if they are not
		 * taken for work). */
		launch();
		CU(cuStreamSynchronize, stream);
		CU(cuStreamBeginCapture_v2, stream, 0);
		for (int k = 0; k < 4; k++)
			launch();
		CU(cuStreamEndCapture, stream, &graph);
		CU(cuGraphInstantiateWithFlags, &exec, graph, 0ull);
	}
	if (!strcmp(mode, "fault")) {
		if (argc < 6) {
			fprintf(stderr, "feeder: fault needs a FILE to make\n");
			return 2;
		}
		fault_open(argv[5]);
	}
	if (!strcmp(mode, "file")) {
		fd = open(argv[5], O_RDONLY);
		if (fd < 0) {
			perror("feeder: open");
			return 1;
		}
	}
	if (!strcmp(mode, "helper"))
		pthread_create(&helper, NULL, helper_main, NULL);
	if (!strcmp(mode, "xla")) {
		void (*host_fn)(void *) = step_finished;
		bool hold = false;
		void *stream_b, *ev;

		for (int a = 5; a < argc; a++) {
			if (!strcmp(argv[a], "hold"))
				hold = true;
			if (!strcmp(argv[a], "anon") &&
			    !(host_fn = anon_trampoline(step_finished))) {
				fprintf(stderr, "feeder: no anonymous trampoline here\n");
				return 77;
			}
		}

		cuda_dl_sym("cuLaunchHostFunc"); /* skip where the driver cannot */
		CU(cuStreamCreate, &stream_b, 1);
		CU(cuEventCreate, &ev, 2); /* CU_EVENT_DISABLE_TIMING, as XLA's */
		CU(cuStreamBeginCapture_v2, stream, 0);
		for (int k = 0; k < 12; k++) /* ~3.4 ms: longer than the host's next calls */
			launch();
		CU(cuStreamEndCapture, stream, &graph);
		CU(cuGraphInstantiateWithFlags, &exec, graph, 0ull);
		if (hold) {
			printf("ready %d\n", getpid());
			fflush(stdout);
			if (!fgets(buf, sizeof(buf), stdin))
				return 1;
		}
		for (int i = 0; i < iter; i++) {
			compute_input(period);
			CU(cuGraphLaunch, exec, stream);
			CU(cuEventRecord, ev, stream);
			CU(cuStreamWaitEvent, stream_b, ev, 0);
			launch_on(stream_b);
			step_done = 0;
			CU(cuLaunchHostFunc, stream_b, host_fn, &step_done);
			pthread_mutex_lock(&mu);
			while (!step_done)
				pthread_cond_wait(&cv, &mu);
			pthread_mutex_unlock(&mu);
		}
		printf("feeder: xla %d iterations at %llu\n", iter, (unsigned long long)now_ns());
		return 0;
	}
	if (!strcmp(mode, "poll")) {
		volatile uint64_t *flag = (volatile uint64_t *)args.data;

		args.c = fr_add(fr_one(), fr_one());
		args.data[0] = fr_one();
		for (int i = 0; i < iter; i++) {
			uint64_t was = flag[0];

			launch();
			while (flag[0] == was)
				; /* the GPU's write, seen by polling: no call tells the driver */
			compute_input(period);
		}
		printf("feeder: poll %d iterations at %llu\n", iter, (unsigned long long)now_ns());
		return 0;
	}
	if (!strcmp(mode, "free")) {
		for (int i = 0; i < iter; i++) {
			void *big;

			CU(cuMemAlloc_v2, &big, (size_t)64 << 20);
			for (int k = 0; k < 4; k++)
				launch();
			CU(cuMemFree_v2, big);
			compute_input(period);
		}
		printf("feeder: free %d iterations at %llu\n", iter, (unsigned long long)now_ns());
		return 0;
	}
	if (!strcmp(mode, "busy")) {
		CU(cuStreamCreate, &stream2, 1);
		busy_for(iter);
		compute_input(period);
		busy_for(iter);
		printf("feeder: busy %d ms, %d ms on the CPU, %d ms at %llu\n", iter, period, iter,
		       (unsigned long long)now_ns());
		return 0;
	}

	for (int i = 0; i < iter; i++) {
		if (!strcmp(mode, "sleep")) {
			struct timespec ts = { 0, period * 1000000l };

			nanosleep(&ts, NULL);
		} else if (!strcmp(mode, "file")) {
			if (read(fd, buf, sizeof(buf)) <= 0)
				break;
		} else if (!strcmp(mode, "graph")) {
			compute_input(period);
		} else if (!strcmp(mode, "child")) {
			run_child(period);
		} else if (!strcmp(mode, "heap")) {
			heap_churn(period);
		} else if (!strcmp(mode, "fault")) {
			gather_rows(period);
		} else if (!strcmp(mode, "cpu")) {
			compute_cpu(atof(argv[4]) * 1000);
		} else if (!strcmp(mode, "deep")) {
			sink += deep_recurse(DEEP_FRAMES, period);
		} else {
			pthread_mutex_lock(&mu);
			while (!ready)
				pthread_cond_wait(&cv, &mu);
			ready = 0;
			pthread_cond_broadcast(&cv);
			pthread_mutex_unlock(&mu);
		}
		if (exec) {
			CU(cuGraphLaunch, exec, stream);
		} else {
			for (int k = 0; k < 4; k++)
				launch();
		}
		CU(cuStreamSynchronize, stream);
	}
	if (!strcmp(mode, "helper")) {
		pthread_mutex_lock(&mu);
		done = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		pthread_join(helper, NULL);
	}
	if (exec) {
		CU(cuGraphExecDestroy, exec);
		CU(cuGraphDestroy, graph);
	}
	printf("feeder: %s %d iterations at %llu\n", mode, iter, (unsigned long long)now_ns());
	return 0;
}
