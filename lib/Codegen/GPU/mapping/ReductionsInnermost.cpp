//===- ReductionsInnermost.cpp - reduction loops inside the thread --------===//

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEREDUCTIONSINNERMOST
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Reorders the loops of linalg.generic ops so that every reduction dim comes
/// after every parallel dim. On the GPU each parallel iteration is a thread
/// and the loops below the first reduction run inside it: P·V
/// ([b, h, q, k(reduction), d]) would otherwise give one thread per query
/// row, looping over the whole head dim.
struct RopeReductionsInnermostPass
    : public rope::impl::RopeReductionsInnermostBase<
          RopeReductionsInnermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      SmallVector<unsigned> order;
      for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
        if (kind == utils::IteratorType::parallel)
          order.push_back(i);
      for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
        if (kind != utils::IteratorType::parallel)
          order.push_back(i);
      if (llvm::is_sorted(order))
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
        continue; // Still correct, only slower.
    }
  }
};
} // namespace
