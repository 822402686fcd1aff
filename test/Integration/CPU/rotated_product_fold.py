# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
"""Rotated Q and K that meet in a plain product (scores returned as they
are, no attention to fold into): the default pipeline folds the rotations
into the product (--rope-fold-rotation-into-qk: it reads the un-rotated
tensors and rotates pairs in its body), the plain one computes them as
written. Both must agree with the f64 reference: scores = rotate(q) ·
rotate(k)ᵀ.

* half layout, llama3 scaling, shared positions, batch matmul over B·H;
* interleaved layout, decode: one query at position P against keys at
  0..P, different positions tensors, f16 storage;
* yarn (attention factor m on both sides).

Tolerance: per score, 4 f32 ulps of Σ_d |q_rot_d|·|k_rot_d| (the rotated
pairs are exact to a few ulps of their norms, and the f32 dot product adds
at most D roundings bounded by that sum), plus f16 rounding of the inputs
where they are stored in f16 (the reference sees the same rounded inputs).
"""

import numpy as np

from rope_mlir import compiler, reference as ref, testing as T


def module(spec_attr, b, h, sq, sk, d, dtype):
    qt = f"tensor<{b}x{h}x{sq}x{d}x{dtype}>"
    kt = f"tensor<{b}x{h}x{sk}x{d}x{dtype}>"
    return f"""
func.func @kernel(%q: {qt}, %k: {kt}, %qp: tensor<{sq}xi64>, %kp: tensor<{sk}xi64>) -> tensor<{b*h}x{sq}x{sk}xf32> {{
  %qr = rope.rotate %q, %qp rotary({spec_attr}) : {qt}, tensor<{sq}xi64>
  %kr = rope.rotate %k, %kp rotary({spec_attr}) : {kt}, tensor<{sk}xi64>
  %e = tensor.empty() : tensor<{b}x{h}x{d}x{sk}x{dtype}>
  %kT = linalg.transpose ins(%kr : {kt}) outs(%e : tensor<{b}x{h}x{d}x{sk}x{dtype}>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : {qt} into tensor<{b*h}x{sq}x{d}x{dtype}>
  %k3 = tensor.collapse_shape %kT [[0, 1], [2], [3]] : tensor<{b}x{h}x{d}x{sk}x{dtype}> into tensor<{b*h}x{d}x{sk}x{dtype}>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<{b*h}x{sq}x{sk}xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<{b*h}x{sq}x{sk}xf32>) -> tensor<{b*h}x{sq}x{sk}xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<{b*h}x{sq}x{d}x{dtype}>, tensor<{b*h}x{d}x{sk}x{dtype}>) outs(%f : tensor<{b*h}x{sq}x{sk}xf32>) -> tensor<{b*h}x{sq}x{sk}xf32>
  return %s : tensor<{b*h}x{sq}x{sk}xf32>
}}"""


def run_case(name, spec_attr, spec, b, h, sq, sk, d, qp, kp, dtype="f32"):
    rng = T.rng(len(name))
    q = T.quantize(rng.standard_normal((b, h, sq, d)), dtype)
    k = T.quantize(rng.standard_normal((b, h, sk, d)), dtype)
    text = module(spec_attr, b, h, sq, sk, d, dtype)
    with T.guard(name):
        lib = compiler.compile_module(text)
        out = T.call(lib, "kernel", T.to_storage(q, dtype), T.to_storage(k, dtype), qp, kp)
        qr = ref.rotate(q, qp, spec, seq_dim=2)
        kr = ref.rotate(k, kp, spec, seq_dim=2)
        if dtype != "f32":
            # As written, the rotated tensors are stored in the data type.
            qr, kr = T.quantize(qr, dtype), T.quantize(kr, dtype)
        want = np.einsum("bhid,bhjd->bhij", qr, kr).reshape(b * h, sq, sk)
        bound = np.einsum("bhid,bhjd->bhij", np.abs(qr), np.abs(kr)).reshape(b * h, sq, sk)
        atol = 4 * 2.0 ** -23 * bound
        if dtype != "f32":
            # The fold rotates in f32 without storing the rotated values:
            # one f16 rounding of each rotated element apart.
            atol = atol + 2.0 ** -10 * bound
        T.check(out, want, atol, name)
    return text


llama3_attr = "#rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 64>>"
llama3 = ref.RotarySpec(base=500000.0, scaling=ref.Scaling("llama3", factor=8.0, original_max_position_embeddings=64))
pos = np.arange(9, dtype=np.int64) + 100
half = run_case("half llama3 shared positions", llama3_attr, llama3, 2, 2, 9, 9, 32, pos, pos)

P = 30
run_case("interleaved decode f16", "#rope.spec<layout = interleaved>", ref.RotarySpec(layout="interleaved"),
         1, 4, 1, P + 1, 16, np.array([P], np.int64), np.arange(P + 1, dtype=np.int64), dtype="f16")

yarn_attr = "#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 16>>"
yarn = ref.RotarySpec(scaling=ref.Scaling("yarn", factor=4.0, original_max_position_embeddings=16))
run_case("yarn attention factor", yarn_attr, yarn, 1, 2, 7, 7, 16, pos[:7], pos[:7])

# The fold really happens in the default pipeline: no rotation is left.
folded = compiler.lower(half, "--rope-fold-rotation-into-qk")
assert "rope.rotate" not in folded and "rope.table" in folded, folded
print("PASS fold applies")
T.finish()

# CHECK: PASS half llama3 shared positions
# CHECK: PASS interleaved decode f16
# CHECK: PASS yarn attention factor
# CHECK: PASS fold applies
