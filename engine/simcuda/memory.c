// SPDX-License-Identifier: MIT
/* simcuda's memory: device and pinned allocations, copies (staged from pageable memory) and
 * memsets. */
#include <stdlib.h>
#include <string.h>

#include "simcuda_int.h"

/* ---- memory ------------------------------------------------------------------------------ */

API CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes)
{
	CHECK_CTX();
	if (!dptr || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* the driver aligns allocations to at least 256 bytes */
	size_t size = (bytes + 255) & ~(size_t)255;
	void *p = aligned_alloc(256, size);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	range_add(&sim.device_mem, p, bytes);
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

/* Freeing waits for the context's outstanding work, as cuMemFree does when the memory might
 * still be in use (a kernel never reads freed memory), then unmaps it (SIM_UNMAP_NS). */
API CUresult cuMemFree(CUdeviceptr dptr)
{
	CHECK_CTX();
	if (!dptr)
		return CUDA_SUCCESS;
	void *p = (void *)(uintptr_t)dptr;
	size_t bytes = 0;
	if (!range_size(&sim.device_mem, p, &bytes))
		return CUDA_ERROR_INVALID_VALUE;
	ctx_drain(tls_ctx);
	device_time(now_ns(), SIM_UNMAP_NS + SIM_UNMAP_NS_PER_MB * (bytes >> 20));
	if (!range_del(&sim.device_mem, p))
		return CUDA_ERROR_INVALID_VALUE;
	free(p);
	return CUDA_SUCCESS;
}

/* Pinned memory is ordinary memory the simulator remembers, so async copies from it can return
 * at once while copies from anything else block as the driver's staging does. */
static CUresult host_alloc(void **pp, size_t bytes)
{
	CHECK_CTX();
	if (!pp || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	range_add(&sim.pinned_mem, p, bytes);
	*pp = p;
	return CUDA_SUCCESS;
}

API CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
	return host_alloc(pp, bytes);
}

API CUresult cuMemAllocHost(void **pp, size_t bytes)
{
	return host_alloc(pp, bytes);
}

API CUresult cuMemFreeHost(void *p)
{
	CHECK_CTX();
	if (!range_del(&sim.pinned_mem, p))
		return CUDA_ERROR_INVALID_VALUE;
	free(p);
	return CUDA_SUCCESS;
}

/* Enqueue one DMA of bytes from src to dst on s; returns its sequence number, 0 on ENOMEM. */
static uint64_t dma(struct CUstream_st *s, void *dst, const void *src, size_t bytes, bool staged)
{
	struct op *op = op_new(OP_COPY);
	if (!op)
		return 0;
	op->copy.dst = dst;
	op->copy.src = src;
	op->copy.bytes = bytes;
	op->copy.staged = staged;
	return enqueue(s, op);
}

/*
 * A copy between pageable host memory and the device, as the driver does it: the DMA engine can
 * only reach pinned memory, so the calling thread copies the data chunk by chunk through the
 * context's two pinned bounce buffers (CPU memcpy into one while the DMA of the other runs),
 * and returns when the last chunk has landed.  Real work on the calling thread, and a wait per
 * chunk for the engine: why a pageable copy costs what pinned copies do not.
 */
static CUresult staged_copy(struct CUstream_st *s, void *dst, const void *src, size_t bytes,
			    bool to_device)
{
	struct staging *st = &s->ctx->stage;
	uint64_t pending[2] = { 0, 0 };
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&st->mu);
	for (size_t off = 0, i = 0; off < bytes; off += SIM_STAGE_CHUNK, i ^= 1) {
		size_t len = bytes - off < SIM_STAGE_CHUNK ? bytes - off : SIM_STAGE_CHUNK;
		if (pending[i])
			stream_wait_seq(s, pending[i]); /* this bounce buffer's last DMA is done */
		if (to_device) {
			memcpy(st->buf[i], (const char *)src + off, len);
			pending[i] = dma(s, (char *)dst + off, st->buf[i], len, true);
		} else {
			uint64_t seq = dma(s, st->buf[i], (const char *)src + off, len, true);
			if (seq)
				stream_wait_seq(s, seq);
			memcpy((char *)dst + off, st->buf[i], len);
			pending[i] = 0;
		}
		if (to_device && !pending[i]) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
	}
	for (int i = 0; i < 2; i++)
		if (pending[i])
			stream_wait_seq(s, pending[i]);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

static CUresult copy(void *dst, const void *src, size_t bytes, CUstream h, bool async,
		     const void *host)
{
	CHECK_CTX();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(async ? h : NULL, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (bytes == 0)
		return CUDA_SUCCESS;
	const void *dev = host == src ? dst : src;
	if (!range_has(&sim.device_mem, dev, bytes) || !host)
		return CUDA_ERROR_INVALID_VALUE;
	/* Synchronous and asynchronous copies from pageable memory are staged and return when
	 * done; async ones from pinned memory return at once, sync ones when the DMA is done. */
	if (!range_has(&sim.pinned_mem, host, bytes))
		return staged_copy(s, dst, src, bytes, host == src);
	uint64_t seq = dma(s, dst, src, bytes, false);
	if (!seq)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!async)
		stream_wait_seq(s, seq);
	return CUDA_SUCCESS;
}

API CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes)
{
	return copy((void *)(uintptr_t)dst, src, bytes, NULL, false, src);
}

API CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes)
{
	return copy(dst, (const void *)(uintptr_t)src, bytes, NULL, false, dst);
}

API CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream h)
{
	return copy((void *)(uintptr_t)dst, src, bytes, h, true, src);
}

API CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream h)
{
	return copy(dst, (const void *)(uintptr_t)src, bytes, h, true, dst);
}

static CUresult memset_op(CUdeviceptr dst, uint32_t value, unsigned elem, size_t count, CUstream h,
			  bool async)
{
	CHECK_CTX();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(async ? h : NULL, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (count == 0)
		return CUDA_SUCCESS;
	if (!range_has(&sim.device_mem, (void *)(uintptr_t)dst, count * elem) || (dst % elem) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct op *op = op_new(OP_MEMSET);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->memset.dst = (void *)(uintptr_t)dst;
	op->memset.value = value;
	op->memset.elem = elem;
	op->memset.count = count;
	uint64_t seq = enqueue(s, op);
	if (!async)
		stream_wait_seq(s, seq);
	return CUDA_SUCCESS;
}

API CUresult cuMemsetD8(CUdeviceptr dst, unsigned char v, size_t n)
{
	return memset_op(dst, v, 1, n, NULL, false);
}

API CUresult cuMemsetD32(CUdeviceptr dst, unsigned int v, size_t n)
{
	return memset_op(dst, v, 4, n, NULL, false);
}

API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
{
	return memset_op(dst, v, 1, n, h, true);
}

API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
{
	return memset_op(dst, v, 4, n, h, true);
}
