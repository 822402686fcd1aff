# RUN: %python %s | FileCheck %s
"""rope.rotate with dynamic batch and sequence dims (`?`), f32: one compiled
kernel is called with several batch sizes and lengths (including length 1, a
decode step), for [B, H, S, D] with positions [S] and [B, S], and for
[B, S, H, D] (seq_dim = 1) with positions [B, S].

Tolerance: 2 ulps of f32 at the pair norm (rope_testing.rotation_atol; m = 1).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

spec = ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))
SPEC_ATTR = spec.to_attr()
g = T.rng(8)

KERNELS = {
    # name: (x type, positions type, seq_dim)
    "BHSD [S]": ("tensor<?x2x?x16xf32>", "tensor<?xi64>", None),
    "BHSD [B,S]": ("tensor<?x2x?x16xf32>", "tensor<?x?xi64>", None),
    "BSHD [B,S]": ("tensor<?x?x2x16xf32>", "tensor<?x?xi64>", 1),
}
SHAPES = [(1, 1), (3, 4), (2, 11)]  # (B, S)

for name, (xty, pty, seq_dim) in KERNELS.items():
    try:
        lib = T.compile(T.rotate_module(SPEC_ATTR, xty, pty, seq_dim))
    except Exception as e:  # reported per shape below
        lib = e
    for b, s in SHAPES:
        case = f"{name} B={b} S={s}"
        with T.guard(case):
            if isinstance(lib, Exception):
                raise lib
            shape = (b, 2, s, 16) if seq_dim is None else (b, s, 2, 16)
            x = T.quantize(g.standard_normal(shape), "f32")
            if pty == "tensor<?xi64>":
                p = g.integers(0, 20000, size=s).astype(np.int64)
            else:
                p = g.integers(0, 20000, size=(b, s)).astype(np.int64)
            out = T.call(lib, "kernel", T.to_storage(x, "f32"), p)
            assert out.shape == x.shape, f"result shape {out.shape} != {x.shape}"
            sd = -2 if seq_dim is None else seq_dim
            T.check_rotation_stored(out, ref.rotate(x, p, spec, seq_dim=sd), x, spec, "f32", 2, case)
T.finish()

# CHECK: PASS BHSD [S] B=1 S=1:
# CHECK: PASS BHSD [S] B=3 S=4:
# CHECK: PASS BHSD [S] B=2 S=11:
# CHECK: PASS BHSD [B,S] B=1 S=1:
# CHECK: PASS BHSD [B,S] B=3 S=4:
# CHECK: PASS BHSD [B,S] B=2 S=11:
# CHECK: PASS BSHD [B,S] B=1 S=1:
# CHECK: PASS BSHD [B,S] B=3 S=4:
# CHECK: PASS BSHD [B,S] B=2 S=11:
