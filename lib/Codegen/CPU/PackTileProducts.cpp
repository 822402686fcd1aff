//===- PackTileProducts.cpp - bf16/f16 matmuls for the matrix engines -----===//
//
// Finds the contractions the target's matrix engine can take (AMX tiles, or
// AVX-512 BF16 dot products), packs B into the VNNI layout both read (a
// weight by a transposition of 32-bit words in registers, B [k, n] by
// upstream linalg.pack, lowered at once), views A and the accumulator in
// rows of 32 (padded where needed), and leaves the product on these marked
// with its engine for --rope-lower-tile-products, split over the cores by
// column panels.
//
//===----------------------------------------------------------------------===//

#include "ContractionStrategies.h"
#include "TileProducts.h"
#include "rope/Codegen/CPU/CpuFeatures.h"
#include "rope/Codegen/CPU/Passes.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEPACKTILEPRODUCTS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::tiles;

/// Column-panel chunks across cores: a few per core keeps the load
/// balanced.
static constexpr int64_t kColumnChunks = contractions::kRowChunks;

namespace {
/// The operands of a contraction C[b..., m, n] += A[b..., m, k] · B, B
/// either [b..., k, n] or, read through a transpose, W [b..., n, k].
struct TileProductForm {
  Value a, b, init;
  bool bTransposed;
  unsigned batchRank;
  /// kTileEngine or kDotEngine.
  StringRef engine;
};
} // namespace

/// The engine of `features` that multiplies `elementType` into f32 on the
/// packed layout: the tiles where it has them, else the dot products; none
/// (the FMAs after widening) where it has neither.
static std::optional<StringRef> engineFor(Type elementType,
                                          const CpuFeatures &features) {
  if (features.hasTileProducts(elementType))
    return StringRef(kTileEngine);
  if (features.hasDotProducts(elementType))
    return StringRef(kDotEngine);
  return std::nullopt;
}

/// `op` as a tile product, if an engine of `features` can compute it.
static std::optional<TileProductForm>
matchTileProduct(linalg::LinalgOp op, const CpuFeatures &features) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op) ||
      op->getParentOfType<LoopLikeOpInterface>() || hasEmptyLoop(op) ||
      op->hasAttr(kTileProduct))
    return std::nullopt;
  Type elementType = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  std::optional<StringRef> engine = engineFor(elementType, features);
  if (elementType != getElementTypeOrSelf(op.getDpsInputs()[1].getType()) ||
      !engine || !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return std::nullopt;
  unsigned m = dims->m[0], n = dims->n[0], k = dims->k[0];
  SmallVector<unsigned> batch(dims->batch.begin(), dims->batch.end());
  // The maps an operand must have: the batch dims, then `tail`.
  MLIRContext *ctx = op.getContext();
  auto expect = [&](std::initializer_list<unsigned> tail) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : batch)
      exprs.push_back(getAffineDimExpr(d, ctx));
    for (unsigned d : tail)
      exprs.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(op.getNumLoops(), 0, exprs, ctx);
  };

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto [b, bMap] =
      contractions::throughTranspose(op.getDpsInputs()[1], maps[1]);
  if (maps[0] != expect({m, k}) || maps[2] != expect({m, n}))
    return std::nullopt;
  bool bTransposed = bMap == expect({n, k});
  if (!bTransposed && bMap != expect({k, n}))
    return std::nullopt;

  // A product of fewer rows than a tile's (a decode step's) is left to the
  // FMA dot products along W's rows (--rope-vectorize-contractions), which
  // read the weight once as stored. A weight is packed with static shapes
  // (A's static batch dims do not make W's static).
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if ((!ShapedType::isDynamic(ranges[m]) && ranges[m] < kBlock) ||
      ShapedType::isDynamic(ranges[k]) || ranges[k] % kBlock ||
      ShapedType::isDynamic(ranges[n]) || ranges[n] % kBlock ||
      llvm::any_of(
          batch,
          [&](unsigned d) { return ShapedType::isDynamic(ranges[d]); }) ||
      (bTransposed && !cast<RankedTensorType>(b.getType()).hasStaticShape()))
    return std::nullopt;
  return TileProductForm{op.getDpsInputs()[0],
                         b,
                         op.getDpsInits()[0],
                         bTransposed,
                         static_cast<unsigned>(batch.size()),
                         *engine};
}

/// `source` packed by linalg.pack (tiles `tiles` of dims `innerDims`, the
/// outer dims in `outerPerm` order, rows past the source zero), lowered at
/// once to upstream's pad, expansion and transpose.
static FailureOr<Value> packAndLower(RewriterBase &rewriter, Location loc,
                                     Value source, ArrayRef<int64_t> innerDims,
                                     ArrayRef<int64_t> tiles,
                                     ArrayRef<int64_t> outerPerm) {
  SmallVector<OpFoldResult> tileSizes =
      getAsIndexOpFoldResult(rewriter.getContext(), tiles);
  Value dest = linalg::PackOp::createDestinationTensor(
      rewriter, loc, source, tileSizes, innerDims, outerPerm);
  Type elementType = getElementTypeOrSelf(source.getType());
  Value zero = arith::ConstantOp::create(rewriter, loc, elementType,
                                         rewriter.getZeroAttr(elementType));
  auto pack = linalg::PackOp::create(rewriter, loc, source, dest, innerDims,
                                     tileSizes, zero, outerPerm);
  FailureOr<linalg::LowerPackResult> lowered =
      linalg::lowerPack(rewriter, pack);
  if (failed(lowered))
    return failure();
  if (lowered->transposeOp)
    return lowered->transposeOp->getResult(0);
  return Value(lowered->expandShapeOp.getResult());
}

/// Rows and k pairs of a block of the weight's pack moved through registers
/// (16 × 16 words of 32 bits: AVX-512's transposition of 16 registers).
static constexpr int64_t kPackBlock = 16;

/// W [b..., N, K] (a frontend's weight, read through the transpose; static)
/// packed into the VNNI column panels [b..., N/32, K/2, 32, 2]: a k pair of
/// one row of W is one 32-bit word, so the pack is a transposition of words
/// ([N/32, 32, K/2] into [N/32, K/2, 32]), done in registers on 16 × 16
/// blocks (16 rows of W read as 16 registers of 32 bf16, transposed as
/// words, written as 16 rows of the panel), the panels split over the
/// cores. linalg.pack, lowered, leaves a transpose of bf16 elements, which
/// LLVM gathers one element at a time (vpinsrw): 27% of a bf16 Llama prefill
/// on AVX-512 BF16 dot products.
static Value packWeightPanels(RewriterBase &rewriter, Location loc, Value w,
                              unsigned batchRank) {
  auto type = cast<RankedTensorType>(w.getType());
  Type element = type.getElementType();
  MLIRContext *ctx = rewriter.getContext();
  ArrayRef<int64_t> batch = type.getShape().take_front(batchRank);
  int64_t n = type.getDimSize(batchRank), k = type.getDimSize(batchRank + 1);
  int64_t panels = n / kBlock;
  auto shaped = [&](ArrayRef<int64_t> tail) {
    SmallVector<int64_t> shape(batch);
    shape.append(tail.begin(), tail.end());
    return RankedTensorType::get(shape, element);
  };
  // W as [b..., N/32, 32, K], its panels' rows; the pack as
  // [b..., N/32, K/2, 64], each row a k pair of the panel's 32 columns.
  SmallVector<ReassociationIndices> rowGroups;
  for (unsigned i = 0; i < batchRank; ++i)
    rowGroups.push_back({i});
  rowGroups.push_back({batchRank, batchRank + 1});
  rowGroups.push_back({batchRank + 2});
  Value rows = tensor::ExpandShapeOp::create(
      rewriter, loc, shaped({panels, kBlock, k}), w, rowGroups);
  Value packed = tensor::EmptyOp::create(
      rewriter, loc, shaped({panels, k / 2, 2 * kBlock}).getShape(), element);

  // One panel (of one batch entry) per iteration of the cores' loop.
  SmallVector<OpFoldResult> extents;
  for (int64_t size : batch)
    extents.push_back(rewriter.getIndexAttr(size));
  extents.push_back(rewriter.getIndexAttr(panels));
  auto forall = scf::ForallOp::create(rewriter, loc, extents,
                                      ValueRange{packed}, std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(forall.getTerminator());
  SmallVector<OpFoldResult> at =
      getAsOpFoldResult(ValueRange(forall.getInductionVars()));
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  auto sliceOf = [&](int64_t rowsOfSlice, int64_t columns) {
    SmallVector<OpFoldResult> offsets(at), sizes(batchRank + 1, one);
    offsets.append({zero, zero});
    sizes.append(
        {rewriter.getIndexAttr(rowsOfSlice), rewriter.getIndexAttr(columns)});
    return std::make_pair(offsets, sizes);
  };
  SmallVector<OpFoldResult> unitStrides(batchRank + 3, one);
  auto [wOffsets, wSizes] = sliceOf(kBlock, k);
  auto panelType = RankedTensorType::get({kBlock, k}, element);
  Value panel = tensor::ExtractSliceOp::create(rewriter, loc, panelType, rows,
                                               wOffsets, wSizes, unitStrides);
  auto [pOffsets, pSizes] = sliceOf(k / 2, 2 * kBlock);
  auto outType = RankedTensorType::get({k / 2, 2 * kBlock}, element);
  Value out = tensor::ExtractSliceOp::create(rewriter, loc, outType,
                                             forall.getRegionIterArgs()[0],
                                             pOffsets, pSizes, unitStrides);

  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  auto words = VectorType::get({kPackBlock}, rewriter.getI32Type());
  auto pairs = VectorType::get({2 * kPackBlock}, element);
  auto block = VectorType::get({kPackBlock, kPackBlock}, rewriter.getI32Type());
  auto steps = scf::ForOp::create(rewriter, loc, index(0), index(k / 2),
                                  index(kPackBlock), ValueRange{out});
  {
    OpBuilder::InsertionGuard bodyGuard(rewriter);
    rewriter.setInsertionPointToStart(steps.getBody());
    Value pair = steps.getInductionVar();
    Value column = arith::MulIOp::create(rewriter, loc, pair, index(2));
    Value acc = steps.getRegionIterArgs()[0];
    for (int64_t half = 0; half < kBlock; half += kPackBlock) {
      // Rows half.. of the panel at k pairs pair..: 16 words each.
      Value words16 = ub::PoisonOp::create(rewriter, loc, block);
      for (int64_t r = 0; r < kPackBlock; ++r) {
        Value row = vector::TransferReadOp::create(
            rewriter, loc, pairs, panel, ValueRange{index(half + r), column},
            /*padding=*/std::nullopt, ArrayRef<bool>{true});
        words16 = vector::InsertOp::create(
            rewriter, loc, vector::BitCastOp::create(rewriter, loc, words, row),
            words16, ArrayRef<int64_t>{r});
      }
      Value moved = vector::TransposeOp::create(rewriter, loc, words16,
                                                ArrayRef<int64_t>{1, 0});
      for (int64_t c = 0; c < kPackBlock; ++c) {
        Value word = vector::ExtractOp::create(rewriter, loc, moved,
                                               ArrayRef<int64_t>{c});
        Value destRow = arith::AddIOp::create(rewriter, loc, pair, index(c));
        acc = vector::TransferWriteOp::create(
                  rewriter, loc,
                  vector::BitCastOp::create(rewriter, loc, pairs, word), acc,
                  ValueRange{destRow, index(2 * half)}, ArrayRef<bool>{true})
                  .getResult();
      }
    }
    scf::YieldOp::create(rewriter, loc, acc);
  }
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, steps.getResult(0),
                                        forall.getRegionIterArgs()[0], pOffsets,
                                        pSizes, unitStrides);
  rewriter.setInsertionPointAfter(forall);
  // [b..., N/32, K/2, 64] as [b..., N/32, K/2, 32, 2].
  SmallVector<ReassociationIndices> pairGroups;
  for (unsigned i = 0; i <= batchRank + 1; ++i)
    pairGroups.push_back({i});
  pairGroups.push_back({batchRank + 2, batchRank + 3});
  return tensor::ExpandShapeOp::create(rewriter, loc,
                                       shaped({panels, k / 2, kBlock, 2}),
                                       forall.getResult(0), pairGroups);
}

/// `value` with each dim i split into [size / ∏inner[i], inner[i]...]
/// (`inner[i]` empty: left as it is; a dynamic size stays dynamic).
static Value splitDims(RewriterBase &rewriter, Location loc, Value value,
                       ArrayRef<SmallVector<int64_t>> inner) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (auto [size, parts] : llvm::zip_equal(type.getShape(), inner)) {
    int64_t innerSize = 1;
    for (int64_t part : parts)
      innerSize *= part;
    ReassociationIndices group = {static_cast<int64_t>(shape.size())};
    shape.push_back(ShapedType::isDynamic(size) ? size : size / innerSize);
    for (int64_t part : parts) {
      group.push_back(static_cast<int64_t>(shape.size()));
      shape.push_back(part);
    }
    groups.push_back(group);
  }
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()), value,
      groups);
}

/// `value` [b..., M, X] with rows past M up to `paddedRows` (a multiple of
/// 32) zero: `value` itself where they are the same.
static Value padRows(RewriterBase &rewriter, Location loc, Value value,
                     OpFoldResult paddedRows, unsigned batchRank) {
  auto type = cast<RankedTensorType>(value.getType());
  std::optional<int64_t> staticRows = getConstantIntValue(paddedRows);
  if (staticRows && *staticRows == type.getDimSize(batchRank))
    return value;
  SmallVector<int64_t> shape(type.getShape());
  shape[batchRank] = staticRows ? *staticRows : ShapedType::kDynamic;
  auto paddedType = RankedTensorType::get(shape, type.getElementType());
  Type elementType = type.getElementType();
  Value zero = arith::ConstantOp::create(rewriter, loc, elementType,
                                         rewriter.getZeroAttr(elementType));
  SmallVector<Value> dynamicSizes;
  if (!staticRows)
    dynamicSizes.push_back(cast<Value>(paddedRows));
  return tensor::createPadHighOp(paddedType, value, zero, /*nofold=*/false, loc,
                                 rewriter, dynamicSizes);
}

/// The accumulator [b..., M, N] as [b..., padded M, N]: a fill of a fresh
/// tensor where it is a fill, else padded with zero rows.
static Value padAccumulator(RewriterBase &rewriter, Location loc, Value init,
                            OpFoldResult paddedRows, unsigned batchRank) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return padRows(rewriter, loc, init, paddedRows, batchRank);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, init);
  sizes[batchRank] = paddedRows;
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, sizes, rewriter.getF32Type());
  return linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)
      .getResult(0);
}

/// The product on the packed operands, marked for
/// --rope-lower-tile-products.
static linalg::GenericOp buildPackedProduct(RewriterBase &rewriter,
                                            Location loc, Value a, Value b,
                                            Value c, unsigned batchRank,
                                            StringRef engine) {
  MLIRContext *ctx = rewriter.getContext();
  unsigned numLoops = batchRank + 7;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> aExprs, bExprs, cExprs;
  for (unsigned i = 0; i < batchRank; ++i) {
    aExprs.push_back(d(i));
    bExprs.push_back(d(i));
    cExprs.push_back(d(i));
  }
  AffineExpr rowPanel = d(batchRank), colPanel = d(batchRank + 1),
             row = d(batchRank + 2), col = d(batchRank + 3),
             kStep = d(batchRank + 4), kPair = d(batchRank + 5),
             pair = d(batchRank + 6);
  aExprs.append({rowPanel, row, kStep, kPair, pair});
  bExprs.append({colPanel, kStep, kPair, col, pair});
  cExprs.append({rowPanel, row, colPanel, col});
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, aExprs, ctx),
                                 AffineMap::get(numLoops, 0, bExprs, ctx),
                                 AffineMap::get(numLoops, 0, cExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  for (unsigned i = numLoops - 3; i < numLoops; ++i)
    iterators[i] = utils::IteratorType::reduction;
  auto product = linalg::GenericOp::create(
      rewriter, loc, c.getType(), ValueRange{a, b}, ValueRange{c}, maps,
      iterators, [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Type f32 = nested.getF32Type();
        Value x = arith::ExtFOp::create(nested, bodyLoc, f32, args[0]);
        Value y = arith::ExtFOp::create(nested, bodyLoc, f32, args[1]);
        Value xy = arith::MulFOp::create(nested, bodyLoc, x, y);
        Value sum = arith::AddFOp::create(nested, bodyLoc, args[2], xy);
        linalg::YieldOp::create(nested, bodyLoc, sum);
      });
  product->setAttr(kTileProduct, rewriter.getStringAttr(engine));
  return product;
}

/// `product` split over the cores by column panels (and batch entries):
/// the value that replaces its result.
static FailureOr<Value> splitOverCores(RewriterBase &rewriter,
                                       linalg::GenericOp product,
                                       unsigned batchRank) {
  SmallVector<int64_t> ranges = product.getStaticLoopRanges();
  int64_t columnPanels = ranges[batchRank + 1];
  SmallVector<int64_t> sizes(ranges.size(), 0);
  for (unsigned i = 0; i < batchRank; ++i)
    sizes[i] = 1;
  sizes[batchRank + 1] = llvm::divideCeil(columnPanels, kColumnChunks);
  if (llvm::all_of(sizes, [&](int64_t s) { return s == 0; }))
    return product.getResult(0);
  FailureOr<scf::SCFTilingResult> tiled = tileWith(
      rewriter, product, sizes, scf::SCFTilingOptions::LoopType::ForallOp);
  if (failed(tiled))
    return failure();
  return tiled->replacements.front();
}

/// `op` (matchTileProduct's `form`) as B's pack, tile views of A and the
/// accumulator (their rows padded), the marked product split over the
/// cores, and its rows back in the op's shape.
static LogicalResult rewriteAsTileProduct(RewriterBase &rewriter,
                                          linalg::LinalgOp op,
                                          const TileProductForm &form) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  int64_t rank = form.batchRank + 2;
  SmallVector<int64_t> batchPerm(form.batchRank);
  for (unsigned i = 0; i < form.batchRank; ++i)
    batchPerm[i] = i;

  // A and the accumulator keep their row-major layout, the rows padded to
  // a multiple of 32 (a tile reads 16 rows at A's own stride): A
  // [b..., M, K] as [b..., ⌈M/32⌉, 32, K/32, 16, 2], C [b..., M, N] as
  // [b..., ⌈M/32⌉, 32, N/32, 32].
  OpFoldResult rows =
      tensor::getMixedSize(rewriter, loc, form.a, form.batchRank);
  AffineExpr m = getAffineSymbolExpr(0, rewriter.getContext());
  OpFoldResult paddedRows = affine::makeComposedFoldedAffineApply(
      rewriter, loc, m.ceilDiv(kBlock) * kBlock, {rows});
  SmallVector<SmallVector<int64_t>> aSplit(rank), cSplit(rank),
      bSplit(rank + 2);
  aSplit[rank - 2] = cSplit[rank - 2] = {kBlock};
  aSplit[rank - 1] = {kBlock / 2, 2};
  cSplit[rank - 1] = {kBlock};
  bSplit[rank - 1] = {kBlock / 2};
  Value a = splitDims(
      rewriter, loc, padRows(rewriter, loc, form.a, paddedRows, form.batchRank),
      aSplit);
  Value c = splitDims(
      rewriter, loc,
      padAccumulator(rewriter, loc, form.init, paddedRows, form.batchRank),
      cSplit);
  // B -> [b..., N/32, K/2, 32, 2] -> split K/2 into [K/32, 16]: a weight
  // W [b..., N, K] by the transposition of words; B [b..., K, N] by
  // linalg.pack (k pairs innermost, its outer dims permuted), lowered.
  FailureOr<Value> bPacked;
  if (form.bTransposed) {
    bPacked = packWeightPanels(rewriter, loc, form.b, form.batchRank);
  } else {
    SmallVector<int64_t> bPerm = batchPerm;
    bPerm.append({rank - 1, rank - 2});
    bPacked = packAndLower(rewriter, loc, form.b, {rank - 1, rank - 2},
                           {kBlock, 2}, bPerm);
  }
  if (failed(bPacked))
    return failure();
  Value b = splitDims(rewriter, loc, *bPacked, bSplit);

  linalg::GenericOp product =
      buildPackedProduct(rewriter, loc, a, b, c, form.batchRank, form.engine);
  FailureOr<Value> productResult =
      splitOverCores(rewriter, product, form.batchRank);
  if (failed(productResult))
    return failure();
  rewriter.setInsertionPoint(op);

  // The product's rows back in the op's shape: the padded rows dropped.
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < form.batchRank; ++i)
    groups.push_back({i});
  groups.push_back({rank - 2, rank - 1});
  groups.push_back({rank, rank + 1});
  Value result =
      tensor::CollapseShapeOp::create(rewriter, loc, *productResult, groups);
  std::optional<int64_t> staticRows = getConstantIntValue(rows);
  if (!staticRows || *staticRows % kBlock) {
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        strides(rank, rewriter.getIndexAttr(1));
    result = tensor::ExtractSliceOp::create(
        rewriter, loc, cast<RankedTensorType>(form.init.getType()), result,
        offsets, tensor::getMixedSizes(rewriter, loc, form.init), strides);
  }
  rewriter.replaceOp(op, result);
  return success();
}

namespace {
struct RopePackTileProductsPass
    : public rope::impl::RopePackTileProductsBase<RopePackTileProductsPass> {
  using RopePackTileProductsBase::RopePackTileProductsBase;

  void runOnOperation() override {
    std::string error;
    FailureOr<CpuFeatures> features = CpuFeatures::parse(cpuFeatures, error);
    if (failed(features)) {
      getOperation().emitError() << "rope-pack-tile-products: " << error;
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, TileProductForm>> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<TileProductForm> form = matchTileProduct(op, *features))
        candidates.push_back({op, *form});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, form] : candidates)
      if (failed(rewriteAsTileProduct(rewriter, op, form))) {
        op.emitOpError("could not be packed for the matrix engine");
        return signalPassFailure();
      }
    if (candidates.empty())
      return;
    // The weights' 16 × 16 blocks of words: shuffles in registers (the
    // default lowering would move them one element at a time).
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::Shuffle16x16);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
