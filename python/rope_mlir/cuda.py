"""Modules compiled for NVIDIA GPUs (``rope_mlir.compile(text, target="cuda")``).

    module = rope_mlir.compile(text, target="cuda", chip="sm_90")
    out = module.kernel(x, positions)   # numpy/CPU tensors in: copied to the GPU and back
    out = module.kernel(xd, pd)         # CUDA tensors (torch, DLPack): used in place,
                                        # the result stays on the GPU

GPU modules are compiled ahead of time: the pipeline (``--rope-lower-to-nvvm``,
kernels as cubins for `chip`) runs in process through the C API, and the host
code is linked into ``<key>.so`` in a kernel folder (`output`, default
``~/.cache/rope-mlir/kernels``) with a copy of the runtimes and the
signatures (``<key>.json``). The key hashes the module text and the pipeline.
A GPU machine without LLVM loads from such a folder (``prebuilt_only=True``;
`make gpu-bundle` fills one). A folder belongs to one compiler build: when a
different build compiles into it, the kernels already there are removed.

Everything on the device runs through our runtime, ``libRopeCudaRuntime.so``
(the mgpu* API on the CUDA driver).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
from pathlib import Path

import numpy as np

from . import _abi, _capi, _native, arrays
from ._abi import TensorSig
from .arrays import STORAGE_DTYPES, DeviceArray
from .errors import ArgumentError, CompileError
from .module import Module
from .options import CompileOptions

DEFAULT_KERNEL_CACHE = Path.home() / ".cache" / "rope-mlir" / "kernels"
_RUNTIMES = ("RopeCudaRuntime", "RopeRuntime")
_runtime = None


def runtime(folder: Path | None = None) -> ctypes.CDLL:
    """Our CUDA runtime, loaded once and globally (kernel libraries need its
    symbols): the copy in `folder` (a kernel folder) if there is one, else
    the package's. Raises OSError without an NVIDIA driver (libcuda.so.1)."""
    global _runtime
    if _runtime is None:
        path = (folder / "libRopeCudaRuntime.so"
                if folder is not None and (folder / "libRopeCudaRuntime.so").exists()
                else _native.library_path("RopeCudaRuntime"))
        rt = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        rt.mgpuMemAlloc.restype = ctypes.c_void_p
        rt.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
        rt.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        rt.ropeCudaCopyToDevice.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        rt.ropeCudaCopyToHost.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        rt.ropeCudaDeviceName.restype = ctypes.c_char_p
        rt.ropeCudaTakeError.restype = ctypes.c_int32
        _runtime = rt
    return _runtime


def device_count(folder: Path | None = None) -> int:
    """GPUs the runtime sees; 0 without a driver or runtime."""
    try:
        return int(runtime(folder).ropeCudaDeviceCount())
    except OSError:
        return 0


def device_name() -> str:
    return runtime().ropeCudaDeviceName().decode()


class DeviceBuffer:
    """Device memory of `nbytes`, freed when dropped (or adopted: `pointer`
    is an allocation of the runtime's that this buffer now owns)."""

    def __init__(self, nbytes: int, pointer: int | None = None):
        self.nbytes = nbytes
        self.ptr = pointer if pointer is not None else runtime().mgpuMemAlloc(
            max(nbytes, 1), None, False)

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


class GpuModule(Module):
    """A module compiled for the GPU and loaded. `call` takes host arrays
    (copied to the device, the result copied back) or CUDA tensors (used in
    place; the result stays on the device, returned as the same library's
    tensor); `call_device` takes DeviceBuffers (timing without transfers)."""

    _device = "cuda"

    def __init__(self, path: Path, functions):
        super().__init__(functions)
        self.path = Path(path)
        folder = self.path.parent
        # Loading runs the module's constructor, which loads its kernels and
        # aborts the process without a GPU: say so as an exception first.
        if device_count(folder) == 0:
            raise RuntimeError("no CUDA device: the NVIDIA driver (libcuda.so.1) or a GPU is "
                               "missing (compile with emulate=True to run the GPU mapping on "
                               "the CPU)")
        _abi.rope_runtime(folder / "libRopeRuntime.so"
                     if (folder / "libRopeRuntime.so").exists() else None)
        self._lib = ctypes.CDLL(str(self.path))

    def function_address(self, name: str) -> int:
        return ctypes.cast(getattr(self._lib, f"_mlir_ciface_{name}"), ctypes.c_void_p).value

    def call_device(self, name: str, buffers, shapes):
        """Calls `name` on device buffers (DeviceBuffer or DeviceArray) of the
        given shapes; returns the result's descriptor (device pointers). The
        caller frees `result.allocated` with `free_result`."""
        _, result_sig = self.functions[name].callable_types()
        descs = [_abi.descriptor(getattr(b, "ptr", None) or b.pointer, s)
                 for b, s in zip(buffers, shapes)]
        result = _abi.descriptor_type(len(result_sig.shape))()
        _abi.call_checked(self.function_address(name), name, [result, *descs])
        _raise_cuda_error(name)
        return result

    def free_result(self, result, buffers):
        if result.allocated and not any(
                result.allocated == (getattr(b, "ptr", None) or b.pointer) for b in buffers):
            runtime().mgpuMemFree(result.allocated, None)

    def _result_layout(self, name, result, result_sig: TensorSig, buffers):
        rank = len(result_sig.shape)
        shape = tuple(result.sizes) if rank else ()
        strides = list(result.strides) if rank else []
        contiguous = [int(np.prod(shape[i + 1:])) for i in range(rank)]
        if int(np.prod(shape)) and any(n > 1 and s != c
                                       for n, s, c in zip(shape, strides, contiguous)):
            self.free_result(result, buffers)
            raise RuntimeError(f"@{name} returned a non-contiguous buffer (strides {strides})")
        return shape, contiguous

    def call(self, name: str, *args, out=None):
        if name not in self.functions:
            raise AttributeError(f"the module has no public function @{name}")
        if out is not None:
            raise ArgumentError(f"@{name}: out= is not supported by modules compiled for the "
                                "GPU yet (their results are allocated on the device)")
        args_sig, result_sig = self.functions[name].callable_types()
        values, kind = arrays.import_arguments(args, allow_device=True)
        _abi.check_arguments(name, values, args_sig)
        on_device = any(isinstance(v, DeviceArray) for v in values)
        for i, v in enumerate(values):
            if isinstance(v, DeviceArray) and not v.is_contiguous():
                raise ValueError(f"@{name} argument #{i}: a non-contiguous GPU tensor "
                                 "(make it contiguous first)")
        runtime().ropeCudaTakeError()  # errors of earlier work are not this call's
        buffers = [v if isinstance(v, DeviceArray) else DeviceBuffer.from_array(v)
                   for v in values]
        result = self.call_device(name, buffers, [v.shape for v in values])
        shape, strides = self._result_layout(name, result, result_sig, buffers)
        dtype = np.dtype(STORAGE_DTYPES[result_sig.dtype])
        data = result.aligned + result.offset * dtype.itemsize
        if on_device and kind is not None:
            # The result stays on the GPU; the caller's library owns it now
            # (or a copy, where it aliases an argument).
            aliased = any(result.allocated == getattr(b, "pointer", None) for b in buffers)
            owner = None if aliased else DeviceBuffer(0, result.allocated)
            exported = arrays.Exported(data, shape, strides, result_sig.dtype, owner or buffers,
                                       device=(arrays.CUDA, 0))
            out = kind.from_dlpack(exported)
            return out.clone() if aliased and hasattr(out, "clone") else out
        try:
            out = np.empty(shape, dtype)
            if out.nbytes:
                runtime().ropeCudaCopyToHost(out.ctypes.data, data, out.nbytes)
        finally:
            self.free_result(result, buffers)
        _raise_cuda_error(name)
        return arrays.export_result(out, result_sig.dtype, kind)


def _compiler_stamp() -> str:
    """Identifies the compiler build (its C API library)."""
    stat = _capi.library().resolve().stat()
    return f"{stat.st_size}-{stat.st_mtime_ns}"


def module_key(text: str, pipeline_text: str) -> str:
    return hashlib.sha256((pipeline_text + "\n" + text).encode()).hexdigest()[:24]


def _same_file(source: Path, copy: Path) -> bool:
    """Whether `copy` holds `source`'s bytes (by size, then content)."""
    if not copy.exists() or copy.stat().st_size != source.stat().st_size:
        return False
    return copy.read_bytes() == source.read_bytes()


def _replace(source: Path, target: Path) -> None:
    """Copies by rename, so that a process loading `target` never sees half a file."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}")
    shutil.copy2(source, temporary)
    os.replace(temporary, target)


def build(text: str, options: CompileOptions) -> Path:
    """Compiles `text` for the GPU into the kernel folder `options.output`
    (default DEFAULT_KERNEL_CACHE) unless it is there; returns the library's
    path. With `prebuilt_only`, only looks it up."""
    folder = Path(options.output) if options.output is not None else DEFAULT_KERNEL_CACHE
    pipeline_text = options.pass_pipeline()
    key = module_key(text, pipeline_text)
    library = folder / f"{key}.so"
    if not options.prebuilt_only:
        # Kernels of another compiler build are stale (the key cannot tell).
        folder.mkdir(parents=True, exist_ok=True)
        stamp = folder / "compiler"
        if not stamp.exists() or stamp.read_text() != _compiler_stamp():
            for old in [*folder.glob("*.so"), *folder.glob("*.json")]:
                if not old.name.startswith("lib"):
                    old.unlink(missing_ok=True)
            stamp.write_text(_compiler_stamp())
    if not options.prebuilt_only:
        # The runtimes beside the kernels are the package's own, also for a
        # module compiled before (a new runtime needs no new kernels).
        for name in _RUNTIMES:
            source = _native.library_path(name).resolve()
            cached = folder / f"lib{name}.so"
            if not _same_file(source, cached):
                _replace(source, cached)
    if library.exists() and (folder / f"{key}.json").exists():
        return library
    if options.prebuilt_only:
        raise CompileError(f"module {key} is not in the kernel folder {folder} "
                           "(build it first with `make gpu-bundle`)")
    obj = folder / f".{key}.{os.getpid()}.o"
    linked = folder / f".{key}.{os.getpid()}.so"
    try:
        functions = _abi.compile_object(text, options, obj)
        # Host code only (kernels are embedded as a fatbin); the runtimes are
        # found beside the library.
        _abi.link_shared_library(obj, linked, ["RopeCudaRuntime", "RopeRuntime"], [folder],
                            ["$ORIGIN"])
        (folder / f"{key}.json").write_text(_abi.signatures_json(functions))
        os.replace(linked, library)
    finally:
        obj.unlink(missing_ok=True)
        linked.unlink(missing_ok=True)
    return library


def load(library: Path) -> GpuModule:
    """A GPU module from a kernel folder (its `<key>.so` and `<key>.json`)."""
    return GpuModule(library, _abi.parse_signatures(library.with_suffix(".json").read_text()))


def compile_cuda(text: str, options: CompileOptions) -> GpuModule:
    """`rope_mlir.compile(..., target="cuda")`: build, then load."""
    return load(build(text, options))
