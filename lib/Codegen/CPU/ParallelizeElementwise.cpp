//===- ParallelizeElementwise.cpp - big elementwise ops on all cores ------===//

#include "rope/Codegen/CPU/Passes.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
/// Splits large linalg ops that are not already inside a loop (standalone
/// rotations, cos/sin tables, dtype conversions, the copies that pack a large
/// matmul's B, a frontend's row reductions such as RMSNorm's sums of
/// squares) into an scf.forall over their outermost non-unit parallel dim,
/// so that they run on all cores like the attention tiles. Memory-bound ops
/// need every core to reach the machine's bandwidth. A reduction dim is never
/// split: each output element is still reduced by one thread, in the same
/// order, so the results do not change.
struct RopeParallelizeElementwisePass
    : public rope::impl::RopeParallelizeElementwiseBase<
          RopeParallelizeElementwisePass> {
  /// Chunks per op: a few per core keeps the load balanced.
  static constexpr int64_t kChunks = 8;
  /// Below this many iterations a parallel region costs more than it saves.
  static constexpr int64_t kMinIterations = 1 << 15;

  /// The dim to split: the outermost parallel dim that is not known to be
  /// 1, if it comes before every reduction dim that is not (an op reducing
  /// its outermost dim, a column sum, keeps its one thread).
  static std::optional<unsigned> splitDim(linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (unsigned i = 0; i < ranges.size(); ++i) {
      if (ranges[i] == 1)
        continue;
      if (iterators[i] == utils::IteratorType::parallel)
        return i;
      return std::nullopt;
    }
    return std::nullopt;
  }

  void runOnOperation() override {
    // Each op with the dim it is split along.
    SmallVector<std::pair<linalg::LinalgOp, unsigned>> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      // An empty loop leaves nothing to split (and upstream tiling's tile
      // sizes crash on it).
      if (op->getParentOfType<LoopLikeOpInterface>() ||
          !op.hasPureTensorSemantics() || rope::hasEmptyLoop(op))
        return;
      std::optional<unsigned> dim = splitDim(op);
      if (!dim)
        return;
      bool dynamic = ShapedType::isDynamicShape(op.getStaticLoopRanges());
      if (dynamic || rope::staticIterations(op) >= kMinIterations)
        candidates.emplace_back(op, *dim);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, dim] : candidates) {
      SmallVector<OpFoldResult> numThreads(op.getNumLoops(),
                                           rewriter.getIndexAttr(0));
      numThreads[dim] = rewriter.getIndexAttr(kChunks);
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
