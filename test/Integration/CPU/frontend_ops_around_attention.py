# RUN: %python %s | FileCheck %s
"""A module as a frontend leaves it around rope.attention compiles with
--rope-lower-to-cpu and computes what it says: elementwise arith and math on
tensors (`arith.extf` of an f16 argument, `math.tanh`), a tosa block (the Q
projection as `tosa.matmul`, `tosa.reshape`, `tosa.transpose`), linalg named
ops (`linalg.matmul` for the K, V and output projections, `linalg.softmax`)
and reshapes, with the rotations of Q and K and causal attention between.

Reference: the same computation in f64 (reference.rotate / attention), from
the same f16-rounded input. Tolerance: `rope_testing.attention_atol` of the
attention (its f32 logits and accumulation) carried through the output
projection as Σ|Wo|·atol, plus f32 rounding of each projection (2⁻²² of
Σ|x|·|W|); the softmax after it moves output i by at most 2·sm_i times its
row's largest input error and tanh by at most its input's (tanh' ≤ 1), plus
a few f32 ulps of their own.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

S, H, D = 8, 2, 16
E = H * D
SPEC = ref.RotarySpec(base=10000.0)
MODULE = f"""
func.func @kernel(%x: tensor<1x{S}x{E}xf16>, %wq: tensor<1x{E}x{E}xf32>, %wk: tensor<{E}x{E}xf32>,
                  %wv: tensor<{E}x{E}xf32>, %wo: tensor<{E}x{E}xf32>, %pos: tensor<{S}xi64>)
    -> tensor<{S}x{E}xf32> {{
  // Elementwise arith on a tensor argument.
  %xf = arith.extf %x : tensor<1x{S}x{E}xf16> to tensor<1x{S}x{E}xf32>
  // Q: a tosa block.
  %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %q3 = tosa.matmul %xf, %wq, %zp, %zp : (tensor<1x{S}x{E}xf32>, tensor<1x{E}x{E}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x{S}x{E}xf32>
  %qshape = tosa.const_shape {{values = dense<[1, {S}, {H}, {D}]> : tensor<4xindex>}} : () -> !tosa.shape<4>
  %q4 = tosa.reshape %q3, %qshape : (tensor<1x{S}x{E}xf32>, !tosa.shape<4>) -> tensor<1x{S}x{H}x{D}xf32>
  %q = tosa.transpose %q4 {{perms = array<i32: 0, 2, 1, 3>}} : (tensor<1x{S}x{H}x{D}xf32>) -> tensor<1x{H}x{S}x{D}xf32>
  // K and V: linalg.matmul on the collapsed rows.
  %x2 = tensor.collapse_shape %xf [[0, 1], [2]] : tensor<1x{S}x{E}xf32> into tensor<{S}x{E}xf32>
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<{S}x{E}xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<{S}x{E}xf32>) -> tensor<{S}x{E}xf32>
  %k2 = linalg.matmul ins(%x2, %wk : tensor<{S}x{E}xf32>, tensor<{E}x{E}xf32>) outs(%pf : tensor<{S}x{E}xf32>) -> tensor<{S}x{E}xf32>
  %v2 = linalg.matmul ins(%x2, %wv : tensor<{S}x{E}xf32>, tensor<{E}x{E}xf32>) outs(%pf : tensor<{S}x{E}xf32>) -> tensor<{S}x{E}xf32>
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [1, {S}, {H}, {D}] : tensor<{S}x{E}xf32> into tensor<1x{S}x{H}x{D}xf32>
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [1, {S}, {H}, {D}] : tensor<{S}x{E}xf32> into tensor<1x{S}x{H}x{D}xf32>
  %te = tensor.empty() : tensor<1x{H}x{S}x{D}xf32>
  %k = linalg.transpose ins(%k4 : tensor<1x{S}x{H}x{D}xf32>) outs(%te : tensor<1x{H}x{S}x{D}xf32>) permutation = [0, 2, 1, 3]
  %v = linalg.transpose ins(%v4 : tensor<1x{S}x{H}x{D}xf32>) outs(%te : tensor<1x{H}x{S}x{D}xf32>) permutation = [0, 2, 1, 3]
  // RoPE and causal attention.
  %qr = rope.rotate %q, %pos rotary({SPEC.to_attr()}) : tensor<1x{H}x{S}x{D}xf32>, tensor<{S}xi64>
  %kr = rope.rotate %k, %pos rotary({SPEC.to_attr()}) : tensor<1x{H}x{S}x{D}xf32>, tensor<{S}xi64>
  %a = rope.attention %qr, %kr, %v causal scale = 0.25 : tensor<1x{H}x{S}x{D}xf32>, tensor<1x{H}x{S}x{D}xf32>, tensor<1x{H}x{S}x{D}xf32>
  // Output projection, then linalg.softmax and math.tanh on tensors.
  %ae = tensor.empty() : tensor<1x{S}x{H}x{D}xf32>
  %at = linalg.transpose ins(%a : tensor<1x{H}x{S}x{D}xf32>) outs(%ae : tensor<1x{S}x{H}x{D}xf32>) permutation = [0, 2, 1, 3]
  %a2 = tensor.collapse_shape %at [[0, 1], [2, 3]] : tensor<1x{S}x{H}x{D}xf32> into tensor<{S}x{E}xf32>
  %o = linalg.matmul ins(%a2, %wo : tensor<{S}x{E}xf32>, tensor<{E}x{E}xf32>) outs(%pf : tensor<{S}x{E}xf32>) -> tensor<{S}x{E}xf32>
  %se = tensor.empty() : tensor<{S}x{E}xf32>
  %sm = linalg.softmax dimension(1) ins(%o : tensor<{S}x{E}xf32>) outs(%se : tensor<{S}x{E}xf32>) -> tensor<{S}x{E}xf32>
  %t = math.tanh %sm : tensor<{S}x{E}xf32>
  return %t : tensor<{S}x{E}xf32>
}}"""

rng = T.rng(13)
x = T.quantize(rng.standard_normal((1, S, E)), "f16")
w = [T.quantize(rng.standard_normal((E, E)) / np.sqrt(E), "f32") for _ in range(4)]
pos = np.array([3, 4, 5, 9, 10, 11, 20, 21], np.int64)

with T.guard("frontend ops around attention"):
    lib = T.compile(MODULE)
    out = T.call(lib, "kernel", T.to_storage(x, "f16"), T.to_storage(w[0][None], "f32"),
                 *(T.to_storage(m, "f32") for m in w[1:]), pos)
    spec = SPEC
    x2 = x[0]
    heads = lambda m: m.reshape(S, H, D).transpose(1, 0, 2)[None]  # [1, H, S, D]
    q, k, v = (heads(x2 @ m) for m in w[:3])
    a = ref.attention(q, k, v, scale=0.25, causal=True, rotary=spec, q_positions=pos,
                      k_positions=pos)
    o = a[0].transpose(1, 0, 2).reshape(S, E) @ w[3]
    sm = np.exp(o - o.max(axis=1, keepdims=True))
    sm /= sm.sum(axis=1, keepdims=True)
    want = np.tanh(sm)
    # Error budget: the projections' f32 rounding, the attention's, both
    # through Wo; a softmax output moves by at most sm_i·(|Δo_i| + Σ_j
    # sm_j|Δo_j|) ≤ 2·sm_i·max|Δo| of its row, tanh by at most its input's
    # error; both add a few ulps of their own.
    proj = 2.0 ** -22 * (np.abs(x2) @ np.abs(w[0])).max()
    att = T.attention_atol(q, k, v, scale=0.25, rotary=spec) + proj * np.sqrt(S)
    att_rows = np.broadcast_to(att, a.shape)[0].transpose(1, 0, 2).reshape(S, E)
    do = att_rows @ np.abs(w[3]) + 2.0 ** -22 * (np.abs(a[0].transpose(1, 0, 2).reshape(S, E)) @ np.abs(w[3]))
    atol = 2 * sm * do.max(axis=1, keepdims=True) + 8 * 2.0 ** -24
    T.check(out, want, atol, "frontend ops around attention")
T.finish()

# CHECK: PASS frontend ops around attention
