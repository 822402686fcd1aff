//===- Passes.td - rope conversion passes ------------------*- tablegen -*-===//

#ifndef ROPE_CONVERSION_PASSES_TD
#define ROPE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertRopeToLinalg : Pass<"convert-rope-to-linalg"> {
  let summary = "Lower every rope op to linalg, tensor, arith and math on tensors";
  let description = [{
    Lowers `rope.rotate`, `rope.table`, `rope.attention`,
    `rope.linear_attention` and `rope.sinusoidal` to `linalg.generic` (and
    named linalg ops) on tensors. Frequencies are computed at compile time in
    f64 from the `#rope.spec` attribute and emitted as constants; scaling kinds
    that depend on the largest position (`dynamic`, `longrope`) compute or
    select their frequencies at run time from the positions. The rotation
    phase `p · inv_freq` is formed in f64 and reduced by its nearest
    multiple of π/2 (two fused multiply-adds with π/2 in two parts), and
    its cosine and sine are f64 polynomials (Taylor series to r^11 and
    r^10 in fused multiply-adds, the quadrant from the multiple's low bits;
    no libm calls, so the table loop vectorises), rounded once to f32 with
    the attention factor applied: the table is within 0.5 ulp (+0.005 ulp)
    of the exact values for positions up to 2^20 and beyond. A table inside
    a loop (a decode's key tile) of 8 to 256 static positions checks at run
    time whether they are one run p₀, p₀ + 1, ...: then its entries are
    those of p₀ combined with compile-time cos/sin of j·f by angle
    addition in f64 (4 multiply-adds an entry instead of a series, within
    0.5 ulp + 1e-15), otherwise the series as above. Rotations that share a
    spec and positions share one cos/sin table. `rope.assert` (a runtime
    check on scalars) is left for `--rope-lower-runtime-checks`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_CONVERSION_PASSES_TD
