//===- LaneSumContractions.cpp - reductions with lanes apart in registers -===//
//
// A reduction that reads all its inputs along their innermost dim (a decode
// tile's scores over keys rotated inside the reduction, a one-row product's
// dot products) as register blocks of lane sums: each output keeps a
// register of partial sums, one per lane, across the reduction's steps, and
// a block's registers are added up at the end by a butterfly of shuffles
// (populateLaneReductionPatterns) instead of one output at a time.
//
//===----------------------------------------------------------------------===//

#include "ContractionStrategies.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::contractions;

/// Tiles `total` (the lane sum of `partial`, whose lanes a fill zeroes) by
/// `sizes` into loops of `loopType`, with `partial` and that fill fused
/// into each tile (only they: the inputs, an activation's norm say, stay
/// computed once, outside), and replaces `total`. Returns the tiled ops.
static FailureOr<SmallVector<Operation *>>
tileLaneSum(RewriterBase &rewriter, linalg::GenericOp total,
            linalg::GenericOp partial, ArrayRef<int64_t> sizes,
            scf::SCFTilingOptions::LoopType loopType) {
  Operation *lanesFill = partial.getDpsInits()[0].getDefiningOp();
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(loopType).setTileSizes(
      getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        Operation *owner = producer.getOwner();
        if (owner == partial.getOperation() || owner == lanesFill)
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  rewriter.setInsertionPoint(total);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(total.getOperation()), options);
  if (failed(fused))
    return failure();
  rewriter.replaceOp(total, fused->replacements.lookup(total.getResult(0)));
  for (Operation *dead : {partial.getOperation(), lanesFill})
    if (dead && dead->use_empty())
      rewriter.eraseOp(dead);
  return llvm::to_vector(fused->tiledAndFusedOps);
}

/// `input` of `op` with its innermost dim (the reduction) split into
/// [steps, lanes], and the map that reads it at (step, lane) over the loops
/// (old loops, r now the step, then the lane). A dim read at a constant (a
/// member of a pair view) is sliced off: the vectoriser takes reads through
/// projected permutations only.
static std::pair<Value, AffineMap>
splitIntoSteps(RewriterBase &rewriter, linalg::GenericOp op, OpOperand *input,
               int64_t steps, int64_t lanes) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  unsigned numLoops = op.getNumLoops();
  AffineExpr lane = getAffineDimExpr(numLoops, ctx);
  Value value = input->get();
  auto type = cast<RankedTensorType>(value.getType());
  AffineMap map = op.getMatchingIndexingMap(input);
  SmallVector<OpFoldResult> offsets, sizes;
  SmallVector<int64_t> kept;
  SmallVector<AffineExpr> exprs;
  for (auto [dim, e] : llvm::enumerate(map.getResults())) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    offsets.push_back(rewriter.getIndexAttr(c ? c.getValue() : 0));
    sizes.push_back(rewriter.getIndexAttr(c ? 1 : type.getDimSize(dim)));
    if (!c) {
      kept.push_back(type.getDimSize(dim));
      exprs.push_back(e);
    }
  }
  if (kept.size() != static_cast<size_t>(type.getRank())) {
    auto sliceType = RankedTensorType::get(kept, type.getElementType());
    value = tensor::ExtractSliceOp::create(
        rewriter, loc, sliceType, value, offsets, sizes,
        SmallVector<OpFoldResult>(type.getRank(), rewriter.getIndexAttr(1)));
    type = sliceType;
  }
  SmallVector<int64_t> shape(type.getShape().drop_back());
  shape.append({steps, lanes});
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i + 1 < type.getRank(); ++i)
    groups.push_back({i});
  groups.push_back({type.getRank() - 1, type.getRank()});
  Value split = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()), value,
      groups);
  exprs.push_back(lane);
  return {split, AffineMap::get(numLoops + 1, 0, exprs, ctx)};
}

/// The partial sums of `op`, lanes[..., l] += f(x[..., step, l]) into a
/// fresh zeroed tensor of the output's shape × `form.lanes`: `op`'s own body
/// over its inputs split into steps (splitIntoSteps), so that each output
/// keeps its lanes apart across the steps.
static linalg::GenericOp buildPartialSums(RewriterBase &rewriter,
                                          linalg::GenericOp op,
                                          const LaneSumForm &form) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Type f32 = rewriter.getF32Type();
  unsigned numLoops = op.getNumLoops();
  int64_t lanes = form.lanes, steps = form.extent / lanes;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto [split, map] = splitIntoSteps(rewriter, op, input, steps, lanes);
    inputs.push_back(split);
    maps.push_back(map);
  }
  auto outType = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  SmallVector<int64_t> lanesShape(outType.getShape());
  lanesShape.push_back(lanes);
  Value zero =
      arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32));
  Value lanesInit =
      linalg::FillOp::create(
          rewriter, loc, zero,
          ValueRange{tensor::EmptyOp::create(rewriter, loc, lanesShape, f32)})
          .getResult(0);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<AffineExpr> lanesExprs(outMap.getResults());
  lanesExprs.push_back(getAffineDimExpr(numLoops, ctx));
  maps.push_back(AffineMap::get(numLoops + 1, 0, lanesExprs, ctx));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::parallel);
  return linalg::GenericOp::create(
      rewriter, loc, lanesInit.getType(), inputs, ValueRange{lanesInit}, maps,
      iterators, [&](OpBuilder &b, Location, ValueRange args) {
        IRMapping mapping;
        mapping.map(op.getBlock()->getArguments(), args);
        for (Operation &inner : op.getBlock()->without_terminator())
          b.clone(inner, mapping);
        Operation *yield = op.getBlock()->getTerminator();
        b.clone(*yield, mapping);
      });
}

/// out[...] += Σ_lane lanes[..., lane] (`partial`'s lanes into `op`'s
/// output): loops (output dims, lane).
static linalg::GenericOp buildLaneTotal(RewriterBase &rewriter,
                                        linalg::GenericOp op,
                                        linalg::GenericOp partial) {
  MLIRContext *ctx = rewriter.getContext();
  auto outType = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  unsigned outRank = outType.getRank();
  SmallVector<utils::IteratorType> totalIterators(
      outRank, utils::IteratorType::parallel);
  totalIterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
      rewriter, op.getLoc(), op.getResultTypes(), partial.getResult(0),
      op.getDpsInits()[0],
      SmallVector<AffineMap>{
          AffineMap::getMultiDimIdentityMap(outRank + 1, ctx),
          AffineMap::getMultiDimIdentityMap(outRank + 1, ctx)
              .getMajorSubMap(outRank)},
      totalIterators, [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(
            b, l,
            ValueRange{
                arith::AddFOp::create(b, l, args[1], args[0]).getResult()});
      });
}

/// Tile sizes of the output's blocks over the lane total's loops (output
/// dims of `outType`, read at `outMap`, then the lanes, whole): up to
/// `rows` rows × a few columns, as many outputs as a step has lanes (one
/// lane reduction adds them all up at once); unit dims untiled.
static SmallVector<int64_t> laneSumBlockSizes(RankedTensorType outType,
                                              AffineMap outMap,
                                              const LaneSumForm &form,
                                              int64_t rows) {
  MLIRContext *ctx = outMap.getContext();
  unsigned outRank = outType.getRank();
  auto outPosition = [&](unsigned loopDim) {
    return *outMap.getResultPosition(getAffineDimExpr(loopDim, ctx));
  };
  SmallVector<int64_t> blockSizes(outRank + 1, 1);
  blockSizes.back() = 0; // the lanes, whole
  int64_t blockRows = 1;
  if (form.rowDim) {
    blockRows = largestDivisor(outType.getDimSize(outPosition(*form.rowDim)),
                               {rows, 4, 2, 1})
                    .value_or(1);
    blockSizes[outPosition(*form.rowDim)] = blockRows;
  }
  int64_t maxColumns = std::max<int64_t>(1, form.lanes / blockRows);
  blockSizes[outPosition(form.colDim)] =
      largestDivisor(outType.getDimSize(outPosition(form.colDim)),
                     {maxColumns, 8, 4, 2, 1})
          .value_or(1);
  for (auto [dim, size] : llvm::enumerate(blockSizes))
    if (dim < outRank && outType.getDimSize(dim) == 1)
      size = 0;
  return blockSizes;
}

namespace {
/// The ops of one block of lane sums: the partial sums, their total into
/// the output and the fill that zeroes the lanes (null where the block has
/// none).
struct LaneSumBlock {
  linalg::GenericOp partial, total;
  linalg::FillOp fill;
};
} // namespace

/// `whole` tiled into blocks of `blockSizes` (tileLaneSum), or as it is
/// where no dim is tiled (an output of unit dims alone is one block
/// already): the ops of the block.
static FailureOr<LaneSumBlock>
tileIntoLaneSumBlocks(RewriterBase &rewriter, LaneSumBlock whole,
                      ArrayRef<int64_t> blockSizes) {
  if (llvm::none_of(blockSizes, [](int64_t size) { return size != 0; }))
    return whole;
  unsigned partialLoops = whole.partial.getNumLoops();
  FailureOr<SmallVector<Operation *>> tiled =
      tileLaneSum(rewriter, whole.total, whole.partial, blockSizes,
                  scf::SCFTilingOptions::LoopType::ForOp);
  if (failed(tiled))
    return failure();
  LaneSumBlock block;
  for (Operation *op : *tiled) {
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      block.fill = fill;
    else if (auto generic = dyn_cast<linalg::GenericOp>(op))
      (generic.getNumLoops() == partialLoops ? block.partial : block.total) =
          generic;
  }
  if (!block.partial || !block.total)
    return failure();
  return block;
}

/// In `block`: the steps (loop `r` of the partial sums) as a loop around one
/// vectorised step (its accumulators hoisted into registers later), the
/// fill and the final sum vectorised on the block.
static LogicalResult vectorizeLaneSumBlock(RewriterBase &rewriter,
                                           LaneSumBlock block, unsigned r) {
  SmallVector<int64_t> stepSizes(block.partial.getNumLoops(), 0);
  stepSizes[r] = 1;
  FailureOr<scf::SCFTilingResult> stepLoop =
      tileWith(rewriter, block.partial, stepSizes,
               scf::SCFTilingOptions::LoopType::ForOp);
  if (failed(stepLoop))
    return failure();
  // The step's tile without its unit dims, the step's reduction among them:
  // an elementwise update of the lanes, which vectorises to the body's own
  // ops (their fast-math flags kept, so that LLVM fuses the products into
  // FMAs) rather than to a vector.multi_reduction over one step.
  Operation *step = tileOf(*stepLoop);
  linalg::ControlDropUnitDims drop;
  drop.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  rewriter.setInsertionPoint(step);
  FailureOr<linalg::DropUnitDimsResult> reduced =
      linalg::dropUnitDims(rewriter, cast<linalg::GenericOp>(step), drop);
  if (succeeded(reduced)) {
    rewriter.replaceOp(step, reduced->replacements);
    step = reduced->resultOp;
  }
  // A body the vectoriser does not take (a table looked up per element)
  // stays a generic in the same loops: correct, as scalar code.
  SmallVector<Operation *> toVectorize = {step, block.total};
  if (block.fill)
    toVectorize.push_back(block.fill);
  for (Operation *tile : toVectorize) {
    rewriter.setInsertionPoint(tile);
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, tile);
    if (succeeded(vectorized))
      rewriter.replaceOp(tile, vectorized->replacements);
  }
  for (LoopLikeOpInterface loop : stepLoop->loops)
    loop->setAttr(kRegisterBlockLoop, rewriter.getUnitAttr());
  return success();
}

/// `op` (matchLaneSum's form) as register blocks of lane sums: the
/// reduction split into steps of L lanes, each output of a block keeping its
/// L lanes apart in a register across the steps (lanes[..., l] +=
/// f(x[..., step, l])), then the lanes added up and into the output, per
/// block, on the block's registers. A block holds up to
/// `rows` rows × a few columns, as many outputs as a step has lanes (16
/// accumulators with AVX-512): each input vector loaded is then shared by a
/// block's rows or columns, f is computed once per loaded vector (rows
/// share what they do not read), and the block's lanes add up by a
/// butterfly of shuffles across its registers (populateLaneReductionPatterns).
LogicalResult contractions::rewriteAsLaneSums(RewriterBase &rewriter,
                                              linalg::GenericOp op,
                                              const LaneSumForm &form,
                                              int64_t rows) {
  rewriter.setInsertionPoint(op);
  unsigned r = op.getNumLoops() - 1;
  auto outType = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  linalg::GenericOp partial = buildPartialSums(rewriter, op, form);
  linalg::GenericOp total = buildLaneTotal(rewriter, op, partial);
  rewriter.replaceOp(op, total.getResult(0));

  // Blocks of the output: rows × columns, the partial sums and the fill of
  // their lanes fused into each.
  auto lanesFill =
      cast<linalg::FillOp>(partial.getDpsInits()[0].getDefiningOp());
  FailureOr<LaneSumBlock> block =
      tileIntoLaneSumBlocks(rewriter, {partial, total, lanesFill},
                            laneSumBlockSizes(outType, outMap, form, rows));
  if (failed(block))
    return failure();
  return vectorizeLaneSumBlock(rewriter, *block, r);
}

namespace {
/// A step of a lane sum, acc + a·b or acc + (a·b + c·d) on vectors, as
/// FMAs into the accumulator: fma(a, b, acc), fma(c, d, fma(a, b, acc)).
/// The products carry the contraction's `contract` (and, for the pair,
/// `reassoc`) flags; the add into the accumulator is what lowering the
/// vectoriser's vector.multi_reduction leaves, which drops the flags of the
/// body it came from (out + term, flagged alike). LLVM would otherwise keep
/// a multiply and an add per product.
struct LaneSumStepToFMAs : OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::AddFOp op,
                                PatternRewriter &rewriter) const override {
    auto allows = [](Operation *o, arith::FastMathFlags flags) {
      auto fmf = cast<arith::ArithFastMathInterface>(o).getFastMathFlagsAttr();
      return fmf && bitEnumContainsAll(fmf.getValue(), flags);
    };
    auto product = [&](Value v, arith::FastMathFlags flags) {
      auto mul = v.getDefiningOp<arith::MulFOp>();
      return mul && mul->hasOneUse() && allows(mul, flags) ? mul
                                                           : arith::MulFOp();
    };
    if (!isa<VectorType>(op.getType()))
      return failure();
    Location loc = op.getLoc();
    for (unsigned side : {0u, 1u}) {
      Value term = op->getOperand(side), acc = op->getOperand(1 - side);
      if (arith::MulFOp mul = product(term, arith::FastMathFlags::contract)) {
        rewriter.replaceOpWithNewOp<vector::FMAOp>(op, mul.getLhs(),
                                                   mul.getRhs(), acc);
        return success();
      }
      auto both =
          arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;
      auto pair = term.getDefiningOp<arith::AddFOp>();
      if (!pair || !pair->hasOneUse() || !allows(pair, both))
        continue;
      arith::MulFOp lhs = product(pair.getLhs(), both);
      arith::MulFOp rhs = product(pair.getRhs(), both);
      if (!lhs || !rhs)
        continue;
      Value first =
          vector::FMAOp::create(rewriter, loc, lhs.getLhs(), lhs.getRhs(), acc);
      rewriter.replaceOpWithNewOp<vector::FMAOp>(op, rhs.getLhs(), rhs.getRhs(),
                                                 first);
      return success();
    }
    return failure();
  }
};
} // namespace

void contractions::populateLaneSumStepPatterns(RewritePatternSet &patterns) {
  patterns.add<LaneSumStepToFMAs>(patterns.getContext());
}
