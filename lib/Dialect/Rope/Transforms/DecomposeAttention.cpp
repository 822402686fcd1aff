//===- DecomposeAttention.cpp - attention to online-softmax loops ---------===//
//
// Thin drivers. --rope-decompose-online-attention replaces each
// rope.online_attention with its own decomposition; --rope-decompose-attention
// (CPU) and --rope-decompose-attention-rows (GPU) configure attention: to the
// online op, tiled (query tiles or single query rows in parallel, or split-K;
// key tiles in a loop), invisible key tiles skipped, decomposed. The S×S
// scores never exist; only tiles do.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEATTENTION
#define GEN_PASS_DEF_ROPEDECOMPOSEATTENTIONROWS
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

/// Converts, tiles, guards and decomposes every rope.attention under `root`
/// that `accept` takes (the others are left to the plain lowering).
static LogicalResult configureAttention(
    Operation *root, const AttentionTilingOptions &options,
    function_ref<bool(AttentionOp)> accept) {
  IRRewriter rewriter(root->getContext());
  SmallVector<AttentionOp> attentions;
  root->walk([&](AttentionOp op) {
    if (accept(op))
      attentions.push_back(op);
  });
  for (AttentionOp attention : attentions) {
    // An empty query or key sequence has nothing to tile; the online op
    // decomposes untiled.
    bool empty = attention.getQuery().getType().getDimSize(2) == 0 ||
                 attention.getKey().getType().getDimSize(2) == 0;
    FailureOr<OnlineAttentionOp> online =
        convertToOnlineAttention(rewriter, attention);
    if (failed(online))
      return failure();
    if (empty)
      continue;
    FailureOr<OnlineAttentionOp> tile =
        tileOnlineAttention(rewriter, *online, options);
    if (failed(tile))
      return failure();
    (void)guardInvisibleKeyTile(rewriter, *tile);
  }
  return decomposeAll(root);
}

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
    AttentionTilingOptions options{queryTile, keyTile, splitKeys};
    if (failed(configureAttention(getOperation(), options,
                                  [](AttentionOp) { return true; })))
      signalPassFailure();
  }
};

struct RopeDecomposeAttentionRowsPass
    : public rope::impl::RopeDecomposeAttentionRowsBase<
          RopeDecomposeAttentionRowsPass> {
  using RopeDecomposeAttentionRowsBase::RopeDecomposeAttentionRowsBase;

  void runOnOperation() override {
    if (keyTile <= 0) {
      getOperation()->emitError()
          << "rope-decompose-attention-rows: key-tile must be positive, got "
          << static_cast<int64_t>(keyTile);
      return signalPassFailure();
    }
    AttentionTilingOptions options;
    options.keyTile = keyTile;
    options.oneRowPerTile = true;
    // A row's temporaries have the head dims' sizes: static ones only.
    auto staticHeads = [](AttentionOp op) {
      int64_t d = op.getQuery().getType().getDimSize(3);
      int64_t dv = op.getValue().getType().getDimSize(3);
      return !ShapedType::isDynamic(d) && !ShapedType::isDynamic(dv) &&
             d != 0 && dv != 0;
    };
    if (failed(configureAttention(getOperation(), options, staticHeads)))
      signalPassFailure();
  }
};
} // namespace
