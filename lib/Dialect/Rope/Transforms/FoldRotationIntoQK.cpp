//===- FoldRotationIntoQK.cpp - rotate Q and K inside attention -----------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFOLDROTATIONINTOQK
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// The rotation feeding an attention operand along its sequence dim (2).
RotateOp rotationAlongSequence(Value v) {
  auto rotate = v.getDefiningOp<RotateOp>();
  if (!rotate || rotate.getNormalizedSeqDim() != 2)
    return {};
  return rotate;
}

struct FoldRotationsIntoAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getRotary())
      return rewriter.notifyMatchFailure(op, "already rotates inside");
    RotateOp q = rotationAlongSequence(op.getQuery());
    RotateOp k = rotationAlongSequence(op.getKey());
    if (!q || !k)
      return rewriter.notifyMatchFailure(op, "Q or K is not a rotation");
    if (q.getSpec() != k.getSpec())
      return rewriter.notifyMatchFailure(op, "Q and K rotate differently");
    // A lone rotation with length-dependent frequencies (dynamic, longrope)
    // sees the largest of its own positions; inside attention both see the
    // largest of Q's and K's. Those agree only when the positions are shared.
    if (q.getSpec().dependsOnMaxPosition() && q.getPositions() != k.getPositions())
      return rewriter.notifyMatchFailure(
          op, "length-dependent frequencies over different positions");
    // The attention's positions decide causality; they must be the rotation
    // positions, or absent when nothing depends on them.
    if (op.getQueryPositions()) {
      if (op.getQueryPositions() != q.getPositions() ||
          op.getKeyPositions() != k.getPositions())
        return rewriter.notifyMatchFailure(op, "positions differ from rotation");
    } else if (op.needsPositions()) {
      return rewriter.notifyMatchFailure(
          op, "causal, window or position bias with default positions that "
              "the rotation may not share");
    }
    rewriter.replaceOpWithNewOp<AttentionOp>(
        op, op.getResult().getType(), q.getInput(), k.getInput(), op.getValue(),
        op.getMask(), q.getPositions(), k.getPositions(), op.getSinks(),
        op.getAlibiSlopes(), op.getRelativeBias(), op.getScaleAttr(),
        op.getCausalAttr(), q.getSpec(), op.getWindowAttr(), op.getSoftcapAttr(),
        op.getRelativeBucketsAttr());
    return success();
  }
};

struct RopeFoldRotationIntoQKPass
    : public rope::impl::RopeFoldRotationIntoQKBase<RopeFoldRotationIntoQKPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldRotationIntoQKPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::rope::populateFoldRotationIntoQKPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldRotationsIntoAttention>(patterns.getContext());
}
