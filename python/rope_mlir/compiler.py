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
wrappers, called with memref descriptors (_abi.py). Arguments are numpy arrays
or any DLPack tensor (PyTorch, JAX, CuPy, ...; CPU ones are used without a
copy); the result comes back as the same kind of array as the arguments. bf16
is stored as uint16 bit patterns in numpy (reference.to_bf16_bits /
from_bf16_bits) and as bfloat16 in libraries that have it.

This module is the facade: `compile`, `lower` and what they take and return
(CompileOptions, Module, the errors). The layers below it: options.py (pass
pipelines), module.py (compiled modules), cuda.py (NVIDIA GPUs), _abi.py
(descriptors, calls, result ownership, linking) and _capi.py (the C API).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from . import _abi, _capi, _native, cuda
from ._abi import FunctionSig, TensorSig
from .errors import ArgumentError, CompileError, Diagnostic, RuntimeCheckError
from .module import JitModule, Module, SharedLibraryModule
from .options import TARGETS, CompileOptions, pipeline_text

__all__ = ["ArgumentError", "CompileError", "CompileOptions", "Diagnostic", "FunctionSig",
           "JitModule", "Module", "RuntimeCheckError", "SharedLibraryModule", "TARGETS",
           "TensorSig", "compile", "compile_module", "lower", "pipeline_text"]


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
        return cuda.compile_cuda(text, options)
    if options.output is not None:
        return compile_shared_library(text, options, Path(options.output))
    return JitModule(_capi.jit_compile(text, options.pass_pipeline(), options.opt_level,
                                       options.source_name))


def build_shared_library(text: str, options: CompileOptions,
                         output: Path) -> dict[str, FunctionSig]:
    """Ahead of time: compiles into the shared library `output` without
    loading it; returns the signatures of its functions. The object file
    lies beside `output` while it is linked."""
    output = output.resolve()
    obj = output.with_name(output.name + ".o")
    try:
        functions = _abi.compile_object(text, options, obj)
        native = _native.native_dir().resolve()
        llvm = Path(_native.build_config()["llvm_library_dir"])
        _abi.link_shared_library(obj, output, ["RopeRuntime", "mlir_c_runner_utils", "omp"],
                                 [native, llvm], [str(native), str(llvm)])
    finally:
        obj.unlink(missing_ok=True)
    return functions


def compile_shared_library(text: str, options: CompileOptions, output: Path) -> Module:
    """Ahead of time: compiles into the shared library `output` and loads it."""
    return SharedLibraryModule(output, build_shared_library(text, options, output))


def lower(source, pipeline: str | list[str], extra: list[str] | None = None,
          remarks: list | None = None) -> str:
    """Runs `pipeline` (textual, or rope-opt's flags; `extra` flags are
    appended) on MLIR `source` in process and returns the resulting text;
    the passes' remarks and warnings (errors.Diagnostic) are appended to
    `remarks` when given."""
    text, path = _source_text(source)
    pipeline = pipeline_text([pipeline] if isinstance(pipeline, str) else pipeline)
    if extra:
        pipeline = ",".join(p for p in (pipeline, pipeline_text(extra)) if p)
    return _capi.run_pipeline(text, pipeline, path or "<source>", remarks)


def compile_module(source, *, pipeline: str | None = None, **kwargs) -> Module:
    """`compile` for the CPU with an explicit `pipeline` (None: the default
    CPU pipeline)."""
    return compile(source, "cpu", pipeline=pipeline, **kwargs)
