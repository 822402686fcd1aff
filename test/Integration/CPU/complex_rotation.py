# RUN: %python %s | FileCheck %s
"""A rotation written in complex arithmetic, as DeepSeek's Hugging Face
models write it (`view_as_complex(x) * freqs_cis`, then `view_as_real`) and
torch-mlir imports it: the interleaved pairs of x become `complex.create`,
are multiplied by `complex.create(cos, sin)` (a rotation table) and scaled
by a complex constant, and come back as `complex.re` / `complex.im`. The CPU
pipeline lowers the complex ops to arith on their parts (they once reached
LLVM translation as unrealized casts: every DeepSeek V2 graph fell back).

Reference: `reference.rotate_with_tables` (interleaved layout) in f64 from
the same inputs, times the constant's real factor. Tolerance: the rotation's
f32 rounding (rope_testing.table_rotation_atol, 4 ulps: the complex product
adds two roundings to the table form's).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

S, P = 7, 8  # positions, pairs (head dim 16)
SCALE = 1.25
MODULE = f"""
#rows = affine_map<(s, p) -> (s, p)>
#scalar = affine_map<(s, p) -> ()>
func.func @rotate(%x: tensor<{S}x{P}x2xf32>, %cos: tensor<{S}x{P}xf32>, %sin: tensor<{S}x{P}xf32>)
    -> tensor<{S}x{P}x2xf32> {{
  %x0 = tensor.extract_slice %x[0, 0, 0] [{S}, {P}, 1] [1, 1, 1] : tensor<{S}x{P}x2xf32> to tensor<{S}x{P}xf32>
  %x1 = tensor.extract_slice %x[0, 0, 1] [{S}, {P}, 1] [1, 1, 1] : tensor<{S}x{P}x2xf32> to tensor<{S}x{P}xf32>
  %ce = tensor.empty() : tensor<{S}x{P}xcomplex<f32>>
  %xc = linalg.generic {{indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}}
      ins(%x0, %x1 : tensor<{S}x{P}xf32>, tensor<{S}x{P}xf32>) outs(%ce : tensor<{S}x{P}xcomplex<f32>>) {{
  ^bb0(%re: f32, %im: f32, %out: complex<f32>):
    %c = complex.create %re, %im : complex<f32>
    linalg.yield %c : complex<f32>
  }} -> tensor<{S}x{P}xcomplex<f32>>
  %fc = linalg.generic {{indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}}
      ins(%cos, %sin : tensor<{S}x{P}xf32>, tensor<{S}x{P}xf32>) outs(%ce : tensor<{S}x{P}xcomplex<f32>>) {{
  ^bb0(%c: f32, %s: f32, %out: complex<f32>):
    %f = complex.create %c, %s : complex<f32>
    linalg.yield %f : complex<f32>
  }} -> tensor<{S}x{P}xcomplex<f32>>
  %k = complex.constant [{SCALE} : f32, 0.0 : f32] : complex<f32>
  %kt = tensor.from_elements %k : tensor<complex<f32>>
  %prod = linalg.generic {{indexing_maps = [#rows, #rows, #scalar, #rows], iterator_types = ["parallel", "parallel"]}}
      ins(%xc, %fc, %kt : tensor<{S}x{P}xcomplex<f32>>, tensor<{S}x{P}xcomplex<f32>>, tensor<complex<f32>>)
      outs(%ce : tensor<{S}x{P}xcomplex<f32>>) {{
  ^bb0(%a: complex<f32>, %b: complex<f32>, %scale: complex<f32>, %out: complex<f32>):
    %m = complex.mul %a, %b : complex<f32>
    %n = complex.mul %m, %scale : complex<f32>
    linalg.yield %n : complex<f32>
  }} -> tensor<{S}x{P}xcomplex<f32>>
  %re = tensor.empty() : tensor<{S}x{P}xf32>
  %parts:2 = linalg.generic {{indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}}
      ins(%prod : tensor<{S}x{P}xcomplex<f32>>) outs(%re, %re : tensor<{S}x{P}xf32>, tensor<{S}x{P}xf32>) {{
  ^bb0(%z: complex<f32>, %o0: f32, %o1: f32):
    %r = complex.re %z : complex<f32>
    %i = complex.im %z : complex<f32>
    linalg.yield %r, %i : f32, f32
  }} -> (tensor<{S}x{P}xf32>, tensor<{S}x{P}xf32>)
  %oe = tensor.empty() : tensor<{S}x{P}x2xf32>
  %o0 = tensor.insert_slice %parts#0 into %oe[0, 0, 0] [{S}, {P}, 1] [1, 1, 1] : tensor<{S}x{P}xf32> into tensor<{S}x{P}x2xf32>
  %o1 = tensor.insert_slice %parts#1 into %o0[0, 0, 1] [{S}, {P}, 1] [1, 1, 1] : tensor<{S}x{P}xf32> into tensor<{S}x{P}x2xf32>
  return %o1 : tensor<{S}x{P}x2xf32>
}}
"""

rng = T.rng(7)
x = rng.standard_normal((S, P, 2)).astype(np.float32)
spec = ref.RotarySpec(base=10000.0, layout="interleaved")
positions = np.arange(3, 3 + S)
angles = np.outer(positions, ref.inv_freq(spec, 2 * P))
cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)

lib = T.compile(MODULE)
out = T.call(lib, "rotate", x, cos, sin)
flat = x.reshape(S, 2 * P)
expected = SCALE * ref.rotate_with_tables(flat, cos, sin, layout="interleaved")
atol = SCALE * T.table_rotation_atol(flat, cos, sin, f32_ulps=4, layout="interleaved")
err = T.check(out.reshape(S, 2 * P), expected, atol, "complex rotation")
print(f"PASS complex rotation: max err {err:.1e}")
# CHECK: PASS complex rotation
