# RUN: %python %s | FileCheck %s
"""rope.rotate with dynamic NTK scaling: the base grows with the largest
position seen at run time, so one compiled kernel is called with positions
whose maximum lies below, at and above original_max_position_embeddings
(L_orig = 64, i.e. the largest position L_orig − 1 keeps the default base).

Tolerance: 2 ulps of f32 at the pair norm (rope_testing.rotation_atol), as for
every f32 rotation. Below L_orig the result must equal the default rotation;
above it, it must differ clearly from it.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

spec = ref.RotarySpec(scaling=ref.Scaling("dynamic", factor=4.0, original_max_position_embeddings=64))
MODULE = T.rotate_module(spec.to_attr(), "tensor<1x2x?x16xf32>", "tensor<?xi64>")
default = ref.RotarySpec()
lib = T.compile(MODULE)  # one kernel for every length
g = T.rng(2)

cases = {
    "below": np.array([0, 3, 9, 20, 40], np.int64),         # max 40 < L_orig
    "at": np.array([63, 1, 30, 62], np.int64),              # max + 1 == L_orig: still default
    "above": np.array([0, 5, 64, 100], np.int64),           # max + 1 = 101 > L_orig
    "far above": np.array([7, 500, 4000, 65535, 2, 9], np.int64),
}
for name, p in cases.items():
    x = T.quantize(g.standard_normal((1, 2, p.size, 16)), "f32")
    with T.guard(f"dynamic {name}"):
        out = T.call(lib, "kernel", T.to_storage(x, "f32"), p)
        expected = ref.rotate(x, p, spec)
        T.check_rotation_stored(out, expected, x, spec, "f32", 2, f"dynamic {name}")
        plain = ref.rotate(x, p, default)
        if name in ("below", "at"):
            assert np.array_equal(expected, plain), "reference: dynamic below L_orig must be the default"
        else:
            diff = float(np.abs(out - plain).max())
            assert diff > 1e-2, f"dynamic {name}: no different from the default rotation ({diff})"
T.finish()

# CHECK: PASS dynamic below
# CHECK: PASS dynamic at
# CHECK: PASS dynamic above
# CHECK: PASS dynamic far above
