# REQUIRES: torch
# RUN: %torch_python %s | FileCheck %s
"""PyTorch tensors in and out of compiled functions, through DLPack.

* CPU tensors are read without a copy (the kernel sees the tensor's own
  memory) and the result comes back as a torch tensor that owns the
  kernel's allocation (no copy either), released when torch drops it;
* bf16 tensors go in and come out as torch.bfloat16;
* non-contiguous tensors (a transpose) are read correctly (through a copy);
* a tensor that requires grad is refused with an ArgumentError naming it;
* numpy and torch arguments may be mixed: the result is torch's;
* out= a torch tensor (f32, bf16) receives the result in place.
Values are checked against the f64 reference (rope_testing.rotation_atol: 2 ulps
of f32, +1 storage ulp for bf16) and against the numpy path, bit for bit.
"""

import gc

import numpy as np
import torch

import rope_mlir
from rope_mlir import arrays, reference as ref
import rope_testing as T

spec = rope_mlir.RotarySpec(base=500.0)
f32 = rope_mlir.compile(T.rotate_module(spec.to_attr(), "tensor<1x4x?x32xf32>", "tensor<?xi64>"))
bf16 = rope_mlir.compile(T.rotate_module(spec.to_attr(), "tensor<1x4x?x32xbf16>",
                                         "tensor<?xi64>"))

x = torch.randn(1, 4, 7, 32, generator=torch.Generator().manual_seed(0))
p = torch.arange(7) * 1000
expected = ref.rotate(x.numpy().astype(np.float64), p.numpy(), spec)

# Zero copy in: the numpy view of the tensor is the tensor's memory.
(view, _), kind = arrays.import_arguments([x, p])[0][:2], arrays.import_arguments([x])[1]
print("ZERO COPY", view.ctypes.data == x.data_ptr(), kind.__name__)

out = f32.kernel(x, p)
print("TORCH OUT", type(out).__module__, out.dtype, tuple(out.shape))
T.check(out.numpy(), expected, T.rotation_atol(x.numpy(), spec), "torch f32")
assert np.array_equal(out.numpy(), f32.kernel(x.numpy(), p.numpy())), "torch and numpy differ"
live = len(arrays._LIVE)
del out
gc.collect()
print("RELEASED", live, "->", len(arrays._LIVE))

xb = x.to(torch.bfloat16)
outb = bf16.kernel(xb, p)
print("BF16 OUT", outb.dtype)
bits = xb.view(torch.int16).numpy().view(np.uint16)
assert np.array_equal(outb.view(torch.int16).numpy().view(np.uint16),
                      bf16.kernel(bits, p.numpy())), "bf16 torch and numpy paths differ"
T.check_rotation_stored(outb.view(torch.int16).numpy().view(np.uint16),
                        ref.rotate(ref.from_bf16_bits(bits).astype(np.float64), p.numpy(), spec),
                        ref.from_bf16_bits(bits), spec, "bf16", 2, "torch bf16")

xt = x.transpose(2, 3).contiguous().transpose(2, 3)  # same values, other strides
assert not xt.is_contiguous()
T.check(f32.kernel(xt, p).numpy(), expected, T.rotation_atol(x.numpy(), spec), "strided")

mixed = f32.kernel(x.numpy(), p)
print("MIXED", type(mixed).__module__)

# out= a torch tensor: the result is written into the tensor's own memory,
# f32 and bf16; a non-contiguous one is refused.
dest = torch.full((1, 4, 7, 32), float("nan"))
print("OUT= TORCH", f32.kernel(x, p, out=dest) is dest)
assert torch.equal(dest, f32.kernel(x, p)), "out= and the allocating call differ"
destb = torch.zeros(1, 4, 7, 32, dtype=torch.bfloat16)
bf16.kernel(xb, p, out=destb)
assert torch.equal(destb, bf16.kernel(xb, p)), "bf16 out= and the allocating call differ"
try:
    f32.kernel(x, p, out=torch.empty(1, 4, 32, 7).transpose(2, 3))
    print("ACCEPTED a non-contiguous destination")
except rope_mlir.ArgumentError as e:
    print("OUT= STRIDED", str(e).split(",")[0])

try:
    f32.kernel(x.clone().requires_grad_(), p)
    print("ACCEPTED a tensor that requires grad")
except rope_mlir.ArgumentError as e:
    print("GRAD", str(e).split(":")[0])

# A capsule nobody consumed releases what it holds.
capsule = arrays.Exported.from_array(np.ones(3, np.float32), "f32").__dlpack__()
held = len(arrays._LIVE)
del capsule
gc.collect()
print("UNCONSUMED capsule released", held - len(arrays._LIVE))
T.finish()

# CHECK: ZERO COPY True torch
# CHECK: TORCH OUT torch torch.float32 (1, 4, 7, 32)
# CHECK: PASS torch f32
# CHECK: RELEASED 1 -> 0
# CHECK: BF16 OUT torch.bfloat16
# CHECK: PASS torch bf16
# CHECK: PASS strided
# CHECK: MIXED torch
# CHECK: OUT= TORCH True
# CHECK: OUT= STRIDED @kernel out: must be C-contiguous (strides (3584
# CHECK: GRAD argument #0 (torch.Tensor)
# CHECK: UNCONSUMED capsule released 1
