//===- VectorizeContractions.cpp - register-blocked FMA micro-kernels -----===//
//
// A contraction (matmul-like linalg op) becomes loops around a register
// block: per K step, `rows` broadcast elements of A times one contiguous row
// of `columns` elements of B, accumulated in registers across the whole K
// loop. This is the micro-kernel shape of BLIS-style GEMM: for each loaded
// vector of B, `rows` FMAs; for each broadcast of A, `columns / lanes` FMAs.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/HostRegisterBlock.h"
#include "rope/Codegen/CPU/LaneReductions.h"
#include "rope/Codegen/CPU/Passes.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEVECTORIZECONTRACTIONS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using rope::tileOf;
using rope::tileWith;

namespace {
/// Where the register block of one contraction lies: loop dims and sizes.
struct RegisterBlock {
  unsigned rowDim, colDim;
  int64_t rows, columns;
  /// The input that carries the column dim (B); the other one is A.
  unsigned bOperand;
  unsigned aOperand() const { return 1 - bOperand; }
};

/// The largest of `candidates` that divides `extent`, if any.
static std::optional<int64_t> largestDivisor(int64_t extent,
                                             ArrayRef<int64_t> candidates) {
  for (int64_t c : candidates)
    if (c > 0 && extent % c == 0)
      return c;
  return std::nullopt;
}

/// The register block of `op`, or nothing where it does not apply (dynamic
/// ranges other than the rows, an output whose innermost dim is not a
/// column dim, a column extent that is not a multiple of 8). A dynamic row
/// extent (a frontend's sequence length) gets the full block; the rows that
/// do not fill one are split off later (splitDynamicRows).
static std::optional<RegisterBlock> planBlock(linalg::LinalgOp op,
                                              int64_t rows, int64_t columns) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32() ||
      llvm::any_of(op.getDpsInputs(), [](Value v) {
        return !isa<FloatType>(getElementTypeOrSelf(v.getType()));
      }))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return std::nullopt;

  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() < 2)
    return std::nullopt;
  auto lastDim = [](AffineMap map) -> std::optional<unsigned> {
    if (auto d = dyn_cast<AffineDimExpr>(map.getResults().back()))
      return d.getPosition();
    return std::nullopt;
  };
  std::optional<unsigned> col = lastDim(outMap);
  if (!col || !llvm::is_contained(dims->n, *col))
    return std::nullopt;
  // The row dim: the innermost M dim of the output that is not a unit dim
  // (decode's query dim is; the GQA group of query heads beside it is not,
  // and rows of one block share every load of B).
  std::optional<unsigned> row;
  for (AffineExpr e : outMap.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e);
        d && llvm::is_contained(dims->m, d.getPosition()) &&
        (!row || ranges[d.getPosition()] != 1))
      row = d.getPosition();
  if (!row)
    return std::nullopt;

  for (auto [dim, range] : llvm::enumerate(ranges))
    if (dim != *row && ShapedType::isDynamic(range))
      return std::nullopt;

  RegisterBlock block;
  block.rowDim = *row;
  block.colDim = *col;
  std::optional<int64_t> c = largestDivisor(ranges[*col], {columns, 8});
  std::optional<int64_t> r = ShapedType::isDynamic(ranges[*row])
                                 ? std::optional<int64_t>(rows)
                                 : largestDivisor(ranges[*row], {rows, 4, 2, 1});
  if (!c || !r)
    return std::nullopt;
  block.columns = *c;
  block.rows = *r;
  AffineMap map0 = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  block.bOperand = map0.isFunctionOfDim(*col) ? 0 : 1;
  return block;
}

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
static linalg::GenericOp buildCanonicalContraction(
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

/// `value` read at `map`'s indices, seen through a `linalg.transpose` that
/// produced it: the transpose's input and the map that reads it there. A
/// frontend's linear layer is `matmul(x, transpose(W))` (torch-mlir spells
/// `x @ W.T` so); packing copies B anyway, so it copies straight from W's
/// stored layout instead of from a transposed copy of the whole weight.
static std::pair<Value, AffineMap> throughTranspose(Value value,
                                                    AffineMap map) {
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (!transpose)
    return {value, map};
  // Result dim i is input dim perm[i].
  ArrayRef<int64_t> perm = transpose.getPermutation();
  SmallVector<AffineExpr> exprs(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    exprs[p] = map.getResult(i);
  return {transpose.getInput(),
          AffineMap::get(map.getNumDims(), 0, exprs, map.getContext())};
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
static linalg::GenericOp packOperands(RewriterBase &rewriter,
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
  Value a = packPanel(
      rewriter, loc, inputs[block.aOperand()],
      llvm::to_vector(llvm::seq<int64_t>(0, maps[block.aOperand()].getNumResults())));
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

/// A contraction outside any loop (a user's matmul) with at least this many
/// multiply-adds is split across cores and into cache panels first; the
/// attention tiles are already both.
static constexpr int64_t kMinCacheTiledWork = int64_t(1) << 22;
/// Row chunks across cores: a few per core keeps the load balanced.
static constexpr int64_t kRowChunks = 8;
/// Columns of a cache panel.
static constexpr int64_t kPanel = 256;
/// Reduction steps of a cache panel: its B panel (256 columns × 512 steps,
/// 512 KiB of f32) stays in L2, and each panel of K sweeps the output's
/// tiles once more (accumulators loaded and stored), which the dynamic-row
/// projections a frontend writes pay for in stalls: 512 steps made them
/// 2-10% faster than 256 (f32, S = 4096, K = 4096; level at K = 1024 and
/// with static rows).
static constexpr int64_t kReductionPanel = 512;

/// Whether `op` is a large contraction outside any loop (a user's matmul),
/// which this pass packs and splits over cores and cache panels itself.
static bool isLargeTopLevel(linalg::GenericOp op) {
  if (op->getParentOfType<LoopLikeOpInterface>())
    return false;
  // A dynamic extent (the rows) counts once: the static ones decide.
  int64_t work = 1;
  for (int64_t r : op.getStaticLoopRanges())
    if (!ShapedType::isDynamic(r))
      work *= r;
  return work >= kMinCacheTiledWork;
}

/// A large contraction outside any loop, its B packed into column panels:
/// rows split into an scf.forall (all cores), or where the row count is
/// only known at run time (a frontend's sequence length, often short) or
/// too small to split (a decode step's one row), the columns; then panels of
/// kPanel columns × kReductionPanel reduction steps (a B panel that stays in
/// L2 while every row block sweeps it). The tile to put into register
/// blocks.
static linalg::GenericOp tileForCoresAndCaches(RewriterBase &rewriter,
                                               linalg::GenericOp op,
                                               const RegisterBlock &block) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numLoops = op.getNumLoops();
  // The column blocks (the last loop, from packOperands) or, unpacked,
  // the columns themselves.
  bool panelled = numLoops > block.colDim + 1 &&
                  ranges[block.colDim] == block.columns &&
                  linalg::isParallelIterator(op.getIteratorTypesArray().back());
  unsigned columnLoop = panelled ? numLoops - 1 : block.colDim;
  int64_t columnUnit = panelled ? 1 : block.columns;
  int64_t rows = ranges[block.rowDim];
  SmallVector<int64_t> coreSizes(numLoops, 0);
  // Too few rows to split (a decode step's one row) is like not knowing
  // them: the columns are split instead.
  if (!ShapedType::isDynamic(rows) && rows % (kRowChunks * block.rows) == 0)
    coreSizes[block.rowDim] = rows / kRowChunks;
  else if (ranges[columnLoop] % (kRowChunks * columnUnit) == 0)
    coreSizes[columnLoop] = ranges[columnLoop] / kRowChunks;
  if (llvm::any_of(coreSizes, [](int64_t s) { return s != 0; }))
    if (FailureOr<scf::SCFTilingResult> tiled = tileWith(
            rewriter, op, coreSizes, scf::SCFTilingOptions::LoopType::ForallOp);
        succeeded(tiled)) {
      op = tileOf(*tiled);
      ranges = op.getStaticLoopRanges();
    }
  SmallVector<int64_t> sizes(numLoops, 0);
  int64_t panelUnits = kPanel / (panelled ? block.columns : 1);
  sizes[columnLoop] =
      largestDivisor(ranges[columnLoop], {panelUnits, panelUnits / 2})
          .value_or(0);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = numLoops; i-- > 0;)
    if (linalg::isReductionIterator(iterators[i])) {
      sizes[i] =
          largestDivisor(ranges[i], {kReductionPanel, kReductionPanel / 2,
                                     kReductionPanel / 4})
              .value_or(0);
      break;
    }
  if (llvm::any_of(sizes, [](int64_t s) { return s != 0; }))
    if (FailureOr<scf::SCFTilingResult> tiled = tileWith(
            rewriter, op, sizes, scf::SCFTilingOptions::LoopType::ForOp);
        succeeded(tiled))
      op = tileOf(*tiled);
  return op;
}

/// Discardable marker of the loops this pass creates, removed before it
/// returns.
static constexpr llvm::StringLiteral kRegisterBlockLoop =
    "rope.register_block_loop";

/// `op` rebuilt over operands cast to static shapes, its row dim `rows`
/// long (which the caller has proved: a peeled loop's full tile, or one
/// row), every other dim already static; its result cast back to the type
/// its users see. Fails where that cannot be shown from the indexing maps.
static FailureOr<linalg::GenericOp>
castToStaticRows(RewriterBase &rewriter, linalg::GenericOp op, unsigned rowDim,
                 int64_t rows) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  ranges[rowDim] = rows;
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return failure();
    auto type = cast<RankedTensorType>(operand.get().getType());
    SmallVector<int64_t> shape;
    for (AffineExpr e : map.getResults())
      shape.push_back(ranges[cast<AffineDimExpr>(e).getPosition()]);
    auto staticType = type.clone(shape);
    operands.push_back(staticType == type
                           ? operand.get()
                           : tensor::CastOp::create(rewriter, loc, staticType,
                                                    operand.get())
                                 .getResult());
  }
  Type resultType = operands.back().getType();
  auto rebuilt = cast<linalg::GenericOp>(
      clone(rewriter, op, TypeRange{resultType}, operands));
  Value result = rebuilt.getResult(0);
  if (result.getType() != op.getResult(0).getType())
    result = tensor::CastOp::create(rewriter, loc, op.getResult(0).getType(),
                                    result);
  rewriter.replaceOp(op, result);
  return rebuilt;
}

/// The static pieces of `op`, whose row extent is only known at run time:
/// loops over full blocks of `block.rows` rows (the loop peeled, so their
/// tiles have static shapes) and over the rows left, one at a time.
static FailureOr<SmallVector<std::pair<linalg::GenericOp, RegisterBlock>>>
splitDynamicRows(RewriterBase &rewriter, linalg::GenericOp op,
                 const RegisterBlock &block) {
  SmallVector<int64_t> sizes(op.getNumLoops(), 0);
  sizes[block.rowDim] = block.rows;
  FailureOr<scf::SCFTilingResult> tiled =
      tileWith(rewriter, op, sizes, scf::SCFTilingOptions::LoopType::ForOp);
  if (failed(tiled))
    return failure();
  auto loop = cast<scf::ForOp>(tiled->loops.front().getOperation());
  linalg::GenericOp full = tileOf(*tiled);
  scf::ForOp rest;
  if (failed(scf::peelForLoopAndSimplifyBounds(rewriter, loop, rest)))
    return failure();
  FailureOr<linalg::GenericOp> staticFull =
      castToStaticRows(rewriter, full, block.rowDim, block.rows);
  if (failed(staticFull))
    return failure();
  SmallVector<std::pair<linalg::GenericOp, RegisterBlock>> pieces = {
      {*staticFull, block}};

  // The peeled iteration: its tile, one row at a time.
  linalg::GenericOp partial;
  rest.getBody()->walk([&](linalg::GenericOp g) { partial = g; });
  if (!partial)
    return failure();
  SmallVector<int64_t> rowSizes(partial.getNumLoops(), 0);
  rowSizes[block.rowDim] = 1;
  FailureOr<scf::SCFTilingResult> rows = tileWith(
      rewriter, partial, rowSizes, scf::SCFTilingOptions::LoopType::ForOp);
  if (failed(rows))
    return failure();
  FailureOr<linalg::GenericOp> oneRow =
      castToStaticRows(rewriter, tileOf(*rows), block.rowDim, 1);
  if (failed(oneRow))
    return failure();
  RegisterBlock single = block;
  single.rows = 1;
  pieces.push_back({*oneRow, single});
  return pieces;
}

/// `op`, with static shapes and its operands packed, as loops around one
/// register block: vector.contract on (rows × 1)·(1 × columns) slices.
static LogicalResult tileIntoRegisterBlocks(RewriterBase &rewriter,
                                            linalg::GenericOp op,
                                            const RegisterBlock &block) {
  // Tile: the block's rows and columns, one step of every other dim;
  // parallel loops outside in the op's order, reduction loops innermost.
  // For a panelled op (its column blocks last) the row blocks are outer:
  // one row block's slice of A (8 rows × a 512-step panel: 16 KiB) stays
  // in L1 while the column blocks stream their micro-panels of B from L2.
  // The other way round, a micro-panel of B (256 × 32: 32 KiB, at 256
  // steps) would have to stay, and it is the whole L1 (a 4096³ f32 matmul with
  // static rows on a 2-core Xeon: 277 GFLOP/s that way, 379 this way).
  unsigned numLoops = op.getNumLoops();
  SmallVector<int64_t> tileSizes(numLoops, 1);
  tileSizes[block.rowDim] = block.rows;
  tileSizes[block.colDim] = block.columns;
  SmallVector<int64_t> interchange, reductionDims;
  for (unsigned i = 0; i < numLoops; ++i) {
    if (linalg::isReductionIterator(op.getIteratorTypesArray()[i]))
      reductionDims.push_back(i);
    else
      interchange.push_back(i);
  }
  interchange.append(reductionDims);
  FailureOr<scf::SCFTilingResult> tiled =
      tileWith(rewriter, op, tileSizes, scf::SCFTilingOptions::LoopType::ForOp,
               interchange);
  if (failed(tiled))
    return failure();
  linalg::GenericOp tile = tileOf(*tiled);

  // Drop the tile's unit dims except the reduction step, which the
  // vector.contract needs.
  linalg::ControlDropUnitDims drop;
  drop.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  drop.controlFn = [](Operation *candidate) {
    SmallVector<unsigned> dims;
    auto generic = cast<linalg::GenericOp>(candidate);
    for (auto [i, it] : llvm::enumerate(generic.getIteratorTypesArray()))
      if (!linalg::isReductionIterator(it))
        dims.push_back(i);
    return dims;
  };
  rewriter.setInsertionPoint(tile);
  FailureOr<linalg::DropUnitDimsResult> reduced =
      linalg::dropUnitDims(rewriter, tile, drop);
  Operation *kernel = tile;
  if (succeeded(reduced)) {
    rewriter.replaceOp(tile, reduced->replacements);
    kernel = reduced->resultOp;
  }

  // The tile as a named contraction, which vectorises to vector.contract
  // (a generic body could be anything; this one is a mul-add, with the
  // element casts linalg.contract implies).
  auto reducedGeneric = cast<linalg::GenericOp>(kernel);
  rewriter.setInsertionPoint(reducedGeneric);
  auto contract = linalg::ContractOp::create(
      rewriter, reducedGeneric.getLoc(), reducedGeneric.getResultTypes(),
      reducedGeneric.getDpsInputs(), reducedGeneric.getDpsInits(),
      reducedGeneric.getIndexingMaps());
  rewriter.replaceOp(reducedGeneric, contract->getResults());

  rewriter.setInsertionPoint(contract);
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, contract, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/true);
  if (failed(vectorized))
    return failure();
  rewriter.replaceOp(contract, vectorized->replacements);
  // A B read in place in f16 or bf16 (packOperands' narrowInPlace) reaches
  // vector.contract narrow; it is widened there, in registers.
  tiled->loops.front()->walk([&](vector::ContractionOp op) {
    Type f32 = rewriter.getF32Type();
    rewriter.setInsertionPoint(op);
    for (OpOperand *operand : {&op.getLhsMutable(), &op.getRhsMutable()}) {
      auto type = cast<VectorType>(operand->get().getType());
      if (type.getElementType() != f32)
        operand->set(arith::ExtFOp::create(rewriter, op.getLoc(),
                                           type.clone(f32), operand->get()));
    }
  });

  // Marks the block's loops: in the reduction ones the pass keeps the
  // accumulator in registers once the slices around it are simplified (in
  // the others its slice moves with the induction variable: nothing is
  // loop-invariant).
  for (LoopLikeOpInterface loop : tiled->loops)
    loop->setAttr(kRegisterBlockLoop, rewriter.getUnitAttr());
  return success();
}

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

/// `op` (static, packed) with its elementwise neighbours in one loop nest
/// over register blocks: the consumer of its result (elementwiseConsumer)
/// and the producer of its accumulator (elementwiseInitProducer, or the
/// fill that zeroes it) are computed per block, on the accumulator's
/// registers, instead of in passes of their own over the whole result
/// through memory. False, leaving the IR as it was, where `op` has no such
/// neighbour or its blocks do not divide its extents.
static FailureOr<bool>
tileWithElementwiseNeighbours(RewriterBase &rewriter, linalg::GenericOp op,
                              const RegisterBlock &block) {
  linalg::GenericOp consumer = elementwiseConsumer(op);
  linalg::GenericOp initProducer = elementwiseInitProducer(op);
  if (!consumer && !initProducer)
    return false;
  // Static, non-empty loops whose rows and columns the block divides.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(
          ranges,
          [](int64_t r) { return ShapedType::isDynamic(r) || r <= 0; }) ||
      ranges[block.rowDim] % block.rows || ranges[block.colDim] % block.columns)
    return false;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outMap.isProjectedPermutation())
    return false;

  // Tile sizes over the result's dims (the consumer's loops, or the
  // contraction's own with its reductions untiled): one block of rows ×
  // columns, one step of every other dim.
  SmallVector<int64_t> sizes;
  if (consumer) {
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
  Operation *fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  llvm::SmallPtrSet<Operation *, 4> fusable = {op.getOperation()};
  if (initProducer)
    fusable.insert(initProducer);
  if (fill)
    fusable.insert(fill);

  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
      .setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  // Only the neighbours: never the packs of the operands, which would then
  // be redone for every block.
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (!fusable.contains(producer.getOwner()))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  Operation *root = consumer ? consumer.getOperation() : op.getOperation();
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(root), options);
  if (failed(fused))
    return false;
  for (OpResult result : root->getResults())
    if (Value replacement = fused->replacements.lookup(result))
      rewriter.replaceAllUsesWith(result, replacement);
  // The untiled ops, users before producers.
  SmallVector<Operation *> untiled = {root};
  llvm::append_range(untiled, fused->fusedProducers);
  for (Operation *dead : untiled)
    if (dead->use_empty())
      rewriter.eraseOp(dead);

  // The contraction's block into the register-block loop; its neighbours'
  // blocks into vector ops on the same registers.
  linalg::GenericOp contractionTile;
  SmallVector<Operation *> neighbourTiles;
  for (Operation *tiled : fused->tiledAndFusedOps) {
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
  return true;
}

/// Vector lanes of the dot-product kernel (f32 accumulators): one AVX-512
/// register, two AVX2 ones; the lanes that one lane reduction adds up.
static constexpr int64_t kDotLanes = rope::kReductionLanes;

/// The operands of a one-row contraction that reads both its inputs along
/// the reduction dim, contiguously: out[0, n] += a[0, k] · w[n, k], the
/// matrix-vector product of a decode step (a linear layer's weight stored
/// [out, in], seen through the transpose a frontend writes). f16 and bf16
/// inputs are widened in registers as they are loaded: a pack would convert
/// the whole weight on every call, reading it once more and writing twice
/// its size.
struct DotProductForm {
  Value a, w; // a: [1, K], w: [N, K], f32, f16 or bf16
  int64_t n;  // W's rows
};

static std::optional<DotProductForm> matchDotProduct(linalg::GenericOp op) {
  if (op.getNumLoops() != 3 || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics() ||
      op->getParentOfType<LoopLikeOpInterface>())
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto [w, wMap] = throughTranspose(op.getDpsInputs()[1], maps[1]);
  Value a = op.getDpsInputs()[0];
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto isFloatUpTo32 = [](Value v) {
    Type t = getElementTypeOrSelf(v.getType());
    return t.isF32() || t.isF16() || t.isBF16();
  };
  if (maps[0] != AffineMap::get(3, 0, {m, k}, ctx) ||
      wMap != AffineMap::get(3, 0, {n, k}, ctx) ||
      maps[2] != AffineMap::get(3, 0, {m, n}, ctx) || ranges[0] != 1 ||
      ShapedType::isDynamic(ranges[1]) || ShapedType::isDynamic(ranges[2]) ||
      ranges[2] % kDotLanes || !isFloatUpTo32(a) || !isFloatUpTo32(w) ||
      !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32() ||
      !linalg::isReductionIterator(op.getIteratorTypesArray()[2]))
    return std::nullopt;
  return DotProductForm{a, w, ranges[1]};
}

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

/// A sum along the innermost dim of two or more inputs: out[...] +=
/// f(x₀[..., r], x₁[..., r], ...), each x read
/// contiguously along r (its innermost dim, not sliced with a stride) and
/// f any elementwise function. The scores of a decode tile whose keys are
/// rotated inside the reduction (Σ_t q·rotate(k, cos, sin)) take this form:
/// no copy of K exists to be packed into the register blocks' layout, and
/// K's rows already run along the reduction.
struct LaneSumForm {
  /// Output dims of the register block's columns (the innermost) and rows
  /// (one that the inputs reading the columns do not read, so that a row
  /// block shares their loads), if any.
  unsigned colDim;
  std::optional<unsigned> rowDim;
  int64_t extent; // of the reduction
  /// Lanes of a step: a register of f32 (16 with AVX-512), or half of one
  /// where the extent is not a multiple of that (a head of 80: 40 pairs).
  int64_t lanes;
};

static std::optional<LaneSumForm> matchLaneSum(linalg::GenericOp op,
                                               int64_t hostRows) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 2 || op.getNumReductionLoops() != 1 ||
      !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return std::nullopt;
  unsigned numLoops = op.getNumLoops(), r = numLoops - 1;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!linalg::isReductionIterator(op.getIteratorTypesArray()[r]) ||
      llvm::any_of(ranges, ShapedType::isDynamic) ||
      ranges[r] % (kDotLanes / 2))
    return std::nullopt;
  // The body adds one term to the accumulator, which nothing else reads.
  Block &body = *op.getBlock();
  BlockArgument acc = body.getArguments().back();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add || !acc.hasOneUse() || *acc.getUsers().begin() != add)
    return std::nullopt;
  AffineExpr reduction = getAffineDimExpr(r, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || map.getNumResults() == 0 ||
        map.getResults().back() != reduction ||
        llvm::any_of(map.getResults().drop_back(),
                     [&](AffineExpr e) { return e.isFunctionOfDim(r); }))
      return std::nullopt;
    if (auto slice = input->get().getDefiningOp<tensor::ExtractSliceOp>();
        slice && !isConstantIntValue(slice.getMixedStrides().back(), 1))
      return std::nullopt;
  }
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto dimOf = [](AffineExpr e) -> std::optional<unsigned> {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      return d.getPosition();
    return std::nullopt;
  };
  if (!outMap.isProjectedPermutation() || outMap.getNumResults() == 0)
    return std::nullopt;
  LaneSumForm form{*dimOf(outMap.getResults().back()), std::nullopt, ranges[r],
                   ranges[r] % kDotLanes ? kDotLanes / 2 : kDotLanes};
  // Rows: the innermost non-unit output dim that no input reading the
  // columns reads.
  for (AffineExpr e : llvm::reverse(outMap.getResults().drop_back())) {
    unsigned d = *dimOf(e);
    if (ranges[d] == 1)
      continue;
    bool shared = llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
      AffineMap map = op.getMatchingIndexingMap(in);
      return !map.isFunctionOfDim(form.colDim) || !map.isFunctionOfDim(d);
    });
    if (shared) {
      form.rowDim = d;
      break;
    }
  }
  // A plain contraction takes lane sums only where its register blocks
  // would have one block of rows: they would transpose B (read along the
  // reduction) for rows that use each column once (a decode tile's Q·Kᵀ
  // over a cache of rotated keys). Taller ones amortise the transposition.
  if (linalg::isaContractionOpInterface(op) && form.rowDim &&
      ranges[*form.rowDim] > hostRows)
    return std::nullopt;
  return form;
}

/// `op` (matchLaneSum's form) as register blocks of lane sums: the
/// reduction split into steps of L lanes, each output
/// of a block keeping its L lanes apart in a register across the steps
/// (lanes[..., l] += f(x[..., step, l])), then the lanes added up and into
/// the output, per block, on the block's registers. A block holds up to
/// `rows` rows × a few columns, as many outputs as a step has lanes (16
/// accumulators with AVX-512): each input vector loaded is then shared by a
/// block's rows or columns, f is computed once per loaded vector (rows
/// share what they do not read), and the block's lanes add up by a
/// butterfly of shuffles across its registers (populateLaneReductionPatterns).
static LogicalResult rewriteAsLaneSums(RewriterBase &rewriter,
                                       linalg::GenericOp op,
                                       const LaneSumForm &form, int64_t rows) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  Type f32 = rewriter.getF32Type();
  unsigned numLoops = op.getNumLoops(), r = numLoops - 1;
  int64_t lanes = form.lanes, steps = form.extent / lanes;

  // Inputs with their innermost dim split into [steps, L], read at (step,
  // lane): loops (old loops, r now the step, then the lane). A dim read at
  // a constant (a member of a pair view) is sliced off: the vectoriser
  // takes reads through projected permutations only.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  AffineExpr lane = getAffineDimExpr(numLoops, ctx);
  for (OpOperand *input : op.getDpsInputOperands()) {
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
    inputs.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
        value, groups));
    exprs.push_back(lane);
    maps.push_back(AffineMap::get(numLoops + 1, 0, exprs, ctx));
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
  lanesExprs.push_back(lane);
  maps.push_back(AffineMap::get(numLoops + 1, 0, lanesExprs, ctx));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::parallel);
  auto partial = linalg::GenericOp::create(
      rewriter, loc, lanesInit.getType(), inputs, ValueRange{lanesInit}, maps,
      iterators, [&](OpBuilder &b, Location, ValueRange args) {
        IRMapping mapping;
        mapping.map(op.getBlock()->getArguments(), args);
        for (Operation &inner : op.getBlock()->without_terminator())
          b.clone(inner, mapping);
        Operation *yield = op.getBlock()->getTerminator();
        b.clone(*yield, mapping);
      });

  // out[...] += Σ_lane lanes[..., lane]: loops (output dims, lane).
  unsigned outRank = outType.getRank();
  SmallVector<utils::IteratorType> totalIterators(
      outRank, utils::IteratorType::parallel);
  totalIterators.push_back(utils::IteratorType::reduction);
  auto total = linalg::GenericOp::create(
      rewriter, loc, op.getResultTypes(), partial.getResult(0),
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
  rewriter.replaceOp(op, total.getResult(0));

  // Blocks of the output: rows × columns, the partial sums and the fill of
  // their lanes fused into each.
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
  int64_t maxColumns = std::max<int64_t>(1, lanes / blockRows);
  blockSizes[outPosition(form.colDim)] =
      largestDivisor(outType.getDimSize(outPosition(form.colDim)),
                     {maxColumns, 8, 4, 2, 1})
          .value_or(1);
  for (auto [dim, size] : llvm::enumerate(blockSizes))
    if (dim < outRank && outType.getDimSize(dim) == 1)
      size = 0;
  // (An output of unit dims alone is one block already.)
  auto lanesFill = cast<linalg::FillOp>(lanesInit.getDefiningOp());
  linalg::GenericOp blockPartial = partial, blockTotal = total;
  linalg::FillOp blockFill = lanesFill;
  if (llvm::any_of(blockSizes, [](int64_t size) { return size != 0; })) {
    FailureOr<SmallVector<Operation *>> tiled =
        tileLaneSum(rewriter, total, partial, blockSizes,
                    scf::SCFTilingOptions::LoopType::ForOp);
    if (failed(tiled))
      return failure();
    blockPartial = blockTotal = nullptr;
    blockFill = nullptr;
    for (Operation *op : *tiled) {
      if (auto fill = dyn_cast<linalg::FillOp>(op))
        blockFill = fill;
      else if (auto generic = dyn_cast<linalg::GenericOp>(op))
        (generic.getNumLoops() == numLoops + 1 ? blockPartial : blockTotal) =
            generic;
    }
    if (!blockPartial || !blockTotal)
      return failure();
  }

  // In each block: the steps as a loop around one vectorised step (its
  // accumulators hoisted into registers later), the fill and the final sum
  // vectorised on the block.
  SmallVector<int64_t> stepSizes(numLoops + 1, 0);
  stepSizes[r] = 1;
  FailureOr<scf::SCFTilingResult> stepLoop =
      tileWith(rewriter, blockPartial, stepSizes,
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
  SmallVector<Operation *> toVectorize = {step, blockTotal};
  if (blockFill)
    toVectorize.push_back(blockFill);
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

/// `op` (matchDotProduct's form) as dot products over the rows of W as
/// stored: no copy of W, which a one-row product reads exactly once (packing
/// it, as the register blocks want, would read and write it twice more).
/// It is a lane sum whose columns are W's rows, read from W itself rather
/// than through the transpose a frontend writes (rewriteAsLaneSums: blocks
/// of 16 rows of W, each row's lanes in a register of its own across the
/// whole K sweep, then added up by the butterfly). The rows of W are first
/// split over the cores (an scf.forall of kRowChunks chunks), each chunk
/// summing its own lanes: no serial pass over them follows.
static LogicalResult rewriteAsDotProducts(RewriterBase &rewriter,
                                          linalg::GenericOp op,
                                          const DotProductForm &form,
                                          int64_t rows) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  using utils::IteratorType;
  linalg::GenericOp product = buildCanonicalContraction(
      rewriter, loc, ValueRange{form.a, form.w}, op.getDpsInits()[0],
      {AffineMap::get(3, 0, {m, k}, ctx), AffineMap::get(3, 0, {n, k}, ctx),
       AffineMap::get(3, 0, {m, n}, ctx)},
      {IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction});
  rewriter.replaceOp(op, product.getResult(0));
  // Chunks of whole register blocks of the host's rows (a lane sum's blocks
  // are as wide as their chunk allows: 16 rows of W, else 8, 4, ...).
  linalg::GenericOp chunk = product;
  if (form.n % (kRowChunks * rows) == 0) {
    FailureOr<scf::SCFTilingResult> chunks =
        tileWith(rewriter, product, {0, form.n / kRowChunks, 0},
                 scf::SCFTilingOptions::LoopType::ForallOp);
    if (failed(chunks))
      return failure();
    chunk = tileOf(*chunks);
  }
  std::optional<LaneSumForm> laneSum = matchLaneSum(chunk, rows);
  if (!laneSum)
    return failure();
  return rewriteAsLaneSums(rewriter, chunk, *laneSum, rows);
}

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

/// Unrolls `loop` by `factor` where it is a register block's reduction
/// loop: innermost, carrying a vector (the accumulators, once hoisted; the
/// tensors it still carries pass through and are dropped later).
/// Its body is a few loads and broadcasts and one FMA per accumulator; the
/// unrolled body issues them with one increment and branch per `factor`
/// steps. At 8 × 32 a step is 26 instructions for 16 FMAs, which a 4-wide
/// core issues in about the 8 cycles the FMAs take on two ports: with the
/// loop's own 3 per step, the front end rather than the FMAs sets the pace
/// (+7–9% on large f32 matmuls on a 2-core Xeon at a factor of 8).
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

struct RopeVectorizeContractionsPass
    : public rope::impl::RopeVectorizeContractionsBase<
          RopeVectorizeContractionsPass> {
  using RopeVectorizeContractionsBase::RopeVectorizeContractionsBase;

  void runOnOperation() override {
    if (reductionUnroll < 1) {
      getOperation()->emitError()
          << "rope-vectorize-contractions: reduction-unroll must be at least "
             "1, got "
          << static_cast<int64_t>(reductionUnroll);
      return signalPassFailure();
    }
    if (registerRows < 0 || registerColumns < 0 || registerColumns % 8) {
      getOperation()->emitError()
          << "rope-vectorize-contractions: register-rows must be positive "
             "and register-columns a positive multiple of 8 (or 0: sized for "
             "the host CPU), got "
          << static_cast<int64_t>(registerRows) << " and "
          << static_cast<int64_t>(registerColumns);
      return signalPassFailure();
    }
    rope::RegisterBlockShape shape =
        rope::resolveRegisterBlock(registerRows, registerColumns);
    SmallVector<std::pair<linalg::LinalgOp, RegisterBlock>> work;
    SmallVector<std::pair<linalg::GenericOp, LaneSumForm>> laneSums;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Lane sums first, except for a one-row product outside any loop,
      // whose dot products (0.) also split W's rows over the cores.
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (generic && !matchDotProduct(generic))
        if (std::optional<LaneSumForm> form =
                matchLaneSum(generic, shape.rows)) {
          laneSums.push_back({generic, *form});
          return;
        }
      if (std::optional<RegisterBlock> block =
              planBlock(op, shape.rows, shape.columns))
        work.push_back({op, *block});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, block] : work)
      if (failed(rewriteContraction(rewriter, op, block, shape.rows))) {
        op.emitOpError("could not be rewritten into register blocks");
        return signalPassFailure();
      }
    for (auto &[op, form] : laneSums) {
      // The op may be replaced before a step fails.
      Location loc = op.getLoc();
      if (failed(rewriteAsLaneSums(rewriter, op, form, shape.rows))) {
        emitError(loc, "a lane sum could not be rewritten into register "
                       "blocks");
        return signalPassFailure();
      }
    }
    if (work.empty() && laneSums.empty())
      return;

    // Fold the slices of slices that tiling and unit-dim dropping leave, so
    // that the accumulator's read and write in each reduction loop address
    // the loop's own iter_arg; then hoist them: the accumulator is a vector
    // carried by the loop (registers) instead of memory touched every step.
    {
      RewritePatternSet canonical(&getContext());
      tensor::ExtractSliceOp::getCanonicalizationPatterns(canonical,
                                                          &getContext());
      tensor::InsertSliceOp::getCanonicalizationPatterns(canonical,
                                                         &getContext());
      scf::ForOp::getCanonicalizationPatterns(canonical, &getContext());
      tensor::populateMergeConsecutiveInsertExtractSlicePatterns(canonical);
      if (failed(applyPatternsGreedily(getOperation(), std::move(canonical))))
        return signalPassFailure();
    }
    SmallVector<scf::ForOp> marked;
    getOperation().walk([&](scf::ForOp loop) {
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

    // Vector transfers read and write the loops' tensors directly rather
    // than through rank-reducing slices of slices (what the blocks of
    // elementwise neighbours leave), which bufferization would give a
    // buffer and a copy per block.
    {
      RewritePatternSet subsets(&getContext());
      tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(subsets);
      tensor::InsertSliceOp::getCanonicalizationPatterns(subsets,
                                                         &getContext());
      if (failed(applyPatternsGreedily(getOperation(), std::move(subsets))))
        return signalPassFailure();
    }

    // vector.contract (rows × 1)·(1 × columns) to outer products (FMAs once
    // lowered to LLVM); the transposes and casts that come with them.
    RewritePatternSet patterns(&getContext());
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
    patterns.add<MathOnOneRow, LaneSumStepToFMAs>(&getContext());
    rope::populateLaneReductionPatterns(patterns, /*benefit=*/2);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
