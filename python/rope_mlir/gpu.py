"""Compile MLIR for NVIDIA GPUs (``--rope-lower-to-nvvm``) and run it on numpy arrays.

    lib = gpu.compile_module(MLIR_TEXT)          # cubin for $ROPE_GPU_CHIP (sm_90)
    out = lib.call("kernel", x, positions)       # host arrays in, host array out

The lowered functions take and return GPU buffers; `GpuLibrary.call` copies
the arguments to the device, calls the function's ``_mlir_ciface_`` wrapper
with device memref descriptors, copies the result back and frees what the
function allocated. Everything runs through our runtime,
``libRopeCudaRuntime.so`` (the mgpu* API on the CUDA driver).

Ahead of time (a GPU machine has the NVIDIA driver but no LLVM):
``$ROPE_KERNEL_CACHE`` names a folder where every compiled module is kept,
keyed by a hash of its text and pipeline, next to a copy of the runtime;
with ``$ROPE_PREBUILT_ONLY=1`` nothing is compiled and a module missing from
the cache is an error. The key does not cover the compiler itself (the GPU
machine has none to ask), so a cache is made fresh per build: `make
gpu-bundle` empties its folder first. ``$ROPE_GPU_COMPILE_ONLY=1`` compiles (and caches)
without touching a GPU: test files then stop after compiling each case.

Without a GPU, ``$ROPE_GPU_EMULATE=1`` compiles through
``--rope-test-gpu-mapping-on-cpu`` instead: the same mapping onto grids of
threads, with the kernels run as host loops, so the GPU test files check the
mapping numerically on the CPU (everything but NVVM code generation and the
runtime).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from . import compiler
from .compiler import (CompileError, _DTYPES, _descriptor_type, _run, check_arguments,
                       parse_signatures)


def chip() -> str:
    return os.environ.get("ROPE_GPU_CHIP", "sm_90")


def compile_only() -> bool:
    """True when test files should compile their cases but not run them."""
    return os.environ.get("ROPE_GPU_COMPILE_ONLY", "") not in ("", "0")


def emulate() -> bool:
    return os.environ.get("ROPE_GPU_EMULATE", "") not in ("", "0")


def prebuilt_only() -> bool:
    return os.environ.get("ROPE_PREBUILT_ONLY", "") not in ("", "0")


def pipeline(chip_name: str | None = None, **options) -> str:
    """``--rope-lower-to-nvvm`` for `chip_name` (default `chip()`); keyword
    options are pipeline options with '_' for '-', e.g. ``block_size=128``."""
    opts = {"chip": chip_name or chip(), **options}
    text = " ".join(f"{k.replace('_', '-')}={str(v).lower() if isinstance(v, bool) else v}"
                    for k, v in opts.items())
    return f"--rope-lower-to-nvvm={text}"


def runtime_path() -> Path:
    cache = os.environ.get("ROPE_KERNEL_CACHE")
    if cache and (Path(cache) / "libRopeCudaRuntime.so").exists():
        return Path(cache) / "libRopeCudaRuntime.so"
    return Path(os.environ.get("ROPE_CUDA_RUNTIME",
                               compiler.build_dir() / "lib" / "libRopeCudaRuntime.so"))


_runtime = None


def runtime() -> ctypes.CDLL:
    """Our CUDA runtime, loaded once and globally (kernel libraries need its
    symbols). Raises OSError without an NVIDIA driver (no libcuda.so.1)."""
    global _runtime
    if _runtime is None:
        rt = ctypes.CDLL(str(runtime_path()), mode=ctypes.RTLD_GLOBAL)
        rt.mgpuMemAlloc.restype = ctypes.c_void_p
        rt.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
        rt.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        rt.ropeCudaCopyToDevice.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        rt.ropeCudaCopyToHost.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        rt.ropeCudaDeviceName.restype = ctypes.c_char_p
        rt.ropeCudaTakeError.restype = ctypes.c_int32
        _runtime = rt
    return _runtime


def device_count() -> int:
    """GPUs the runtime sees; 0 without a driver or runtime."""
    try:
        return int(runtime().ropeCudaDeviceCount())
    except OSError:
        return 0


def device_name() -> str:
    return runtime().ropeCudaDeviceName().decode()


class DeviceBuffer:
    """Device memory of `nbytes`, freed when dropped."""

    def __init__(self, nbytes: int):
        self.nbytes = nbytes
        self.ptr = runtime().mgpuMemAlloc(max(nbytes, 1), None, False)

    @classmethod
    def from_array(cls, array: np.ndarray) -> "DeviceBuffer":
        array = np.ascontiguousarray(array)
        buf = cls(array.nbytes)
        if array.nbytes:
            runtime().ropeCudaCopyToDevice(buf.ptr, array.ctypes.data, array.nbytes)
        return buf

    def __del__(self):
        if getattr(self, "ptr", None) and _runtime is not None:
            _runtime.mgpuMemFree(self.ptr, None)
            self.ptr = None


def _raise_cuda_error(name: str) -> None:
    """Raises if a driver call failed since the runtime's error was last read
    (the runtime printed the call and the driver's message on stderr)."""
    err = runtime().ropeCudaTakeError()
    if err:
        raise RuntimeError(f"@{name}: CUDA error {err} (details on stderr)")


def _device_descriptor(buf: DeviceBuffer, shape):
    desc = _descriptor_type(len(shape))()
    desc.allocated = desc.aligned = buf.ptr
    desc.offset = 0
    if shape:
        desc.sizes[:] = shape
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= n
        desc.strides[:] = strides[::-1]
    return desc


class GpuLibrary:
    """A module compiled for the GPU; `call` runs one function on host arrays,
    `call_device` on device buffers (for timing without transfers)."""

    def __init__(self, path: Path, signatures):
        self.path = path
        self._sigs = signatures
        # Loading runs the module's constructor, which loads its kernels and
        # aborts the process without a GPU: say so as an exception first.
        if device_count() == 0:
            raise RuntimeError("no CUDA device: the NVIDIA driver (libcuda.so.1) or a GPU is "
                               "missing (set ROPE_GPU_EMULATE=1 to run the GPU mapping on the CPU)")
        compiler.rope_runtime()  # before the library, which links it
        self._lib = ctypes.CDLL(str(path))

    def call_device(self, name: str, buffers, shapes):
        """Calls `name` on device buffers of the given shapes; returns the
        result's descriptor (device pointers). The caller frees
        `result.allocated` with `free_result`."""
        _, result_sig = self._sigs[name]
        descs = [_device_descriptor(b, s) for b, s in zip(buffers, shapes)]
        result = _descriptor_type(len(result_sig.shape))()
        fn = getattr(self._lib, f"_mlir_ciface_{name}")
        compiler.call_checked(fn, name, [result, *descs])
        _raise_cuda_error(name)
        return result

    def free_result(self, result, buffers):
        if result.allocated and not any(result.allocated == b.ptr for b in buffers):
            runtime().mgpuMemFree(result.allocated, None)

    def call(self, name: str, *arrays: np.ndarray) -> np.ndarray:
        # np.require keeps 0-d arrays 0-d (ascontiguousarray makes them 1-d).
        arrays = [np.require(a, requirements="C") for a in arrays]
        check_arguments(name, arrays, self._sigs[name][0])
        _, result_sig = self._sigs[name]
        runtime().ropeCudaTakeError()  # errors of earlier work are not this call's
        buffers = [DeviceBuffer.from_array(a) for a in arrays]
        result = self.call_device(name, buffers, [a.shape for a in arrays])
        try:
            rank = len(result_sig.shape)
            dtype = np.dtype(_DTYPES[result_sig.dtype])
            shape = tuple(result.sizes) if rank else ()
            out = np.empty(shape, dtype)
            strides = list(result.strides) if rank else []
            contiguous = [int(np.prod(shape[i + 1:])) for i in range(rank)]
            if out.size and any(n > 1 and s != c for n, s, c in zip(shape, strides, contiguous)):
                raise RuntimeError(f"@{name} returned a non-contiguous buffer (strides {strides})")
            if out.nbytes:
                runtime().ropeCudaCopyToHost(out.ctypes.data,
                                             result.aligned + result.offset * dtype.itemsize,
                                             out.nbytes)
        finally:
            self.free_result(result, buffers)
        _raise_cuda_error(name)
        return out


def _cache_dir() -> Path | None:
    cache = os.environ.get("ROPE_KERNEL_CACHE")
    return Path(cache) if cache else None


def build(mlir: str, pipeline_text: str | None = None) -> Path:
    """Compiles `mlir` into a shared library (in the cache when one is set)
    and returns its path; with ROPE_PREBUILT_ONLY, only looks it up."""
    pipeline_text = pipeline_text or pipeline()
    key = hashlib.sha256((pipeline_text + "\n" + mlir).encode()).hexdigest()[:24]
    cache = _cache_dir()
    if cache is not None and (cache / f"{key}.so").exists():
        return cache / f"{key}.so"
    if prebuilt_only():
        raise CompileError(f"module {key} is not in ROPE_KERNEL_CACHE={cache} "
                           "(build it first with `make gpu-bundle`)")
    work = Path(tempfile.mkdtemp(prefix="rope-gpu-"))
    llvm_dialect = compiler.lower(mlir, pipeline_text)
    ll = work / "module.ll"
    ll.write_text(_run([str(compiler.llvm_bin() / "mlir-translate"), "--mlir-to-llvmir"],
                       stdin=llvm_dialect))
    rt = compiler.build_dir() / "lib" / "libRopeCudaRuntime.so"
    if not rt.exists():
        raise CompileError(f"{rt} is missing (the CUDA toolkit was not found at configure time)")
    so = work / "module.so"
    # Host code only (kernels are embedded as a fatbin); the runtimes are
    # found next to the library (a bundle) or preloaded by `runtime()` and
    # `compiler.rope_runtime()`.
    _run([str(compiler.llvm_bin() / "clang"), "-O2", "-shared", "-fPIC", "-Wno-override-module",
          "-Wl,-Bsymbolic", "-Wl,--no-undefined", str(ll), "-o", str(so), f"-L{rt.parent}",
          "-Wl,-rpath,$ORIGIN", "-lRopeCudaRuntime", "-lRopeRuntime", "-lm"])
    if cache is None:
        return so
    cache.mkdir(parents=True, exist_ok=True)
    # Files enter the cache by rename, so a process that loads them never
    # sees half a file; the runtime is replaced only when this build's differs.
    for lib in (rt, compiler.runtime_library_path()):
        cached = cache / lib.name
        if not cached.exists() or cached.read_bytes() != lib.read_bytes():
            shutil.copy2(lib, cache / f".{lib.name}.{os.getpid()}")
            os.replace(cache / f".{lib.name}.{os.getpid()}", cached)
    shutil.copy2(so, cache / f".{key}.so.{os.getpid()}")
    os.replace(cache / f".{key}.so.{os.getpid()}", cache / f"{key}.so")
    shutil.rmtree(work, ignore_errors=True)
    return cache / f"{key}.so"


def compile_module(mlir: str, *, pipeline_text: str | None = None):
    """`build`, then load it for calls (a GpuLibrary); None in compile-only
    mode; a CPU `compiler.Library` of the emulated mapping with
    ROPE_GPU_EMULATE."""
    if emulate():
        text = (pipeline_text or pipeline()).replace("--rope-lower-to-nvvm",
                                                     "--rope-test-gpu-mapping-on-cpu")
        return compiler.compile_module(mlir, pipeline=text)
    path = build(mlir, pipeline_text)
    if compile_only():
        return None
    return GpuLibrary(path, parse_signatures(mlir))
