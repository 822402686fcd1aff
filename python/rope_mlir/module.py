"""Compiled modules: their public functions as Python callables.

    module = rope_mlir.compile(text)
    module.kernel(x, positions)          # or module.call("kernel", x, positions)
    module.kernel(x, positions, out=y)   # the result written into y
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
from .errors import ArgumentError

__all__ = ["JitModule", "Module", "SharedLibraryModule"]


class Module:
    """A compiled module. Its public functions are attributes
    (``module.kernel(x, p)``) and ``module.call("kernel", x, p)``;
    ``module.functions`` has their signatures."""

    def __init__(self, functions: dict[str, FunctionSig]):
        self.functions = functions
        self._signatures: dict[str, tuple] = {}

    def function_address(self, name: str) -> int:
        """The address of `name`'s `_mlir_ciface_` wrapper."""
        raise NotImplementedError

    def packed_address(self, name: str) -> int:
        """The address of `name`'s `_rope_packed_` entry point (one pointer
        to the descriptors' pointers), for calls with more than
        _abi.MAX_CALL_ARGS descriptors."""
        raise NotImplementedError

    def call(self, name: str, *args, out=None):
        """Calls @name on `args`; its result, or a tuple of its results when
        it returns several, as the arguments' kind of array. With `out` (an
        array, or a tuple of one per result), the results are written into
        it and it is returned: nothing is allocated for them."""
        args_sig, results_sig = self._callable_signature(name)
        host, kind = arrays.import_arguments(args, self._device)
        _abi.check_arguments(name, host, args_sig)
        if out is not None:
            several = isinstance(out, tuple)
            dests = arrays.import_destinations(list(out) if several else [out])
            _abi.check_destinations(name, dests, results_sig, host)
            self.run_into(name, host, dests)
            return out
        outs = [arrays.export_result(a, r.dtype, kind)
                for a, r in zip(self.run_host(name, host, results_sig), results_sig)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    _device = "cpu"

    def _callable_signature(self, name: str):
        """@name's callable_signature, worked out on its first call."""
        signature = self._signatures.get(name)
        if signature is None:
            if name not in self.functions:
                raise AttributeError(
                    f"the module has no public function @{name} (it has "
                    f"{', '.join('@' + f for f in self.functions) or 'none'})")
            signature = self._signatures[name] = self.functions[name].callable_signature()
        return signature

    def run_host(self, name: str, host, results_sig) -> list[np.ndarray]:
        """@name on checked, C-contiguous numpy arrays: its results."""
        return self.run_descriptors(name, [_abi.array_descriptor(a) for a in host],
                                    [(a.ctypes.data, a.nbytes) for a in host], results_sig)

    def run_descriptors(self, name: str, descriptors, spans, results_sig) -> list[np.ndarray]:
        """@name on the memref descriptors of checked arguments whose memory
        is `spans` ((address, bytes) each): its results."""
        results = _abi.results_type(results_sig)()
        self._call_entry(name, name, [results, *descriptors])
        allocations: dict = {}
        return [_abi.take_result(getattr(results, f"r{i}"), r, spans, allocations)
                for i, r in enumerate(results_sig)]

    def run_into(self, name: str, host, dests) -> None:
        """@name on checked, C-contiguous numpy arrays `host`, its results
        written into `dests` (checked by _abi.check_destinations) through
        its destination form `@name__into` (--rope-destination-entry-points)."""
        into = f"{name}__into"
        if into in self.functions:
            raise ArgumentError(f"@{name} cannot write into out=: the source defines @{into} "
                                f"itself, so the compiler gave @{name} no destination form")
        try:
            self._call_entry(into, name, [_abi.array_descriptor(a) for a in (*host, *dests)])
        except AttributeError as e:
            raise ArgumentError(
                f"@{name} cannot write into out=: the module has no @{into} (compiled with "
                "destination_entry_points off, or the results' extents are not known from "
                "the arguments' before the function runs)") from e

    def _call_entry(self, symbol: str, name: str, structs) -> None:
        """Calls @symbol's C interface with pointers to `structs`, or its
        packed entry point where they are more than ropeRuntimeCall passes;
        errors name @name."""
        if len(structs) > _abi.MAX_CALL_ARGS:
            _abi.call_packed(self.packed_address(symbol), name, structs)
        else:
            _abi.call_checked(self.function_address(symbol), name, structs)

    def __getattr__(self, name: str):
        functions = self.__dict__.get("functions", {})
        if name.startswith("_") or name not in functions:
            raise AttributeError(name)
        return lambda *args, out=None: self.call(name, *args, out=out)

    def __dir__(self):
        return [*super().__dir__(), *self.__dict__.get("functions", {})]


class JitModule(Module):
    """A module JIT-compiled into this process (ropeJitCompile); its code is
    released with the object."""

    def __init__(self, handle: int):
        super().__init__(_abi.parse_signatures(_capi.jit_signatures(handle)))
        self._handle = handle
        self._addresses: dict[tuple, int] = {}
        self._release = weakref.finalize(self, _capi.jit_destroy, handle)

    def _lookup(self, lookup, name: str, what: str) -> int:
        key = (lookup, name)
        if key not in self._addresses:
            address = lookup(self._handle, name)
            if not address:
                raise AttributeError(f"@{name} has no {what} in the compiled module")
            self._addresses[key] = address
        return self._addresses[key]

    def function_address(self, name: str) -> int:
        return self._lookup(_capi.jit_lookup, name, "C interface")

    def packed_address(self, name: str) -> int:
        return self._lookup(_capi.jit_lookup_packed, name, "packed entry point")


class SharedLibraryModule(Module):
    """A module compiled ahead of time into a shared library, loaded."""

    def __init__(self, path: Path, functions: dict[str, FunctionSig]):
        super().__init__(functions)
        self.path = Path(path)
        _abi.rope_runtime()  # before the library, which links it
        self._lib = ctypes.CDLL(str(self.path))
        self._addresses: dict[str, int] = {}

    def _symbol(self, symbol: str) -> int:
        address = self._addresses.get(symbol)
        if address is None:
            address = self._addresses[symbol] = ctypes.cast(getattr(self._lib, symbol),
                                                            ctypes.c_void_p).value
        return address

    def function_address(self, name: str) -> int:
        return self._symbol(f"_mlir_ciface_{name}")

    def packed_address(self, name: str) -> int:
        return self._symbol(f"_rope_packed_{name}")
