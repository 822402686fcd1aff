# RUN: %python %s | FileCheck %s
"""Projections as frontends write them: rows = a sequence length known only
at run time, weights [out, in] (`linalg.matmul` with a transposed B map).
--rope-vectorize-contractions gives them register blocks over the full row
blocks of a peeled loop and one-row blocks for the rest, so the row counts
here cover no full block, full blocks only, and full blocks plus a rest.
`small` has f16 activations (converted to f32 as they are packed, a copy
with a dynamic extent); `large` has 2^22 multiply-adds in its static extents,
so its weight is packed into column panels and its columns are split across
cores.

Reference: the same products in f64 from the same (f16-rounded) inputs.
Tolerance: rope_testing.product_atol (f32 accumulation over K terms,
K·2⁻²⁴·(|x|·|W|ᵀ) per element, plus one f32 ulp of the result).
"""

import numpy as np

import rope_testing as T

MAP = ("[affine_map<(s, o, i) -> (s, i)>, affine_map<(s, o, i) -> (o, i)>, "
       "affine_map<(s, o, i) -> (s, o)>]")


def projection(name, k, n, in_type):
    x, w, o = f"tensor<?x{k}x{in_type}>", f"tensor<{n}x{k}xf32>", f"tensor<?x{n}xf32>"
    return f"""
func.func @{name}(%x: {x}, %w: {w}) -> {o} {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %x, %c0 : {x}
  %e = tensor.empty(%s) : {o}
  %z = linalg.fill ins(%zero : f32) outs(%e : {o}) -> {o}
  %r = linalg.matmul indexing_maps = {MAP} ins(%x, %w : {x}, {w}) outs(%z : {o}) -> {o}
  return %r : {o}
}}"""


SHAPES = {"small": (64, 48, "f16"), "large": (4096, 1024, "f32")}
MODULE = "\n".join(projection(name, *shape) for name, shape in SHAPES.items())

rng = T.rng(29)
with T.guard("matmul with dynamic rows"):
    lib = T.compile(MODULE)
    for name, (k, n, dtype) in SHAPES.items():
        w = T.quantize(rng.standard_normal((n, k)) / np.sqrt(k), "f32")
        for rows in (3, 16, 21):
            x = T.quantize(rng.standard_normal((rows, k)), dtype)
            out = T.call(lib, name, T.to_storage(x, dtype), T.to_storage(w, "f32"))
            want = x @ w.T
            atol = T.product_atol(x, w)
            T.check(out, want, atol, f"{name} rows={rows}")
T.finish()

# CHECK: PASS small rows=3:
# CHECK: PASS small rows=16:
# CHECK: PASS small rows=21:
# CHECK: PASS large rows=3:
# CHECK: PASS large rows=16:
# CHECK: PASS large rows=21:
