//===- FuseElementwiseOps.cpp - sound elementwise fusion ------------------===//
//
// Upstream's elementwise-fusion patterns behind a control function that
// refuses producers reading their own outputs (fusion gives the producer's
// outputs the consumer's iteration space, and where the consumer broadcasts
// the fused value, a read-modify-write of those outputs would be repeated)
// and producers a contraction would recompute at each of its columns.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/Common/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFUSEELEMENTWISEOPS
#include "rope/Codegen/Common/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// Whether `linalgOp`'s body reads any of its outputs.
bool readsItsOutputs(linalg::LinalgOp linalgOp) {
  return llvm::any_of(linalgOp.getDpsInitsMutable(), [&](OpOperand &init) {
    return linalgOp.payloadUsesValueFromOperand(&init);
  });
}

/// Whether fusing into `fused`'s owner would compute each producer value
/// many times over: a consumer with reduction loops (a contraction) that
/// does not read the operand at every one of its loops, e.g. a model's
/// final norm fused into its vocabulary projection would recompute the
/// norm's rsqrt for each of the 32000 columns, and leave a contraction of
/// four operands that no micro-kernel takes.
bool recomputedByReduction(OpOperand *fused) {
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  return consumer && consumer.getNumReductionLoops() > 0 &&
         !consumer.getMatchingIndexingMap(fused).isPermutation();
}

struct RopeFuseElementwiseOpsPass
    : public rope::impl::RopeFuseElementwiseOpsBase<RopeFuseElementwiseOpsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // As upstream: a producer goes into its only user.
    linalg::ControlFusionFn singleUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    linalg::ControlFusionFn sound = [&](OpOperand *fused) {
      if (!singleUse(fused))
        return false;
      auto producer = fused->get().getDefiningOp<linalg::LinalgOp>();
      if (producer && readsItsOutputs(producer))
        return false;
      return !recomputedByReduction(fused);
    };
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, sound);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, sound);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal(true))))
      signalPassFailure();
  }
};

} // namespace
