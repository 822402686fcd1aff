"""Arrays in and out of compiled functions: numpy, and any DLPack tensor.

A DLPack tensor (PyTorch, JAX, CuPy, numpy itself, ...) is read through its
``__dlpack__`` capsule: CPU memory becomes a numpy view without a copy, GPU
memory stays where it is (for CUDA modules). A result goes back to the
caller's library through DLPack too, again without a copy: the library takes
ownership of the memory the compiled function allocated. bf16 has no numpy
dtype: it is stored as uint16 in numpy and handed over as bfloat16.
"""

from __future__ import annotations

import ctypes
import importlib
from dataclasses import dataclass

import numpy as np

from .errors import ArgumentError

# MLIR element type -> numpy dtype of its storage.
STORAGE_DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "bf16": np.uint16,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    # A frontend's complex values (DeepSeek's rotation tables, `freqs_cis`)
    # between the parts of a split graph: pairs of floats, as numpy's.
    "complex<f32>": np.complex64,
    "complex<f64>": np.complex128,
}

# DLPack's data type codes and device types (dlpack.h).
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
_DLPACK_TYPES = {
    "f32": (_FLOAT, 32), "f64": (_FLOAT, 64), "f16": (_FLOAT, 16), "bf16": (_BFLOAT, 16),
    "i1": (_BOOL, 8), "i8": (_INT, 8), "i16": (_INT, 16), "i32": (_INT, 32), "i64": (_INT, 64),
    "complex<f32>": (_COMPLEX, 64), "complex<f64>": (_COMPLEX, 128),
}
_ELEMENTS = {v: k for k, v in _DLPACK_TYPES.items()}
_ELEMENTS[(_UINT, 8)] = "i1"  # some libraries export bool as uint8


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _Deleter)]

# Capsule names must outlive their capsules: module constants.
_DLTENSOR = b"dltensor"
_USED_DLTENSOR = b"used_dltensor"
_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# In a capsule's destructor the capsule is being freed: no new references
# to it, so these take it as a plain pointer.
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))


@dataclass
class DeviceArray:
    """A tensor in GPU memory, read through DLPack (CUDA modules use it in
    place). `owner` keeps the memory alive."""
    pointer: int
    shape: tuple
    strides: tuple  # in elements
    dtype: np.dtype  # of the storage
    device_id: int
    owner: object

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.itemsize

    def is_contiguous(self) -> bool:
        expected = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n > 1 and s != expected:
                return False
            expected *= n
        return True


class _Imported:
    """Holds a consumed DLPack tensor until the views of it are gone."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        deleter = self.managed.contents.deleter
        if deleter:
            deleter(self.managed)


def _dlpack_import(obj):
    """(element type, numpy view or DeviceArray) of a DLPack tensor."""
    capsule = obj.__dlpack__()
    address = _api.PyCapsule_GetPointer(capsule, _DLTENSOR)
    managed = ctypes.cast(address, ctypes.POINTER(DLManagedTensor))
    _api.PyCapsule_SetName(capsule, _USED_DLTENSOR)
    owner = _Imported(managed)
    t = managed.contents.dl_tensor
    key = (t.dtype.code, t.dtype.bits)
    if key not in _ELEMENTS or t.dtype.lanes != 1:
        raise TypeError(f"unsupported DLPack data type (code {t.dtype.code}, {t.dtype.bits} "
                        f"bits, {t.dtype.lanes} lanes)")
    element = _ELEMENTS[key]
    dtype = np.dtype(STORAGE_DTYPES[element])
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= n
        strides = tuple(reversed(strides))
    data = (t.data or 0) + t.byte_offset
    if t.device.device_type in (CUDA, CUDA_MANAGED):
        return element, DeviceArray(data, shape, strides, dtype, t.device.device_id, owner)
    if t.device.device_type not in (CPU, CUDA_HOST):
        raise TypeError(f"tensors on DLPack device type {t.device.device_type} are not "
                        "supported (CPU and CUDA are)")
    count = int(np.prod(shape)) if shape else 1
    if count == 0:
        return element, np.empty(shape, dtype)
    span = sum((n - 1) * abs(s) for n, s in zip(shape, strides)) * dtype.itemsize + dtype.itemsize
    raw = (ctypes.c_char * span).from_address(data)
    raw._owner = owner  # the memory lives as long as any view of it
    view = np.ndarray(shape, dtype, buffer=raw, strides=[s * dtype.itemsize for s in strides])
    return element, view


def _namespace(obj):
    """The array library of `obj`, which has `from_dlpack`."""
    if hasattr(obj, "__array_namespace__"):
        try:
            return obj.__array_namespace__()
        except Exception:  # noqa: BLE001 - fall back to the defining package
            pass
    return importlib.import_module(type(obj).__module__.split(".")[0])


def import_arguments(args, allow_device: bool = False):
    """The arguments as C-contiguous numpy arrays (CPU memory, no copy where
    they are contiguous already) or, with `allow_device`, DeviceArrays; and
    the array library the result goes back to (None: numpy)."""
    out, kind = [], None
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            out.append(a if a.flags.c_contiguous else np.ascontiguousarray(a))
            continue
        if not hasattr(a, "__dlpack__"):
            out.append(np.require(np.asarray(a), requirements="C"))
            continue
        try:
            _, value = _dlpack_import(a)
        except (TypeError, BufferError, RuntimeError, ValueError) as e:
            raise ArgumentError(f"argument #{i} ({type(a).__module__}.{type(a).__name__}): "
                                f"cannot be read through DLPack: {e}") from e
        if isinstance(value, DeviceArray) and not allow_device:
            raise ArgumentError(f"argument #{i}: a tensor in GPU memory, for a module compiled "
                                "for the CPU (move it to the CPU, or compile with target='cuda')")
        if kind is None:
            kind = _namespace(a)
        out.append(value if isinstance(value, DeviceArray)
                   else np.require(value, requirements="C"))
    return out, kind


def import_destinations(outs) -> list[np.ndarray]:
    """Arrays a compiled function writes its results into (``out=``): numpy
    views of the caller's memory, never copies. Whether they fit is
    _abi.check_destinations'."""
    views = []
    for i, a in enumerate(outs):
        what = f"out #{i}" if len(outs) > 1 else "out"
        if isinstance(a, np.ndarray):
            views.append(a)
            continue
        if not hasattr(a, "__dlpack__"):
            raise ArgumentError(f"{what}: expected a numpy array or a DLPack tensor to write "
                                f"the result into, got {type(a).__name__}")
        try:
            _, value = _dlpack_import(a)
        except (TypeError, BufferError, RuntimeError, ValueError) as e:
            raise ArgumentError(f"{what} ({type(a).__module__}.{type(a).__name__}): "
                                f"cannot be written through DLPack: {e}") from e
        if isinstance(value, DeviceArray):
            raise ArgumentError(f"{what}: a tensor in GPU memory, for a module compiled for "
                                "the CPU")
        views.append(value)
    return views


# ---------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------

# Exported tensors alive in a consumer, by manager_ctx: what their memory
# belongs to, released by the deleter the consumer calls.
_LIVE: dict[int, tuple] = {}


def _delete(managed) -> None:
    _LIVE.pop(managed.contents.manager_ctx, None)


_DELETER = _Deleter(_delete)


def _destroy_capsule(capsule: int) -> None:
    # A consumer renames the capsule it takes and calls the deleter itself.
    if _capsule_is_valid(capsule, _DLTENSOR):
        address = _capsule_pointer(capsule, _DLTENSOR)
        _delete(ctypes.cast(address, ctypes.POINTER(DLManagedTensor)))


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_destroy_capsule)


class Exported:
    """A result on its way to another array library, through DLPack. It
    keeps `owner` (what owns the memory: a numpy array, a device buffer)
    alive until the consumer is done with the memory."""

    def __init__(self, pointer: int, shape, strides, element: str, owner,
                 device=(CPU, 0)):
        self.pointer, self.shape, self.strides = pointer, tuple(shape), tuple(strides)
        self.element, self.owner, self.device = element, owner, device

    @classmethod
    def from_array(cls, array: np.ndarray, element: str) -> "Exported":
        return cls(array.ctypes.data, array.shape,
                   [s // array.itemsize for s in array.strides], element, array)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        ndim = len(self.shape)
        managed = DLManagedTensor()
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(ndim, 1))(*self.strides)
        t = managed.dl_tensor
        t.data = self.pointer
        t.device = DLDevice(*self.device)
        t.ndim = ndim
        code, bits = _DLPACK_TYPES[self.element]
        t.dtype = DLDataType(code, bits, 1)
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = 0
        key = ctypes.addressof(managed)
        managed.manager_ctx = key
        managed.deleter = _DELETER
        _LIVE[key] = (managed, shape, strides, self.owner)
        return _api.PyCapsule_New(key, _DLTENSOR, ctypes.cast(_CAPSULE_DESTRUCTOR, ctypes.c_void_p))


def export_result(array: np.ndarray, element: str, kind):
    """`array` (a result in CPU memory) as `kind`'s array (numpy if None)."""
    if kind is None or kind is np:
        return array
    return kind.from_dlpack(Exported.from_array(array, element))
