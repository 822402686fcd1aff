//===- OperandPacking.cpp - operands packed for the register blocks -------===//
//
// A contraction's operands copied once into the layout its register blocks
// read, in f32: B with its column dim innermost (one K step reads a row of
// B as contiguous vectors) or, for a large op, in column panels as BLIS
// packs it; a copy that moves B's innermost dim (K into Kᵀ) goes through
// registers in 16 × 16 blocks rather than a gather per element. The
// contraction is rebuilt over the packed operands in its canonical form.
//
//===----------------------------------------------------------------------===//

#include "ContractionStrategies.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::contractions;

/// Side of the square blocks a transposing pack moves through registers.
static constexpr int64_t kTransposeBlock = 16;

/// `pack` (a copy whose output dim q reads the source's innermost dim, q not
/// innermost: a transposition such as K into Kᵀ) in 16 × 16 blocks: each
/// block read as 16 rows of the source, transposed in registers (shuffles,
/// vector.transpose's 16 × 16 lowering) and written as 16 rows of the pack.
/// Left to LLVM, the copy gathers one element per lane along the source's
/// outer dim. The result, or the pack as it is where the two dims are not
/// static multiples of the block.
static Value vectorizeTransposingPack(RewriterBase &rewriter,
                                      linalg::GenericOp pack,
                                      ArrayRef<int64_t> perm) {
  unsigned rank = perm.size();
  unsigned q = llvm::find(perm, int64_t(rank - 1)) - perm.begin();
  SmallVector<int64_t> ranges = pack.getStaticLoopRanges();
  auto blocked = [&](int64_t extent) {
    return !ShapedType::isDynamic(extent) && extent % kTransposeBlock == 0;
  };
  if (q + 1 >= rank || !blocked(ranges[q]) || !blocked(ranges[rank - 1]))
    return pack.getResult(0);
  SmallVector<int64_t> sizes(rank, 1);
  sizes[q] = sizes[rank - 1] = kTransposeBlock;
  // The caller goes on building after the pack, not in its block loop.
  OpBuilder::InsertionGuard guard(rewriter);
  FailureOr<scf::SCFTilingResult> tiled =
      tileWith(rewriter, pack, sizes, scf::SCFTilingOptions::LoopType::ForOp);
  if (failed(tiled)) // tileWith leaves the pack as it was
    return pack.getResult(0);
  // The block: 16 rows of the source (its dim perm[rank - 1]) of 16
  // contiguous elements, converted to f32, transposed, written as 16 rows
  // of the pack (its dim q).
  linalg::GenericOp tile = tileOf(*tiled);
  rewriter.setInsertionPoint(tile);
  Location loc = tile.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value source = tile.getDpsInputs()[0], dest = tile.getDpsInits()[0];
  Type f32 = rewriter.getF32Type();
  Type sourceElement = getElementTypeOrSelf(source.getType());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  SmallVector<Value> origin(rank, zero);
  bool inBounds[] = {true, true};
  auto rowsOf = [&](unsigned rowDim) {
    return AffineMap::get(
        rank, 0,
        {getAffineDimExpr(rowDim, ctx), getAffineDimExpr(rank - 1, ctx)}, ctx);
  };
  Value block = vector::TransferReadOp::create(
      rewriter, loc,
      VectorType::get({kTransposeBlock, kTransposeBlock}, sourceElement),
      source, origin, /*padding=*/std::nullopt, rowsOf(perm[rank - 1]),
      ArrayRef<bool>(inBounds));
  if (sourceElement != f32)
    block = arith::ExtFOp::create(
        rewriter, loc, VectorType::get({kTransposeBlock, kTransposeBlock}, f32),
        block);
  block = vector::TransposeOp::create(rewriter, loc, block,
                                      ArrayRef<int64_t>{1, 0});
  Value written =
      vector::TransferWriteOp::create(rewriter, loc, block, dest, origin,
                                      rowsOf(q), ArrayRef<bool>(inBounds))
          .getResult();
  rewriter.replaceOp(tile, written);
  return tiled->replacements.front();
}

/// `value` copied once into a fresh f32 tensor whose dim i is `value`'s dim
/// perm[i] (a packed panel), or `value` itself when that changes nothing
/// (or only its element type, with `narrowInPlace`: read once, f16 and
/// bf16 are better widened in registers as they are loaded).
/// With `blockTranspose`, a pack that moves the innermost dim goes through
/// registers in 16 × 16 blocks (vectorizeTransposingPack); a large pack
/// outside any loop (a weight into column panels) stays one linalg op, which
/// --rope-parallelize-elementwise splits across the cores.
static Value packPanel(RewriterBase &rewriter, Location loc, Value value,
                       ArrayRef<int64_t> perm, bool blockTranspose = false,
                       bool narrowInPlace = false) {
  auto type = cast<RankedTensorType>(value.getType());
  Type f32 = rewriter.getF32Type();
  bool identity = llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()));
  if (identity && (type.getElementType() == f32 || narrowInPlace))
    return value;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, value);
  SmallVector<OpFoldResult> shape;
  for (int64_t p : perm)
    shape.push_back(sizes[p]);
  Value init = tensor::EmptyOp::create(rewriter, loc, shape, f32);
  unsigned rank = perm.size();
  bool transposing = blockTranspose && perm.back() != int64_t(rank - 1);
  if (type.getElementType() == f32 && !transposing)
    return linalg::TransposeOp::create(rewriter, loc, value, init, perm)
        ->getResult(0);
  // f16/bf16 storage is converted here, once, not at every FMA.
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<AffineExpr> source(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    source[p] = getAffineDimExpr(i, ctx);
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, source, ctx),
                                 AffineMap::getMultiDimIdentityMap(rank, ctx)};
  auto pack = linalg::GenericOp::create(
      rewriter, loc, init.getType(), value, init, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value element = args[0];
        if (element.getType() != f32)
          element = arith::ExtFOp::create(b, l, f32, element);
        linalg::YieldOp::create(b, l, ValueRange{element});
      });
  if (!transposing)
    return pack.getResult(0);
  return vectorizeTransposingPack(rewriter, pack, perm);
}

/// B (read through `bMap`) packed for the register block: the column dim
/// `col` innermost or, for `columnPanels`, in panels of `columns`, as
/// [n / columns, ..., columns]. Sets `bExprs` to the indices the packed B is
/// read at, the panel first (`colBlock`) when there are panels.
static Value packB(RewriterBase &rewriter, Location loc, Value b,
                   AffineMap bMap, AffineExpr col, AffineExpr colBlock,
                   int64_t columns, bool columnPanels, bool readOnce,
                   SmallVectorImpl<AffineExpr> &bExprs) {
  unsigned colPos = *bMap.getResultPosition(col);
  // B's dims other than the column dim, in order: the middle of either
  // layout.
  SmallVector<unsigned> others = llvm::to_vector(
      llvm::make_filter_range(llvm::seq<unsigned>(0, bMap.getNumResults()),
                              [&](unsigned i) { return i != colPos; }));
  SmallVector<int64_t> perm;
  if (columnPanels) {
    // B [..., n, ...] -> [..., n / c, c, ...] (a view) -> [n / c, ..., c].
    auto bType = cast<RankedTensorType>(b.getType());
    SmallVector<int64_t> split(bType.getShape());
    split[colPos] /= columns;
    split.insert(split.begin() + colPos + 1, columns);
    SmallVector<ReassociationIndices> groups;
    for (unsigned i = 0, e = bType.getRank(); i < e; ++i)
      groups.push_back(i < colPos    ? ReassociationIndices{i}
                       : i == colPos ? ReassociationIndices{i, i + 1}
                                     : ReassociationIndices{i + 1});
    b = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(split, bType.getElementType()), b,
        groups);
    perm.push_back(colPos);
    bExprs.push_back(colBlock);
    for (unsigned i : others)
      perm.push_back(i < colPos ? i : i + 1);
    perm.push_back(colPos + 1);
  } else {
    // B: every dim in order, the column dim last.
    llvm::append_range(perm, others);
    perm.push_back(colPos);
  }
  for (unsigned i : others)
    bExprs.push_back(bMap.getResult(i));
  bExprs.push_back(col);
  return packPanel(rewriter, loc, b, perm, /*blockTranspose=*/!columnPanels,
                   /*narrowInPlace=*/readOnce);
}

/// The output `init` viewed as [..., n / columns, columns], for column
/// panels: `outExprs` (its indices) gain the panel `colBlock` before the
/// column `col`, and `outGroups` collapse the view back.
static Value
viewOutputAsPanels(RewriterBase &rewriter, Location loc, Value init,
                   int64_t columns, AffineExpr col, AffineExpr colBlock,
                   SmallVectorImpl<AffineExpr> &outExprs,
                   SmallVectorImpl<ReassociationIndices> &outGroups) {
  auto outType = cast<RankedTensorType>(init.getType());
  unsigned outRank = outType.getRank();
  SmallVector<int64_t> outSplit(outType.getShape());
  outSplit.back() /= columns;
  outSplit.push_back(columns);
  for (unsigned i = 0; i + 1 < outRank; ++i)
    outGroups.push_back({i});
  outGroups.push_back({outRank - 1, outRank});
  auto splitType = RankedTensorType::get(outSplit, outType.getElementType());
  // A fresh output (a fill of a tensor.empty of its own) is filled in the
  // panel shape itself. An expand_shape of tensor.empty would hide the empty
  // tensor from empty-tensor elimination, which then could not give the
  // product the caller's buffer: the whole result was computed aside and
  // copied there. (An empty tensor shared with other ops, as CSE leaves
  // empties of one type, stays: a new one would be one more buffer.)
  auto fill = init.getDefiningOp<linalg::FillOp>();
  auto empty =
      fill ? fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() : nullptr;
  if (empty && empty->hasOneUse() && init.hasOneUse()) {
    Value splitEmpty = tensor::EmptyOp::create(rewriter, loc, splitType,
                                               empty.getDynamicSizes());
    init =
        linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], splitEmpty)
            .getResult(0);
  } else {
    init = tensor::ExpandShapeOp::create(rewriter, loc, splitType, init,
                                         outGroups);
  }
  outExprs.back() = colBlock;
  outExprs.push_back(col);
  return init;
}

/// The contraction in its canonical form, out + a·b with contractible
/// multiply-adds in f32, of `inputs` into `init` (an f32 tensor); inputs of a
/// narrower float type are widened exactly (arith.extf) as they are read.
linalg::GenericOp contractions::buildCanonicalContraction(
    RewriterBase &rewriter, Location loc, ValueRange inputs, Value init,
    ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators) {
  auto flags = arith::FastMathFlags::contract;
  return linalg::GenericOp::create(
      rewriter, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Type f32 = nb.getF32Type();
        auto widened = [&](Value v) -> Value {
          return v.getType() == f32 ? v : arith::ExtFOp::create(nb, l, f32, v);
        };
        Value product = arith::MulFOp::create(nb, l, widened(args[0]),
                                              widened(args[1]), flags);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::AddFOp::create(nb, l, args[2], product, flags)
                           .getResult()});
      });
}

/// `op` over packed operands, A and B in f32 (f16/bf16 converted in the
/// copy, once). B with the column dim innermost or, for `columnPanels`, in
/// column panels as BLIS packs it: B[..., n, ...] becomes
/// B'[n / columns][...][n % columns], so the K sweep of one register block
/// reads `columns` contiguous floats per step from one contiguous
/// micro-panel (32 KiB at 8 × 32 and K = 256: L1) instead of one cache line
/// from each row of B, rows a power-of-two stride apart that map to a few
/// cache sets. Either layout is one copy of B, straight from the layout the
/// op reads (a frontend's [out, in] weight included). With panels the op
/// gets one more parallel dim, the column block (its index is the op's old
/// loop count), the column dim ranges over one block and the output is
/// viewed as [..., n / columns, columns]. The contraction is rebuilt in its
/// canonical form, out + a·b, which is what a contraction body computes once
/// its operands are f32.
linalg::GenericOp contractions::packOperands(RewriterBase &rewriter,
                                             linalg::GenericOp op,
                                             const RegisterBlock &block,
                                             bool columnPanels) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> inputs = op.getDpsInputs();
  Value bSource = inputs[block.bOperand];
  std::tie(inputs[block.bOperand], maps[block.bOperand]) =
      throughTranspose(inputs[block.bOperand], maps[block.bOperand]);
  bool bThroughTranspose = inputs[block.bOperand] != bSource;
  AffineMap bMap = maps[block.bOperand];
  AffineMap outMap = maps[2];
  AffineExpr col = getAffineDimExpr(block.colDim, ctx);
  columnPanels = columnPanels && bMap.isProjectedPermutation() &&
                 outMap.isProjectedPermutation() &&
                 outMap.getResults().back() == col;
  unsigned numLoops = op.getNumLoops() + (columnPanels ? 1 : 0);
  AffineExpr colBlock = getAffineDimExpr(op.getNumLoops(), ctx);

  // With one block of rows (a decode tile's few query rows), each element
  // of B is loaded once: a B laid out for the block already stays where it
  // is, f16 or bf16 widened as it is loaded.
  int64_t rowExtent = op.getStaticLoopRanges()[block.rowDim];
  bool bReadOnce = !ShapedType::isDynamic(rowExtent) && rowExtent <= block.rows;
  SmallVector<AffineExpr> bExprs;
  Value packedB =
      packB(rewriter, loc, inputs[block.bOperand], bMap, col, colBlock,
            block.columns, columnPanels, bReadOnce, bExprs);
  Value a = packPanel(rewriter, loc, inputs[block.aOperand()],
                      llvm::to_vector(llvm::seq<int64_t>(
                          0, maps[block.aOperand()].getNumResults())));
  if (!columnPanels && !bThroughTranspose && a == inputs[block.aOperand()] &&
      packedB == inputs[block.bOperand])
    return op;
  inputs[block.aOperand()] = a;
  inputs[block.bOperand] = packedB;

  // The output, viewed as [..., n / c, c] with panels.
  Value init = op.getDpsInits()[0];
  auto outType = cast<RankedTensorType>(init.getType());
  SmallVector<ReassociationIndices> outGroups;
  SmallVector<AffineExpr> outExprs(outMap.getResults());
  if (columnPanels)
    init = viewOutputAsPanels(rewriter, loc, init, block.columns, col, colBlock,
                              outExprs, outGroups);
  SmallVector<AffineMap> newMaps;
  for (auto [i, map] : llvm::enumerate(maps)) {
    SmallVector<AffineExpr> exprs(map.getResults());
    if (i == block.bOperand)
      exprs = bExprs;
    else if (i == 2)
      exprs = outExprs;
    newMaps.push_back(AffineMap::get(numLoops, 0, exprs, ctx));
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (columnPanels)
    iterators.push_back(utils::IteratorType::parallel);

  linalg::GenericOp packed = buildCanonicalContraction(
      rewriter, loc, inputs, init, newMaps, iterators);
  Value result = packed.getResult(0);
  if (columnPanels)
    result = tensor::CollapseShapeOp::create(rewriter, loc, outType, result,
                                             outGroups);
  rewriter.replaceOp(op, result);
  return packed;
}
