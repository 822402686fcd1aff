//===- DecomposeAttention.cpp - attention to online-softmax loops ---------===//
//
// --rope-decompose-attention (CPU): attention to the online op, query tiles
// in parallel (or split-K), key tiles in a loop, invisible key tiles
// skipped, decomposed. The S×S scores never exist; only tiles do. Also the
// configuration the GPU rows share (tileAndDecomposeAttention).
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEATTENTION
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

LogicalResult mlir::rope::tileAndDecomposeAttention(
    Operation *root, const AttentionTilingOptions &options,
    function_ref<bool(AttentionOp)> accept) {
  IRRewriter rewriter(root->getContext());
  SmallVector<AttentionOp> attentions;
  root->walk([&](AttentionOp op) {
    if (accept(op))
      attentions.push_back(op);
  });
  for (AttentionOp attention : attentions) {
    // An empty dim (batch, heads, either sequence, either head dim) leaves
    // nothing to tile; the online op decomposes untiled.
    bool empty =
        llvm::any_of(ValueRange{attention.getQuery(), attention.getKey(),
                                attention.getValue()},
                     [](Value t) {
                       return llvm::is_contained(
                           cast<RankedTensorType>(t.getType()).getShape(), 0);
                     });
    // The unmasked copy doubles the tile's code and LLVM's time on it for a
    // small gain in speed (benchmarks/README.md): static attention, compiled
    // once ahead of time, takes it; a run-time length, which a frontend's
    // JIT compiles per graph (and where the copy costs the most compile
    // time), does not.
    bool unmask = options.unmaskVisibleKeyTiles &&
                  !attention.getQuery().getType().isDynamicDim(2);
    FailureOr<OnlineAttentionOp> online =
        convertToOnlineAttention(rewriter, attention);
    if (failed(online))
      return failure();
    if (empty)
      continue;
    FailureOr<SmallVector<OnlineAttentionOp, 2>> keyTiles =
        tileOnlineAttention(rewriter, *online, options);
    if (failed(keyTiles))
      return failure();
    for (OnlineAttentionOp keyTile : *keyTiles)
      (void)guardInvisibleKeyTile(rewriter, keyTile, unmask);
  }
  return decomposeAllOnlineAttention(root, options.rowsRotatingKeysInScores);
}

namespace {

struct RopeDecomposeAttentionPass
    : public rope::impl::RopeDecomposeAttentionBase<RopeDecomposeAttentionPass> {
  using RopeDecomposeAttentionBase::RopeDecomposeAttentionBase;

  void runOnOperation() override {
    if (queryTile <= 0 || keyTile <= 0 || splitKeys < -1 ||
        rowsRotatingKeysInScores < 0) {
      getOperation()->emitError()
          << "rope-decompose-attention: query-tile and key-tile must be "
             "positive, split-keys -1 (automatic) or more and "
             "rows-rotating-keys-in-scores 0 or more, got "
          << static_cast<int64_t>(queryTile) << ", "
          << static_cast<int64_t>(keyTile) << ", "
          << static_cast<int64_t>(splitKeys) << " and "
          << static_cast<int64_t>(rowsRotatingKeysInScores);
      return signalPassFailure();
    }
    AttentionTilingOptions options{queryTile, keyTile, splitKeys};
    options.rowsRotatingKeysInScores = rowsRotatingKeysInScores;
    if (failed(tileAndDecomposeAttention(getOperation(), options,
                                  [](AttentionOp) { return true; })))
      signalPassFailure();
  }
};

} // namespace
