#!/usr/bin/env python3
"""Where a GPU call's host time goes, on a GPU machine with a bundle
(`ROPE_PREBUILT_ONLY=1 ROPE_KERNEL_CACHE=DIR python3 benchmarks/gpu_call_overhead.py`):
the runtime's calls one at a time (stream create + destroy, a stream-ordered
allocation and free, a synchronisation of an idle stream, the context push
and pop every runtime call makes), the Python side of a call, and whole
calls of the smallest benchmark module, all in microseconds (median of 200).
Printed, not written: it explains the gap between a call's time and its
kernels' in benchmarks/gpu.py.
"""

from __future__ import annotations

import ctypes

import gpu  # benchmarks/gpu.py: the modules, device_call, timed, kernel_times
from rope_mlir import cuda
import rope_testing as T


def median_us(fn, reps=200):
    """Host time of `fn` alone (no synchronisation after it)."""
    return gpu.timed(fn, sync=lambda: None, reps=reps, warmup=10) * 1e6


def main():
    import torch
    name = "rotate S=1024"
    lib = T.gpu_compile(gpu.MODULES[name])  # loads the runtime from the kernel folder
    rt = cuda.runtime()
    rt.mgpuStreamCreate.restype = ctypes.c_void_p
    rt.mgpuStreamDestroy.argtypes = [ctypes.c_void_p]
    rt.mgpuStreamSynchronize.argtypes = [ctypes.c_void_p]

    def stream_create_destroy():
        rt.mgpuStreamDestroy(rt.mgpuStreamCreate())

    stream = rt.mgpuStreamCreate()

    def alloc_free():
        rt.mgpuMemFree(rt.mgpuMemAlloc(1 << 20, stream, False), stream)

    rows = {"stream create + destroy": median_us(stream_create_destroy),
            "alloc + free (1 MiB, stream-ordered)": median_us(alloc_free),
            "synchronise an idle stream": median_us(lambda: rt.mgpuStreamSynchronize(stream)),
            "ropeCudaTakeError (a ctypes call)": median_us(rt.ropeCudaTakeError)}

    x = torch.randn(1, gpu.H, 1024, gpu.D, device="cuda", dtype=torch.float16)
    p = torch.arange(1024, device="cuda", dtype=torch.int64)
    call = gpu.device_call(lib, "rotate", (x, p))
    _, result_sig = lib.functions["rotate"].callable_types()
    from rope_mlir import _abi

    def descriptors_only():
        [_abi.descriptor(t.data_ptr(), tuple(t.shape)) for t in (x, p)]
        _abi.descriptor_type(len(result_sig.shape))()

    rows["Python: descriptors of a call"] = median_us(descriptors_only)
    rows[f"whole call of {name} (call_device + free_result)"] = median_us(call)
    kernels, names = gpu.kernel_times(torch, call)
    rows[f"  its kernels ({len(kernels)})"] = sum(kernels) * 1e6
    for what, us in rows.items():
        print(f"{us:9.1f} µs  {what}")
    rt.mgpuStreamDestroy(stream)


if __name__ == "__main__":
    main()
