"""Compile MLIR with rope-opt + LLVM into a shared library and call it with numpy.

    lib = compile_module(MLIR_TEXT)
    out = lib.call("kernel", x, positions)

Every public function of the module must take ranked tensors and return one
ranked tensor; the CPU pipeline (`--rope-lower-to-cpu`) bufferizes them into
plain memrefs and emits `_mlir_ciface_<name>` wrappers, which are called here
through ctypes with memref descriptors. bf16 travels as uint16 bit patterns
(see reference.to_bf16_bits / from_bf16_bits).
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_REPO = Path(__file__).resolve().parents[2]

# MLIR element type -> numpy dtype of its storage.
_DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "bf16": np.uint16,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
}


class CompileError(RuntimeError):
    """A stage of the compilation failed; the message holds its diagnostics."""


class RuntimeCheckError(RuntimeError):
    """A compiled function's runtime check failed (e.g. dynamic extents that
    must agree do not): nothing of the failing op ran. The message is the
    op's diagnostic with its source location and the extents found."""


def llvm_bin() -> Path:
    return Path(os.environ.get("ROPE_LLVM_BIN", "/usr/lib/llvm-22/bin"))


def build_dir() -> Path:
    return Path(os.environ.get("ROPE_BUILD_DIR", _REPO / "build"))


def rope_opt() -> Path:
    return build_dir() / "bin" / "rope-opt"


def _run(cmd: list[str], stdin: str | None = None) -> str:
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr}")
    return proc.stdout


@dataclass(frozen=True)
class TensorSig:
    dtype: str
    shape: tuple  # ints, None for a dynamic extent
    name: str = ""  # the argument's SSA name (%q), for messages

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"


class ArgumentError(ValueError, TypeError):
    """An argument does not fit the compiled function's signature; the message
    names the argument and both types. (A ValueError; also a TypeError, as
    earlier versions raised.)"""


def _parse_tensor(text: str, name: str = "") -> TensorSig:
    m = re.fullmatch(r"\s*tensor<([^>]*)>\s*", text)
    if not m:
        raise ValueError(f"only ranked tensor arguments and results are supported: {text!r}")
    parts = m.group(1).split("x")
    dims = tuple(None if d == "?" else int(d) for d in parts[:-1])
    return TensorSig(parts[-1], dims, name)


def _split_top_level(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<([{"
        depth -= ch in ">)]}"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def parse_signatures(mlir: str) -> dict[str, tuple[list[TensorSig], TensorSig]]:
    """Signatures of the public func.func ops of a module."""
    sigs = {}
    for m in re.finditer(r"func\.func\s+@(\w+)\s*\((.*?)\)\s*->\s*(tensor<[^>]*>)", mlir, re.S):
        args = [_parse_tensor(a.split(":", 1)[1], a.split(":", 1)[0].strip())
                for a in _split_top_level(m.group(2))]
        sigs[m.group(1)] = (args, _parse_tensor(m.group(3)))
    return sigs


def _descriptor_type(rank: int):
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def _descriptor(array: np.ndarray):
    desc = _descriptor_type(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    if array.ndim:
        desc.sizes[:] = array.shape
        desc.strides[:] = [s // array.itemsize for s in array.strides]
    return desc


def check_arguments(name: str, arrays, args_sig) -> None:
    """Raises ArgumentError unless `arrays` fit the function's tensor
    arguments (count, storage dtype, rank, static extents), naming the
    argument and both types."""
    if len(arrays) != len(args_sig):
        raise ArgumentError(f"@{name} takes {len(args_sig)} arguments "
                            f"({', '.join(map(str, args_sig))}), got {len(arrays)}")
    for i, (a, sig) in enumerate(zip(arrays, args_sig)):
        want = np.dtype(_DTYPES[sig.dtype])
        what = f"@{name} argument #{i}{' (' + sig.name + ')' if sig.name else ''}"
        got = f"{a.dtype} of shape {tuple(a.shape)}"
        if a.dtype != want:
            raise ArgumentError(f"{what}: expected {sig} (stored as {want}), got {got}")
        if len(sig.shape) != a.ndim:
            raise ArgumentError(f"{what}: expected {sig} (rank {len(sig.shape)}), got {got}")
        for d, (want_d, got_d) in enumerate(zip(sig.shape, a.shape)):
            if want_d is not None and want_d != got_d:
                raise ArgumentError(f"{what}: expected {sig} (dim {d} = {want_d}), got {got}")


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]

_rope_runtime = None


def runtime_library_path() -> Path:
    """libRopeRuntime.so, where compiled code reports failed runtime checks
    (in a GPU bundle, `$ROPE_KERNEL_CACHE`, it lies beside the kernels)."""
    cache = os.environ.get("ROPE_KERNEL_CACHE")
    if cache and (Path(cache) / "libRopeRuntime.so").exists():
        return Path(cache) / "libRopeRuntime.so"
    return build_dir() / "lib" / "libRopeRuntime.so"


def rope_runtime() -> ctypes.CDLL:
    """The rope runtime, loaded once and globally: the kernel libraries that
    link it then share this instance (and its ropeRuntimeCall)."""
    global _rope_runtime
    if _rope_runtime is None:
        rt = ctypes.CDLL(str(runtime_library_path()), mode=ctypes.RTLD_GLOBAL)
        rt.ropeRuntimeCall.restype = ctypes.c_int
        rt.ropeRuntimeCall.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.c_char_p, ctypes.c_size_t]
        _rope_runtime = rt
    return _rope_runtime


def call_checked(function, name: str, structs) -> None:
    """Calls a `_mlir_ciface_` function with pointers to `structs` (memref
    descriptors, the result's first) through ropeRuntimeCall; a failed
    runtime check raises RuntimeCheckError."""
    pointers = [ctypes.addressof(s) for s in structs]
    args = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
    message = ctypes.create_string_buffer(4096)
    status = rope_runtime().ropeRuntimeCall(
        ctypes.cast(function, ctypes.c_void_p), len(pointers), args, message,
        len(message))
    if status == 1:
        raise RuntimeCheckError(f"@{name}: {message.value.decode(errors='replace')}")
    if status != 0:
        raise TypeError(f"@{name} takes {len(pointers)} pointer arguments, more than "
                        "ropeRuntimeCall passes")


class Library:
    """A compiled module; `call` runs one of its functions on numpy arrays."""

    def __init__(self, path: Path, signatures):
        self.path = path
        rope_runtime()  # before the library, which links it
        self._lib = ctypes.CDLL(str(path))
        self._sigs = signatures

    def call(self, name: str, *arrays: np.ndarray) -> np.ndarray:
        args_sig, result_sig = self._sigs[name]
        keep = [np.ascontiguousarray(a) for a in arrays]
        check_arguments(name, keep, args_sig)
        descs = [_descriptor(a) for a in keep]
        rank = len(result_sig.shape)
        result = _descriptor_type(rank)()
        fn = getattr(self._lib, f"_mlir_ciface_{name}")
        call_checked(fn, name, [result, *descs])

        dtype = np.dtype(_DTYPES[result_sig.dtype])
        shape = tuple(result.sizes) if rank else ()
        strides = tuple(s * dtype.itemsize for s in result.strides) if rank else ()
        count = int(np.prod(shape)) if shape else 1
        base = result.aligned + result.offset * dtype.itemsize
        span = (sum((n - 1) * s for n, s in zip(shape, strides)) + dtype.itemsize
                if count else 0)
        # Whether the callee allocated the result: not an argument's memory
        # (an identity fold) nor memory MLIR marks as not owned (a
        # memref.global, "allocated" at 0xdeadbeef).
        owned = result.allocated not in (None, 0, 0xDEADBEEF) and not any(
            a.ctypes.data <= result.allocated < a.ctypes.data + max(a.nbytes, 1) for a in keep)
        if not count:
            if owned:
                _libc.free(result.allocated)
            return np.empty(shape, dtype)
        raw = (ctypes.c_char * span).from_address(base)
        view = np.ndarray(shape, dtype, buffer=raw, strides=strides)
        if not owned:
            # The result aliases an argument (an identity fold) or memory the
            # callee does not own (a global): a copy of it.
            return view.copy()
        # The callee's allocation becomes the array's memory, freed with the
        # array (and every view of it): no copy of the result.
        weakref.finalize(view, _libc.free, result.allocated)
        return view


def default_pipeline() -> str:
    """The CPU pipeline, or `$ROPE_PIPELINE` (the lit suite runs the attention
    tests once per pipeline variant: plain, decomposed, small tiles)."""
    return os.environ.get("ROPE_PIPELINE", "--rope-lower-to-cpu")


def lower(mlir: str, pipeline: str | None = None, extra: list[str] | None = None) -> str:
    """Runs rope-opt on `mlir` text and returns the result."""
    return _run([str(rope_opt()), pipeline or default_pipeline(), *(extra or [])], stdin=mlir)


def compile_module(mlir: str, *, pipeline: str | None = None,
                   workdir: str | None = None, opt_level: str = "-O2") -> Library:
    """rope-opt pipeline -> mlir-translate -> clang shared library."""
    work = Path(workdir or tempfile.mkdtemp(prefix="rope-mlir-"))
    llvm_dialect = lower(mlir, pipeline)
    ll = work / "module.ll"
    ll.write_text(_run([str(llvm_bin() / "mlir-translate"), "--mlir-to-llvmir"],
                       stdin=llvm_dialect))
    so = work / "module.so"
    # memref copies of unknown layout call memrefCopy from MLIR's C runner
    # utils; parallel tiles call the OpenMP runtime (libomp-22-dev); failed
    # runtime checks call the rope runtime.
    libdir = llvm_bin().parent / "lib"
    rope_libdir = runtime_library_path().parent
    # -Bsymbolic: a kernel named like a symbol already in the process (e.g.
    # @cos) must call its own definition, not libm's.
    _run([str(llvm_bin() / "clang"), opt_level, "-march=native", "-shared", "-fPIC",
          "-Wno-override-module", "-Wl,-Bsymbolic", str(ll), "-o", str(so), f"-L{libdir}",
          f"-Wl,-rpath,{libdir}", f"-L{rope_libdir}", f"-Wl,-rpath,{rope_libdir}",
          "-lmlir_c_runner_utils", "-lomp", "-lRopeRuntime", "-lm"])
    return Library(so, parse_signatures(mlir))
