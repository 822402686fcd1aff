"""rope-mlir's Python package: the f64 reference, the compiler driver and the
Hugging Face importer. The names most programs need are here:

    from rope_mlir import RotarySpec, Scaling, compile_module
    lib = compile_module(text)              # CPU; rope_mlir.gpu for NVIDIA
    out = lib.call("kernel", x, positions)  # numpy in, numpy out
"""

from .compiler import (ArgumentError, CompileError, Library, RuntimeCheckError,
                       compile_module)
from .reference import RotarySpec, Scaling

__all__ = ["ArgumentError", "CompileError", "Library", "RotarySpec", "RuntimeCheckError",
           "Scaling", "compile_module"]
