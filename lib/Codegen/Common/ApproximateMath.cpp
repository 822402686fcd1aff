//===- ApproximateMath.cpp - polynomial exp (softmax) ------------------===//

#include "rope/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEAPPROXIMATEMATH
#include "rope/Codegen/Common/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Replaces f32 exp with MLIR's polynomial approximation, which vectorises
/// (a libm call does not): softmax's exp runs on whole vectors. sin and cos
/// stay libm calls; their approximations miss the rotation tests' 2-ulp
/// tolerances.
struct RopeApproximateMathPass
    : public rope::impl::RopeApproximateMathBase<RopeApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          // The patterns ask by full op name.
          return name == "math.exp";
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
