//===- LowerVectorTransfers.cpp - transfers to vector.load/store ----------===//

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPELOWERVECTORTRANSFERS
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Rewrites in-bounds, contiguous vector transfers (the rows of streamed
/// attention) into plain vector loads and stores. The NVVM conversion knows
/// vector.load/store but not transfers, which it would leave unconverted.
struct RopeLowerVectorTransfersPass
    : public rope::impl::RopeLowerVectorTransfersBase<
          RopeLowerVectorTransfersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
