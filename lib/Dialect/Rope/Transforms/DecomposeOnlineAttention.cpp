//===- DecomposeOnlineAttention.cpp - online attention to linalg ----------===//
//
// --rope-decompose-online-attention: replaces each rope.online_attention with
// its own decomposition (AggregatedOpInterface), whatever tiling came first.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEONLINEATTENTION
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

LogicalResult
mlir::rope::decomposeOnlineAttention(RewriterBase &rewriter,
                                     OnlineAttentionOp op,
                                     int64_t rowsRotatingKeysInScores) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  FailureOr<SmallVector<Value>> values =
      op.decompose(rewriter, rowsRotatingKeysInScores);
  if (failed(values))
    return failure();
  rewriter.replaceOp(op, *values);
  return success();
}

LogicalResult
mlir::rope::decomposeAllOnlineAttention(Operation *root,
                                        int64_t rowsRotatingKeysInScores) {
  SmallVector<OnlineAttentionOp> ops;
  root->walk([&](OnlineAttentionOp op) { ops.push_back(op); });
  IRRewriter rewriter(root->getContext());
  for (OnlineAttentionOp op : ops)
    if (failed(
            decomposeOnlineAttention(rewriter, op, rowsRotatingKeysInScores)))
      return op.emitOpError("could not be decomposed");
  return success();
}

namespace {

struct RopeDecomposeOnlineAttentionPass
    : public rope::impl::RopeDecomposeOnlineAttentionBase<
          RopeDecomposeOnlineAttentionPass> {
  void runOnOperation() override {
    if (failed(decomposeAllOnlineAttention(getOperation())))
      signalPassFailure();
  }
};

} // namespace
