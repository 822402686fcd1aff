"""Compile MLIR in this process and call its functions on arrays.

    import rope_mlir
    module = rope_mlir.compile(MLIR_TEXT)             # CPU, JIT-compiled
    out = module.kernel(x, positions)                 # or module.call("kernel", ...)

Compilation runs inside the process through the package's C API
(libRopeCAPI.so: parse, run the target's pipeline, optimise and JIT-compile
with MLIR's ExecutionEngine): no subprocess, no file. With ``output=PATH`` the
module is compiled ahead of time into a shared library at PATH instead.

Every public function must take ranked tensors and return one ranked tensor.
The pipeline bufferizes them into memrefs and emits `_mlir_ciface_<name>`
wrappers, called here with memref descriptors. Arguments are numpy arrays or
any DLPack tensor (PyTorch, JAX, CuPy, ...; CPU ones are used without a copy);
the result comes back as the same kind of array as the arguments. bf16 is
stored as uint16 bit patterns in numpy (reference.to_bf16_bits /
from_bf16_bits) and as bfloat16 in libraries that have it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import subprocess
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np

from . import _native, arrays
from .arrays import STORAGE_DTYPES

TARGETS = ("cpu", "cuda")


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of a failed compilation, at its source location."""
    severity: str
    location: str
    message: str
    notes: tuple = ()  # ((location, message), ...)

    def __str__(self) -> str:
        lines = [f"{self.location}: {self.severity}: {self.message}"]
        lines += [f"{loc}: note: {msg}" for loc, msg in self.notes]
        return "\n".join(lines)


class CompileError(RuntimeError):
    """Compilation failed. `diagnostics` lists MLIR's diagnostics with their
    locations (``file:line:col``); the message is all of them, one per line."""

    def __init__(self, message: str, diagnostics=()):
        self.diagnostics = tuple(diagnostics)
        text = "\n".join(str(d) for d in self.diagnostics)
        super().__init__(f"{message}\n{text}" if text else message)


class RuntimeCheckError(RuntimeError):
    """A compiled function's runtime check failed (e.g. dynamic extents that
    must agree do not): nothing of the failing op ran. The message is the
    op's diagnostic with its source location and the extents found."""


class ArgumentError(ValueError, TypeError):
    """An argument does not fit the compiled function's signature; the message
    names the argument and both types. (A ValueError; also a TypeError, as
    earlier versions raised.)"""


def _diagnostics(text: str) -> list[Diagnostic]:
    try:
        entries = json.loads(text) if text else []
    except json.JSONDecodeError:
        return [Diagnostic("error", "<unknown>", text)]
    return [Diagnostic(e["severity"], e["location"], e["message"],
                       tuple((n["location"], n["message"]) for n in e.get("notes", [])))
            for e in entries]


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


def _signatures(text: str) -> dict[str, FunctionSig]:
    def entry(e):
        if e["kind"] == "tensor" and "shape" in e and e["element"] in STORAGE_DTYPES:
            return TensorSig(e["element"], tuple(e["shape"]), e["name"])
        return e["type"]
    return {f["name"]: FunctionSig(f["name"], tuple(map(entry, f["inputs"])),
                                   tuple(map(entry, f["results"])))
            for f in json.loads(text)}


def check_arguments(name: str, arrays_, args_sig) -> None:
    """Raises ArgumentError unless `arrays_` fit the function's tensor
    arguments (count, storage dtype, rank, static extents), naming the
    argument and both types."""
    if len(arrays_) != len(args_sig):
        raise ArgumentError(f"@{name} takes {len(args_sig)} arguments "
                            f"({', '.join(map(str, args_sig))}), got {len(arrays_)}")
    for i, (a, sig) in enumerate(zip(arrays_, args_sig)):
        want = np.dtype(STORAGE_DTYPES[sig.dtype])
        what = f"@{name} argument #{i}{' (' + sig.name + ')' if sig.name else ''}"
        got = f"{a.dtype} of shape {tuple(a.shape)}"
        if a.dtype != want:
            raise ArgumentError(f"{what}: expected {sig} (stored as {want}), got {got}")
        if len(sig.shape) != a.ndim:
            raise ArgumentError(f"{what}: expected {sig} (rank {len(sig.shape)}), got {got}")
        for d, (want_d, got_d) in enumerate(zip(sig.shape, a.shape)):
            if want_d is not None and want_d != got_d:
                raise ArgumentError(f"{what}: expected {sig} (dim {d} = {want_d}), got {got}")


# ---------------------------------------------------------------------------
# Memref descriptors and calls
# ---------------------------------------------------------------------------


def descriptor_type(rank: int):
    """The ctypes struct of a rank-`rank` memref descriptor."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def descriptor(pointer: int, shape, strides=None):
    """A descriptor of memory at `pointer` (row-major unless `strides`, in
    elements, are given)."""
    desc = descriptor_type(len(shape))()
    desc.allocated = desc.aligned = pointer
    desc.offset = 0
    if shape:
        if strides is None:
            strides, acc = [], 1
            for n in reversed(shape):
                strides.append(acc)
                acc *= n
            strides = strides[::-1]
        desc.sizes[:] = shape
        desc.strides[:] = strides
    return desc


def array_descriptor(array: np.ndarray):
    return descriptor(array.ctypes.data, array.shape,
                      [s // array.itemsize for s in array.strides])


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
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
        rt.ropeRuntimeCall.restype = ctypes.c_int
        rt.ropeRuntimeCall.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.c_char_p, ctypes.c_size_t]
        _rope_runtime = rt
    return _rope_runtime


def call_checked(function, name: str, structs) -> None:
    """Calls a `_mlir_ciface_` function (an address or a ctypes function)
    with pointers to `structs` (memref descriptors, the result's first)
    through ropeRuntimeCall; a failed runtime check raises RuntimeCheckError."""
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


def _take_result(result, result_sig: TensorSig, arguments) -> np.ndarray:
    """The numpy array of a result descriptor the callee filled in, which then
    owns the callee's allocation (or a copy where the callee does not own the
    memory)."""
    rank = len(result_sig.shape)
    dtype = np.dtype(STORAGE_DTYPES[result_sig.dtype])
    shape = tuple(result.sizes) if rank else ()
    strides = tuple(s * dtype.itemsize for s in result.strides) if rank else ()
    count = int(np.prod(shape)) if shape else 1
    base = result.aligned + result.offset * dtype.itemsize
    span = (sum((n - 1) * s for n, s in zip(shape, strides)) + dtype.itemsize
            if count else 0)
    # Whether the callee allocated the result: not an argument's memory (an
    # identity fold) nor memory MLIR marks as not owned (a memref.global,
    # "allocated" at 0xdeadbeef).
    owned = result.allocated not in (None, 0, 0xDEADBEEF) and not any(
        a.ctypes.data <= result.allocated < a.ctypes.data + max(a.nbytes, 1) for a in arguments)
    if not count:
        if owned:
            _libc.free(result.allocated)
        return np.empty(shape, dtype)
    raw = (ctypes.c_char * span).from_address(base)
    view = np.ndarray(shape, dtype, buffer=raw, strides=strides)
    if not owned:
        # An argument's memory, or a global of the module: a copy.
        return view.copy()
    # The callee's allocation becomes the array's memory, freed with the array
    # (and every view of it): no copy of the result.
    weakref.finalize(view, _libc.free, result.allocated)
    return view


class Module:
    """A compiled module. Its public functions are attributes
    (``module.kernel(x, p)``) and ``module.call("kernel", x, p)``;
    ``module.functions`` has their signatures."""

    def __init__(self, functions: dict[str, FunctionSig]):
        self.functions = functions

    def function_address(self, name: str) -> int:
        """The address of `name`'s `_mlir_ciface_` wrapper."""
        raise NotImplementedError

    def call(self, name: str, *args):
        if name not in self.functions:
            raise AttributeError(f"the module has no public function @{name} "
                                 f"(it has {', '.join('@' + f for f in self.functions) or 'none'})")
        args_sig, result_sig = self.functions[name].callable_types()
        host, kind = arrays.import_arguments(args, self._device)
        check_arguments(name, host, args_sig)
        return arrays.export_result(self._run(name, host, result_sig), result_sig.dtype, kind)

    _device = "cpu"

    def _run(self, name: str, host, result_sig: TensorSig) -> np.ndarray:
        descriptors = [array_descriptor(a) for a in host]
        result = descriptor_type(len(result_sig.shape))()
        call_checked(self.function_address(name), name, [result, *descriptors])
        return _take_result(result, result_sig, host)

    def __getattr__(self, name: str):
        functions = self.__dict__.get("functions", {})
        if name.startswith("_") or name not in functions:
            raise AttributeError(name)
        return lambda *args: self.call(name, *args)

    def __dir__(self):
        return [*super().__dir__(), *self.__dict__.get("functions", {})]


class JitModule(Module):
    """A module JIT-compiled into this process (ropeJitCompile); its code is
    released with the object."""

    def __init__(self, handle: int):
        lib = _native.capi()
        super().__init__(_signatures(lib.ropeJitGetSignatures(handle).decode()))
        self._handle = handle
        self._addresses: dict[str, int] = {}
        self._release = weakref.finalize(self, lib.ropeJitDestroy, handle)

    def function_address(self, name: str) -> int:
        if name not in self._addresses:
            address = _native.capi().ropeJitLookup(self._handle, name.encode())
            if not address:
                raise AttributeError(f"@{name} has no C interface in the compiled module")
            self._addresses[name] = address
        return self._addresses[name]


class SharedLibraryModule(Module):
    """A module compiled ahead of time into a shared library, loaded."""

    def __init__(self, path: Path, functions: dict[str, FunctionSig]):
        super().__init__(functions)
        self.path = Path(path)
        rope_runtime()  # before the library, which links it
        self._lib = ctypes.CDLL(str(self.path))

    def function_address(self, name: str) -> int:
        return ctypes.cast(getattr(self._lib, f"_mlir_ciface_{name}"), ctypes.c_void_p).value


# ---------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CompileOptions:
    """How `compile` compiles. Every field is also a keyword of `compile`.

    target: "cpu" (``--rope-lower-to-cpu``) or "cuda" (``--rope-lower-to-nvvm``).
    pipeline: a pass pipeline replacing the target's, in MLIR's textual form
        (``"rope-lower-to-cpu{query-tile=32}"``) or rope-opt's flags
        (``"--rope-lower-to-cpu=query-tile=32"``).
    pipeline_options: options of the target's pipeline, e.g.
        ``{"query-tile": 32, "runtime-checks": False}``; `compile` takes them
        as keywords too (``query_tile=32``).
    opt_level: LLVM's optimisation level (0-3).
    source_name: the file name diagnostics give the source.
    output: compile ahead of time into a shared library at this path (CPU),
        or the folder of compiled kernels (CUDA; see rope_mlir.gpu).
    chip: the GPU (CUDA) the kernels are for.
    emulate: CUDA only: compile the GPU mapping with its kernels run as host
        loops (on the CPU, no GPU needed).
    prebuilt_only: CUDA only: compile nothing; look the module up in `output`.
    """
    target: str = "cpu"
    pipeline: str | None = None
    pipeline_options: Mapping = field(default_factory=dict)
    opt_level: int = 2
    source_name: str = "<source>"
    output: str | os.PathLike | None = None
    chip: str = "sm_90"
    emulate: bool = False
    prebuilt_only: bool = False

    def __post_init__(self):
        if self.target not in TARGETS:
            raise ValueError(f"target: expected one of {', '.join(map(repr, TARGETS))}, "
                             f"got {self.target!r}")
        if not isinstance(self.opt_level, int) or not 0 <= self.opt_level <= 3:
            raise ValueError(f"opt_level: expected an integer from 0 to 3, got {self.opt_level!r}")
        if self.pipeline is not None and self.pipeline_options:
            raise ValueError("pipeline_options: options of the target's pipeline cannot be given "
                             "with an explicit pipeline (put them into it)")

    def pass_pipeline(self) -> str:
        """The textual pass pipeline this compiles with."""
        if self.pipeline is not None:
            return pipeline_text(self.pipeline)
        if self.target == "cpu":
            name, options = "rope-lower-to-cpu", dict(self.pipeline_options)
        elif self.emulate:
            name, options = "rope-test-gpu-mapping-on-cpu", dict(self.pipeline_options)
        else:
            name, options = "rope-lower-to-nvvm", {"chip": self.chip, **self.pipeline_options}
        return name + _options_text(options)


def _options_text(options: Mapping) -> str:
    if not options:
        return ""
    text = " ".join(f"{str(k).replace('_', '-')}="
                    f"{str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items())
    return "{" + text + "}"


def pipeline_text(pipeline: str | list[str]) -> str:
    """A pass pipeline in MLIR's textual form. Accepts that form, or rope-opt's
    flags (``--rope-lower-to-cpu=query-tile=3 key-tile=5 --canonicalize``,
    also as a list), which it converts."""
    flags = pipeline if isinstance(pipeline, list) else [pipeline]
    flags = [f for f in " ".join(flags).replace(" --", "\n--").split("\n") if f.strip()]
    if not flags or not flags[0].lstrip().startswith("--"):
        return " ".join(flags)
    passes = []
    for flag in flags:
        name, _, options = flag.strip()[2:].partition("=")
        if name == "pass-pipeline":  # --pass-pipeline=builtin.module(...)
            passes.append(options.strip("'\""))
        else:
            passes.append(name + ("{" + options + "}" if options else ""))
    return ",".join(passes)


def _source_text(source) -> tuple[str, str | None]:
    if isinstance(source, os.PathLike):
        return Path(source).read_text(), str(source)
    if not isinstance(source, str):
        raise TypeError(f"source: expected MLIR text (str) or a path, got {type(source).__name__}")
    return source, None


def _make_options(options: CompileOptions | None, target: str | None, kwargs) -> CompileOptions:
    options = options or CompileOptions()
    names = {f.name for f in dataclasses.fields(CompileOptions)}
    chosen = {k: v for k, v in kwargs.items() if k in names}
    extra = {k.replace("_", "-"): v for k, v in kwargs.items() if k not in names}
    if target is not None:
        chosen["target"] = target
    if extra:
        chosen["pipeline_options"] = {**options.pipeline_options, **extra}
    return dataclasses.replace(options, **chosen)


def compile(source, target: str | None = None, *, options: CompileOptions | None = None,
            **kwargs) -> Module:
    """Compiles MLIR `source` (text, or the path of a .mlir file) for `target`
    ("cpu" or "cuda") and returns the module, whose functions are callable.

    Options are a CompileOptions and/or keywords: its fields (``opt_level=3``,
    ``output="k.so"``), else options of the target's pipeline
    (``query_tile=32``, ``runtime_checks=False``). Raises CompileError with
    MLIR's diagnostics and their locations."""
    text, path = _source_text(source)
    options = _make_options(options, target, kwargs)
    if path is not None and options.source_name == "<source>":
        options = dataclasses.replace(options, source_name=path)
    if options.target == "cuda" and not options.emulate:
        from . import gpu
        return gpu.compile_cuda(text, options)
    if options.output is not None:
        return compile_shared_library(text, options, Path(options.output))
    lib = _native.capi()
    diagnostics = ctypes.c_void_p()
    encoded = text.encode()
    handle = lib.ropeJitCompile(encoded, len(encoded),
                                _native.compile_options(options.pass_pipeline(),
                                                        options.opt_level, options.source_name),
                                ctypes.byref(diagnostics))
    if not handle:
        raise CompileError(f"compiling {options.source_name} with "
                           f"'{options.pass_pipeline()}' failed:",
                           _diagnostics(_native.take_string(diagnostics)))
    return JitModule(handle)


def compile_object(text: str, options: CompileOptions, path: Path) -> dict[str, FunctionSig]:
    """Compiles `text` ahead of time into a relocatable object at `path`;
    returns the signatures of its functions."""
    lib = _native.capi()
    signatures, diagnostics = ctypes.c_void_p(), ctypes.c_void_p()
    encoded = text.encode()
    status = lib.ropeCompileToObject(
        encoded, len(encoded),
        _native.compile_options(options.pass_pipeline(), options.opt_level, options.source_name),
        str(path).encode(), ctypes.byref(signatures), ctypes.byref(diagnostics))
    if status != 0:
        raise CompileError(f"compiling {options.source_name} with "
                           f"'{options.pass_pipeline()}' failed:",
                           _diagnostics(_native.take_string(diagnostics)))
    return _signatures(_native.take_string(signatures))


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


def compile_shared_library(text: str, options: CompileOptions, output: Path) -> Module:
    """Ahead of time: compiles into the shared library `output` and loads it.
    The object file lies beside `output` while it is linked."""
    output = output.resolve()
    obj = output.with_name(output.name + ".o")
    try:
        functions = compile_object(text, options, obj)
        native = _native.native_dir().resolve()
        llvm = Path(_native.build_config()["llvm_library_dir"])
        link_shared_library(obj, output, ["RopeRuntime", "mlir_c_runner_utils", "omp"],
                            [native, llvm], [str(native), str(llvm)])
    finally:
        obj.unlink(missing_ok=True)
    return SharedLibraryModule(output, functions)


def lower(source, pipeline: str | list[str], extra: list[str] | None = None) -> str:
    """Runs `pipeline` (textual, or rope-opt's flags; `extra` flags are
    appended) on MLIR `source` in process and returns the resulting text."""
    text, path = _source_text(source)
    pipeline = pipeline_text([pipeline] if isinstance(pipeline, str) else pipeline)
    if extra:
        pipeline = ",".join(p for p in (pipeline, pipeline_text(extra)) if p)
    lib = _native.capi()
    output, diagnostics = ctypes.c_void_p(), ctypes.c_void_p()
    encoded = text.encode()
    status = lib.ropeRunPipeline(encoded, len(encoded),
                                 _native.compile_options(pipeline, 0, path or "<source>"),
                                 ctypes.byref(output), ctypes.byref(diagnostics))
    if status != 0:
        raise CompileError(f"running '{pipeline}' failed:",
                           _diagnostics(_native.take_string(diagnostics)))
    return _native.take_string(output)


def compile_module(source, *, pipeline: str | None = None, **kwargs) -> Module:
    """`compile` for the CPU with an explicit `pipeline` (None: the default
    CPU pipeline)."""
    return compile(source, "cpu", pipeline=pipeline, **kwargs)
