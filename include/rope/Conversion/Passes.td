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
    phase `p · inv_freq` is formed in f64 and reduced modulo 2π, and its
    cosine and sine are f64 polynomials (a quadrant reduction by π/2 and
    Taylor series to r^14, no libm calls, so the table loop vectorises),
    rounded once to f32 with the attention factor applied: the table is
    within 0.5 ulp (+1e-13) of the exact values for positions up to 2^20
    and beyond. Rotations that share a spec and positions share one cos/sin
    table. `rope.assert` (a runtime check on scalars) is left for
    `--rope-lower-runtime-checks`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_CONVERSION_PASSES_TD
