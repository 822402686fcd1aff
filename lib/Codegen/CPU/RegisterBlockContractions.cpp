//===- RegisterBlockContractions.cpp - loops around a register block ------===//
//
// A contraction with packed operands as loops around one register block:
// per K step, `rows` broadcast elements of A times one contiguous row of
// `columns` elements of B, accumulated in registers across the whole K loop
// (a vector.contract lowered to outer products, FMAs once lowered). A large
// op is first split over the cores and into cache panels; a dynamic row
// extent into full blocks and the rows left.
//
//===----------------------------------------------------------------------===//

#include "ContractionStrategies.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::contractions;

/// Columns of a cache panel.
static constexpr int64_t kPanel = 256;
/// Reduction steps of a cache panel: its B panel (256 columns × 512 steps,
/// 512 KiB of f32) stays in L2, and each panel of K sweeps the output's
/// tiles once more (accumulators loaded and stored), which the dynamic-row
/// projections a frontend writes pay for in stalls: longer panels sweep
/// them less often, as long as their B panel fits L2.
static constexpr int64_t kReductionPanel = 512;

/// A large contraction outside any loop, its B packed into column panels:
/// rows split into an scf.forall (all cores), or where the row count is
/// only known at run time (a frontend's sequence length, often short) or
/// too small to split (a decode step's one row), the columns; then panels of
/// kPanel columns × kReductionPanel reduction steps (a B panel that stays in
/// L2 while every row block sweeps it). The tile to put into register
/// blocks.
linalg::GenericOp contractions::tileForCoresAndCaches(
    RewriterBase &rewriter, linalg::GenericOp op, const RegisterBlock &block) {
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

/// `op` rebuilt over operands cast to static shapes, its row dim `rows`
/// long (which the caller has proved: a peeled loop's full tile, or one
/// row), every other dim already static; its result cast back to the type
/// its users see. Fails where that cannot be shown from the indexing maps.
static FailureOr<linalg::GenericOp> castToStaticRows(RewriterBase &rewriter,
                                                     linalg::GenericOp op,
                                                     unsigned rowDim,
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
    operands.push_back(
        staticType == type
            ? operand.get()
            : tensor::CastOp::create(rewriter, loc, staticType, operand.get())
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
FailureOr<SmallVector<std::pair<linalg::GenericOp, RegisterBlock>>>
contractions::splitDynamicRows(RewriterBase &rewriter, linalg::GenericOp op,
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

/// The loops around one register block of `op`: the block's rows and
/// columns, one step of every other dim; parallel loops outside in the op's
/// order, reduction loops innermost.
/// For a panelled op (its column blocks last) the row blocks are outer:
/// one row block's slice of A (8 rows × a 512-step panel: 16 KiB) stays
/// in L1 while the column blocks stream their micro-panels of B from L2.
/// The other way round, a micro-panel of B (256 × 32: 32 KiB, at 256
/// steps) would have to stay, and it is the whole L1.
static FailureOr<scf::SCFTilingResult>
tileByRegisterBlock(RewriterBase &rewriter, linalg::GenericOp op,
                    const RegisterBlock &block) {
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
  return tileWith(rewriter, op, tileSizes,
                  scf::SCFTilingOptions::LoopType::ForOp, interchange);
}

/// `tile` without its unit dims except the reduction step, which the
/// vector.contract needs.
static linalg::GenericOp dropUnitDimsButReductions(RewriterBase &rewriter,
                                                   linalg::GenericOp tile) {
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
  return cast<linalg::GenericOp>(kernel);
}

/// `kernel` (a block's tile) as a named contraction, vectorised to
/// vector.contract: a generic body could be anything; this one is a
/// mul-add, with the element casts linalg.contract implies.
static LogicalResult vectorizeAsContraction(RewriterBase &rewriter,
                                            linalg::GenericOp kernel) {
  rewriter.setInsertionPoint(kernel);
  auto contract = linalg::ContractOp::create(
      rewriter, kernel.getLoc(), kernel.getResultTypes(), kernel.getDpsInputs(),
      kernel.getDpsInits(), kernel.getIndexingMaps());
  rewriter.replaceOp(kernel, contract->getResults());

  rewriter.setInsertionPoint(contract);
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, contract, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/true);
  if (failed(vectorized))
    return failure();
  rewriter.replaceOp(contract, vectorized->replacements);
  return success();
}

/// The vector.contract operands under `loop` in f32: a B read in place in
/// f16 or bf16 (packOperands' narrowInPlace) reaches vector.contract
/// narrow; it is widened there, in registers.
static void widenContractOperands(RewriterBase &rewriter, Operation *loop) {
  loop->walk([&](vector::ContractionOp op) {
    Type f32 = rewriter.getF32Type();
    rewriter.setInsertionPoint(op);
    for (OpOperand *operand : {&op.getLhsMutable(), &op.getRhsMutable()}) {
      auto type = cast<VectorType>(operand->get().getType());
      if (type.getElementType() != f32)
        operand->set(arith::ExtFOp::create(rewriter, op.getLoc(),
                                           type.clone(f32), operand->get()));
    }
  });
}

/// `op`, with static shapes and its operands packed, as loops around one
/// register block: vector.contract on (rows × 1)·(1 × columns) slices.
LogicalResult contractions::tileIntoRegisterBlocks(RewriterBase &rewriter,
                                                   linalg::GenericOp op,
                                                   const RegisterBlock &block) {
  FailureOr<scf::SCFTilingResult> tiled =
      tileByRegisterBlock(rewriter, op, block);
  if (failed(tiled))
    return failure();
  linalg::GenericOp kernel =
      dropUnitDimsButReductions(rewriter, tileOf(*tiled));
  if (failed(vectorizeAsContraction(rewriter, kernel)))
    return failure();
  widenContractOperands(rewriter, tiled->loops.front().getOperation());

  // Marks the block's loops: in the reduction ones the pass keeps the
  // accumulator in registers once the slices around it are simplified (in
  // the others its slice moves with the induction variable: nothing is
  // loop-invariant).
  for (LoopLikeOpInterface loop : tiled->loops)
    loop->setAttr(kRegisterBlockLoop, rewriter.getUnitAttr());
  return success();
}
