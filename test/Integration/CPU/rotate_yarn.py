# RUN: %python %s | FileCheck %s
"""rope.rotate with YaRN scaling, f32 storage, head dim 32 (16 pairs).

With base 10000 and L_orig = 4096 the correction range is pairs [5, 12], so
extrapolated, blended and interpolated frequencies all occur. Cases: the
default attention factor 0.1·ln(factor) + 1; the mscale/mscale_all_dim ratio
(DeepSeek style); and an untruncated ramp with non-default beta_fast/slow.

Tolerance: 3 ulps of f32 at m·(pair norm) (rope_testing.rotation_atol): the three
roundings of a·cos − b·sin plus the table error, which is one rounding larger
than for m = 1 because m is folded into the cos/sin tables. The attention
factor m is checked separately (to 1e-5, far below any wrong formula's error): the output pair norm must be m
times the input's.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

# name: scaling; the kernel's #rope.spec is the spec's own text.
SPECS = {
    "default_mscale": ref.Scaling("yarn", factor=4.0, original_max_position_embeddings=4096),
    "mscale_ratio": ref.Scaling("yarn", factor=4.0, original_max_position_embeddings=4096,
                                mscale=1.0, mscale_all_dim=0.5),
    "untruncated": ref.Scaling("yarn", factor=8.0, original_max_position_embeddings=4096,
                               beta_fast=16.0, beta_slow=2.0, truncate=False),
}
x = T.quantize(T.rng(3).standard_normal((2, 2, 8, 32)), "f32")
p = np.array([0, 1, 31, 500, 4095, 4096, 12000, 16383], np.int64)
expected_m = {"default_mscale": 0.1 * np.log(4.0) + 1.0,
              "mscale_ratio": (0.1 * np.log(4.0) + 1.0) / (0.05 * np.log(4.0) + 1.0),
              "untruncated": 0.1 * np.log(8.0) + 1.0}

for name, scaling in SPECS.items():
    spec = ref.RotarySpec(scaling=scaling)
    assert abs(ref.attention_factor(spec) - expected_m[name]) < 1e-12
    with T.guard(f"yarn {name}"):
        lib = T.compile(T.rotate_module(spec.to_attr(), "tensor<2x2x?x32xf32>", "tensor<?xi64>"))
        out = T.call(lib, "kernel", T.to_storage(x, "f32"), p)
        T.check_rotation_stored(out, ref.rotate(x, p, spec), x, spec, "f32", 3, f"yarn {name}")
        # The norm of every pair is scaled by m (half layout: pairs (i, i + 16)).
        ratio = np.hypot(out[..., :16], out[..., 16:]) / np.hypot(x[..., :16], x[..., 16:])
        T.check(ratio, np.full(ratio.shape, expected_m[name]), 1e-5, f"yarn {name} attention factor")
T.finish()

# CHECK: PASS yarn default_mscale:
# CHECK: PASS yarn default_mscale attention factor
# CHECK: PASS yarn mscale_ratio:
# CHECK: PASS yarn mscale_ratio attention factor
# CHECK: PASS yarn untruncated:
# CHECK: PASS yarn untruncated attention factor
