# RUN: %python %s host,-amx-bf16,-amx-fp16,-avx512bf16 fma | FileCheck %s
# RUN: %if avx512bf16 %{ %python %s host,-amx-bf16,-amx-fp16 avx512bf16 | FileCheck %s %}
# RUN: %if amx %{ %python %s host amx | FileCheck %s %}
# RUN: %if !amx %{ %python %s amx-tile,amx-bf16 amx | FileCheck %s --check-prefix=REFUSED %}
# RUN: %if !avx512bf16 %{ %python %s avx512f,avx512bf16 avx512bf16 | FileCheck %s --check-prefix=REFUSED-DOT %}
"""bf16 matmuls on the CPU's matrix engines (--rope-pack-tile-products and
--rope-lower-tile-products): AMX tiles, AVX-512 BF16 dot products on the
same packed layout (the tiles switched off), and FMAs after widening (both
switched off), which every machine runs (`cpu-features` from argv, then
the engine the products must be found on: the runtime check that the
ahead-of-time library's functions call). On a
host without an engine, a module compiled for it is refused with a clear
error rather than run into an illegal instruction.

Cases: a projection x · Wᵀ over run-time row counts that fill no tile, one
tile, and tiles plus a rest; a static matmul; a batch_matmul with an
accumulator that is not zero (packed with the operands); a batch_matmul
of weights stored [b, n, k] (each batch entry's W packed by the
transposition of words); a bf16 result (the f32 product rounded once by
its consumer).

Reference: the same products in f64 from the same (bf16) inputs.
Tolerance: rope_testing.product_atol (f32 accumulation over K terms plus
one f32 ulp; the tiles and the dot products add each pair's two products in
f32), plus half a bf16 ulp of the result for the bf16 output. Both engines
treat bf16 subnormals as zero; these inputs (normal samples) have none.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import rope_testing as T
from rope_mlir.errors import CompileError

FEATURES, ENGINE = sys.argv[1], sys.argv[2]
# The entry check each engine's functions call (none: FMAs).
ENGINE_CHECKS = {"amx": b"ropeRequireCpuTiles", "avx512bf16": b"ropeRequireCpuDotProducts"}
TRANSPOSED = ("[affine_map<(s, o, i) -> (s, i)>, affine_map<(s, o, i) -> (o, i)>, "
              "affine_map<(s, o, i) -> (s, o)>]")

MODULE = f"""
func.func @projection(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xf32> {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%s) : tensor<?x128xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x128xf32>) -> tensor<?x128xf32>
  %r = linalg.matmul indexing_maps = {TRANSPOSED} ins(%x, %w : tensor<?x256xbf16>, tensor<128x256xbf16>)
      outs(%z : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %r : tensor<?x128xf32>
}}
func.func @square(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xbf16>, tensor<64x64xbf16>) outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}}
func.func @batched(%a: tensor<2x96x64xbf16>, %b: tensor<2x64x96xbf16>, %c: tensor<2x96x96xf32>) -> tensor<2x96x96xf32> {{
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x96x64xbf16>, tensor<2x64x96xbf16>) outs(%c : tensor<2x96x96xf32>) -> tensor<2x96x96xf32>
  return %r : tensor<2x96x96xf32>
}}
func.func @batched_weights(%x: tensor<2x40x64xbf16>, %w: tensor<2x96x64xbf16>) -> tensor<2x40x96xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x40x96xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x40x96xf32>) -> tensor<2x40x96xf32>
  %r = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                            affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %w : tensor<2x40x64xbf16>, tensor<2x96x64xbf16>) outs(%z : tensor<2x40x96xf32>) -> tensor<2x40x96xf32>
  return %r : tensor<2x40x96xf32>
}}
func.func @rounded(%a: tensor<64x512xbf16>, %b: tensor<512x256xbf16>) -> tensor<64x256xbf16> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %p = linalg.matmul ins(%a, %b : tensor<64x512xbf16>, tensor<512x256xbf16>) outs(%z : tensor<64x256xf32>) -> tensor<64x256xf32>
  %eo = tensor.empty() : tensor<64x256xbf16>
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}} ins(%p : tensor<64x256xf32>) outs(%eo : tensor<64x256xbf16>) {{
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }} -> tensor<64x256xbf16>
  return %r : tensor<64x256xbf16>
}}
"""

rng = T.rng(59)


def bf16(shape):
    return T.quantize(rng.standard_normal(shape), "bf16")


try:
    lib = T.compile(MODULE, pipeline_options={"cpu-features": FEATURES})
except CompileError as e:
    # Refused where the host lacks the engine named (the REFUSED checks).
    print("refused:", str(e).splitlines()[-1])
    sys.exit(0)

with T.guard("bf16 matmuls, cpu-features=" + FEATURES):
    w = bf16((128, 256))
    for rows in (1, 31, 32, 45, 100):
        x = bf16((rows, 256))
        out = T.call(lib, "projection", T.to_storage(x, "bf16"), T.to_storage(w, "bf16"))
        T.check(out, x @ w.T, T.product_atol(x, w), f"projection rows={rows}")

    a, b = bf16((64, 64)), bf16((64, 64))
    out = T.call(lib, "square", T.to_storage(a, "bf16"), T.to_storage(b, "bf16"))
    T.check(out, a @ b, T.product_atol(a, b.T), "square")

    a, b = bf16((2, 96, 64)), bf16((2, 64, 96))
    c = T.quantize(rng.standard_normal((2, 96, 96)), "f32")
    out = T.call(lib, "batched", T.to_storage(a, "bf16"), T.to_storage(b, "bf16"),
                 T.to_storage(c, "f32"))
    atol = np.stack([T.product_atol(a[i], b[i].T) for i in range(2)]) + T.ulp(c, "f32")
    T.check(out, c + a @ b, atol, "batched")

    x, wb = bf16((2, 40, 64)), bf16((2, 96, 64))
    out = T.call(lib, "batched_weights", T.to_storage(x, "bf16"), T.to_storage(wb, "bf16"))
    atol = np.stack([T.product_atol(x[i], wb[i]) for i in range(2)])
    T.check(out, np.einsum("bmk,bnk->bmn", x, wb), atol, "batched weights")

    a, b = bf16((64, 512)), bf16((512, 256))
    out = T.from_storage(T.call(lib, "rounded", T.to_storage(a, "bf16"), T.to_storage(b, "bf16")), "bf16")
    want = a @ b
    T.check(out, want, T.product_atol(a, b.T) + T.ulp(want, "bf16") / 2, "rounded to bf16")

    # Ahead of time: a shared library, whose functions check the host's
    # engine when called (ropeRequireCpuTiles, ropeRequireCpuDotProducts).
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tiles.so"
        aot = T.compile(MODULE, output=path, pipeline_options={"cpu-features": FEATURES})
        found = [e for e, check in ENGINE_CHECKS.items() if check in path.read_bytes()] or ["fma"]
        if found != [ENGINE]:
            raise AssertionError(f"FAIL engine: want {ENGINE}, the library calls {found}")
        print(f"PASS engine {ENGINE}")
        x = bf16((45, 256))
        out = T.call(aot, "projection", T.to_storage(x, "bf16"), T.to_storage(w, "bf16"))
        T.check(out, x @ w.T, T.product_atol(x, w), "projection ahead of time")
T.finish()

# CHECK: PASS projection rows=1:
# CHECK: PASS projection rows=31:
# CHECK: PASS projection rows=32:
# CHECK: PASS projection rows=45:
# CHECK: PASS projection rows=100:
# CHECK: PASS square:
# CHECK: PASS batched:
# CHECK: PASS batched weights:
# CHECK: PASS rounded to bf16:
# CHECK: PASS engine
# CHECK: PASS projection ahead of time:
# REFUSED: refused: {{.*}}the module uses AMX tiles (its cpu-features named them), but the host CPU has none; compile with cpu-features=host
# REFUSED-DOT: refused: {{.*}}the module uses AVX-512 BF16 dot products (its cpu-features named avx512bf16), but the host CPU has none; compile with cpu-features=host
