//===- ApproximateMath.cpp - polynomial sin, cos and exp ------------------===//

#include "rope/Codegen/Common/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEAPPROXIMATEMATH
#include "rope/Codegen/Common/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Replaces f32 sin, cos and exp with MLIR's polynomial approximations. They
/// vectorise (libm calls do not), which matters for cos/sin tables of long
/// KV caches and for softmax; the tables are range-reduced to [-π, π] in f64
/// first, where the approximations are accurate to a few ulps (the numerical
/// tests' tolerances hold with them).
struct RopeApproximateMathPass
    : public rope::impl::RopeApproximateMathBase<RopeApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return name == "sin" || name == "cos" || name == "exp";
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
