"""How Python calls compiled code: the private, low-level half of the package.

* signatures: the public functions of a compiled module as the C API
  describes them (JSON), and checking arguments against them;
* memref descriptors: the ctypes structs `_mlir_ciface_<name>` wrappers take,
  one per tensor argument and one for the result;
* calls through the rope runtime (libRopeRuntime.so), which turns a failed
  runtime check into RuntimeCheckError;
* result ownership: a result the callee allocated becomes the memory of the
  numpy array returned, freed with it;
* ahead of time: the object file of a module (C API) and its link into a
  shared library by the toolchain's clang (a subprocess).

compiler.py (CPU) and cuda.py (NVIDIA GPUs) build on it.
"""

from __future__ import annotations

import ctypes
import functools
import json
import math
import subprocess
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import _capi, _native
from .arrays import STORAGE_DTYPES
from .errors import ArgumentError, CompileError, RuntimeCheckError

# ---------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorSig:
    dtype: str
    shape: tuple  # ints, None for a dynamic extent
    name: str = ""  # the argument's SSA name (%q), for messages

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"


@dataclass(frozen=True)
class FunctionSig:
    """A public function of a compiled module, as its func.func declares it."""
    name: str
    inputs: tuple  # TensorSig, or the type's text where it is not a ranked tensor
    results: tuple

    def callable_types(self) -> tuple[list[TensorSig], TensorSig]:
        """The arguments and the result, when Python can call the function:
        ranked tensors of known element types in, one out."""
        bad = [t for t in (*self.inputs, *self.results) if not isinstance(t, TensorSig)]
        if bad or len(self.results) != 1:
            raise ArgumentError(
                f"@{self.name} cannot be called from Python: it must take ranked tensors and "
                f"return one ranked tensor (of {', '.join(STORAGE_DTYPES)}), got "
                f"({', '.join(map(str, self.inputs))}) -> ({', '.join(map(str, self.results))})")
        return list(self.inputs), self.results[0]

    def callable_signature(self) -> tuple[list[TensorSig], list[TensorSig]]:
        """The arguments and the results, when Python can call the function on
        the CPU: ranked tensors of known element types in, one or more out."""
        bad = [t for t in (*self.inputs, *self.results) if not isinstance(t, TensorSig)]
        if bad or not self.results:
            raise ArgumentError(
                f"@{self.name} cannot be called from Python: it must take ranked tensors and "
                f"return ranked tensors (of {', '.join(STORAGE_DTYPES)}), got "
                f"({', '.join(map(str, self.inputs))}) -> ({', '.join(map(str, self.results))})")
        return list(self.inputs), list(self.results)


def parse_signatures(text: str) -> dict[str, FunctionSig]:
    """The functions of the C API's JSON signatures, by name."""
    def entry(e):
        if e["kind"] == "tensor" and "shape" in e and e["element"] in STORAGE_DTYPES:
            return TensorSig(e["element"], tuple(e["shape"]), e["name"])
        return e["type"]
    return {f["name"]: FunctionSig(f["name"], tuple(map(entry, f["inputs"])),
                                   tuple(map(entry, f["results"])))
            for f in json.loads(text)}


def _argument_json(sig) -> dict:
    if isinstance(sig, TensorSig):
        return {"kind": "tensor", "element": sig.dtype, "shape": list(sig.shape),
                "name": sig.name, "type": str(sig)}
    return {"kind": "other", "element": "", "name": "", "type": sig}


def signatures_json(functions: dict[str, FunctionSig]) -> str:
    """The inverse of `parse_signatures`."""
    return json.dumps([{"name": f.name, "inputs": [_argument_json(a) for a in f.inputs],
                        "results": [_argument_json(r) for r in f.results]}
                       for f in functions.values()])


@functools.cache
def storage_dtype(element: str) -> np.dtype:
    """The numpy dtype memrefs of `element` (f32, bf16, ...) are stored as."""
    return np.dtype(STORAGE_DTYPES[element])


def check_arguments(name: str, arrays_, args_sig) -> None:
    """Raises ArgumentError unless `arrays_` fit the function's tensor
    arguments (count, storage dtype, rank, static extents), naming the
    argument and both types."""
    if len(arrays_) != len(args_sig):
        raise ArgumentError(f"@{name} takes {len(args_sig)} arguments "
                            f"({', '.join(map(str, args_sig))}), got {len(arrays_)}")
    for i, (a, sig) in enumerate(zip(arrays_, args_sig)):
        check_argument(name, i, a.dtype, a.shape, sig)


def _fits(dtype: np.dtype, shape: tuple, sig: TensorSig) -> bool:
    """Whether an array of `dtype` and `shape` fits `sig`. The checks run on
    every call, so they build no message (numpy's dtype names alone cost
    more than a small kernel) until one fails."""
    return (dtype == storage_dtype(sig.dtype) and len(shape) == len(sig.shape)
            and all(w is None or w == g for w, g in zip(sig.shape, shape)))


def check_argument(name: str, i: int, dtype: np.dtype, shape: tuple, sig: TensorSig) -> None:
    """check_arguments for argument #i, stored as `dtype`, of `shape`."""
    if _fits(dtype, shape, sig):
        return
    shape = tuple(shape)
    want = storage_dtype(sig.dtype)
    what = f"@{name} argument #{i}{' (' + sig.name + ')' if sig.name else ''}"
    got = f"{dtype} of shape {shape}"
    if dtype != want:
        raise ArgumentError(f"{what}: expected {sig} (stored as {want}), got {got}")
    if len(sig.shape) != len(shape):
        raise ArgumentError(f"{what}: expected {sig} (rank {len(sig.shape)}), got {got}")
    for d, (want_d, got_d) in enumerate(zip(sig.shape, shape)):
        if want_d is not None and want_d != got_d:
            raise ArgumentError(f"{what}: expected {sig} (dim {d} = {want_d}), got {got}")


def check_destinations(name: str, outs, results_sig, inputs) -> None:
    """Raises ArgumentError unless `outs` (numpy views of ``out=``) can
    receive the function's results: one per result, of its storage dtype,
    rank and static extents (the compiled code checks the dynamic ones),
    C-contiguous, writable, and sharing no memory with `inputs` (what the
    function reads) or with each other."""
    if len(outs) != len(results_sig):
        raise ArgumentError(f"@{name} returns {len(results_sig)} results "
                            f"({', '.join(map(str, results_sig))}); out= got {len(outs)} arrays")
    for i, (a, sig) in enumerate(zip(outs, results_sig)):
        what = f"@{name} out #{i}" if len(outs) > 1 else f"@{name} out"
        if not _fits(a.dtype, a.shape, sig):
            got = f"{a.dtype} of shape {tuple(a.shape)}"
            want = storage_dtype(sig.dtype)
            if a.dtype != want:
                raise ArgumentError(f"{what}: expected {sig} (stored as {want}), got {got}")
            raise ArgumentError(f"{what}: expected {sig}, got {got}")
        if not a.flags.c_contiguous:
            raise ArgumentError(f"{what}: must be C-contiguous (strides {a.strides}), "
                                "the result is written in place")
        if not a.flags.writeable:
            raise ArgumentError(f"{what}: is read-only")
        for j, x in enumerate(inputs):
            if np.may_share_memory(a, x):
                raise ArgumentError(f"{what}: shares memory with argument #{j}, which the "
                                    "function reads while it writes the result")
        for j, b in enumerate(outs[:i]):
            if np.may_share_memory(a, b):
                raise ArgumentError(f"{what}: shares memory with out #{j}")


# ---------------------------------------------------------------------------
# Memref descriptors and calls
# ---------------------------------------------------------------------------


@functools.cache
def descriptor_type(rank: int):
    """The ctypes struct of a rank-`rank` memref descriptor (one type per
    rank: building a ctypes type costs more than a call's arguments)."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def results_type(results) -> type:
    """The ctypes struct a `_mlir_ciface_` wrapper fills in with its results:
    their memref descriptors in order (for one result, the same layout as
    its descriptor alone)."""
    return _results_type(tuple(len(r.shape) for r in results))


@functools.cache
def _results_type(ranks: tuple) -> type:
    fields = [(f"r{i}", descriptor_type(rank)) for i, rank in enumerate(ranks)]
    return type(f"Results{len(ranks)}", (ctypes.Structure,), {"_fields_": fields})


def descriptor(pointer: int, shape, strides=None):
    """A descriptor of memory at `pointer` (row-major unless `strides`, in
    elements, are given)."""
    shape = tuple(shape)
    if not shape:
        return descriptor_type(0)(pointer, pointer, 0)
    if strides is None:
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= n
        strides.reverse()
    return descriptor_type(len(shape))(pointer, pointer, 0, shape, tuple(strides))


def array_descriptor(array: np.ndarray):
    item = array.itemsize
    return descriptor(array.ctypes.data, array.shape, [s // item for s in array.strides])


_rope_runtime: ctypes.CDLL | None = None


def rope_runtime(path: Path | None = None) -> ctypes.CDLL:
    """The rope runtime (libRopeRuntime.so), where compiled code reports
    failed runtime checks: loaded once and globally, so that compiled code
    and this module share it. `path` (a GPU bundle's copy) is used if it is
    the first load."""
    global _rope_runtime
    if _rope_runtime is None:
        rt = (ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL) if path is not None
              else _native.load_global("RopeRuntime"))
        rt._mlir_memref_to_llvm_free.restype = None
        rt._mlir_memref_to_llvm_free.argtypes = [ctypes.c_void_p]
        rt.ropeRuntimeCall.restype = ctypes.c_int
        rt.ropeRuntimeCall.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.c_char_p, ctypes.c_size_t]
        _rope_runtime = rt
    return _rope_runtime


# ropeRuntimeCall's kRopeRuntimeMaxCallArgs (RuntimeErrors.h).
MAX_CALL_ARGS = 32


_per_thread = threading.local()


def _message_buffer():
    """The buffer a failed runtime check's message is written into: one per
    thread, reused by its calls (only a failed call reads it)."""
    buffer = getattr(_per_thread, "message", None)
    if buffer is None:
        buffer = _per_thread.message = ctypes.create_string_buffer(4096)
    return buffer


def call_packed(packed, name: str, structs) -> None:
    """Calls a `_rope_packed_` entry point (any number of descriptors, the
    result's first) through ropeRuntimeCall, with the one pointer it takes:
    an array of pointers to `structs`."""
    pointers = (ctypes.c_void_p * len(structs))(*[ctypes.addressof(s) for s in structs])
    call_checked(packed, name, [pointers])


def call_checked(function, name: str, structs) -> None:
    """Calls a `_mlir_ciface_` function (an address or a ctypes function)
    with pointers to `structs` (memref descriptors, the result's first)
    through ropeRuntimeCall; a failed runtime check raises RuntimeCheckError."""
    pointers = [ctypes.addressof(s) for s in structs]
    args = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
    message = _message_buffer()
    if not isinstance(function, int):
        function = ctypes.cast(function, ctypes.c_void_p)
    status = rope_runtime().ropeRuntimeCall(function, len(pointers), args, message,
                                            len(message))
    if status == 1:
        raise RuntimeCheckError(f"@{name}: {message.value.decode(errors='replace')}")
    if status != 0:
        raise TypeError(f"@{name} takes {len(pointers)} pointer arguments, more than "
                        "ropeRuntimeCall passes")


class _Allocation:
    """Memory the callee allocated for its results; freed when the last
    array viewing it is gone (two results may share one allocation), through
    the rope runtime, whose cache the block may belong to (HostAllocator.h)."""

    def __init__(self, pointer: int):
        weakref.finalize(self, rope_runtime()._mlir_memref_to_llvm_free, pointer)


def take_result(result, result_sig: TensorSig, arguments, allocations=None) -> np.ndarray:
    """The numpy array of a result descriptor the callee filled in, which then
    owns the callee's allocation (or a copy where the callee does not own the
    memory). `arguments`: the (address, bytes) of each argument's memory.
    `allocations` (by pointer) is shared by the results of one call, so that
    results in one allocation free it once."""
    if allocations is None:
        allocations = {}
    rank = len(result_sig.shape)
    dtype = storage_dtype(result_sig.dtype)
    shape = tuple(result.sizes) if rank else ()
    strides = tuple(s * dtype.itemsize for s in result.strides) if rank else ()
    count = math.prod(shape)
    base = result.aligned + result.offset * dtype.itemsize
    span = (sum((n - 1) * s for n, s in zip(shape, strides)) + dtype.itemsize
            if count else 0)
    # Whether the callee allocated the result: not an argument's memory (an
    # identity fold) nor memory MLIR marks as not owned (a memref.global,
    # "allocated" at 0xdeadbeef).
    owned = result.allocated not in (None, 0, 0xDEADBEEF) and not any(
        start <= result.allocated < start + max(size, 1) for start, size in arguments)
    owner = None
    if owned:
        owner = allocations.get(result.allocated)
        if owner is None:
            owner = allocations[result.allocated] = _Allocation(result.allocated)
    if not count:
        return np.empty(shape, dtype)
    raw = (ctypes.c_char * span).from_address(base)
    view = np.ndarray(shape, dtype, buffer=raw, strides=strides)
    if not owned:
        # An argument's memory, or a global of the module: a copy.
        return view.copy()
    # The callee's allocation becomes the array's memory, freed with the last
    # array (and view) of it: no copy of the result.
    raw._owner = owner
    return view


# ---------------------------------------------------------------------------
# Ahead of time: object files and shared libraries
# ---------------------------------------------------------------------------


def compile_object(text: str, options, path: Path) -> dict[str, FunctionSig]:
    """Compiles `text` with `options` (a CompileOptions) ahead of time into a
    relocatable object at `path`; returns the signatures of its functions."""
    return parse_signatures(_capi.compile_to_object(
        text, options.pass_pipeline(), options.opt_level, options.source_name, path))


def link_shared_library(obj: Path, output: Path, libraries: list[str],
                        library_dirs: list[Path], rpaths: list[str]) -> None:
    """Links object `obj` into shared library `output` with the toolchain's
    clang (the one step of an ahead-of-time compile outside the process)."""
    # -Bsymbolic: a kernel named like a symbol already in the process (e.g.
    # @cos) calls its own definition, not libm's.
    cmd = [str(_native.llvm_tool("clang")), "-shared", "-Wl,-Bsymbolic", "-Wl,--no-undefined",
           str(obj), "-o", str(output), *[f"-L{d}" for d in library_dirs],
           *[f"-Wl,-rpath,{r}" for r in rpaths], *[f"-l{lib}" for lib in libraries], "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(f"linking {output} failed:\n{' '.join(cmd)}\n{proc.stderr}")
