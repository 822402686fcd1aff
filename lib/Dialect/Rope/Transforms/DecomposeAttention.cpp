//===- DecomposeAttention.cpp - attention to online-softmax loops ---------===//
//
// Thin drivers. --rope-decompose-online-attention replaces each
// rope.online_attention with its own decomposition; --rope-decompose-attention
// is the CPU configuration of attention: to the online op, tiled (query tiles
// in parallel or split-K, key tiles in a loop), invisible key tiles skipped,
// decomposed. The S×S scores never exist; only tiles do.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEATTENTION
#define GEN_PASS_DEF_ROPEDECOMPOSEONLINEATTENTION
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

LogicalResult mlir::rope::decomposeOnlineAttention(RewriterBase &rewriter,
                                                   OnlineAttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  FailureOr<SmallVector<Value>> values =
      cast<linalg::AggregatedOpInterface>(op.getOperation())
          .decomposeOperation(rewriter);
  if (failed(values))
    return failure();
  rewriter.replaceOp(op, *values);
  return success();
}

/// Decomposes every rope.online_attention under `root`.
static LogicalResult decomposeAll(Operation *root) {
  SmallVector<OnlineAttentionOp> ops;
  root->walk([&](OnlineAttentionOp op) { ops.push_back(op); });
  IRRewriter rewriter(root->getContext());
  for (OnlineAttentionOp op : ops)
    if (failed(decomposeOnlineAttention(rewriter, op)))
      return op.emitOpError("could not be decomposed");
  return success();
}

namespace {
struct RopeDecomposeOnlineAttentionPass
    : public rope::impl::RopeDecomposeOnlineAttentionBase<
          RopeDecomposeOnlineAttentionPass> {
  void runOnOperation() override {
    if (failed(decomposeAll(getOperation())))
      signalPassFailure();
  }
};

struct RopeDecomposeAttentionPass
    : public rope::impl::RopeDecomposeAttentionBase<RopeDecomposeAttentionPass> {
  using RopeDecomposeAttentionBase::RopeDecomposeAttentionBase;

  void runOnOperation() override {
    if (queryTile <= 0 || keyTile <= 0 || splitKeys < -1) {
      getOperation()->emitError()
          << "rope-decompose-attention: query-tile and key-tile must be "
             "positive and split-keys -1 (automatic) or more, got "
          << static_cast<int64_t>(queryTile) << ", "
          << static_cast<int64_t>(keyTile) << " and "
          << static_cast<int64_t>(splitKeys);
      return signalPassFailure();
    }
    Operation *root = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> attentions;
    root->walk([&](AttentionOp op) { attentions.push_back(op); });
    AttentionTilingOptions options{queryTile, keyTile, splitKeys};
    for (AttentionOp attention : attentions) {
      // An empty query or key sequence has nothing to tile; the online op
      // decomposes untiled.
      bool empty = attention.getQuery().getType().getDimSize(2) == 0 ||
                   attention.getKey().getType().getDimSize(2) == 0;
      FailureOr<OnlineAttentionOp> online =
          convertToOnlineAttention(rewriter, attention);
      if (failed(online))
        return signalPassFailure();
      if (empty)
        continue;
      FailureOr<OnlineAttentionOp> tile =
          tileOnlineAttention(rewriter, *online, options);
      if (failed(tile))
        return signalPassFailure();
      (void)guardInvisibleKeyTile(rewriter, *tile);
    }
    if (failed(decomposeAll(root)))
      signalPassFailure();
  }
};
} // namespace
