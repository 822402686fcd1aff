# RUN: %python %s | FileCheck %s
"""rope.rotate position shapes and sequence-dim placement, f32:
* [B, H, S, D] (seq_dim default −2) with positions [S] and with per-sequence
  positions [B, S] (each batch row at its own offset, as in ragged batches and
  KV-cache decode);
* [B, S, H, D] (seq_dim = 1) with positions [S] and [B, S];
* i32 and i16 positions (the op widens them).

Tolerance: 2 ulps of f32 at the pair norm (rope_testing.rotation_atol; m = 1).
The per-batch cases are also checked to differ from rotating every batch row
at the first row's positions.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

B, H, S, D = 3, 2, 5, 16
spec = ref.RotarySpec(layout="interleaved")
SPEC_ATTR = spec.to_attr()
g = T.rng(7)

p_s = np.array([0, 1, 2, 3, 4], np.int64)
p_bs = np.array([[0, 1, 2, 3, 4],            # a fresh sequence
                 [37, 38, 39, 40, 41],       # continues after a 37-token cache
                 [1000, 1001, 1002, 1003, 5000]], np.int64)

CASES = {
    # name: (x shape, x type, positions, positions type, seq_dim)
    "BHSD positions [S]": ((B, H, S, D), "tensor<3x2x5x16xf32>", p_s, "tensor<5xi64>", None),
    "BHSD positions [B,S]": ((B, H, S, D), "tensor<3x2x5x16xf32>", p_bs, "tensor<3x5xi64>", None),
    "BSHD positions [S]": ((B, S, H, D), "tensor<3x5x2x16xf32>", p_s, "tensor<5xi64>", 1),
    "BSHD positions [B,S]": ((B, S, H, D), "tensor<3x5x2x16xf32>", p_bs, "tensor<3x5xi64>", 1),
    "BHSD positions [B,S] i32": ((B, H, S, D), "tensor<3x2x5x16xf32>", p_bs.astype(np.int32),
                                 "tensor<3x5xi32>", None),
    "BSHD positions [S] i16": ((B, S, H, D), "tensor<3x5x2x16xf32>", (p_s * 1000).astype(np.int16),
                               "tensor<5xi16>", 1),
}

for name, (shape, xty, p, pty, seq_dim) in CASES.items():
    x = T.quantize(g.standard_normal(shape), "f32")
    with T.guard(name):
        lib = T.compile(T.rotate_module(SPEC_ATTR, xty, pty, seq_dim))
        out = T.call(lib, "kernel", T.to_storage(x, "f32"), p)
        sd = -2 if seq_dim is None else seq_dim
        T.check_rotation_stored(out, ref.rotate(x, p, spec, seq_dim=sd), x, spec, "f32", 2, name)
        if p.ndim == 2:
            first_row = ref.rotate(x, p[0], spec, seq_dim=sd)
            assert np.abs(out - first_row).max() > 0.1, f"{name}: per-batch positions ignored"
T.finish()

# CHECK: PASS BHSD positions [S]:
# CHECK: PASS BHSD positions [B,S]:
# CHECK: PASS BSHD positions [S]:
# CHECK: PASS BSHD positions [B,S]:
# CHECK: PASS BHSD positions [B,S] i32:
# CHECK: PASS BSHD positions [S] i16:
