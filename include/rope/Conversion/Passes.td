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
    phase `p · inv_freq` is formed in f64 and reduced modulo 2π before the f32
    sine and cosine, which keeps f32 results within a few ulps of an f64
    reference for positions up to 2^20. Rotations that share a spec and
    positions share one cos/sin table.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_CONVERSION_PASSES_TD
