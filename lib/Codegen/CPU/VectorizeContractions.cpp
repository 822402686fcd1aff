//===- VectorizeContractions.cpp - register-blocked FMA micro-kernels -----===//
//
// A contraction (matmul-like linalg op) becomes loops around a register
// block: per K step, `rows` broadcast elements of A times one contiguous row
// of `columns` elements of B, accumulated in registers across the whole K
// loop. This is the micro-kernel shape of BLIS-style GEMM: for each loaded
// vector of B, `rows` FMAs; for each broadcast of A, `columns / lanes` FMAs.
//
// The pass itself only drives the strategies (ContractionStrategies.h): it
// plans which one each contraction takes, runs them, then the pattern rounds
// that keep their accumulators in registers and lower their vector ops.
//
//===----------------------------------------------------------------------===//

#include "ContractionStrategies.h"
#include "rope/Codegen/CPU/HostRegisterBlock.h"
#include "rope/Codegen/CPU/LaneReductions.h"
#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEVECTORIZECONTRACTIONS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::contractions;

/// Rewrites one contraction into its micro-kernel loops (`hostRows`: the
/// rows of the host's register block).
static LogicalResult rewriteContraction(RewriterBase &rewriter,
                                        linalg::LinalgOp linalgOp,
                                        const RegisterBlock &block,
                                        int64_t hostRows) {
  linalg::GenericOp op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  if (!op) {
    rewriter.setInsertionPoint(linalgOp);
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, linalgOp);
    if (failed(generic))
      return failure();
    op = *generic;
  }
  if (std::optional<DotProductForm> form = matchDotProduct(op))
    return rewriteAsDotProducts(rewriter, op, *form, hostRows);
  bool large = isLargeTopLevel(op);
  op = packOperands(rewriter, op, block, /*columnPanels=*/large);
  if (large)
    op = tileForCoresAndCaches(rewriter, op, block);
  if (!large) {
    FailureOr<bool> fused = tileWithElementwiseNeighbours(rewriter, op, block);
    if (failed(fused) || *fused)
      return fused;
  }
  if (!ShapedType::isDynamic(op.getStaticLoopRanges()[block.rowDim]))
    return tileIntoRegisterBlocks(rewriter, op, block);
  FailureOr<SmallVector<std::pair<linalg::GenericOp, RegisterBlock>>> pieces =
      splitDynamicRows(rewriter, op, block);
  if (failed(pieces))
    return failure();
  for (auto &[piece, pieceBlock] : *pieces)
    if (failed(tileIntoRegisterBlocks(rewriter, piece, pieceBlock)))
      return failure();
  return success();
}

/// Every contraction of `plan` rewritten by its strategy, the register
/// blocks (and dot products) first; reports the first that fails.
static LogicalResult rewritePlanned(RewriterBase &rewriter,
                                    ContractionPlan &plan, int64_t hostRows) {
  for (auto &[op, block] : plan.registerBlocks)
    if (failed(rewriteContraction(rewriter, op, block, hostRows))) {
      op.emitOpError("could not be rewritten into register blocks");
      return failure();
    }
  for (auto &[op, form] : plan.laneSums) {
    // The op may be replaced before a step fails.
    Location loc = op.getLoc();
    if (failed(rewriteAsLaneSums(rewriter, op, form, hostRows))) {
      emitError(loc, "a lane sum could not be rewritten into register "
                     "blocks");
      return failure();
    }
  }
  return success();
}

/// Folds the slices of slices that tiling and unit-dim dropping leave, so
/// that the accumulator's read and write in each reduction loop address the
/// loop's own iter_arg, which hoistAccumulators needs.
static LogicalResult foldSlicesOfSlices(Operation *root) {
  MLIRContext *ctx = root->getContext();
  RewritePatternSet canonical(ctx);
  tensor::ExtractSliceOp::getCanonicalizationPatterns(canonical, ctx);
  tensor::InsertSliceOp::getCanonicalizationPatterns(canonical, ctx);
  scf::ForOp::getCanonicalizationPatterns(canonical, ctx);
  tensor::populateMergeConsecutiveInsertExtractSlicePatterns(canonical);
  return applyPatternsGreedily(root, std::move(canonical));
}

/// Unrolls `loop` by `factor` where it is a register block's reduction
/// loop: innermost, carrying a vector (the accumulators, once hoisted; the
/// tensors it still carries pass through and are dropped later).
/// Its body is a few loads and broadcasts and one FMA per accumulator; the
/// unrolled body issues them with one increment and branch per `factor`
/// steps. At 8 × 32 a step is 26 instructions for 16 FMAs, which a 4-wide
/// core issues in about the 8 cycles the FMAs take on two ports: with the
/// loop's own 3 per step, the front end rather than the FMAs sets the pace.
static void unrollAccumulatingLoop(scf::ForOp loop, int64_t factor) {
  if (factor <= 1 ||
      !llvm::any_of(loop.getInitArgs().getTypes(), llvm::IsaPred<VectorType>))
    return;
  WalkResult nested = loop.getBody()->walk(
      [](LoopLikeOpInterface) { return WalkResult::interrupt(); });
  if (nested.wasInterrupted())
    return;
  (void)loopUnrollByFactor(loop, factor);
}

/// The accumulators of the loops the strategies marked (kRegisterBlockLoop)
/// hoisted out of them: a vector carried by the loop (registers) instead of
/// memory touched every step; then the reduction loops unrolled by
/// `reductionUnroll` steps and the marks removed.
static void hoistAccumulators(RewriterBase &rewriter, Operation *root,
                              int64_t reductionUnroll) {
  SmallVector<scf::ForOp> marked;
  root->walk([&](scf::ForOp loop) {
    if (loop->hasAttr(kRegisterBlockLoop))
      marked.push_back(loop);
  });
  for (scf::ForOp forOp : marked) {
    LoopLikeOpInterface loop = forOp;
    // Each round hoists one level (a slice, then the vector transfer of
    // it); two suffice, a few more cost nothing.
    for (int round = 0; round < 4; ++round)
      loop = hoistLoopInvariantSubsets(rewriter, loop);
    loop->removeAttr(kRegisterBlockLoop);
    unrollAccumulatingLoop(cast<scf::ForOp>(loop.getOperation()),
                           reductionUnroll);
  }
}

/// Vector transfers read and write the loops' tensors directly rather
/// than through rank-reducing slices of slices (what the blocks of
/// elementwise neighbours leave), which bufferization would give a
/// buffer and a copy per block.
static LogicalResult foldSubsetsIntoTransfers(Operation *root) {
  RewritePatternSet subsets(root->getContext());
  tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(subsets);
  tensor::InsertSliceOp::getCanonicalizationPatterns(subsets,
                                                     root->getContext());
  return applyPatternsGreedily(root, std::move(subsets));
}

/// The strategies' vector ops lowered to what becomes FMAs and shuffles.
static LogicalResult lowerToFMAs(Operation *root) {
  // vector.contract (rows × 1)·(1 × columns) to outer products (FMAs once
  // lowered to LLVM); the transposes and casts that come with them.
  RewritePatternSet patterns(root->getContext());
  vector::populateVectorContractLoweringPatterns(
      patterns, vector::VectorContractLowering::OuterProduct);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  // The lane sums' reductions: a block's 16 registers added pairwise by
  // a butterfly of shuffles (populateLaneReductionPatterns, below), rather
  // than each register reduced across its lanes alone; what it does not
  // take (8 lanes) through the vector dialect's own lowering.
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerParallel);
  // The transposing packs' 16 × 16 blocks: shuffles in registers.
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::Shuffle16x16);
  populateMathByRowPatterns(patterns);
  populateLaneSumStepPatterns(patterns);
  rope::populateLaneReductionPatterns(patterns, /*benefit=*/2);
  return applyPatternsGreedily(root, std::move(patterns));
}

/// Whether the options give a register block and an unroll factor; reports
/// on `op` where they do not.
static LogicalResult checkOptions(Operation *op, int64_t registerRows,
                                  int64_t registerColumns,
                                  int64_t reductionUnroll) {
  if (reductionUnroll < 1) {
    op->emitError()
        << "rope-vectorize-contractions: reduction-unroll must be at least "
           "1, got "
        << reductionUnroll;
    return failure();
  }
  if (registerRows < 0 || registerColumns < 0 || registerColumns % 8) {
    op->emitError()
        << "rope-vectorize-contractions: register-rows must be positive "
           "and register-columns a positive multiple of 8 (or 0: sized for "
           "the host CPU), got "
        << registerRows << " and " << registerColumns;
    return failure();
  }
  return success();
}

namespace {
struct RopeVectorizeContractionsPass
    : public rope::impl::RopeVectorizeContractionsBase<
          RopeVectorizeContractionsPass> {
  using RopeVectorizeContractionsBase::RopeVectorizeContractionsBase;

  void runOnOperation() override {
    if (failed(checkOptions(getOperation(), registerRows, registerColumns,
                            reductionUnroll)))
      return signalPassFailure();
    rope::RegisterBlockShape shape =
        rope::resolveRegisterBlock(registerRows, registerColumns);
    ContractionPlan plan = planContractions(getOperation(), shape);
    IRRewriter rewriter(&getContext());
    if (failed(rewritePlanned(rewriter, plan, shape.rows)))
      return signalPassFailure();
    if (plan.empty())
      return;

    // The pattern rounds: slices folded so that the accumulators can be
    // hoisted into registers, the vector transfers folded into the loops'
    // tensors, then the vector ops lowered.
    if (failed(foldSlicesOfSlices(getOperation())))
      return signalPassFailure();
    hoistAccumulators(rewriter, getOperation(), reductionUnroll);
    if (failed(foldSubsetsIntoTransfers(getOperation())))
      return signalPassFailure();
    if (failed(lowerToFMAs(getOperation())))
      return signalPassFailure();
  }
};
} // namespace
