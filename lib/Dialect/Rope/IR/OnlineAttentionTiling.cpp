//===- OnlineAttentionTiling.cpp - tiling and split-K of online attention -===//
//
// TilingInterface and PartialReductionOpInterface of rope.online_attention.
// The iteration domain is (b, kv head, group, query, key, value dim); every
// operand is a projection of it, so a tile of the domain is a slice of each
// operand along the dims it has (a static 1 of a mask broadcasts and is kept
// whole). Tiles along the keys reduce into the same (acc, max, sum) state;
// split-K gives each key range a fresh state and merges them exactly.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include <limits>

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

namespace {

/// For each dim of an operand, the domain dim it is indexed by (none: whole).
using DimMap = SmallVector<std::optional<unsigned>>;

constexpr unsigned kB = OnlineAttentionOp::kBatchDim,
                   kKH = OnlineAttentionOp::kKvHeadDim,
                   kG = OnlineAttentionOp::kGroupDim,
                   kI = OnlineAttentionOp::kQueryDim,
                   kJ = OnlineAttentionOp::kKeyDim,
                   kE = OnlineAttentionOp::kValueDim;
constexpr std::nullopt_t kWhole = std::nullopt;

/// Positions ([S] / [B, S]) and tables ([S, h] / [B, S, h]).
DimMap sequenceMap(Value t, unsigned seqDim, bool table) {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  DimMap map;
  if (rank == (table ? 3 : 2))
    map.push_back(kB);
  map.push_back(seqDim);
  if (table)
    map.push_back(kWhole);
  return map;
}

DimMap resultMap(unsigned resultNumber) {
  if (resultNumber == 0)
    return {kB, kKH, kG, kI, kE};
  return {kB, kKH, kG, kI};
}

/// The dim maps of the inputs (not the outs), in operand order.
SmallVector<DimMap> inputDimMaps(OnlineAttentionOp op) {
  SmallVector<DimMap> maps = {{kB, kKH, kG, kI, kWhole},
                              {kB, kKH, kJ, kWhole},
                              {kB, kKH, kJ, kE}};
  if (Value mask = op.getMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    DimMap map;
    unsigned dims[] = {kB, kKH, kG, kI, kJ};
    for (int64_t i = 0; i < 5; ++i)
      map.push_back(type.getDimSize(i) == 1 ? DimMap::value_type() : dims[i]);
    maps.push_back(map);
  }
  if (op.getQueryPositions()) {
    maps.push_back(sequenceMap(op.getQueryPositions(), kI, false));
    maps.push_back(sequenceMap(op.getKeyPositions(), kJ, false));
  }
  if (op.getQueryCos()) {
    maps.push_back(sequenceMap(op.getQueryCos(), kI, true));
    maps.push_back(sequenceMap(op.getQuerySin(), kI, true));
  }
  if (op.getKeyCos()) {
    maps.push_back(sequenceMap(op.getKeyCos(), kJ, true));
    maps.push_back(sequenceMap(op.getKeySin(), kJ, true));
  }
  if (op.getAlibiSlopes())
    maps.push_back({kKH, kG});
  if (op.getRelativeBias())
    maps.push_back({kWhole, kKH, kG});
  return maps;
}

/// The slice of `t` for the domain tile (offsets, sizes); `split` is the
/// leading (offset, size 1) dim of a split-K partial state, which the slice
/// drops. (Leading, so that the dropped unit dim is the first one whatever
/// other unit dims the state has.)
Value sliceOperand(OpBuilder &b, Location loc, Value t, const DimMap &map,
                   ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
                   SmallVectorImpl<Operation *> &slices,
                   OpFoldResult split = nullptr) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<OpFoldResult> sliceOffsets, sliceSizes,
      fullSizes = tensor::getMixedSizes(b, loc, t);
  SmallVector<int64_t> shape;
  if (split) {
    sliceOffsets.push_back(split);
    sliceSizes.push_back(b.getIndexAttr(1));
  }
  for (auto [i, dim] : llvm::enumerate(map)) {
    sliceOffsets.push_back(dim ? offsets[*dim] : b.getIndexAttr(0));
    sliceSizes.push_back(dim ? sizes[*dim] : fullSizes[i + (split ? 1 : 0)]);
    shape.push_back(getConstantIntValue(sliceSizes.back())
                        .value_or(ShapedType::kDynamic));
  }
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  auto slice = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t,
      sliceOffsets, sliceSizes, strides);
  slices.push_back(slice);
  return slice;
}

/// Clones `op` onto sliced inputs and the given outs.
Operation *cloneOnTile(OpBuilder &b, OnlineAttentionOp op,
                       ArrayRef<OpFoldResult> offsets,
                       ArrayRef<OpFoldResult> sizes, ValueRange outs,
                       SmallVectorImpl<Operation *> &slices) {
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  for (auto [input, map] : llvm::zip_equal(op.getDpsInputs(), inputDimMaps(op)))
    operands.push_back(sliceOperand(b, loc, input, map, offsets, sizes, slices));
  operands.append(outs.begin(), outs.end());
  return mlir::clone(b, op, ValueRange(outs).getTypes(), operands);
}

/// Domain sizes of the whole op.
SmallVector<OpFoldResult> domainSizes(OpBuilder &b, OnlineAttentionOp op) {
  Location loc = op.getLoc();
  auto size = [&](Value v, int64_t dim) {
    return tensor::getMixedSize(b, loc, v, dim);
  };
  return {size(op.getQuery(), 0), size(op.getQuery(), 1),
          size(op.getQuery(), 2), size(op.getQuery(), 3),
          size(op.getKey(), 2),   size(op.getValue(), 3)};
}

} // namespace

//===----------------------------------------------------------------------===//
// TilingInterface
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> OnlineAttentionOp::getLoopIteratorTypes() {
  SmallVector<utils::IteratorType> types(kNumLoops, utils::IteratorType::parallel);
  types[kKeyDim] = utils::IteratorType::reduction;
  return types;
}

SmallVector<Range> OnlineAttentionOp::getIterationDomain(OpBuilder &b) {
  SmallVector<Range> domain;
  for (OpFoldResult size : domainSizes(b, *this))
    domain.push_back(Range{b.getIndexAttr(0), size, b.getIndexAttr(1)});
  return domain;
}

FailureOr<TilingResult>
OnlineAttentionOp::getTiledImplementation(OpBuilder &b,
                                          ArrayRef<OpFoldResult> offsets,
                                          ArrayRef<OpFoldResult> sizes) {
  SmallVector<Operation *> slices;
  SmallVector<Value> outs;
  for (auto [i, init] : llvm::enumerate(getOutputs()))
    outs.push_back(
        sliceOperand(b, getLoc(), init, resultMap(i), offsets, sizes, slices));
  Operation *tiled = cloneOnTile(b, *this, offsets, sizes, outs, slices);
  return TilingResult{{tiled}, SmallVector<Value>(tiled->getResults()), slices};
}

LogicalResult OnlineAttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.clear();
  resultSizes.clear();
  for (std::optional<unsigned> dim : resultMap(resultNumber)) {
    resultOffsets.push_back(offsets[*dim]);
    resultSizes.push_back(sizes[*dim]);
  }
  return success();
}

FailureOr<TilingResult> OnlineAttentionOp::generateResultTileValue(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes) {
  // A result tile needs every key (and, for the max and sum, every value
  // dim): those dims stay whole.
  SmallVector<OpFoldResult> full = domainSizes(b, *this);
  SmallVector<OpFoldResult> domainOffsets(kNumLoops, b.getIndexAttr(0));
  SmallVector<OpFoldResult> domainTileSizes(full);
  for (auto [i, dim] : llvm::enumerate(resultMap(resultNumber))) {
    domainOffsets[*dim] = offsets[i];
    domainTileSizes[*dim] = sizes[i];
  }
  return getTiledImplementation(b, domainOffsets, domainTileSizes);
}

//===----------------------------------------------------------------------===//
// PartialReductionOpInterface (split-K)
//===----------------------------------------------------------------------===//

/// Only the key dim is a reduction; split-K runs the splits as parallel
/// loop iterations, each folding its keys into a fresh state.
static bool isSplitK(ReductionTilingStrategy strategy,
                     const SetVector<unsigned> &reductionDims) {
  return strategy == ReductionTilingStrategy::PartialReductionOuterParallel &&
         reductionDims.size() == 1 &&
         reductionDims.front() == OnlineAttentionOp::kKeyDim;
}

FailureOr<SmallVector<Value>>
OnlineAttentionOp::generateInitialTensorForPartialReduction(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
    const SetVector<unsigned> &reductionDims) {
  if (reductionDims.size() != 1 || reductionDims.front() != kKeyDim)
    return emitOpError("splits only its key dim");
  // Each partial state carries one more dim, the split, first.
  SmallVector<Value> inits;
  double initial[] = {0.0, -std::numeric_limits<double>::infinity(), 0.0};
  for (unsigned r = 0; r < 3; ++r) {
    SmallVector<OpFoldResult> shape = {sizes[kKeyDim]};
    for (std::optional<unsigned> dim : resultMap(r))
      shape.push_back(sizes[*dim]);
    inits.push_back(filledTensor(b, loc, shape, b.getF32Type(),
                                 b.getF32FloatAttr(initial[r])));
  }
  return inits;
}

FailureOr<TilingResult> OnlineAttentionOp::tileToPartialReduction(
    OpBuilder &b, Location loc, ReductionTilingStrategy strategy,
    ValueRange init, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, const SetVector<unsigned> &reductionDims,
    ArrayRef<OpFoldResult> splitReductionIvs) {
  if (!isSplitK(strategy, reductionDims))
    return emitOpError("splits its keys only as parallel partial states "
                       "(PartialReductionOuterParallel)");
  SmallVector<Operation *> slices;
  SmallVector<Value> outs;
  for (auto [i, partial] : llvm::enumerate(init))
    outs.push_back(sliceOperand(b, loc, partial, resultMap(i), offsets, sizes,
                                slices, splitReductionIvs.front()));
  Operation *tiled = cloneOnTile(b, *this, offsets, sizes, outs, slices);
  return TilingResult{{tiled}, SmallVector<Value>(tiled->getResults()), slices};
}

LogicalResult OnlineAttentionOp::getPartialResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ReductionTilingStrategy strategy,
    ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
    const SetVector<unsigned> &reductionDims,
    ArrayRef<OpFoldResult> splitReductionIvs,
    SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  if (!isSplitK(strategy, reductionDims))
    return failure();
  if (failed(getResultTilePosition(b, resultNumber, offsets, sizes,
                                   resultOffsets, resultSizes)))
    return failure();
  resultOffsets.insert(resultOffsets.begin(), splitReductionIvs.front());
  resultSizes.insert(resultSizes.begin(), b.getIndexAttr(1));
  return success();
}

FailureOr<MergeResult>
OnlineAttentionOp::mergeReductions(OpBuilder &b, Location loc,
                                   ValueRange partialReduce,
                                   const SetVector<unsigned> &reductionDims) {
  // The exact merge of states over disjoint keys, the op's own outs
  // included (they may hold a sink): m = max of all maxima, and each state
  // rescaled by exp(m_s − m) before its sum and accumulator are added.
  MLIRContext *ctx = b.getContext();
  Value accP = partialReduce[0], maxP = partialReduce[1], sumP = partialReduce[2];
  Value acc0 = getAccumulatorInit(), max0 = getMaxInit(), sum0 = getSumInit();
  SmallVector<Operation *> mergeOps;
  // Loops (b, kh, g, i[, e], s): the split s innermost, as a reduction; the
  // partial states index it first.
  AffineMap rows4 = dimsMap(ctx, 4, range(0, 4));
  AffineMap rowsOf5 = dimsMap(ctx, 5, {0, 1, 2, 3});
  AffineMap partialRows = dimsMap(ctx, 5, {4, 0, 1, 2, 3});
  auto generic = [&](Type type, ValueRange ins, Value init,
                     ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iters,
                     function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
    auto op = linalg::GenericOp::create(
        b, loc, type, ins, ValueRange{init}, maps, iters,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          linalg::YieldOp::create(nb, nl, ValueRange{fn(nb, nl, args)});
        });
    mergeOps.push_back(op);
    return op.getResult(0);
  };
  SmallVector<IteratorType> rowsThenSplit = {kPar, kPar, kPar, kPar, kRed};
  Value max = generic(max0.getType(), {maxP}, max0, {partialRows, rowsOf5},
                      rowsThenSplit,
                      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                        return arith::MaximumFOp::create(b, loc, a[0], a[1]);
                      });
  // Σ_s l_s·exp(m_s − m) onto l0·exp(m0 − m).
  auto rescale = [](OpBuilder &b, Location loc, ValueRange a) -> Value {
    return arith::MulFOp::create(b, loc, a[0], buildShiftedExp(b, loc, a[1], a[2]));
  };
  auto addRescaled = [](OpBuilder &b, Location loc, ValueRange a) -> Value {
    Value term =
        arith::MulFOp::create(b, loc, a[0], buildShiftedExp(b, loc, a[1], a[2]));
    return arith::AddFOp::create(b, loc, a[3], term);
  };
  Value sum0Scaled = generic(sum0.getType(), {sum0, max0, max}, sum0,
                             {rows4, rows4, rows4, rows4},
                             {kPar, kPar, kPar, kPar}, rescale);
  Value sum = generic(sum0.getType(), {sumP, maxP, max}, sum0Scaled,
                      {partialRows, partialRows, rowsOf5, rowsOf5},
                      rowsThenSplit, addRescaled);
  // The same for the accumulator, over (b, kh, g, i, e[, s]).
  AffineMap all5 = dimsMap(ctx, 5, range(0, 5));
  Value acc0Scaled = generic(acc0.getType(), {acc0, max0, max}, acc0,
                             {all5, rowsOf5, rowsOf5, all5},
                             {kPar, kPar, kPar, kPar, kPar}, rescale);
  Value acc = generic(
      acc0.getType(), {accP, maxP, max}, acc0Scaled,
      {dimsMap(ctx, 6, {5, 0, 1, 2, 3, 4}), dimsMap(ctx, 6, {5, 0, 1, 2, 3}),
       dimsMap(ctx, 6, {0, 1, 2, 3}), dimsMap(ctx, 6, range(0, 5))},
      {kPar, kPar, kPar, kPar, kPar, kRed}, addRescaled);
  return MergeResult{mergeOps, {acc, max, sum}};
}
