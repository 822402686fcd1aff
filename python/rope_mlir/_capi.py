"""libRopeCAPI.so through ctypes: its prototypes (include/rope-c/Compiler.h,
include/rope-c/Spec.h) and one Python function per C function, which owns the
strings the C API returns and turns its JSON diagnostics into exceptions.

Nothing is loaded until a function here is first called.
"""

from __future__ import annotations

import ctypes
import json
from functools import lru_cache
from pathlib import Path

from . import _native
from .errors import CompileError, NativeLibraryError, SpecError, parse_diagnostics


class _CompileOptions(ctypes.Structure):
    _fields_ = [("pipeline", ctypes.c_char_p), ("optLevel", ctypes.c_int),
                ("sourceName", ctypes.c_char_p)]


_OUT = ctypes.POINTER(ctypes.c_void_p)

# Another build of the C API to load instead of the package's (use_library).
_library: Path | None = None


def use_library(path) -> None:
    """Loads the C API from `path` instead of the package's libRopeCAPI.so:
    the same API built with more passes registered (the tests load
    libRopeCAPITesting.so, with the test-only passes). Only before the C API
    is first loaded: a process must not load two, as each registers every
    rope pass."""
    global _library
    path = Path(path)
    if capi.cache_info().currsize and path != library():
        raise RuntimeError(f"the C API is loaded from {library()} already; {path} cannot "
                           "be loaded instead")
    _library = path


def library() -> Path:
    """The C API library this process loads (or has loaded)."""
    return _library if _library is not None else _native.library_path("RopeCAPI")


@lru_cache(maxsize=None)
def capi() -> ctypes.CDLL:
    """libRopeCAPI.so (include/rope-c/Compiler.h), with the libraries that
    compiled code calls loaded first: the rope runtime, the GPU emulator (code
    of the pipelines that run GPU kernels on the CPU), MLIR's C runner utils
    and OpenMP."""
    for runtime in ("RopeRuntime", "RopeGpuEmulator", "mlir_c_runner_utils", "omp"):
        _native.load_global(runtime)
    lib = ctypes.CDLL(str(library()))
    options = ctypes.POINTER(_CompileOptions)
    lib.ropeJitCompile.restype = ctypes.c_void_p
    lib.ropeJitCompile.argtypes = [ctypes.c_char_p, ctypes.c_size_t, options, _OUT]
    lib.ropeJitLookup.restype = ctypes.c_void_p
    lib.ropeJitLookup.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.ropeJitLookupPacked.restype = ctypes.c_void_p
    lib.ropeJitLookupPacked.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.ropeJitGetSignatures.restype = ctypes.c_char_p
    lib.ropeJitGetSignatures.argtypes = [ctypes.c_void_p]
    lib.ropeJitDestroy.restype = None
    lib.ropeJitDestroy.argtypes = [ctypes.c_void_p]
    lib.ropeCompileToObject.restype = ctypes.c_int
    lib.ropeCompileToObject.argtypes = [ctypes.c_char_p, ctypes.c_size_t, options,
                                        ctypes.c_char_p, _OUT, _OUT]
    lib.ropeRunPipeline.restype = ctypes.c_int
    lib.ropeRunPipeline.argtypes = [ctypes.c_char_p, ctypes.c_size_t, options, _OUT, _OUT]
    lib.ropeFreeString.restype = None
    lib.ropeFreeString.argtypes = [ctypes.c_void_p]
    return lib


@lru_cache(maxsize=None)
def _spec_api() -> ctypes.CDLL:
    """capi() with the prototypes of include/rope-c/Spec.h."""
    lib = capi()
    for name in ("ropeSpecParse", "ropeSpecPrint"):
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise NativeLibraryError(
                f"{library()} has no {name}: it was built from older "
                "sources (rebuild it, e.g. `make build`)") from None
        function.restype = ctypes.c_int
        function.argtypes = [ctypes.c_char_p, ctypes.c_size_t, _OUT, _OUT]
    return lib


def _options(pipeline: str, opt_level: int, source_name: str) -> _CompileOptions:
    return _CompileOptions(pipeline.encode(), opt_level, source_name.encode())


def take_string(pointer: ctypes.c_void_p) -> str:
    """The text of a string the C API returned, which is then freed."""
    if not pointer.value:
        return ""
    try:
        return ctypes.string_at(pointer.value).decode(errors="replace")
    finally:
        capi().ropeFreeString(pointer.value)


# ---------------------------------------------------------------------------
# Compiling (include/rope-c/Compiler.h)
# ---------------------------------------------------------------------------


def _compile_failed(source_name: str, pipeline: str, diagnostics) -> CompileError:
    return CompileError(f"compiling {source_name} with '{pipeline}' failed:",
                        parse_diagnostics(take_string(diagnostics)))


def jit_compile(text: str, pipeline: str, opt_level: int, source_name: str) -> int:
    """ropeJitCompile: the handle of the module compiled into this process."""
    diagnostics = ctypes.c_void_p()
    encoded = text.encode()
    handle = capi().ropeJitCompile(encoded, len(encoded),
                                   _options(pipeline, opt_level, source_name),
                                   ctypes.byref(diagnostics))
    if not handle:
        raise _compile_failed(source_name, pipeline, diagnostics)
    return handle


def jit_signatures(handle: int) -> str:
    """ropeJitGetSignatures: the JSON signatures of a compiled module."""
    return capi().ropeJitGetSignatures(handle).decode()


def jit_lookup(handle: int, name: str) -> int | None:
    """ropeJitLookup: the address of `_mlir_ciface_<name>`, or None."""
    return capi().ropeJitLookup(handle, name.encode())


def jit_lookup_packed(handle: int, name: str) -> int | None:
    """ropeJitLookupPacked: the address of `_rope_packed_<name>`, or None."""
    return capi().ropeJitLookupPacked(handle, name.encode())


def jit_destroy(handle: int) -> None:
    capi().ropeJitDestroy(handle)


def compile_to_object(text: str, pipeline: str, opt_level: int, source_name: str,
                      path) -> str:
    """ropeCompileToObject: writes the object file at `path`; returns the
    JSON signatures of its functions."""
    signatures, diagnostics = ctypes.c_void_p(), ctypes.c_void_p()
    encoded = text.encode()
    status = capi().ropeCompileToObject(encoded, len(encoded),
                                        _options(pipeline, opt_level, source_name),
                                        str(path).encode(), ctypes.byref(signatures),
                                        ctypes.byref(diagnostics))
    if status != 0:
        raise _compile_failed(source_name, pipeline, diagnostics)
    return take_string(signatures)


def run_pipeline(text: str, pipeline: str, source_name: str, remarks: list | None = None) -> str:
    """ropeRunPipeline: the module's text after `pipeline`; the remarks and
    warnings the passes emitted are appended to `remarks` (Diagnostics)."""
    output, diagnostics = ctypes.c_void_p(), ctypes.c_void_p()
    encoded = text.encode()
    status = capi().ropeRunPipeline(encoded, len(encoded), _options(pipeline, 0, source_name),
                                    ctypes.byref(output), ctypes.byref(diagnostics))
    recorded = parse_diagnostics(take_string(diagnostics))
    if status != 0:
        raise CompileError(f"running '{pipeline}' failed:", recorded)
    if remarks is not None:
        remarks.extend(recorded)
    return take_string(output)


# ---------------------------------------------------------------------------
# The rotary spec attribute (include/rope-c/Spec.h)
# ---------------------------------------------------------------------------


def _column(diagnostics) -> str:
    """` at column N` of the first diagnostic of one-line text (its location
    is `<text>:1:N`), else nothing."""
    parts = diagnostics[0].location.rsplit(":", 2) if diagnostics else []
    if len(parts) == 3 and parts[1] == "1" and parts[2].isdigit() and parts[2] != "0":
        return f" at column {parts[2]}"
    return ""


def spec_parse(text: str) -> dict:
    """ropeSpecParse: the fields of `#rope.spec<...>` text, read and verified
    by the dialect. Raises SpecError with its diagnostics."""
    if not isinstance(text, str):
        raise SpecError(f"expected `#rope.spec<...>` text (str), got {type(text).__name__}")
    fields, diagnostics = ctypes.c_void_p(), ctypes.c_void_p()
    encoded = text.encode()
    status = _spec_api().ropeSpecParse(encoded, len(encoded), ctypes.byref(fields),
                                       ctypes.byref(diagnostics))
    if status != 0:
        found = parse_diagnostics(take_string(diagnostics))
        raise SpecError(f"invalid rotary spec {text!r}{_column(found)}", found)
    return json.loads(take_string(fields))


def spec_print(fields: dict) -> str:
    """ropeSpecPrint: the dialect's `#rope.spec<...>` text of `fields`,
    verified. Raises SpecError with its diagnostics."""
    encoded = json.dumps(fields, allow_nan=False).encode()
    text, diagnostics = ctypes.c_void_p(), ctypes.c_void_p()
    status = _spec_api().ropeSpecPrint(encoded, len(encoded), ctypes.byref(text),
                                       ctypes.byref(diagnostics))
    if status != 0:
        raise SpecError("invalid rotary spec", parse_diagnostics(take_string(diagnostics)))
    return take_string(text)
