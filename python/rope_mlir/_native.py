"""Where the package's native libraries are, and loading them (the C API
itself, with its ctypes prototypes, is _capi.py).

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

from .errors import NativeLibraryError

__all__ = ["NativeLibraryError", "build_config", "library_path", "llvm_tool", "load_global",
           "native_dir"]

# Not resolved: in a staged package the modules are symlinks into the
# sources, and the libraries lie beside the links.
_PACKAGE = Path(__file__).parent


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
