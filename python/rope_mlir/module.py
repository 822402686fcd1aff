"""Compiled modules: their public functions as Python callables.

    module = rope_mlir.compile(text)
    module.kernel(x, positions)          # or module.call("kernel", x, positions)
    module.functions["kernel"]           # its signature

`Module` converts the arguments (numpy arrays or DLPack tensors, see
arrays.py), checks them against the signature and calls the function's
`_mlir_ciface_` wrapper through the ABI of _abi.py; its subclasses say where
the code is: JIT-compiled into this process, a shared library, or (cuda.py)
a library of GPU kernels.
"""

from __future__ import annotations

import ctypes
import weakref
from pathlib import Path

import numpy as np

from . import _abi, _capi, arrays
from ._abi import FunctionSig, TensorSig

__all__ = ["JitModule", "Module", "SharedLibraryModule"]


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
        _abi.check_arguments(name, host, args_sig)
        return arrays.export_result(self._run(name, host, result_sig), result_sig.dtype, kind)

    _device = "cpu"

    def _run(self, name: str, host, result_sig: TensorSig) -> np.ndarray:
        descriptors = [_abi.array_descriptor(a) for a in host]
        result = _abi.descriptor_type(len(result_sig.shape))()
        _abi.call_checked(self.function_address(name), name, [result, *descriptors])
        return _abi.take_result(result, result_sig, host)

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
        super().__init__(_abi.parse_signatures(_capi.jit_signatures(handle)))
        self._handle = handle
        self._addresses: dict[str, int] = {}
        self._release = weakref.finalize(self, _capi.jit_destroy, handle)

    def function_address(self, name: str) -> int:
        if name not in self._addresses:
            address = _capi.jit_lookup(self._handle, name)
            if not address:
                raise AttributeError(f"@{name} has no C interface in the compiled module")
            self._addresses[name] = address
        return self._addresses[name]


class SharedLibraryModule(Module):
    """A module compiled ahead of time into a shared library, loaded."""

    def __init__(self, path: Path, functions: dict[str, FunctionSig]):
        super().__init__(functions)
        self.path = Path(path)
        _abi.rope_runtime()  # before the library, which links it
        self._lib = ctypes.CDLL(str(self.path))

    def function_address(self, name: str) -> int:
        return ctypes.cast(getattr(self._lib, f"_mlir_ciface_{name}"), ctypes.c_void_p).value
