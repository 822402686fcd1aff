# RUN: %python %s | FileCheck %s
"""rope.rotate at long positions, up to 2^20, f32: the phase p·inv_freq must
be formed without f32 loss (plain f32(p)·f32(inv_freq) is ~0.06 rad off at
p = 10^6, i.e. errors around 6e-2 here, five orders of magnitude above the
tolerance). Base 10000 and 500000, half and interleaved, linear scaling, and
an attention factor (yarn).

Tolerance: 2 ulps of f32 at the pair norm when m = 1, 3 ulps when an attention
factor m is folded into the tables (rope_testing.rotation_atol) — the same bound as
at small positions: the length of the position must cost nothing.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

# name: (spec, f32 ulps); the kernel's #rope.spec is the spec's own text.
CASES = {
    "default half": (ref.RotarySpec(), 2),
    "base 500000 interleaved": (ref.RotarySpec(base=500000.0, layout="interleaved"), 2),
    "linear": (ref.RotarySpec(scaling=ref.Scaling("linear", factor=2.0)), 2),
    "yarn": (ref.RotarySpec(scaling=ref.Scaling("yarn", factor=16.0, original_max_position_embeddings=65536)), 3),
}

g = T.rng(10)
p = np.concatenate([[1 << 20, (1 << 20) - 1, 1_000_000, 999_983, 524_287, 65_537],
                    g.integers(1 << 16, (1 << 20) + 1, size=26)]).astype(np.int64)
x = T.quantize(g.standard_normal((1, 2, p.size, 64)), "f32")

for name, (spec, ulps) in CASES.items():
    with T.guard(name):
        lib = T.compile(T.rotate_module(spec.to_attr(), "tensor<1x2x?x64xf32>", "tensor<?xi64>"))
        out = T.call(lib, "kernel", T.to_storage(x, "f32"), p)
        T.check_rotation_stored(out, ref.rotate(x, p, spec), x, spec, "f32", ulps, f"long positions {name}")
T.finish()

# CHECK: PASS long positions default half:
# CHECK: PASS long positions base 500000 interleaved:
# CHECK: PASS long positions linear:
# CHECK: PASS long positions yarn:
