//===- SkipInvisibleAttentionTiles.cpp - guard key tiles by position ------===//
//
// A key tile of causal (or windowed) attention whose keys no query of its tile
// can see contributes nothing; skipping it halves prefill's work. The test
// takes the bounds of the tile's positions and asks the visibility rule of
// AttentionRules whether any pair in them is visible, so it is exact for any
// positions (decode, per-sequence offsets), not only sorted ones. A tile
// whose every pair is visible (all of prefill's tiles but the diagonal's)
// needs no rule at all: it runs a copy of the op without causal and window,
// which spares each score its position compare and select.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"
#include "rope/Dialect/Rope/IR/AttentionRules.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPESKIPINVISIBLEATTENTIONTILES
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

/// Moves `op` into a new scf.if on `condition`, in its else branch with
/// `opInElse`, else its then branch, where the if yields its results; the
/// other branch yields what `buildOther` builds there. The if's results
/// replace `op`'s.
static void moveIntoBranch(RewriterBase &rewriter, OnlineAttentionOp op,
                           Value condition, bool opInElse,
                           function_ref<ValueRange()> buildOther) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto ifOp = scf::IfOp::create(rewriter, loc, op.getResultTypes(), condition,
                                /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(opInElse ? ifOp.thenBlock()
                                             : ifOp.elseBlock());
  scf::YieldOp::create(rewriter, loc, buildOther());
  rewriter.setInsertionPointToStart(opInElse ? ifOp.elseBlock()
                                             : ifOp.thenBlock());
  auto yield = scf::YieldOp::create(rewriter, loc, op.getResults());
  for (auto [result, replacement] :
       llvm::zip_equal(op.getResults(), ifOp.getResults()))
    rewriter.replaceAllUsesExcept(result, replacement, yield);
  rewriter.moveOpBefore(op, yield);
}

LogicalResult mlir::rope::guardInvisibleKeyTile(RewriterBase &rewriter,
                                                OnlineAttentionOp op,
                                                bool unmaskVisibleTiles) {
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
  // No visible pair: the state passes through.
  moveIntoBranch(rewriter, op, visible, /*opInElse=*/false,
                 [&] { return op.getOutputs(); });
  if (!unmaskVisibleTiles)
    return success();
  // Every pair visible: a copy of the tile without the rule runs instead.
  rewriter.setInsertionPoint(op);
  Value everyVisible = attention::buildEveryKeyVisible(
      rewriter, loc, qMin, qMax, kMin, kMax, op.getCausal(), window);
  moveIntoBranch(rewriter, op, everyVisible, /*opInElse=*/true, [&] {
    auto unmasked = cast<OnlineAttentionOp>(rewriter.clone(*op));
    unmasked.setCausal(false);
    unmasked.removeWindowAttr();
    return ValueRange(unmasked.getResults());
  });
  return success();
}

namespace {
struct RopeSkipInvisibleAttentionTilesPass
    : public rope::impl::RopeSkipInvisibleAttentionTilesBase<
          RopeSkipInvisibleAttentionTilesPass> {
  using RopeSkipInvisibleAttentionTilesBase::
      RopeSkipInvisibleAttentionTilesBase;

  void runOnOperation() override {
    SmallVector<OnlineAttentionOp> ops;
    getOperation()->walk([&](OnlineAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (OnlineAttentionOp op : ops)
      (void)guardInvisibleKeyTile(rewriter, op, unmaskVisibleTiles);
  }
};
} // namespace
