"""Where the package's native libraries are, and loading them.

An installed or staged package (a wheel; ``build/python_packages`` of a CMake
build) carries them in ``rope_mlir/_native`` with ``build_config.json``. The
sources in a checkout (``python/rope_mlir``) use the checkout's default build,
``build/``. No environment variable is consulted.
"""

from __future__ import annotations

import ctypes
import json
from functools import lru_cache
from pathlib import Path

# Not resolved: in a staged package the modules are symlinks into the
# sources, and the libraries lie beside the links.
_PACKAGE = Path(__file__).parent


class NativeLibraryError(OSError):
    """A native library of the package is missing (the build did not make it)."""


@lru_cache(maxsize=None)
def native_dir() -> Path:
    staged = _PACKAGE / "_native"
    if (staged / "build_config.json").exists():
        return staged
    checkout_build = _PACKAGE.resolve().parents[1] / "build" / "python_packages" / "rope_mlir"
    if (checkout_build / "_native" / "build_config.json").exists():
        return checkout_build / "_native"
    raise NativeLibraryError(
        f"rope_mlir's native libraries are not built: neither {staged} nor "
        f"{checkout_build / '_native'} exists (run `make build`, or `pip install` the package)")


@lru_cache(maxsize=None)
def build_config() -> dict:
    return json.loads((native_dir() / "build_config.json").read_text())


# Libraries of the LLVM installation the package was built with.
_LLVM_LIBRARIES = ("mlir_c_runner_utils", "omp")


def library_path(name: str) -> Path:
    """The path of `lib<name>.so`: the package's native folder, or LLVM's
    library folder for MLIR's C runner utils and OpenMP."""
    if name in _LLVM_LIBRARIES:
        return Path(build_config()["llvm_library_dir"]) / f"lib{name}.so"
    path = native_dir() / f"lib{name}.so"
    if not path.exists():
        raise NativeLibraryError(f"{path} is missing" + (
            " (the CUDA toolkit was not found when the package was built)"
            if name == "RopeCudaRuntime" else ""))
    return path


def llvm_tool(name: str) -> Path:
    """An LLVM tool of the toolchain the package was built with (clang links
    ahead-of-time libraries)."""
    return Path(build_config()["llvm_tools_dir"]) / name


@lru_cache(maxsize=None)
def load_global(name: str) -> ctypes.CDLL:
    """Loads `lib<name>.so` once, with its symbols visible to code compiled
    later in this process (the JIT resolves through the global scope)."""
    return ctypes.CDLL(str(library_path(name)), mode=ctypes.RTLD_GLOBAL)


class _CompileOptions(ctypes.Structure):
    _fields_ = [("pipeline", ctypes.c_char_p), ("optLevel", ctypes.c_int),
                ("sourceName", ctypes.c_char_p)]


@lru_cache(maxsize=None)
def capi() -> ctypes.CDLL:
    """libRopeCAPI.so (include/rope-c/Compiler.h), with the libraries that
    compiled code calls loaded first."""
    for runtime in ("RopeRuntime", "mlir_c_runner_utils", "omp"):
        load_global(runtime)
    lib = ctypes.CDLL(str(library_path("RopeCAPI")))
    out = ctypes.POINTER(ctypes.c_void_p)
    options = ctypes.POINTER(_CompileOptions)
    lib.ropeJitCompile.restype = ctypes.c_void_p
    lib.ropeJitCompile.argtypes = [ctypes.c_char_p, ctypes.c_size_t, options, out]
    lib.ropeJitLookup.restype = ctypes.c_void_p
    lib.ropeJitLookup.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.ropeJitGetSignatures.restype = ctypes.c_char_p
    lib.ropeJitGetSignatures.argtypes = [ctypes.c_void_p]
    lib.ropeJitDestroy.restype = None
    lib.ropeJitDestroy.argtypes = [ctypes.c_void_p]
    lib.ropeCompileToObject.restype = ctypes.c_int
    lib.ropeCompileToObject.argtypes = [ctypes.c_char_p, ctypes.c_size_t, options,
                                        ctypes.c_char_p, out, out]
    lib.ropeRunPipeline.restype = ctypes.c_int
    lib.ropeRunPipeline.argtypes = [ctypes.c_char_p, ctypes.c_size_t, options, out, out]
    lib.ropeFreeString.restype = None
    lib.ropeFreeString.argtypes = [ctypes.c_void_p]
    return lib


def compile_options(pipeline: str, opt_level: int, source_name: str) -> _CompileOptions:
    return _CompileOptions(pipeline.encode(), opt_level, source_name.encode())


def take_string(pointer: ctypes.c_void_p) -> str:
    """The text of a string the C API returned, which is then freed."""
    if not pointer.value:
        return ""
    try:
        return ctypes.string_at(pointer.value).decode(errors="replace")
    finally:
        capi().ropeFreeString(pointer.value)
