# RUN: %python %s | FileCheck %s
"""Compiled functions never write to their arguments.

A partial rotation can be computed in place in its input (the pass-through dims
are already there); --rope-lower-to-cpu marks public tensor arguments read-only
so that bufferization copies instead. Regression test for inputs rotated in
place under the caller.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

TY, PT = "tensor<2x3x5x16xf32>", "tensor<5xi64>"
spec = ref.RotarySpec(rotary_dims=8, offset=4)
lib = T.compile(T.rotate_module(spec.to_attr(), TY, PT))
x = T.rng(3).standard_normal((2, 3, 5, 16)).astype(np.float32)
p = np.array([0, 3, 7, 100, 4096], np.int64)
before = x.copy()
first = lib.call("kernel", x, p)
T.check(x, before, 0.0, "input unchanged")
# Calling twice gives the same result (nothing carried over through the input).
T.check(lib.call("kernel", x, p), first, 0.0, "second call identical")
T.check_rotation(first, ref.rotate(before.astype(np.float64), p, spec), before, spec, "f32", 2,
                 "partial rotation")

# CHECK: PASS input unchanged
# CHECK: PASS second call identical
# CHECK: PASS partial rotation
