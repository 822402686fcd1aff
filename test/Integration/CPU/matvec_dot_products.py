# RUN: %python %s | FileCheck %s
"""One-row products as a decode step's linear layers write them:
out[0, n] = Σ_k x[0, k]·W[n, k], W stored [out, in]. --rope-vectorize-
contractions runs them as dot products along W's rows as stored, with f16
and bf16 operands widened in registers as they are loaded (no pack). Shapes:
N = 512 splits W's rows into chunks over the cores, each summing its own
lanes; N = 40 stays one loop. f32, f16 and bf16 operands.

Reference: the same products in f64 from the same (rounded) inputs.
Tolerance: rope_testing.product_atol (f32 accumulation over K terms,
K·2⁻²⁴·(|x|·|W|ᵀ) per element, plus one f32 ulp of the result).
"""

import numpy as np

import rope_testing as T

MAP = ("[affine_map<(s, o, i) -> (s, i)>, affine_map<(s, o, i) -> (o, i)>, "
       "affine_map<(s, o, i) -> (s, o)>]")


def matvec(name, k, n, dtype):
    x, w, o = f"tensor<1x{k}x{dtype}>", f"tensor<{n}x{k}x{dtype}>", f"tensor<1x{n}xf32>"
    return f"""
func.func @{name}(%x: {x}, %w: {w}) -> {o} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {o}
  %z = linalg.fill ins(%zero : f32) outs(%e : {o}) -> {o}
  %r = linalg.matmul indexing_maps = {MAP} ins(%x, %w : {x}, {w}) outs(%z : {o}) -> {o}
  return %r : {o}
}}"""


CASES = {f"{dtype}_n{n}": (256, n, dtype) for dtype in ("f32", "f16", "bf16") for n in (512, 40)}
lib = T.compile("\n".join(matvec(name, *case) for name, case in CASES.items()))
rng = T.rng(31)
for name, (k, n, dtype) in CASES.items():
    with T.guard(name):
        w = T.quantize(rng.standard_normal((n, k)) / np.sqrt(k), dtype)
        x = T.quantize(rng.standard_normal((1, k)), dtype)
        out = T.call(lib, name, T.to_storage(x, dtype), T.to_storage(w, dtype))
        want = x @ w.T
        atol = T.product_atol(x, w)
        T.check(out, want, atol, name)
T.finish()

# CHECK: PASS f32_n512:
# CHECK: PASS f32_n40:
# CHECK: PASS f16_n512:
# CHECK: PASS f16_n40:
# CHECK: PASS bf16_n512:
# CHECK: PASS bf16_n40:
