//===- ContractionPlanning.cpp - which strategy a contraction takes -------===//
//
// The forms --rope-vectorize-contractions recognises and the order it tries
// them in: dot products (a one-row product outside any loop, reading both
// inputs along the reduction), lane sums (a reduction that reads all its
// inputs along their innermost dim, or a plain contraction whose rows fit
// one register block), and register blocks for every other contraction
// whose column extent they divide.
//
//===----------------------------------------------------------------------===//

#include "ContractionStrategies.h"
#include "TileProducts.h"
#include "rope/Codegen/CPU/HostRegisterBlock.h"
#include "rope/Codegen/CPU/LaneReductions.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::contractions;

/// Vector lanes of the dot-product kernel (f32 accumulators): one AVX-512
/// register, two AVX2 ones; the lanes that one lane reduction adds up.
static constexpr int64_t kDotLanes = rope::kReductionLanes;

/// A contraction outside any loop (a user's matmul) with at least this many
/// multiply-adds is split across cores and into cache panels first; the
/// attention tiles are already both.
static constexpr int64_t kMinCacheTiledWork = int64_t(1) << 22;

std::optional<int64_t>
contractions::largestDivisor(int64_t extent, ArrayRef<int64_t> candidates) {
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
static std::optional<RegisterBlock> planBlock(linalg::LinalgOp op, int64_t rows,
                                              int64_t columns) {
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
  std::optional<int64_t> r =
      ShapedType::isDynamic(ranges[*row])
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

/// A frontend's linear layer is `matmul(x, transpose(W))` (torch-mlir spells
/// `x @ W.T` so); packing copies B anyway, so it copies straight from W's
/// stored layout instead of from a transposed copy of the whole weight, and
/// dot products read W as stored.
std::pair<Value, AffineMap> contractions::throughTranspose(Value value,
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

bool contractions::isLargeTopLevel(linalg::GenericOp op) {
  if (op->getParentOfType<LoopLikeOpInterface>())
    return false;
  // A dynamic extent (the rows) counts once: the static ones decide.
  return staticIterations(op) >= kMinCacheTiledWork;
}

std::optional<DotProductForm>
contractions::matchDotProduct(linalg::GenericOp op) {
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

std::optional<LaneSumForm> contractions::matchLaneSum(linalg::GenericOp op,
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

ContractionPlan
contractions::planContractions(Operation *root,
                               const RegisterBlockShape &shape) {
  ContractionPlan plan;
  root->walk([&](linalg::LinalgOp op) {
    // Nothing to compute: left to the plain lowering; a product on the
    // tile engine's packed operands is --rope-lower-tile-products' own.
    if (hasEmptyLoop(op) || op->hasAttr(tiles::kTileProduct))
      return;
    // Lane sums first, except for a one-row product outside any loop: its
    // dot products (rewriteAsDotProducts) also split W's rows over the
    // cores.
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (generic && !matchDotProduct(generic))
      if (std::optional<LaneSumForm> form = matchLaneSum(generic, shape.rows)) {
        plan.laneSums.push_back({generic, *form});
        return;
      }
    if (std::optional<RegisterBlock> block =
            planBlock(op, shape.rows, shape.columns))
      plan.registerBlocks.push_back({op, *block});
  });
  return plan;
}
