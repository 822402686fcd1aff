# RUN: %python %s | FileCheck %s
"""rope.linear_attention (RoFormer eq. 19, φ(x) = elu(x) + 1; rotated
numerator, unrotated denominator), f32, B=2, H=2, S=7, D=16, Dv=8:
causal and non-causal, each without rotary, with a half-layout rotary at
default positions, and (non-causal) with an interleaved yarn spec (m != 1) at
explicit positions [S]; plus causal with per-batch positions [B, S].

Tolerance (rope_testing.linear_attention_atol), per element:
2·(sqrt(D) + sqrt(S) + 2)·u·N/den, u = 2^-24, N = Σ_n A_mn·|v_n| with A_mn
bounding the terms of the rotated dot product (pair norms times m²), den the
(positive) denominator: both sums round like random walks relative to their
term magnitudes, and out = num/den inherits err_num/den + |out|·err_den/den.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

B, H, S, D, DV = 2, 2, 7, 16, 8
QT, VT = f"tensor<{B}x{H}x{S}x{D}xf32>", f"tensor<{B}x{H}x{S}x{DV}xf32>"
g = T.rng(19)
YARN = ref.RotarySpec(layout="interleaved", scaling=ref.Scaling("yarn", factor=4.0, original_max_position_embeddings=64))
P_S = np.array([5, 6, 7, 100, 101, 2000, 2001], np.int64)
# Only relative positions matter (R_mᵀ R_n = R_{n−m}), so row 1 has other gaps.
P_BS = np.array([np.arange(S), [40, 42, 45, 49, 54, 60, 67]], np.int64)

CASES = {
    # name: (spec or None, causal, positions); the #rope.spec is the spec's own text
    "non-causal plain": (None, False, None),
    "causal plain": (None, True, None),
    "non-causal rotary": (ref.RotarySpec(), False, None),
    "causal rotary": (ref.RotarySpec(), True, None),
    "non-causal yarn positions [S]": (YARN, False, P_S),
    "causal rotary positions [B,S]": (ref.RotarySpec(), True, P_BS),
}

for name, (spec, causal, pos) in CASES.items():
    q = T.quantize(g.standard_normal((B, H, S, D)), "f32")
    k = T.quantize(g.standard_normal((B, H, S, D)), "f32")
    v = T.quantize(g.standard_normal((B, H, S, DV)), "f32")
    params, opnds, args = f"%q: {QT}, %k: {QT}, %v: {VT}", "", [T.to_storage(a, "f32") for a in (q, k, v)]
    if pos is not None:
        pt = "tensor<" + "x".join(map(str, pos.shape)) + "xi64>"
        params += f", %p: {pt}"
        opnds += f" positions(%p : {pt})"
        args.append(pos)
    if spec is not None:
        opnds += f" rotary({spec.to_attr()})"
    if causal:
        opnds += " causal"
    mlir = f"""func.func @kernel({params}) -> {VT} {{
  %r = rope.linear_attention %q, %k, %v{opnds} : {QT}, {QT}, {VT}
  return %r : {VT}
}}"""
    with T.guard(name):
        lib = T.compile(mlir)
        out = T.call(lib, "kernel", *args)
        expected = ref.linear_attention(q, k, v, rotary=spec, positions=pos, causal=causal)
        atol = T.linear_attention_atol(q, k, v, rotary=spec, positions=pos, causal=causal)
        T.check(out, expected, atol, f"linear attention {name}")
        # Rotation and causality must each make a difference.
        if spec is not None:
            assert np.abs(expected - ref.linear_attention(q, k, v, causal=causal)).max() > 1e-2
        if causal:
            assert np.abs(expected - ref.linear_attention(q, k, v, rotary=spec, positions=pos)).max() > 1e-2
        if pos is not None:  # and so must the positions (row 0's for every batch row, or 0..S-1)
            alt = pos[0] if pos.ndim == 2 else None
            assert np.abs(expected - ref.linear_attention(q, k, v, rotary=spec, positions=alt,
                                                          causal=causal)).max() > 1e-2
T.finish()

# CHECK: PASS linear attention non-causal plain:
# CHECK: PASS linear attention causal plain:
# CHECK: PASS linear attention non-causal rotary:
# CHECK: PASS linear attention causal rotary:
# CHECK: PASS linear attention non-causal yarn positions [S]:
# CHECK: PASS linear attention causal rotary positions [B,S]:
