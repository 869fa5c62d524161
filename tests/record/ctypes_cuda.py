# The CUDA driver a Python test program drives through ctypes (simcuda, or a libcuda.so.1 by its
# path): device 0's primary context, simcuda's fr_scale kernel, a stream, and its arguments.
#   cu, launch, sync = ctypes_cuda.open_driver(path, "program")
#   launch(); sync()
import ctypes
import sys


class ScaleArgs(ctypes.Structure):  # engine/kernels.h: struct fr_scale_args
    _fields_ = [("data", ctypes.c_void_p), ("c", ctypes.c_uint64 * 4), ("n", ctypes.c_uint64)]


def open_driver(path, prog):
    lib = ctypes.CDLL(path)

    def cu(name, *args):
        r = getattr(lib, name)(*args)
        if r:
            sys.exit("%s: %s: error %d" % (prog, name, r))

    dev, ctx, mod = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
    func, stream, mem = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    fatbin = (ctypes.c_uint32 * 4)(0xBA55ED50)  # the fatbin header's magic
    cu("cuInit", 0)
    cu("cuDeviceGet", ctypes.byref(dev), 0)
    cu("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    cu("cuCtxSetCurrent", ctx)
    cu("cuModuleLoadData", ctypes.byref(mod), fatbin)
    cu("cuModuleGetFunction", ctypes.byref(func), mod, b"fr_scale")
    cu("cuStreamCreate", ctypes.byref(stream), 1)
    cu("cuMemAlloc_v2", ctypes.byref(mem), ctypes.c_size_t(256 * 32))
    args = ScaleArgs(mem.value, (ctypes.c_uint64 * 4)(0x1FFFFFFFE, 0x5884B7FA00034802,
                                                      0x998C4FEFECBC4FF5, 0x1824B159ACC5056F),
                     256)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(args), ctypes.c_void_p))
    keep = (args, params)  # alive as long as the closures

    def launch():
        cu("cuLaunchKernel", func, 1, 1, 1, 256, 1, 1, 0, stream, params, None)

    def sync():
        cu("cuStreamSynchronize", stream)

    launch.keep = keep
    return cu, launch, sync
