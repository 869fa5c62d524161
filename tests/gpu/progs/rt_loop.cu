// A runtime-API program as nvcc builds it (cudart static): the recorder must see its launches,
// copies and syncs in libcuda.so.1 although the program never names the driver API.
// Build: nvcc -O2 -arch=sm_90 rt_loop.cu -o rt_loop   (add --default-stream per-thread for _ptsz)
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                                  \
	do {                                                                                   \
		cudaError_t e_ = (x);                                                          \
		if (e_ != cudaSuccess) {                                                       \
			fprintf(stderr, "rt_loop: %s: %s\n", #x, cudaGetErrorString(e_));     \
			exit(1);                                                               \
		}                                                                              \
	} while (0)

__global__ void saxpy_loop(float *y, const float *x, float a, int n, int reps)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = y[i];
	for (int r = 0; r < reps; r++)
		v = a * x[i] + v * 0.999f;
	y[i] = v;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	const int n = 1 << 20;
	float *hx, *dx, *dy;
	cudaStream_t s;
	cudaEvent_t ev;

	CK(cudaMallocHost(&hx, n * sizeof(float)));
	for (int i = 0; i < n; i++)
		hx[i] = (float)(i % 97) / 97.0f;
	CK(cudaMalloc(&dx, n * sizeof(float)));
	CK(cudaMalloc(&dy, n * sizeof(float)));
	CK(cudaMemset(dy, 0, n * sizeof(float)));
	CK(cudaStreamCreate(&s));
	CK(cudaEventCreate(&ev));
	for (int it = 0; it < iters; it++) {
		CK(cudaMemcpyAsync(dx, hx, n * sizeof(float), cudaMemcpyHostToDevice, s));
		saxpy_loop<<<(n + 255) / 256, 256, 0, s>>>(dy, dx, 1.0001f, n, 64);
		CK(cudaEventRecord(ev, s));
		if (it % 2)
			CK(cudaStreamSynchronize(s));
		else
			CK(cudaEventSynchronize(ev));
	}
	CK(cudaDeviceSynchronize());
	printf("rt_loop: %d iterations: %d launches, %d copies, %d stream syncs, %d event syncs\n",
	       iters, iters, iters, iters / 2, iters - iters / 2);
	return 0;
}
