//===- DecomposeAggregatedOps.cpp - linalg.softmax, tensor.concat, ... ----===//

#include "rope/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEAGGREGATEDOPS
#include "rope/Codegen/Common/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Checks that upstream's decomposition of `op` can take it; a located
/// diagnostic otherwise. linalg.softmax verifies on any element type and
/// on buffers, but its decomposition builds float identities (an integer
/// type crashes in arith::getIdentityValueAttr) and tensor ops.
LogicalResult checkDecomposable(linalg::AggregatedOpInterface op) {
  auto softmax = dyn_cast<linalg::SoftmaxOp>(op.getOperation());
  if (!softmax)
    return success();
  if (!softmax.hasPureTensorSemantics())
    return softmax.emitOpError()
           << "can be decomposed on tensors only, not on buffers";
  for (Type type :
       {softmax.getInput().getType(), softmax.getOutput().getType()})
    if (!isa<FloatType>(getElementTypeOrSelf(type)))
      return softmax.emitOpError()
             << "expects floating-point input and output to be decomposed, "
                "got "
             << type;
  return success();
}

/// Replaces each aggregated linalg op by its decomposition. The ops own the
/// decomposition (upstream's AggregatedOpInterface); this only applies it
/// where no transform script does.
struct RopeDecomposeAggregatedOpsPass
    : public rope::impl::RopeDecomposeAggregatedOpsBase<
          RopeDecomposeAggregatedOpsPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      if (failed(checkDecomposable(op)))
        return signalPassFailure();
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> results = op.decomposeOperation(rewriter);
      if (failed(results)) {
        op->emitOpError() << "could not be decomposed";
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *results);
    }
    // A tensor.concat becomes a tensor.empty and an insert_slice per
    // operand: bufferization then writes a result that the caller's
    // buffer receives (a decode step's KV cache, one row longer) into that
    // buffer, where a concat of its own allocates and is copied again.
    RewritePatternSet patterns(&getContext());
    tensor::populateDecomposeTensorConcatPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
