// SPDX-License-Identifier: GPL-2.0
/*
 * A CPU burner with known phases, for the sampler test (tests/cases/record_sampler.sh):
 * burn_user() spins in user mode for --user S seconds of CPU time, burn_faults() maps, touches
 * and unmaps fresh memory (time in page faults, entered from user mode without a system call)
 * for --faults S, burn_kernel() reads /dev/zero (read_zero, under vfs_read) for --kernel S.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

static char buf[256 << 10];

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long burn_user(double s)
{
	volatile unsigned long x = 1;
	double end = cpu_s() + s;

	while (cpu_s() < end)
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static void burn_kernel(double s)
{
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	double end = cpu_s() + s;

	if (fd < 0) {
		perror("/dev/zero");
		exit(1);
	}
	while (cpu_s() < end)
		if (read(fd, buf, sizeof(buf)) < 0) {
			perror("read");
			exit(1);
		}
	close(fd);
}

__attribute__((noinline)) static void burn_faults(double s)
{
	const size_t len = 8 << 20;
	double end = cpu_s() + s;

	while (cpu_s() < end) {
		volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
		madvise((void *)p, len, MADV_NOHUGEPAGE); /* a fault per 4 KiB page */
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		munmap((void *)p, len);
	}
}

int main(int argc, char **argv)
{
	double user = 0.6, faults = 0, kernel = 0.4;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--user"))
			user = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--faults"))
			faults = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--kernel"))
			kernel = atof(argv[i + 1]);
	}
	burn_user(user);
	burn_faults(faults);
	burn_kernel(kernel);
	printf("burn_user=%p\nburn_faults=%p\n", (void *)burn_user, (void *)burn_faults);
	return 0;
}
