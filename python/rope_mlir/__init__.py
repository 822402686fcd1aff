"""rope-mlir's Python package: compile MLIR with the rope dialect in process
and call it on numpy arrays or DLPack tensors (PyTorch, ...); the f64
reference of every rotary scaling; the Hugging Face importer.

    import rope_mlir
    module = rope_mlir.compile(text)                 # target="cpu" (JIT) or "cuda"
    out = module.kernel(x, positions)                # numpy or torch in, same out
    spec = rope_mlir.RotarySpec(scaling=rope_mlir.Scaling("llama3", factor=8.0))
    spec.to_attr()                                   # '#rope.spec<...>'

Modules: compiler (compile, lower), options (CompileOptions), module (compiled
modules), cuda (NVIDIA GPUs), spec (RotarySpec, Scaling), errors, arrays
(numpy and DLPack), reference (the f64 oracle), hf (Hugging Face configs);
_abi, _capi and _native are private. Importing the package loads no native
library: the C API is loaded by the first call that needs it.
"""

from . import reference  # noqa: F401 - rope_mlir.reference.rotate(...) after `import rope_mlir`
from .compiler import CompileOptions, Module, compile, compile_module, lower
from .errors import (ArgumentError, CompileError, Diagnostic, NativeLibraryError,
                     RuntimeCheckError, SpecError)
from .spec import RotarySpec, Scaling

__all__ = ["ArgumentError", "CompileError", "CompileOptions", "Diagnostic", "Module",
           "NativeLibraryError", "RotarySpec", "RuntimeCheckError", "Scaling", "SpecError",
           "compile", "compile_module", "lower"]
