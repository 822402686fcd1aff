//===- ParallelizeElementwise.cpp - big elementwise ops on all cores ------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEPARALLELIZEELEMENTWISE
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Splits large elementwise linalg ops that are not already inside a loop
/// (standalone rotations, cos/sin tables, dtype conversions, and the copies
/// that pack a large matmul's B: transposes, any op without a reduction)
/// into an scf.forall over their outermost non-unit dim, so that they run
/// on all cores like the attention tiles. Memory-bound ops need every core to reach
/// the machine's bandwidth.
struct RopeParallelizeElementwisePass
    : public rope::impl::RopeParallelizeElementwiseBase<
          RopeParallelizeElementwisePass> {
  /// Chunks per op: a few per core keeps the load balanced.
  static constexpr int64_t kChunks = 8;
  /// Below this many elements a parallel region costs more than it saves.
  static constexpr int64_t kMinElements = 1 << 15;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<LoopLikeOpInterface>() ||
          !op.hasPureTensorSemantics() || op.getNumReductionLoops() != 0)
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t elements = 1;
      bool dynamic = false;
      for (int64_t r : ranges) {
        if (ShapedType::isDynamic(r))
          dynamic = true;
        else
          elements *= r;
      }
      if (dynamic || elements >= kMinElements)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      auto dim = llvm::find_if(ranges, [](int64_t r) { return r != 1; });
      if (dim == ranges.end())
        continue;
      SmallVector<OpFoldResult> numThreads(ranges.size(), rewriter.getIndexAttr(0));
      numThreads[dim - ranges.begin()] = rewriter.getIndexAttr(kChunks);
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
          .setNumThreads(numThreads);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue; // Stays sequential; correct either way.
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};
} // namespace
