"""rope-mlir's Python package: compile MLIR with the rope dialect in process
and call it on numpy arrays or DLPack tensors (PyTorch, ...); the f64
reference of every rotary scaling; the Hugging Face importer.

    import rope_mlir
    module = rope_mlir.compile(text)                 # target="cpu" (JIT) or "cuda"
    out = module.kernel(x, positions)                # numpy or torch in, same out
    spec = rope_mlir.RotarySpec(scaling=rope_mlir.Scaling("llama3", factor=8.0))
    spec.to_attr()                                   # '#rope.spec<...>'
"""

from .compiler import (ArgumentError, CompileError, CompileOptions, Diagnostic, Module,
                       RuntimeCheckError, compile, compile_module, lower)
from .reference import RotarySpec, Scaling

__all__ = ["ArgumentError", "CompileError", "CompileOptions", "Diagnostic", "Module",
           "RotarySpec", "RuntimeCheckError", "Scaling", "compile", "compile_module", "lower"]
