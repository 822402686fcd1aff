//===- SkipInvisibleAttentionTiles.cpp - guard key tiles by position ------===//
//
// A key tile of causal (or windowed) attention whose keys no query of its tile
// can see contributes nothing; skipping it halves prefill's work. The test
// takes the bounds of the tile's positions and asks the visibility rule of
// AttentionRules whether any pair in them is visible, so it is exact for any
// positions (decode, per-sequence offsets), not only sorted ones.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"
#include "rope/Dialect/Rope/IR/AttentionRules.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPESKIPINVISIBLEATTENTIONTILES
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

LogicalResult mlir::rope::guardInvisibleKeyTile(RewriterBase &rewriter,
                                                OnlineAttentionOp op) {
  std::optional<int64_t> window;
  if (IntegerAttr w = op.getWindowAttr())
    window = w.getInt();
  if (!op.getCausal() && !window)
    return failure();
  // Only key tiles of a loop; and each once (a guarded op's parent is its
  // scf.if).
  if (!isa_and_nonnull<scf::ForOp>(op->getParentOp()))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value qPos = op.getQueryPositions(), kPos = op.getKeyPositions();
  // The query tile's bounds do not change along the key loop (its positions
  // come from outside it): computed once, before the loop.
  auto loop = cast<scf::ForOp>(op->getParentOp());
  auto boundsOf = [&](Value positions) -> std::pair<Value, Value> {
    OpBuilder::InsertionGuard guard(rewriter);
    if (!loop.getRegion().isAncestor(positions.getParentRegion()))
      rewriter.setInsertionPoint(loop);
    return {buildMinPosition(rewriter, loc, positions),
            buildMaxPosition(rewriter, loc, positions)};
  };
  auto [qMin, qMax] = boundsOf(qPos);
  auto [kMin, kMax] = boundsOf(kPos);
  Value visible = attention::buildKeyVisibility(rewriter, loc, qMin, qMax, kMin,
                                                kMax, op.getCausal(), window);
  auto ifOp = scf::IfOp::create(rewriter, loc, op.getResultTypes(), visible,
                                /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(rewriter, loc, op.getOutputs());
  rewriter.setInsertionPointToStart(ifOp.thenBlock());
  auto yield = scf::YieldOp::create(rewriter, loc, op.getResults());
  for (auto [result, replacement] :
       llvm::zip_equal(op.getResults(), ifOp.getResults()))
    rewriter.replaceAllUsesExcept(result, replacement, yield);
  rewriter.moveOpBefore(op, yield);
  return success();
}

namespace {
struct RopeSkipInvisibleAttentionTilesPass
    : public rope::impl::RopeSkipInvisibleAttentionTilesBase<
          RopeSkipInvisibleAttentionTilesPass> {
  void runOnOperation() override {
    SmallVector<OnlineAttentionOp> ops;
    getOperation()->walk([&](OnlineAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (OnlineAttentionOp op : ops)
      (void)guardInvisibleKeyTile(rewriter, op);
  }
};
} // namespace
