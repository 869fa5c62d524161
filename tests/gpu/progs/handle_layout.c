/*
 * Where does the CUDA driver keep a kernel's name, relative to its CUfunction / CUkernel handle?
 * A recorder attached to a running process never sees the cuModuleGetFunction/cuLibraryGetKernel
 * calls that named its kernels; if the handle leads to the name through a fixed chain of
 * pointers, the recorder can read it from the target's memory instead.
 *
 * Loads a fatbin, looks its kernels up both ways, and searches the memory behind each handle
 * (safely, through process_vm_readv) for the name: inline, one pointer away, or two.
 * Build: gcc -O2 handle_layout.c -I/usr/local/cuda/include -lcuda -o handle_layout
 * Run:   ./handle_layout FATBIN NAME...
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define CK(x)                                                               \
	do {                                                                \
		CUresult r_ = (x);                                          \
		if (r_ != CUDA_SUCCESS) {                                   \
			const char *s_ = "?";                               \
			cuGetErrorName(r_, &s_);                            \
			fprintf(stderr, "handle_layout: %s: %s\n", #x, s_); \
			exit(1);                                            \
		}                                                           \
	} while (0)

static size_t peek(uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)addr, len };
	ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	return n < 0 ? 0 : (size_t)n;
}

static int is_name_at(uint64_t p, const char *name)
{
	char s[256];
	size_t n = strlen(name) + 1;
	if (p < 4096 || n > sizeof(s) || peek(p, s, n) != n)
		return 0;
	return memcmp(s, name, n) == 0;
}

static void scan(const char *what, uint64_t h, const char *name)
{
	uint64_t w[128], w2[128];
	size_t n = peek(h, w, sizeof(w)) / 8;
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		if (memmem(&w[i], 8, name, strlen(name) < 8 ? strlen(name) : 8) == &w[i] &&
		    is_name_at(h + 8 * i, name)) {
			printf("  %-22s %-16s inline at +0x%zx\n", what, name, 8 * i);
			found++;
		}
		if (is_name_at(w[i], name)) {
			printf("  %-22s %-16s *(h+0x%zx)\n", what, name, 8 * i);
			found++;
		}
	}
	for (size_t i = 0; i < n && found == 0; i++) {
		size_t m = peek(w[i], w2, sizeof(w2)) / 8;
		for (size_t j = 0; j < m; j++)
			if (is_name_at(w2[j], name)) {
				printf("  %-22s %-16s *(*(h+0x%zx)+0x%zx)\n", what, name, 8 * i,
				       8 * j);
				found++;
			}
	}
	if (!found)
		printf("  %-22s %-16s not found within two pointers of %#lx\n", what, name, h);
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUlibrary lib;
	FILE *f;
	long len;
	char *img;

	if (argc < 3) {
		fprintf(stderr, "usage: handle_layout FATBIN NAME...\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	img = malloc(len);
	if (fread(img, 1, len, f) != (size_t)len)
		return 1;
	fclose(f);
	int ver = 0;
	CK(cuInit(0));
	CK(cuDriverGetVersion(&ver));
	printf("driver API version %d\n", ver);
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, img));
	CK(cuLibraryLoadData(&lib, img, NULL, NULL, 0, NULL, NULL, 0));
	for (int i = 2; i < argc; i++) {
		CUfunction fn, kf;
		CUkernel k;
		CK(cuModuleGetFunction(&fn, mod, argv[i]));
		scan("cuModuleGetFunction", (uint64_t)fn, argv[i]);
		CK(cuLibraryGetKernel(&k, lib, argv[i]));
		scan("cuLibraryGetKernel", (uint64_t)k, argv[i]);
		CK(cuKernelGetFunction(&kf, k));
		scan("cuKernelGetFunction", (uint64_t)kf, argv[i]);
	}
	return 0;
}
