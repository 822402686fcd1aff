//===- ElementwiseNeighbours.cpp - neighbours on the register blocks ------===//
//
// The elementwise ops around a contraction (the logits an attention tile
// computes from its scores, the online softmax's rescaling of its output
// tile) computed per register block, on the accumulator's registers, instead
// of in passes of their own over the whole result through memory.
//
//===----------------------------------------------------------------------===//

#include "ContractionStrategies.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::contractions;

/// Whether the vectoriser turns `op` into vector ops that stay in registers
/// and lower to LLVM: no gathers (a table looked up per element, as T5's
/// relative bias), and no element type narrower than a byte (an i1 mask:
/// memory holds a byte per element, a vector of i1 one bit).
static bool vectorizesInRegisters(linalg::GenericOp op) {
  for (Value operand : op->getOperands()) {
    Type element = getElementTypeOrSelf(operand.getType());
    if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8)
      return false;
  }
  WalkResult walk = op.getRegion().walk([](Operation *nested) {
    return isa<tensor::ExtractOp>(nested) ? WalkResult::interrupt()
                                          : WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// The all-parallel generic that is the only reader of `op`'s result and
/// computes one element of its own result from one element of it (the
/// logits of an attention tile's scores: scale, mask, causal, soft-cap).
/// Its own output must not be read, so that it can be computed tile by
/// tile into a fresh destination.
static linalg::GenericOp elementwiseConsumer(linalg::GenericOp op) {
  Value result = op.getResult(0);
  if (!result.hasOneUse())
    return {};
  auto consumer = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!consumer || consumer.getNumDpsInits() != 1 ||
      !consumer.hasPureTensorSemantics() || !consumer.isAllParallelLoops())
    return {};
  OpOperand &use = *result.getUses().begin();
  OpOperand *init = consumer.getDpsInitOperand(0);
  if (consumer.isDpsInit(&use) || consumer.payloadUsesValueFromOperand(init) ||
      !consumer.getMatchingIndexingMap(&use).isIdentity() ||
      !consumer.getMatchingIndexingMap(init).isIdentity() ||
      consumer.getResult(0).getType() != result.getType() ||
      !vectorizesInRegisters(consumer))
    return {};
  return consumer;
}

/// The all-parallel generic that computes `op`'s initial accumulator
/// element by element, if `op` is its only user (the online softmax's
/// rescaling of the output tile by exp(m − m') before P·V adds to it).
static linalg::GenericOp elementwiseInitProducer(linalg::GenericOp op) {
  auto producer = op.getDpsInits()[0].getDefiningOp<linalg::GenericOp>();
  if (!producer || producer->getNumResults() != 1 ||
      !producer->getResult(0).hasOneUse() ||
      !producer.hasPureTensorSemantics() || !producer.isAllParallelLoops() ||
      !producer.getMatchingIndexingMap(producer.getDpsInitOperand(0))
           .isIdentity() ||
      !vectorizesInRegisters(producer))
    return {};
  return producer;
}

/// `op` (an elementwise tile) vectorised at its own rank less its unit
/// dims, where the vectoriser takes it; otherwise left as it is (it then
/// becomes loops).
static void vectorizeElementwiseTile(RewriterBase &rewriter, Operation *op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    rewriter.setInsertionPoint(fill);
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, fill);
    if (failed(generic))
      return;
    op = *generic;
  }
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return;
  linalg::ControlDropUnitDims drop;
  drop.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  rewriter.setInsertionPoint(generic);
  if (FailureOr<linalg::DropUnitDimsResult> reduced =
          linalg::dropUnitDims(rewriter, generic, drop);
      succeeded(reduced)) {
    rewriter.replaceOp(generic, reduced->replacements);
    generic = cast<linalg::GenericOp>(reduced->resultOp);
  }
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::VectorizationResult> vectorized =
      linalg::vectorize(rewriter, generic);
  if (succeeded(vectorized))
    rewriter.replaceOp(generic, vectorized->replacements);
}

/// Whether tiling `op` by its register blocks gives whole blocks of its
/// result: static, non-empty loops whose rows and columns the block
/// divides, and an output read through a projected permutation.
static bool blocksDivide(linalg::GenericOp op, const RegisterBlock &block) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(
          ranges,
          [](int64_t r) { return ShapedType::isDynamic(r) || r <= 0; }) ||
      ranges[block.rowDim] % block.rows || ranges[block.colDim] % block.columns)
    return false;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  return outMap.isProjectedPermutation();
}

/// Tile sizes over the result's dims (the consumer's loops, `overResult`,
/// or the contraction's own with its reductions untiled): one block of
/// rows × columns, one step of every other dim.
static SmallVector<int64_t> neighbourTileSizes(linalg::GenericOp op,
                                               const RegisterBlock &block,
                                               bool overResult) {
  SmallVector<int64_t> sizes;
  if (overResult) {
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    for (AffineExpr e : outMap.getResults()) {
      unsigned dim = cast<AffineDimExpr>(e).getPosition();
      sizes.push_back(dim == block.rowDim   ? block.rows
                      : dim == block.colDim ? block.columns
                                            : 1);
    }
  } else {
    for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
      sizes.push_back(linalg::isReductionIterator(it) ? 0
                      : i == block.rowDim             ? block.rows
                      : i == block.colDim             ? block.columns
                                                      : 1);
  }
  return sizes;
}

/// `root` tiled by `sizes` with the producers in `fusable` fused into each
/// tile, its uses replaced and the untiled ops erased. Only the neighbours
/// are fused: never the packs of the operands, which would then be redone
/// for every block.
static FailureOr<scf::SCFTileAndFuseResult>
tileAndFuseNeighbours(RewriterBase &rewriter, Operation *root,
                      ArrayRef<int64_t> sizes,
                      const llvm::SmallPtrSetImpl<Operation *> &fusable) {
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
      .setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (!fusable.contains(producer.getOwner()))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(root), options);
  if (failed(fused))
    return failure();
  for (OpResult result : root->getResults())
    if (Value replacement = fused->replacements.lookup(result))
      rewriter.replaceAllUsesWith(result, replacement);
  // The untiled ops, users before producers.
  SmallVector<Operation *> untiled = {root};
  llvm::append_range(untiled, fused->fusedProducers);
  for (Operation *dead : untiled)
    if (dead->use_empty())
      rewriter.eraseOp(dead);
  return fused;
}

/// The contraction's block (the first of `tiles` with a reduction) into the
/// register-block loop; its neighbours' blocks into vector ops on the same
/// registers.
static LogicalResult vectorizeBlockTiles(RewriterBase &rewriter,
                                         ArrayRef<Operation *> tiles,
                                         const RegisterBlock &block) {
  linalg::GenericOp contractionTile;
  SmallVector<Operation *> neighbourTiles;
  for (Operation *tiled : tiles) {
    auto generic = dyn_cast<linalg::GenericOp>(tiled);
    if (generic && generic.getNumReductionLoops() > 0 && !contractionTile)
      contractionTile = generic;
    else
      neighbourTiles.push_back(tiled);
  }
  if (!contractionTile ||
      failed(tileIntoRegisterBlocks(rewriter, contractionTile, block)))
    return failure();
  for (Operation *tile : neighbourTiles)
    vectorizeElementwiseTile(rewriter, tile);
  return success();
}

/// `op` (static, packed) with its elementwise neighbours in one loop nest
/// over register blocks: the consumer of its result (elementwiseConsumer)
/// and the producer of its accumulator (elementwiseInitProducer, or the
/// fill that zeroes it) are computed per block, on the accumulator's
/// registers, instead of in passes of their own over the whole result
/// through memory. False, leaving the IR as it was, where `op` has no such
/// neighbour or its blocks do not divide its extents.
FailureOr<bool> contractions::tileWithElementwiseNeighbours(
    RewriterBase &rewriter, linalg::GenericOp op, const RegisterBlock &block) {
  linalg::GenericOp consumer = elementwiseConsumer(op);
  linalg::GenericOp initProducer = elementwiseInitProducer(op);
  if (!consumer && !initProducer)
    return false;
  if (!blocksDivide(op, block))
    return false;
  SmallVector<int64_t> sizes =
      neighbourTileSizes(op, block, /*overResult=*/bool(consumer));
  Operation *fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  llvm::SmallPtrSet<Operation *, 4> fusable = {op.getOperation()};
  if (initProducer)
    fusable.insert(initProducer);
  if (fill)
    fusable.insert(fill);
  Operation *root = consumer ? consumer.getOperation() : op.getOperation();
  FailureOr<scf::SCFTileAndFuseResult> fused =
      tileAndFuseNeighbours(rewriter, root, sizes, fusable);
  if (failed(fused))
    return false;
  if (failed(vectorizeBlockTiles(rewriter,
                                 fused->tiledAndFusedOps.getArrayRef(), block)))
    return failure();
  return true;
}

namespace {
/// A math op on vectors of one row ([1, ..., 1, n], what unrolling a
/// block's math row by row leaves) as the same op on 1-D vectors: the LLVM
/// lowering of some math ops (math.absi) takes 1-D vectors only.
struct MathOnOneRow : RewritePattern {
  MathOnOneRow(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<math::MathDialect>(op->getDialect()) || op->getNumResults() != 1 ||
        op->getNumRegions() != 0)
      return failure();
    auto type = dyn_cast<VectorType>(op->getResult(0).getType());
    auto sameRow = [&](Type t) {
      auto v = dyn_cast<VectorType>(t);
      return v && v.getShape() == type.getShape() && !v.isScalable();
    };
    if (!type || type.getRank() < 2 || !sameRow(type) ||
        llvm::any_of(type.getShape().drop_back(),
                     [](int64_t d) { return d != 1; }) ||
        !llvm::all_of(op->getOperandTypes(), sameRow))
      return failure();
    Location loc = op->getLoc();
    SmallVector<Value> rows;
    for (Value operand : op->getOperands()) {
      auto t = cast<VectorType>(operand.getType());
      rows.push_back(vector::ShapeCastOp::create(
          rewriter, loc,
          VectorType::get({t.getShape().back()}, t.getElementType()), operand));
    }
    OperationState state(loc, op->getName().getStringRef(), rows,
                         TypeRange{VectorType::get({type.getShape().back()},
                                                   type.getElementType())},
                         op->getAttrs());
    Operation *row = rewriter.create(state);
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, type,
                                                     row->getResult(0));
    return success();
  }
};
} // namespace

void contractions::populateMathByRowPatterns(RewritePatternSet &patterns) {
  // The neighbours' math on a block, one row at a time (MathOnOneRow):
  // the LLVM lowering of some math ops (math.absi, ALiBi's distance)
  // takes 1-D vectors only.
  vector::populateVectorUnrollPatterns(
      patterns,
      vector::UnrollVectorOptions()
          .setFilterConstraint([](Operation *op) {
            auto type = op->getNumResults() == 1
                            ? dyn_cast<VectorType>(op->getResult(0).getType())
                            : VectorType();
            return success(isa<math::MathDialect>(op->getDialect()) && type &&
                           type.getRank() > 1);
          })
          .setNativeShapeFn(
              [](Operation *op) -> std::optional<SmallVector<int64_t>> {
                auto type = cast<VectorType>(op->getResult(0).getType());
                SmallVector<int64_t> row(type.getRank(), 1);
                row.back() = type.getShape().back();
                return row;
              }));
  patterns.add<MathOnOneRow>(patterns.getContext());
}
