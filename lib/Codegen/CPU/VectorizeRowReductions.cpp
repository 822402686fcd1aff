//===- VectorizeRowReductions.cpp - row reductions 16 rows at a time ------===//
//
// The attention tiles' row max and row sum reduce the innermost dim of a
// score tile. LLVM's loop vectoriser reduces each row alone and ends each
// with a chain of dependent shuffles across one register's lanes; here 16
// rows share one butterfly of shuffles instead (see LaneReductions.h).
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/LaneReductions.h"
#include "rope/Codegen/CPU/Passes.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEVECTORIZEROWREDUCTIONS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// The widest row a block reduces: 16 rows of it are loaded at once.
constexpr int64_t kMaxColumns = 256;

/// Whether the combiner may take the row's elements in any order: max and
/// min give the same result in any order, a sum only where the op says so.
static bool reassociates(Operation *combiner) {
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
          arith::MinNumFOp>(combiner))
    return true;
  auto add = dyn_cast<arith::AddFOp>(combiner);
  return add &&
         bitEnumContainsAll(add.getFastmath(), arith::FastMathFlags::reassoc);
}

/// `op` reduces the innermost dim of its one input, every other dim
/// parallel and kept in the output, by one reassociable f32 combiner, on
/// static extents that blocks of kReductionLanes rows and lanes divide.
static bool isRowReduction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() < 2 ||
      op.getNumReductionLoops() != 1 ||
      !linalg::isReductionIterator(op.getIteratorTypesArray().back()))
    return false;
  unsigned loops = op.getNumLoops();
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(loops, op.getContext());
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != identity || maps[1] != identity.dropResult(loops - 1))
    return false;
  if (rope::hasEmptyLoop(op))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = ranges[loops - 2], columns = ranges[loops - 1];
  if (ShapedType::isDynamicShape(ranges) || rows % rope::kReductionLanes != 0 ||
      columns % rope::kReductionLanes != 0 || columns > kMaxColumns)
    return false;
  auto isF32 = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementType().isF32();
  };
  if (!isF32(op.getDpsInputs()[0]) || !isF32(op.getDpsInits()[0]))
    return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  Operation &combiner = body.front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield->getOperand(0) != combiner.getResult(0) ||
      combiner.getNumOperands() != 2 || !reassociates(&combiner))
    return false;
  SmallVector<Value> operands(combiner.getOperands());
  return llvm::is_contained(operands, body.getArgument(0)) &&
         llvm::is_contained(operands, body.getArgument(1));
}

/// `op` as a loop over blocks of kReductionLanes rows (every outer dim one
/// at a time), each block vectorised to one vector.multi_reduction.
static LogicalResult vectorizeInRowBlocks(RewriterBase &rewriter,
                                          linalg::GenericOp op) {
  SmallVector<int64_t> sizes(op.getNumLoops(), 1);
  sizes[sizes.size() - 2] = rope::kReductionLanes;
  sizes.back() = 0;
  FailureOr<scf::SCFTilingResult> tiled = rope::tileWith(
      rewriter, op, sizes, scf::SCFTilingOptions::LoopType::ForOp);
  if (failed(tiled))
    return failure();
  linalg::GenericOp block = rope::tileOf(*tiled);
  rewriter.setInsertionPoint(block);
  FailureOr<linalg::VectorizationResult> vectorized =
      linalg::vectorize(rewriter, block);
  if (failed(vectorized))
    return failure();
  rewriter.replaceOp(block, vectorized->replacements);
  return success();
}

struct RopeVectorizeRowReductionsPass
    : public rope::impl::RopeVectorizeRowReductionsBase<
          RopeVectorizeRowReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> work;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isRowReduction(op))
        work.push_back(op);
    });
    if (work.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : work) {
      Location loc = op.getLoc();
      if (failed(vectorizeInRowBlocks(rewriter, op))) {
        emitError(loc, "a row reduction could not be vectorised in blocks of ")
            << rope::kReductionLanes << " rows";
        return signalPassFailure();
      }
    }
    RewritePatternSet patterns(&getContext());
    rope::populateLaneReductionPatterns(patterns, /*benefit=*/2);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
