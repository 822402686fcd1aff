"""The driver work of a steady-state GPU call: compiled modules called a
third time with the same shapes on device buffers, their host code run
against the recording stub of the driver (no GPU: kernels are not run, each
driver call is counted). A call that repeats an earlier one allocates and
frees nothing from the driver (libRopeCudaRuntime.so keeps its blocks),
loads no module and creates no stream; what remains is its launches, the
synchronisation at its end, and the event that orders the reuse of the
result the host freed (recorded at the free, waited for at the reuse).

Decode (bf16, GQA 32/8, head dim 128, 4096 keys) makes 8 launches today:
the attention kernel, the split-K partials' merge as reductions, and the
normalisation; the target is at most 3 (docs/gpu.md).
"""

import ctypes
import os
from pathlib import Path

import rope_mlir
from rope_mlir import cuda

stub = ctypes.CDLL("libcuda.so.1")
stub.ropeCudaStubCount.restype = ctypes.c_int64
stub.ropeCudaStubCount.argtypes = [ctypes.c_char_p]
assert stub.ropeCudaStubCount(b"cuInit") >= 0  # the stub, not a driver

GROUPS = {
    "launches": ["cuLaunchKernel"],
    "allocations": ["cuMemAlloc", "cuMemAllocAsync", "cuMemAllocManaged"],
    "frees": ["cuMemFree", "cuMemFreeAsync", "cuPointerGetAttribute"],
    "module loads": ["cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleGetFunction"],
    "stream creations": ["cuStreamCreate", "cuStreamDestroy"],
    "copies": ["cuMemcpyAsync", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemsetD32Async",
               "cuMemsetD16Async"],
    "synchronisations": ["cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize"],
    "events": ["cuEventCreate", "cuEventRecord", "cuEventDestroy", "cuStreamWaitEvent"],
}


def steady_state(name, source, function, shapes, itemsize):
    module = rope_mlir.compile(source, target="cuda", chip="sm_90",
                               output=Path(os.environ["ROPE_KERNEL_CACHE"]))
    buffers = [cuda.DeviceBuffer(itemsize * int.__mul__(*s[:2]) * s[2] * s[3]) for s in shapes]
    for call in range(3):
        if call == 2:
            stub.ropeCudaStubReset()
        result = module.call_device(function, buffers, shapes)
        module.free_result(result, buffers)
    counts = {group: sum(stub.ropeCudaStubCount(c.encode()) for c in calls)
              for group, calls in GROUPS.items()}
    print(f"{name}: " + ", ".join(f"{group} {n}" for group, n in counts.items()), flush=True)


H, HKV, D, SK = 32, 8, 128, 4096
q, kv = f"tensor<1x{H}x1x{D}xbf16>", f"tensor<1x{HKV}x{SK}x{D}xbf16>"
steady_state("decode", f"""
func.func @decode(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %o = rope.attention %q, %k, %v causal : {q}, {kv}, {kv}
  return %o : {q}
}}""", "decode", [(1, H, 1, D), (1, HKV, SK, D), (1, HKV, SK, D)], 2)

S = 1024
p = f"tensor<1x{H}x{S}x{D}xf16>"
steady_state("prefill", f"""
func.func @prefill(%q: {p}, %k: {p}, %v: {p}) -> {p} {{
  %o = rope.attention %q, %k, %v causal : {p}, {p}, {p}
  return %o : {p}
}}""", "prefill", [(1, H, S, D)] * 3, 2)
