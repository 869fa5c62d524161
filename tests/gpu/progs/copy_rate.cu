// The host<->device copy rate of this machine, for `gapscope report --copy-rate`: async copies
// between pinned host memory and the device, 1 MiB to 256 MiB each way, each size timed over
// several copies on one stream; a least-squares line through (bytes, seconds) per direction
// and through both, printed as "copy_rate DIR GBPS LATENCY_US". Build:
//   nvcc -O2 -arch=sm_90 copy_rate.cu -o copy_rate
#include <cstdio>
#include <ctime>
#include <cuda_runtime.h>

static double now_s()
{
	timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

struct fit {
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	void add(double x, double y) { n++; sx += x; sy += y; sxx += x * x; sxy += x * y; }
	void print(const char *dir) const
	{
		double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx); // s per byte
		double icpt = (sy - slope * sx) / n;
		printf("copy_rate %s %.2f %.1f\n", dir, 1e-9 / slope, icpt > 0 ? icpt * 1e6 : 0.0);
	}
};

int main()
{
	const size_t max = 256u << 20;
	void *h, *d;
	cudaStream_t s;
	fit up, down, both;

	if (cudaMallocHost(&h, max) || cudaMalloc(&d, max) || cudaStreamCreate(&s)) {
		fprintf(stderr, "copy_rate: no device memory\n");
		return 1;
	}
	cudaMemcpyAsync(d, h, max, cudaMemcpyHostToDevice, s); // warm up both ways
	cudaMemcpyAsync(h, d, max, cudaMemcpyDeviceToHost, s);
	cudaStreamSynchronize(s);
	for (size_t b = 1u << 20; b <= max; b <<= 1) {
		for (int dir = 0; dir < 2; dir++) {
			int reps = b < (16u << 20) ? 20 : 5;
			double t0 = now_s();

			for (int i = 0; i < reps; i++)
				cudaMemcpyAsync(dir ? h : d, dir ? d : h, b,
						dir ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, s);
			if (cudaStreamSynchronize(s)) {
				fprintf(stderr, "copy_rate: a copy failed\n");
				return 1;
			}
			double per = (now_s() - t0) / reps;

			(dir ? down : up).add((double)b, per);
			both.add((double)b, per);
			printf("bytes %zu %s %.1f us\n", b, dir ? "DtoH" : "HtoD", per * 1e6);
		}
	}
	up.print("HtoD");
	down.print("DtoH");
	both.print("both");
	return 0;
}
