// SPDX-License-Identifier: GPL-2.0
/*
 * A neighbour that faults a lot (tests/bench/fault_cost.sh): for SECONDS, writes one byte to each
 * page of a private mapping of a cached file, then unmaps the copies (MADV_DONTNEED) and again.
 * A write fault of a private file mapping copies the page from the page cache through
 * filemap_fault every time (no fault-around maps it ahead), so each is one firing of
 * filemap:mm_filemap_fault. Prints its faults a second and its CPU time (user and system) a
 * fault: the figure a loaded machine disturbs less.
 *
 * usage: faulter FILE SECONDS
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t size = (size_t)16 << 20, faults = 0;
	double start, end, cpu;
	volatile char *m;
	char buf[4096];
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: faulter FILE SECONDS\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror("faulter: open");
		return 1;
	}
	memset(buf, 1, sizeof(buf));
	for (size_t off = 0; off < size; off += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != sizeof(buf)) {
			perror("faulter: write");
			return 1;
		}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		perror("faulter: mmap");
		return 1;
	}
	cpu = cpu_now();
	start = now();
	end = start + atof(argv[2]);
	while (now() < end) {
		for (size_t off = 0; off < size; off += 4096)
			m[off] = 2;
		faults += size / 4096;
		madvise((void *)m, size, MADV_DONTNEED);
	}
	cpu = cpu_now() - cpu;
	printf("faults/s %.0f cpu_ns/fault %.0f\n", faults / (now() - start),
	       faults ? cpu * 1e9 / faults : 0);
	return 0;
}
