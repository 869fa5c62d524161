// A launch-bound loop: N empty kernels on one stream, one synchronize at the end; prints the
// wall time per launch. Build: nvcc -O2 -arch=sm_90 empty_loop.cu -o empty_loop
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

static double now_s()
{
	timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	empty_kernel<<<1, 1>>>();
	cudaDeviceSynchronize();
	double t0 = now_s();
	for (int i = 0; i < n; i++)
		empty_kernel<<<1, 1>>>();
	cudaError_t e = cudaDeviceSynchronize();
	double t1 = now_s();
	if (e != cudaSuccess) {
		fprintf(stderr, "empty_loop: %s\n", cudaGetErrorString(e));
		return 1;
	}
	printf("per_launch_us %.3f\n", (t1 - t0) * 1e6 / n);
	return 0;
}
