# RUN: %python %s | FileCheck %s
"""rope.rotate with LongRoPE scaling: short factors while the largest position
is below original_max_position_embeddings (L_orig = 64), long factors beyond
it, selected at run time by one compiled kernel; attention factor
sqrt(1 + ln(factor)/ln(L_orig)) = sqrt(1.5) for factor 8.

Tolerance: 3 ulps of f32 at m·(pair norm) (rope_testing.rotation_atol): the three
roundings of a·cos − b·sin plus the table error, one rounding larger than for
m = 1 because m is folded into the cos/sin tables.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

SHORT = (1.0, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 8.0)
LONG = (1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 48.0)
spec = ref.RotarySpec(layout="interleaved", scaling=ref.Scaling(
    "longrope", short_factor=SHORT, long_factor=LONG, factor=8.0, original_max_position_embeddings=64))
MODULE = T.rotate_module(spec.to_attr(), "tensor<2x?x3x16xf32>", "tensor<?xi64>", seq_dim=1)
assert abs(ref.attention_factor(spec) - np.sqrt(1.5)) < 1e-12
lib = T.compile(MODULE)  # one kernel for every length
g = T.rng(4)

cases = {
    "short": np.array([0, 1, 2, 30, 50, 63], np.int64),  # max + 1 == L_orig: short factors
    "long": np.array([0, 1, 2, 30, 50, 64], np.int64),   # max + 1 > L_orig: long factors
    "long far": np.array([9, 300, 5000, 100000], np.int64),
}
for name, p in cases.items():
    x = T.quantize(g.standard_normal((2, p.size, 3, 16)), "f32")
    with T.guard(f"longrope {name}"):
        out = T.call(lib, "kernel", T.to_storage(x, "f32"), p)
        T.check_rotation_stored(out, ref.rotate(x, p, spec, seq_dim=1), x, spec, "f32", 3,
                                f"longrope {name}")
        # Which factor list the kernel used must show: the other list gives a
        # clearly different result.
        other = ref.Scaling("longrope", short_factor=LONG if name == "short" else SHORT,
                            long_factor=LONG if name == "short" else SHORT, factor=8.0,
                            original_max_position_embeddings=64)
        wrong = ref.rotate(x, p, ref.RotarySpec(layout="interleaved", scaling=other), seq_dim=1)
        assert float(np.abs(out - wrong).max()) > 1e-2, f"longrope {name}: wrong factor list"
T.finish()

# CHECK: PASS longrope short
# CHECK: PASS longrope long
# CHECK: PASS longrope long far
