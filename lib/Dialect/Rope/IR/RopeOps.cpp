//===- RopeOps.cpp - rope operations --------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rope;

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

LogicalResult mlir::rope::detail::verifyStaticSizesFit(Operation *op) {
  auto check = [&](Type type, StringRef what, unsigned index) -> LogicalResult {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasRank())
      return success();
    Type element = shaped.getElementType();
    uint64_t bytes = element.isIntOrFloat()
                         ? llvm::divideCeil(element.getIntOrFloatBitWidth(), 8)
                         : 1;
    // An empty shape holds nothing; dynamic dims count as 1 (the static
    // ones alone may already be too many).
    if (llvm::is_contained(shaped.getShape(), 0))
      return success();
    uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    uint64_t size = bytes;
    for (int64_t extent : shaped.getShape()) {
      if (ShapedType::isDynamic(extent))
        continue;
      if (size > limit / static_cast<uint64_t>(extent))
        return op->emitOpError() << "expects " << what << " #" << index
                                 << " to fit in memory: " << type
                                 << " holds more than 2^63 - 1 bytes";
      size *= static_cast<uint64_t>(extent);
    }
    return success();
  };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", i)))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", i)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

/// Two extents agree when equal or when either is dynamic (checked at run
/// time by whoever produced them).
static bool extentsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Prints an extent the way tensor types do.
static std::string extentStr(int64_t e) {
  return ShapedType::isDynamic(e) ? std::string("?") : std::to_string(e);
}

/// Checks that positions are [S] or [B, S]; `what` names them in
/// diagnostics.
static LogicalResult verifyPositionsRank(Operation *op, Value positions,
                                         StringRef what) {
  int64_t rank = cast<RankedTensorType>(positions.getType()).getRank();
  if (rank != 1 && rank != 2)
    return op->emitOpError() << "expects " << what
                             << " of rank 1 ([S]) or 2 ([B, S]), got rank "
                             << rank;
  return success();
}

/// Positions [S] or [B, S] have the sequence extent `seq` and the batch
/// extent `batch` of the operand they place.
static void appendPositionRelations(SmallVectorImpl<ExtentRelation> &relations,
                                    Value positions, Extent batch, Extent seq,
                                    StringRef what) {
  int64_t rank = cast<RankedTensorType>(positions.getType()).getRank();
  if (rank != 1 && rank != 2)
    return;
  relations.push_back({Extent::of(positions, rank - 1), seq, false,
                       ("expects " + what +
                        " to have {1} entries along the sequence, got {0}")
                           .str()});
  if (rank == 2)
    relations.push_back(
        {Extent::of(positions, 0), batch, false,
         ("expects " + what + " to have batch extent {1}, got {0}").str()});
}

/// `actual` has the extents `expected` (dims of `layout`, e.g.
/// "[B, Hkv, Sk, D]"); a null expected value is a dim without a rule.
static void appendShapeRelations(SmallVectorImpl<ExtentRelation> &relations,
                                 Value actual, ArrayRef<Extent> expected,
                                 StringRef what, StringRef layout) {
  for (auto [i, extent] : llvm::enumerate(expected)) {
    if (!extent.value && ShapedType::isDynamic(extent.dim))
      continue;
    relations.push_back({Extent::of(actual, i), extent, false,
                         ("expects " + what + " of shape " + layout +
                          " with dim " + Twine(i) + " = {1}, got {0}")
                             .str()});
  }
}

/// Every dim of `b` equals the same dim of `a` (two operands of one type
/// whose dynamic extents may still differ at run time).
static void appendSameShapeRelations(SmallVectorImpl<ExtentRelation> &relations,
                                     Value a, Value b, StringRef what) {
  auto type = cast<RankedTensorType>(a.getType());
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      relations.push_back({Extent::of(b, i), Extent::of(a, i), false,
                           ("expects " + what + " of one shape, dim " +
                            Twine(i) + " is {1} and {0}")
                               .str()});
}

/// A sequence dim of a rank-`rank` input: any dim but the last (the head),
/// counted from the back when negative.
static LogicalResult verifySeqDim(Operation *op, int64_t seqDim, int64_t rank) {
  if (seqDim < -rank || seqDim > rank - 2 || seqDim == -1)
    return op->emitOpError() << "expects seq_dim in [" << -rank << ", "
                             << rank - 2 << "] and not the head dim, got "
                             << seqDim;
  return success();
}

static LogicalResult verifySpecForHeadDim(Operation *op, RotarySpecAttr spec,
                                          int64_t headDim) {
  return spec.verifyForHeadDim([op]() { return op->emitOpError(); }, headDim);
}

/// Reifies `dims` where each entry is (value, dim index) to read the extent
/// from, or a static extent already known in `type`.
static SmallVector<OpFoldResult>
mixedSizes(OpBuilder &b, Location loc, RankedTensorType type,
           ArrayRef<std::pair<Value, int64_t>> sources) {
  SmallVector<OpFoldResult> sizes;
  for (auto [i, extent] : llvm::enumerate(type.getShape())) {
    if (!ShapedType::isDynamic(extent)) {
      sizes.push_back(b.getIndexAttr(extent));
      continue;
    }
    auto [value, dim] = sources[i];
    sizes.push_back(b.createOrFold<tensor::DimOp>(loc, value, dim));
  }
  return sizes;
}

//===----------------------------------------------------------------------===//
// RotateOp
//===----------------------------------------------------------------------===//

/// The rules every rotation's input follows: rank >= 2, a static head dim
/// (the last), and a sequence dim that is not the head.
static LogicalResult verifyRotationInput(Operation *op,
                                         RankedTensorType inputType,
                                         int64_t seqDim) {
  int64_t rank = inputType.getRank();
  if (rank < 2)
    return op->emitOpError()
           << "expects an input of rank >= 2 (a sequence dim and a head dim), "
              "got rank "
           << rank;
  if (ShapedType::isDynamic(inputType.getShape().back()))
    return op->emitOpError() << "expects a static head dim (the last dim)";
  return verifySeqDim(op, seqDim, rank);
}

/// The result shape of a rotation: its input's.
static void reifyInputShape(OpBuilder &b, Location loc, Value input,
                            ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t i = 0; i < type.getRank(); ++i)
    sources.push_back({input, i});
  reifiedReturnShapes.push_back(mixedSizes(b, loc, type, sources));
}

LogicalResult RotateOp::verify() {
  RankedTensorType inputType = getInput().getType();
  if (failed(verifyRotationInput(*this, inputType, getSeqDim())))
    return failure();
  int64_t headDim = inputType.getShape().back();
  int64_t seqDim = getNormalizedSeqDim();
  RankedTensorType posType = getPositions().getType();
  if (posType.getRank() == 2 && seqDim == 0)
    return emitOpError() << "expects per-batch positions ([B, S]) only when the "
                            "sequence dim is not dim 0";
  if (failed(verifyPositionsRank(*this, getPositions(), "positions")) ||
      failed(verifySpecForHeadDim(*this, getSpec(), headDim)))
    return failure();
  return verifyStaticExtentRelations(*this, getExtentRelations());
}

SmallVector<ExtentRelation> RotateOp::getExtentRelations() {
  SmallVector<ExtentRelation> relations;
  appendPositionRelations(relations, getPositions(),
                          Extent::of(getInput(), 0),
                          Extent::of(getInput(), getNormalizedSeqDim()),
                          "positions");
  return relations;
}

LogicalResult
RotateOp::reifyResultShapes(OpBuilder &b,
                            ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  reifyInputShape(b, getLoc(), getInput(), reifiedReturnShapes);
  return success();
}

/// True when `v` is a constant whose every element is zero.
static bool isZeroConstant(Value v) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  return llvm::all_of(attr.getValues<APInt>(),
                      [](const APInt &x) { return x.isZero(); });
}

OpFoldResult RotateOp::fold(FoldAdaptor) {
  // One spelling per sequence dim, so that equal rotations compare equal
  // (composition, CSE and table sharing key on the attribute).
  if (static_cast<int64_t>(getSeqDim()) < 0) {
    setSeqDim(getNormalizedSeqDim());
    return getResult();
  }
  // Rotation by zero is the identity, unless the attention factor scales.
  if (getSpec().getEffectiveAttentionFactor() == 1.0 &&
      isZeroConstant(getPositions()))
    return getInput();
  return {};
}

namespace {
/// Whether two specs describe the same rotation up to direction, with m = 1
/// and frequencies that do not depend on the positions: only then do
/// rotations form a group (R_p R_q = R_{p+q}, R_p^T = R_{-p}).
bool composable(RotarySpecAttr a, RotarySpecAttr b) {
  if (a.getEffectiveAttentionFactor() != 1.0 ||
      b.getEffectiveAttentionFactor() != 1.0)
    return false;
  if (a.dependsOnMaxPosition() || b.dependsOnMaxPosition())
    return false;
  return a == b || a == b.getInverted();
}

/// Signed bits every element of the positions `v` fits in: the source width
/// of a sign extension, one more than its operands for a sum or difference
/// that does not wrap (as composition forms them), the widest element of a
/// constant, else the element type's width.
static unsigned signedBitsOf(Value v, unsigned depth = 0) {
  unsigned width = getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
  if (auto ext = v.getDefiningOp<arith::ExtSIOp>())
    return getElementTypeOrSelf(ext.getIn().getType()).getIntOrFloatBitWidth();
  Operation *def = v.getDefiningOp();
  if (depth < 8 && isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def) &&
      cast<arith::ArithIntegerOverflowFlagsInterface>(def).hasNoSignedWrap())
    return std::min(width,
                    std::max(signedBitsOf(def->getOperand(0), depth + 1),
                             signedBitsOf(def->getOperand(1), depth + 1)) +
                        1);
  DenseIntElementsAttr values;
  if (matchPattern(v, m_Constant(&values))) {
    unsigned bits = 1;
    for (const APInt &e : values.getValues<APInt>())
      bits = std::max(bits, e.getSignificantBits());
    return bits;
  }
  return width;
}

/// The positions p + q (or p - q) of a composed rotation, in i64 and formed
/// so that they cannot wrap: narrower positions are sign-extended first
/// (any sum of two i32 fits), and the composition applies only where every
/// sum provably fits (both operands within 63 signed bits), marked `nsw`.
/// Null when it may not fit (two i64 function arguments, say).
static Value composedPositions(PatternRewriter &rewriter, Location loc, Value p,
                               Value q, bool add) {
  if (std::max(signedBitsOf(p), signedBitsOf(q)) >= 64)
    return {};
  auto wide = cast<RankedTensorType>(p.getType()).clone(rewriter.getI64Type());
  auto widen = [&](Value v) -> Value {
    if (v.getType() == wide)
      return v;
    return arith::ExtSIOp::create(rewriter, loc, wide, v);
  };
  p = widen(p);
  q = widen(q);
  if (add)
    return arith::AddIOp::create(rewriter, loc, p, q,
                                 arith::IntegerOverflowFlags::nsw);
  return arith::SubIOp::create(rewriter, loc, p, q,
                               arith::IntegerOverflowFlags::nsw);
}

/// rotate(rotate(x, p, s), q, s') -> rotate(x, p ± q, s) when s' is s or its
/// inverse. Same-direction rotations add their positions; opposite ones
/// subtract, and cancel outright when the positions are the same value. The
/// composed positions never wrap (composedPositions): a rotation by a
/// wrapped sum is a different rotation.
struct ComposeRotations : public OpRewritePattern<RotateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RotateOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<RotateOp>();
    if (!inner || !inner->hasOneUse())
      return rewriter.notifyMatchFailure(outer, "input is not a single-use rotate");
    if (!composable(inner.getSpec(), outer.getSpec()))
      return rewriter.notifyMatchFailure(outer, "specs do not compose");
    if (inner.getNormalizedSeqDim() != outer.getNormalizedSeqDim() ||
        inner.getPositions().getType().getShape() !=
            outer.getPositions().getType().getShape())
      return rewriter.notifyMatchFailure(outer, "positions do not line up");

    bool sameDirection = inner.getSpec() == outer.getSpec();
    if (!sameDirection && inner.getPositions() == outer.getPositions()) {
      rewriter.replaceOp(outer, inner.getInput());
      return success();
    }
    Value positions =
        composedPositions(rewriter, outer.getLoc(), inner.getPositions(),
                          outer.getPositions(), sameDirection);
    if (!positions)
      return rewriter.notifyMatchFailure(outer,
                                         "i64 positions whose sum may wrap");
    rewriter.replaceOpWithNewOp<RotateOp>(outer, inner.getInput(), positions,
                                          inner.getSpec(), inner.getSeqDim());
    return success();
  }
};
} // namespace

void RotateOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<ComposeRotations>(context);
}

//===----------------------------------------------------------------------===//
// RotateWithTablesOp
//===----------------------------------------------------------------------===//

Value mlir::rope::getRotationInput(Operation *op) {
  if (auto rotation = dyn_cast<RotateOp>(op))
    return rotation.getInput();
  if (auto rotation = dyn_cast<RotateWithTablesOp>(op))
    return rotation.getInput();
  return {};
}

SmallVector<int64_t> mlir::rope::getTableRowDims(int64_t inputRank,
                                                 int64_t tableRank,
                                                 int64_t seqDim) {
  if (tableRank == inputRank)
    return llvm::to_vector(llvm::seq<int64_t>(0, inputRank - 1));
  if (tableRank == 2)
    return {seqDim};
  if (tableRank == 3 && seqDim != 0)
    return {0, seqDim};
  return {};
}

/// Checks the rotated dims [offset, offset + r) of a head of `headDim`
/// elements rotated by tables.
static LogicalResult verifyRotaryRange(Operation *op, int64_t r, int64_t offset,
                                       int64_t headDim) {
  if (r <= 0 || r % 2 != 0)
    return op->emitOpError() << "expects even, positive rotary dims, got " << r;
  if (offset < 0)
    return op->emitOpError() << "expects a non-negative offset, got " << offset;
  // As uint64_t, offset + r cannot overflow.
  if (r > headDim || offset > headDim - r)
    return op->emitOpError()
           << "expects rotary dims [" << offset << ", "
           << static_cast<uint64_t>(offset) + static_cast<uint64_t>(r)
           << ") within the head dim " << headDim;
  return success();
}

/// Checks cos/sin tables (of type `tableType`) that rotate dims of width `r`
/// of `inputType` with its sequence at `seqDim` (non-negative), as
/// rope.rotate_with_tables and rope.attention's `rotary_tables` take them;
/// `which` ("query ", "key " or empty) names them in diagnostics.
static LogicalResult verifyRotaryTables(Operation *op,
                                        RankedTensorType inputType,
                                        int64_t seqDim,
                                        RankedTensorType tableType, int64_t r,
                                        StringRef which) {
  int64_t rank = inputType.getRank();
  int64_t width = tableType.getShape().back();
  if (width != r && width != r / 2)
    return op->emitOpError()
           << "expects " << which << "tables of width " << r
           << " (one coefficient per rotated element) or " << r / 2
           << " (one per pair), got " << extentStr(width);
  SmallVector<int64_t> rowDims =
      getTableRowDims(rank, tableType.getRank(), seqDim);
  if (rowDims.empty())
    return op->emitOpError()
           << "expects " << which << "tables of rank " << rank
           << " (broadcasting like the input), 2 ([S, w]) or 3 ([B, S, w], "
              "with the sequence not at dim 0), got rank "
           << tableType.getRank();
  return success();
}

/// Each row dim of tables `cos` and `sin` (verified by verifyRotaryTables)
/// is 1 or the extent of the input dim it follows, and the two agree.
static void appendTableRelations(SmallVectorImpl<ExtentRelation> &relations,
                                 Value input, int64_t seqDim, Value cos,
                                 Value sin, StringRef which) {
  auto tableType = cast<RankedTensorType>(cos.getType());
  SmallVector<int64_t> rowDims =
      getTableRowDims(cast<RankedTensorType>(input.getType()).getRank(),
                      tableType.getRank(), seqDim);
  for (auto [tableDim, inputDim] : llvm::enumerate(rowDims))
    relations.push_back({Extent::of(cos, tableDim), Extent::of(input, inputDim),
                         /*broadcast=*/true,
                         ("expects " + which + "table dim " + Twine(tableDim) +
                          " to be 1 or the extent of input dim " +
                          Twine(inputDim) + " ({1}), got {0}")
                             .str()});
  appendSameShapeRelations(relations, cos, sin, (which + "cos and sin").str());
}

LogicalResult RotateWithTablesOp::verify() {
  RankedTensorType inputType = getInput().getType();
  if (failed(verifyRotationInput(*this, inputType, getSeqDim())))
    return failure();
  int64_t r = getRotaryDims();
  if (failed(verifyRotaryRange(*this, r, getRotaryOffset(),
                               inputType.getShape().back())))
    return failure();
  if (failed(verifyRotaryTables(*this, inputType, getNormalizedSeqDim(),
                                getCos().getType(), r, "")))
    return failure();
  return verifyStaticExtentRelations(*this, getExtentRelations());
}

SmallVector<ExtentRelation> RotateWithTablesOp::getExtentRelations() {
  SmallVector<ExtentRelation> relations;
  appendTableRelations(relations, getInput(), getNormalizedSeqDim(), getCos(),
                       getSin(), "");
  return relations;
}

LogicalResult RotateWithTablesOp::reifyResultShapes(
    OpBuilder &b, ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  reifyInputShape(b, getLoc(), getInput(), reifiedReturnShapes);
  return success();
}

namespace {
/// rotate_with_tables(x, rope.table(p, spec)) -> rope.rotate(x, p, spec')
/// with spec' the table's frequencies over this op's dims, offset and
/// layout: the tables then need not exist, and the rotation joins the
/// algebra and the folds of rope.rotate.
struct RotateWithComputedTables : public OpRewritePattern<RotateWithTablesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RotateWithTablesOp op,
                                PatternRewriter &rewriter) const override {
    auto table = op.getCos().getDefiningOp<TableOp>();
    if (!table || op.getCos() != table.getCos() ||
        op.getSin() != table.getSin())
      return rewriter.notifyMatchFailure(op, "tables are not one rope.table");
    RotarySpecAttr spec = table.getSpec();
    int64_t r = op.getRotaryDims();
    if (spec.getRotaryDims(table.getHeadDim()) != r)
      return rewriter.notifyMatchFailure(op, "table made for other dims");
    // rope.rotate reads positions [S] along its sequence dim or [B, S]
    // along dim 0 and the sequence dim, each extent the input's.
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType posType = table.getPositions().getType();
    SmallVector<int64_t> rowDims = op.getTableRowDims();
    int64_t seqDim = rowDims.back();
    if (posType.getRank() == 2 && (rowDims.front() != 0 || seqDim == 0))
      return rewriter.notifyMatchFailure(op, "positions not [B, S]");
    for (auto [posDim, inputDim] : llvm::enumerate(rowDims)) {
      int64_t extent = posType.getDimSize(posDim);
      int64_t expected = inputType.getDimSize(inputDim);
      if (!ShapedType::isDynamic(extent) && !ShapedType::isDynamic(expected) &&
          extent != expected)
        return rewriter.notifyMatchFailure(op, "tables broadcast");
    }
    auto rotation = RotarySpecAttr::get(
        op.getContext(), spec.getBase(), r == op.getHeadDim() ? 0 : r,
        op.getRotaryOffset(), op.getLayout(), spec.getScaling(),
        spec.getAttentionFactor(), spec.getInverse());
    rewriter.replaceOpWithNewOp<RotateOp>(op, op.getInput(),
                                          table.getPositions(), rotation,
                                          seqDim);
    return success();
  }
};
} // namespace

void RotateWithTablesOp::getCanonicalizationPatterns(
    RewritePatternSet &results, MLIRContext *context) {
  results.add<RotateWithComputedTables>(context);
}

//===----------------------------------------------------------------------===//
// TableOp
//===----------------------------------------------------------------------===//

LogicalResult TableOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  auto posType = dyn_cast<RankedTensorType>(adaptor.getPositions().getType());
  if (!posType)
    return emitOptionalError(location, "'rope.table' op expects ranked positions");
  // Rules the result shape depends on are checked here, before a type is
  // built from them; the verifier repeats them with the full diagnostics.
  int64_t r = adaptor.getSpec().getRotaryDims(adaptor.getHeadDim());
  if (adaptor.getHeadDim() <= 0 || r <= 0 || r % 2 != 0)
    return emitOptionalError(location,
                             "'rope.table' op expects a positive head_dim and "
                             "even, positive rotary dims, got head_dim ",
                             adaptor.getHeadDim(), " and rotary dims ", r);
  SmallVector<int64_t> shape(posType.getShape());
  shape.push_back(r / 2);
  auto type = RankedTensorType::get(shape, Float32Type::get(context));
  inferred.assign({type, type});
  return success();
}

LogicalResult TableOp::verify() {
  return verifySpecForHeadDim(*this, getSpec(), getHeadDim());
}

/// The tables take their shape from the positions: nothing to relate.
SmallVector<ExtentRelation> TableOp::getExtentRelations() { return {}; }

LogicalResult
TableOp::reifyResultShapes(OpBuilder &b,
                           ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  RankedTensorType type = getCos().getType();
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t i = 0; i < type.getRank(); ++i)
    sources.push_back({getPositions(), i});
  SmallVector<OpFoldResult> sizes = mixedSizes(b, getLoc(), type, sources);
  reifiedReturnShapes.assign({sizes, sizes});
  return success();
}

namespace {
/// A table identical to an earlier one in the same block (same positions,
/// spec and head dim) is that table: Q and K rotated alike share one.
struct ShareIdenticalTables : public OpRewritePattern<TableOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TableOp op,
                                PatternRewriter &rewriter) const override {
    for (Operation *user : op.getPositions().getUsers()) {
      auto other = dyn_cast<TableOp>(user);
      if (!other || other == op || other->getBlock() != op->getBlock() ||
          !other->isBeforeInBlock(op) || other.getSpec() != op.getSpec() ||
          other.getHeadDim() != op.getHeadDim())
        continue;
      rewriter.replaceOp(op, other.getResults());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no earlier identical table");
  }
};

/// A table of positions cast to a less static type (what folding a loop's
/// tile sizes leaves: a 64-key slice seen as tensor<?xi64>) is the table of
/// the static positions, cast back: its consumers then see static tiles.
struct TableOfStaticPositions : public OpRewritePattern<TableOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TableOp op,
                                PatternRewriter &rewriter) const override {
    auto cast = op.getPositions().getDefiningOp<tensor::CastOp>();
    if (!cast || !tensor::canFoldIntoConsumerOp(cast))
      return rewriter.notifyMatchFailure(op, "positions not a folding cast");
    auto table = TableOp::create(rewriter, op.getLoc(), cast.getSource(),
                                 op.getSpec(), op.getHeadDim());
    SmallVector<Value> results;
    for (auto [old, now] : llvm::zip_equal(op.getResults(), table.getResults()))
      results.push_back(
          tensor::CastOp::create(rewriter, op.getLoc(), old.getType(), now));
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void TableOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<ShareIdenticalTables, TableOfStaticPositions>(context);
}

void TableOp::getAsmResultNames(function_ref<void(Value, StringRef)> setNameFn) {
  setNameFn(getCos(), "cos");
  setNameFn(getSin(), "sin");
}

static std::optional<int64_t> optionalInt(IntegerAttr attr) {
  return attr ? std::optional<int64_t>(attr.getInt()) : std::nullopt;
}

/// "[Hq]" or, with a leading extent, e.g. "[32, Hq]".
static std::string headsLayout(StringRef headsStr, int64_t leading) {
  if (!leading)
    return headsStr.str();
  return "[" + std::to_string(leading) + ", " +
         headsStr.drop_front().str();
}

/// The extents of ALiBi slopes (`heads`, e.g. [Hq]) and of a T5 bias table
/// ([buckets, heads...]).
static void appendHeadRelations(SmallVectorImpl<ExtentRelation> &relations,
                                Value alibi, Value relativeBias,
                                RelativeBucketsAttr buckets,
                                ArrayRef<Extent> heads, StringRef headsStr) {
  auto ranked = [&](Value v, size_t rank) {
    return v && cast<RankedTensorType>(v.getType()).getRank() ==
                    static_cast<int64_t>(rank);
  };
  if (ranked(alibi, heads.size()))
    appendShapeRelations(relations, alibi, heads, "ALiBi slopes", headsStr);
  if (buckets && ranked(relativeBias, heads.size() + 1)) {
    SmallVector<Extent> expected = {Extent::constant(buckets.getNumBuckets())};
    expected.append(heads.begin(), heads.end());
    appendShapeRelations(relations, relativeBias, expected,
                         "a relative bias table",
                         headsLayout(headsStr, buckets.getNumBuckets()));
  }
}

/// The rules `rope.attention` and `rope.online_attention` share for window,
/// soft-capping, ALiBi slopes and the T5 bias table. `heads` is the shape of
/// the per-head operands (`[Hq]`, or `[Hkv, G]` for the online op), spelled
/// `headsStr` in diagnostics.
static LogicalResult
verifyAttentionExtras(Operation *op, std::optional<int64_t> window, bool causal,
                      std::optional<APFloat> softcap, Value alibi,
                      Value relativeBias, RelativeBucketsAttr buckets,
                      ArrayRef<int64_t> heads, StringRef headsStr) {
  if (window) {
    if (*window <= 0)
      return op->emitOpError() << "expects a positive window, got " << *window;
    if (!causal)
      return op->emitOpError()
             << "expects 'causal' with a window (query at p sees keys in "
                "(p - window, p])";
  }
  if (softcap) {
    double c = softcap->convertToDouble();
    if (!std::isfinite(c) || c <= 0.0)
      return op->emitOpError() << "expects a positive finite softcap, got " << c;
  }
  // Ranks here; extents are relations (appendHeadRelations).
  auto checkHeads = [&](Value v, StringRef what, int64_t leading) -> LogicalResult {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() == static_cast<int64_t>(heads.size()) + (leading != 0))
      return success();
    return op->emitOpError() << "expects " << what << " of shape "
                             << headsLayout(headsStr, leading) << ", got "
                             << type;
  };
  if (alibi && failed(checkHeads(alibi, "ALiBi slopes", 0)))
    return failure();
  if (static_cast<bool>(relativeBias) != static_cast<bool>(buckets))
    return op->emitOpError()
           << "expects a relative bias table and its buckets together";
  if (relativeBias &&
      failed(checkHeads(relativeBias, "a relative bias table",
                        buckets.getNumBuckets())))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto q = dyn_cast<RankedTensorType>(adaptor.getQuery().getType());
  auto v = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!q || !v || q.getRank() != 4 || v.getRank() != 4)
    return emitOptionalError(location, "'rope.attention' op expects query, key "
                                       "and value of rank 4 ([B, H, S, D])");
  // [B, Hq, Sq, Dv]; a batch extent known from either side is kept.
  int64_t batch = ShapedType::isDynamic(q.getDimSize(0)) ? v.getDimSize(0)
                                                         : q.getDimSize(0);
  inferred.push_back(RankedTensorType::get(
      {batch, q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType()));
  return success();
}

/// The rules of attention's `rotary_tables`: all four or none, with a
/// `#rope.pairs` rotation (not a spec) exactly when they are there, and each
/// pair of tables of one type in a form that rotates its operand along the
/// sequence (dim 2) with one row per token: a rank-4 table broadcasts over
/// the heads.
static LogicalResult verifyAttentionTables(AttentionOp op) {
  bool pairs = isa_and_present<RotaryPairsAttr>(op.getRotaryAttr());
  Value tables[] = {op.getQueryCos(), op.getQuerySin(), op.getKeyCos(),
                    op.getKeySin()};
  if (!op.getKeyCos()) {
    if (pairs)
      return op.emitOpError() << "expects rotary_layout, rotary_dims and "
                                 "rotary_offset only with rotary_tables";
    return success();
  }
  if (llvm::any_of(tables, [](Value t) { return !t; }))
    return op.emitOpError() << "expects four rotary tables (query cos, query "
                               "sin, key cos, key sin)";
  if (op.getRotarySpec())
    return op.emitOpError()
           << "expects either a rotary spec or rotary tables, not both";
  if (!pairs)
    return op.emitOpError() << "expects the rotated dims of its rotary tables "
                               "(rotary = #rope.pairs<...>)";
  int64_t d = op.getHeadDim();
  RotaryRange range = *op.getRotaryRange();
  int64_t r = range.dims;
  if (failed(verifyRotaryRange(op, r, range.offset, d)))
    return failure();
  for (auto [input, cos, sin, which] :
       {std::tuple{op.getQuery(), op.getQueryCos(), op.getQuerySin(), "query "},
        std::tuple{op.getKey(), op.getKeyCos(), op.getKeySin(), "key "}}) {
    auto inputType = cast<RankedTensorType>(input.getType());
    auto cosType = cast<RankedTensorType>(cos.getType());
    if (cosType != sin.getType())
      return op.emitOpError() << "expects " << which << "cos and sin of one "
                              << "type, got " << cosType << " and "
                              << sin.getType();
    if (failed(verifyRotaryTables(op, inputType, 2, cosType, r, which)))
      return failure();
    int64_t rank = cosType.getRank();
    // A rank-4 table does not vary by head (the kernels index tables by
    // row); one row per token is a relation (getExtentRelations).
    if (rank == 4 && cosType.getDimSize(1) != 1)
      return op.emitOpError() << "expects " << which
                              << "tables of rank 4 to broadcast over the heads "
                                 "(dim 1 a static 1), got "
                              << extentStr(cosType.getDimSize(1));
  }
  return success();
}

double AttentionOp::getEffectiveScale() {
  if (auto scale = getScale())
    return scale->convertToDouble();
  // An empty head's logits are 0 whatever the scale; 1/sqrt(0) would make
  // them 0·inf = NaN.
  int64_t d = getHeadDim();
  return d > 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0;
}

LogicalResult AttentionOp::verify() {
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType();
  if (k.getRank() != 4)
    return emitOpError() << "expects key of rank 4 ([B, Hkv, Sk, D]), got rank "
                         << k.getRank();
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return emitOpError() << "expects query, key and value of one element type, "
                            "got "
                         << q.getElementType() << ", " << k.getElementType()
                         << ", " << v.getElementType();
  int64_t hq = q.getDimSize(1), d = q.getDimSize(3), hkv = k.getDimSize(1);
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(k.getDimSize(3)))
    return emitOpError() << "expects static query and key head dims";
  if (!extentsAgree(d, k.getDimSize(3)))
    return emitOpError() << "expects query and key head dims to agree, got " << d
                         << " and " << extentStr(k.getDimSize(3));
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv) ||
      ShapedType::isDynamic(v.getDimSize(1)))
    return emitOpError() << "expects static head counts";
  if (hkv != v.getDimSize(1))
    return emitOpError() << "expects key and value to have the same head "
                            "count, got "
                         << hkv << " and " << v.getDimSize(1);
  // No heads at all is an empty attention; query heads need a kv head.
  if (hkv == 0 ? hq != 0 : hq % hkv != 0)
    return emitOpError() << "expects the query head count (" << hq
                         << ") to be a multiple of the key/value head count ("
                         << hkv << ")";
  if (ShapedType::isDynamic(v.getDimSize(3)))
    return emitOpError() << "expects a static value head dim";

  if (auto scale = getScale()) {
    double s = scale->convertToDouble();
    if (!std::isfinite(s) || s <= 0.0)
      return emitOpError() << "expects a positive finite scale, got " << s;
  }

  if (Value mask = getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (maskType.getRank() < 2 || maskType.getRank() > 4)
      return emitOpError() << "expects a mask of rank 2 to 4 broadcastable to "
                              "[B, Hq, Sq, Sk], got rank "
                           << maskType.getRank();
    Type maskElt = maskType.getElementType();
    if (!maskElt.isInteger(1) && maskElt != q.getElementType() &&
        !maskElt.isF32())
      return emitOpError() << "expects an i1 mask, or an additive mask of f32 "
                              "or the query element type, got "
                           << maskElt;
  }

  if (Value sinks = getSinks()) {
    auto type = cast<RankedTensorType>(sinks.getType());
    if (type.getRank() != 1)
      return emitOpError() << "expects sinks of shape [" << hq
                           << "] (one logit per query head), got " << type;
  }
  if (static_cast<bool>(getQueryPositions()) !=
      static_cast<bool>(getKeyPositions()))
    return emitOpError() << "expects both query and key positions or neither";
  if (Value qp = getQueryPositions())
    if (failed(verifyPositionsRank(*this, qp, "query positions")) ||
        failed(verifyPositionsRank(*this, getKeyPositions(), "key positions")))
      return failure();
  if (auto spec = getRotarySpec())
    if (failed(verifySpecForHeadDim(*this, spec, d)))
      return failure();
  if (failed(verifyAttentionTables(*this)) ||
      failed(verifyAttentionExtras(*this, optionalInt(getWindowAttr()),
                                   getCausal(), getSoftcap(), getAlibiSlopes(),
                                   getRelativeBias(), getRelativeBucketsAttr(),
                                   {hq}, "[Hq]")))
    return failure();
  return verifyStaticExtentRelations(*this, getExtentRelations());
}

SmallVector<ExtentRelation> AttentionOp::getExtentRelations() {
  Value q = getQuery(), k = getKey(), v = getValue();
  Extent batch = Extent::of(q, 0), hq = Extent::of(q, 1),
         sq = Extent::of(q, 2), sk = Extent::of(k, 2);
  SmallVector<ExtentRelation> relations = {
      {Extent::of(k, 0), batch, false,
       "expects query, key and value to share the batch extent, got {1} "
       "(query) and {0} (key)"},
      {Extent::of(v, 0), batch, false,
       "expects query, key and value to share the batch extent, got {1} "
       "(query) and {0} (value)"},
      {Extent::of(v, 0), Extent::of(k, 0), false,
       "expects query, key and value to share the batch extent, got {1} "
       "(key) and {0} (value)"},
      {Extent::of(v, 2), sk, false,
       "expects key and value to have the same sequence length, got {1} and "
       "{0}"}};
  if (Value mask = getMask()) {
    // Trailing-aligned against [B, Hq, Sq, Sk].
    Extent full[] = {batch, hq, sq, sk};
    int64_t rank = cast<RankedTensorType>(mask.getType()).getRank();
    for (int64_t i = 0; i < rank && i < 4; ++i)
      relations.push_back({Extent::of(mask, rank - 1 - i), full[3 - i], true,
                           ("expects mask dim " + Twine(rank - 1 - i) +
                            " to be 1 or {1}, got {0}")
                               .str()});
  }
  if (Value sinks = getSinks())
    relations.push_back(
        {Extent::of(sinks, 0), hq, false,
         "expects sinks of shape [{1}] (one logit per query head), got [{0}]"});
  if (Value qp = getQueryPositions()) {
    appendPositionRelations(relations, qp, batch, sq, "query positions");
    appendPositionRelations(relations, getKeyPositions(), batch, sk,
                            "key positions");
  }
  if (getKeyCos()) {
    for (auto [input, cos, sin, which] :
         {std::tuple{q, getQueryCos(), getQuerySin(), "query "},
          std::tuple{k, getKeyCos(), getKeySin(), "key "}}) {
      appendTableRelations(relations, input, 2, cos, sin, which);
      // One row per token: the sequence does not broadcast.
      int64_t rank = cast<RankedTensorType>(cos.getType()).getRank();
      relations.push_back({Extent::of(cos, rank - 2), Extent::of(input, 2),
                           false,
                           (Twine("expects ") + which +
                            "tables with one row per token ({1}), got {0}")
                               .str()});
    }
  }
  appendHeadRelations(relations, getAlibiSlopes(), getRelativeBias(),
                      getRelativeBucketsAttr(), {hq}, "[Hq]");
  return relations;
}

LogicalResult
AttentionOp::reifyResultShapes(OpBuilder &b,
                               ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  auto type = cast<RankedTensorType>(getResult().getType());
  reifiedReturnShapes.push_back(mixedSizes(
      b, getLoc(), type,
      {{getQuery(), 0}, {getQuery(), 1}, {getQuery(), 2}, {getValue(), 3}}));
  return success();
}

//===----------------------------------------------------------------------===//
// OnlineAttentionOp
//===----------------------------------------------------------------------===//

/// Checks that `value` has the rank of `layout` (e.g. "[B, Hkv, Sk, D]",
/// `rank` names); its extents are relations (getExtentRelations).
static LogicalResult verifyRank(Operation *op, Value value, int64_t rank,
                                StringRef what, StringRef layout) {
  Type type = value.getType();
  if (cast<RankedTensorType>(type).getRank() == rank)
    return success();
  return op->emitOpError() << "expects " << what << " of shape " << layout
                           << ", got " << type;
}

/// Checks the ranks and element types of `op`'s operands and outs (their
/// extents are relations).
static LogicalResult verifyOnlineAttentionShapes(OnlineAttentionOp op) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto k = cast<RankedTensorType>(op.getKey().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  if (q.getRank() != 5)
    return op.emitOpError()
           << "expects a query of rank 5 ([B, Hkv, G, Sq, D]), got rank "
           << q.getRank();
  // The query may already be rotated in f32 (a query tile rotated once,
  // before its key loop).
  if (k.getElementType() != v.getElementType() ||
      (q.getElementType() != k.getElementType() && !q.getElementType().isF32()))
    return op.emitOpError() << "expects key and value of one element type, "
                               "and a query of that type or f32";
  if (ShapedType::isDynamic(q.getDimSize(4)))
    return op.emitOpError() << "expects a static head dim";
  if (failed(verifyRank(op, op.getKey(), 4, "key", "[B, Hkv, Sk, D]")))
    return failure();
  if (v.getRank() != 4)
    return op.emitOpError() << "expects a value of rank 4 ([B, Hkv, Sk, Dv])";
  if (op.getOutputs().size() != 3)
    return op.emitOpError()
           << "expects three outs (accumulator, max, sum), got "
           << op.getOutputs().size();
  if (failed(verifyRank(op, op.getAccumulatorInit(), 5, "an accumulator",
                        "[B, Hkv, G, Sq, Dv]")) ||
      failed(verifyRank(op, op.getMaxInit(), 4, "a running max",
                        "[B, Hkv, G, Sq]")) ||
      failed(verifyRank(op, op.getSumInit(), 4, "a running sum",
                        "[B, Hkv, G, Sq]")))
    return failure();
  return success();
}

/// Checks that `op` has query and key positions together, and has them
/// where its masks or biases need them.
static LogicalResult verifyOnlineAttentionPositions(OnlineAttentionOp op) {
  if (static_cast<bool>(op.getQueryPositions()) !=
      static_cast<bool>(op.getKeyPositions()))
    return op.emitOpError()
           << "expects both query and key positions or neither";
  // The rotation reads its tables by row; positions serve the masks and
  // biases only.
  bool needsPositions =
      op.getCausal() || op.getAlibiSlopes() || op.getRelativeBias();
  if (needsPositions && !op.getQueryPositions())
    return op.emitOpError() << "expects positions for causal, ALiBi or "
                               "relative-bias attention";
  if (Value qp = op.getQueryPositions())
    if (failed(verifyPositionsRank(op, qp, "query positions")) ||
        failed(verifyPositionsRank(op, op.getKeyPositions(), "key positions")))
      return failure();
  return success();
}

/// Checks that `op` has cos/sin tables exactly when it rotates, of a width
/// and shape that fit its rotated dims for head dim `d`.
static LogicalResult verifyOnlineAttentionTables(OnlineAttentionOp op,
                                                 int64_t d) {
  bool rotates = static_cast<bool>(op.getRotaryAttr());
  if (rotates != static_cast<bool>(op.getKeyCos()) ||
      (op.getQueryCos() && !rotates))
    return op.emitOpError()
           << "expects key cos/sin tables exactly when rotary, and query "
              "tables only then (without them the query is already rotated)";
  std::optional<RotaryRange> range = op.getRotaryRange();
  if (!range)
    return success();
  if (failed(verifyRotaryRange(op, range->dims, range->offset, d)))
    return failure();
  // One row per token ([S, w] or [B, S, w]), one coefficient per pair or
  // per rotated element.
  int64_t r = range->dims;
  for (auto [table, what] : {std::pair{op.getQueryCos(), "query cos"},
                             {op.getQuerySin(), "query sin"},
                             {op.getKeyCos(), "key cos"},
                             {op.getKeySin(), "key sin"}}) {
    if (!table)
      continue;
    auto type = cast<RankedTensorType>(table.getType());
    int64_t width = type.getShape().back();
    if (width != r && width != r / 2)
      return op.emitOpError()
             << "expects " << what << " of width " << r << " or " << r / 2
             << ", got " << extentStr(width);
    if (type.getRank() != 2 && type.getRank() != 3)
      return op.emitOpError() << "expects " << what
                              << " of shape [S, w] or [B, S, w], got " << type;
  }
  return success();
}

LogicalResult OnlineAttentionOp::verify() {
  if (failed(verifyOnlineAttentionShapes(*this)))
    return failure();
  auto q = cast<RankedTensorType>(getQuery().getType());
  int64_t d = q.getDimSize(4);

  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale) || scale <= 0.0)
    return emitOpError() << "expects a positive finite scale, got " << scale;

  if (Value mask = getMask())
    if (cast<RankedTensorType>(mask.getType()).getRank() != 5)
      return emitOpError() << "expects a mask of rank 5 ([B, Hkv, G, Sq, Sk], "
                              "1 to broadcast)";

  if (failed(verifyOnlineAttentionPositions(*this)) ||
      failed(verifyOnlineAttentionTables(*this, d)))
    return failure();
  if (failed(verifyAttentionExtras(*this, optionalInt(getWindowAttr()),
                                   getCausal(), getSoftcap(), getAlibiSlopes(),
                                   getRelativeBias(), getRelativeBucketsAttr(),
                                   {q.getDimSize(1), q.getDimSize(2)},
                                   "[Hkv, G]")))
    return failure();
  return verifyStaticExtentRelations(*this, getExtentRelations());
}

SmallVector<ExtentRelation> OnlineAttentionOp::getExtentRelations() {
  Value q = getQuery(), k = getKey(), v = getValue();
  Extent batch = Extent::of(q, 0), hkv = Extent::of(q, 1),
         g = Extent::of(q, 2), sq = Extent::of(q, 3), d = Extent::of(q, 4),
         sk = Extent::of(k, 2), dv = Extent::of(v, 3);
  Extent any = Extent::constant(ShapedType::kDynamic);
  SmallVector<ExtentRelation> relations;
  appendShapeRelations(relations, k, {batch, hkv, any, d}, "key",
                       "[B, Hkv, Sk, D]");
  appendShapeRelations(relations, v, {batch, hkv, sk, dv}, "value",
                       "[B, Hkv, Sk, Dv]");
  appendShapeRelations(relations, getAccumulatorInit(), {batch, hkv, g, sq, dv},
                       "an accumulator", "[B, Hkv, G, Sq, Dv]");
  appendShapeRelations(relations, getMaxInit(), {batch, hkv, g, sq},
                       "a running max", "[B, Hkv, G, Sq]");
  appendShapeRelations(relations, getSumInit(), {batch, hkv, g, sq},
                       "a running sum", "[B, Hkv, G, Sq]");
  if (Value mask = getMask()) {
    Extent full[] = {batch, hkv, g, sq, sk};
    for (int64_t i = 0; i < 5; ++i)
      relations.push_back({Extent::of(mask, i), full[i], true,
                           ("expects mask dim " + Twine(i) +
                            " to be 1 or {1}, got {0}")
                               .str()});
  }
  if (Value qp = getQueryPositions()) {
    appendPositionRelations(relations, qp, batch, sq, "query positions");
    appendPositionRelations(relations, getKeyPositions(), batch, sk,
                            "key positions");
  }
  for (auto [table, seq, what] :
       {std::tuple{getQueryCos(), sq, "query cos"},
        std::tuple{getQuerySin(), sq, "query sin"},
        std::tuple{getKeyCos(), sk, "key cos"},
        std::tuple{getKeySin(), sk, "key sin"}}) {
    if (!table)
      continue;
    if (cast<RankedTensorType>(table.getType()).getRank() == 2)
      appendShapeRelations(relations, table, {seq}, what, "[S, w]");
    else
      appendShapeRelations(relations, table, {batch, seq}, what, "[B, S, w]");
  }
  appendHeadRelations(relations, getAlibiSlopes(), getRelativeBias(),
                      getRelativeBucketsAttr(), {hkv, g}, "[Hkv, G]");
  return relations;
}

//===----------------------------------------------------------------------===//
// LinearAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult LinearAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  auto q = dyn_cast<RankedTensorType>(adaptor.getQuery().getType());
  auto v = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!q || !v || q.getRank() != 4 || v.getRank() != 4)
    return emitOptionalError(location,
                             "'rope.linear_attention' op expects query, key and "
                             "value of rank 4 ([B, H, S, D])");
  inferred.push_back(RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType()));
  return success();
}

LogicalResult LinearAttentionOp::verify() {
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType();
  if (k.getRank() != 4)
    return emitOpError() << "expects key of rank 4, got rank " << k.getRank();
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return emitOpError() << "expects query, key and value of one element type";
  if (ShapedType::isDynamic(q.getDimSize(3)) ||
      ShapedType::isDynamic(k.getDimSize(3)) ||
      ShapedType::isDynamic(v.getDimSize(3)))
    return emitOpError() << "expects static head dims";
  if (Value pos = getPositions())
    if (failed(verifyPositionsRank(*this, pos, "positions")))
      return failure();
  if (auto spec = getRotary())
    if (failed(verifySpecForHeadDim(*this, *spec, q.getDimSize(3))))
      return failure();
  return verifyStaticExtentRelations(*this, getExtentRelations());
}

SmallVector<ExtentRelation> LinearAttentionOp::getExtentRelations() {
  Value q = getQuery(), k = getKey(), v = getValue();
  SmallVector<ExtentRelation> relations;
  for (int64_t i = 0; i < 4; ++i)
    relations.push_back({Extent::of(k, i), Extent::of(q, i), false,
                         ("expects query and key of the same shape, dim " +
                          Twine(i) + " is {1} and {0}")
                             .str()});
  for (int64_t i = 0; i < 3; ++i)
    relations.push_back({Extent::of(v, i), Extent::of(q, i), false,
                         ("expects value to share [B, H, S] with query, dim " +
                          Twine(i) + " is {0} instead of {1}")
                             .str()});
  if (Value pos = getPositions())
    appendPositionRelations(relations, pos, Extent::of(q, 0), Extent::of(q, 2),
                            "positions");
  return relations;
}

LogicalResult LinearAttentionOp::reifyResultShapes(
    OpBuilder &b, ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  auto type = cast<RankedTensorType>(getResult().getType());
  reifiedReturnShapes.push_back(mixedSizes(
      b, getLoc(), type,
      {{getQuery(), 0}, {getQuery(), 1}, {getQuery(), 2}, {getValue(), 3}}));
  return success();
}

//===----------------------------------------------------------------------===//
// SinusoidalOp
//===----------------------------------------------------------------------===//

LogicalResult SinusoidalOp::verify() {
  ArrayRef<int64_t> pos = getPositions().getType().getShape();
  ArrayRef<int64_t> res = getResult().getType().getShape();
  if (res.size() != pos.size() + 1)
    return emitOpError() << "expects a result of rank " << pos.size() + 1
                         << " (positions rank + 1), got rank " << res.size();
  for (auto [i, extents] : llvm::enumerate(llvm::zip(pos, res)))
    if (!extentsAgree(std::get<0>(extents), std::get<1>(extents)))
      return emitOpError() << "expects result dim " << i
                           << " to match the positions, got "
                           << extentStr(std::get<1>(extents)) << " and "
                           << extentStr(std::get<0>(extents));
  int64_t dim = res.back();
  if (ShapedType::isDynamic(dim) || dim <= 0 || dim % 2 != 0)
    return emitOpError() << "expects a static, even, positive encoding dim, got "
                         << extentStr(dim);
  if (dim > kMaxFrequencyDims)
    return emitOpError() << "expects an encoding dim of at most "
                         << kMaxFrequencyDims
                         << " (the frequencies are compile-time constants), got "
                         << dim;
  double base = getBase().convertToDouble();
  if (!std::isfinite(base) || base <= 0.0)
    return emitOpError() << "expects a positive finite base, got " << base;
  return success();
}

/// The result takes its shape from the positions (a type rule, verified
/// above): nothing to relate at run time.
SmallVector<ExtentRelation> SinusoidalOp::getExtentRelations() { return {}; }

LogicalResult
SinusoidalOp::reifyResultShapes(OpBuilder &b,
                                ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  RankedTensorType type = getResult().getType();
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t i = 0; i + 1 < type.getRank(); ++i)
    sources.push_back({getPositions(), i});
  sources.push_back({Value(), 0}); // The encoding dim is static.
  reifiedReturnShapes.push_back(mixedSizes(b, getLoc(), type, sources));
  return success();
}

//===----------------------------------------------------------------------===//
// Runtime verification
//===----------------------------------------------------------------------===//

// Each op checks its extent relations with a dynamic side, and the byte
// counts of its dynamically shaped results, before it runs.
#define ROPE_RUNTIME_VERIFICATION(OpTy)                                        \
  void OpTy::generateRuntimeVerification(                                      \
      OpBuilder &builder, Location loc,                                        \
      function_ref<std::string(Operation *, StringRef)> generateErrorMessage) { \
    buildRuntimeChecks(*this, getExtentRelations(), builder, loc,              \
                       generateErrorMessage);                                  \
  }
ROPE_RUNTIME_VERIFICATION(RotateOp)
ROPE_RUNTIME_VERIFICATION(RotateWithTablesOp)
ROPE_RUNTIME_VERIFICATION(TableOp)
ROPE_RUNTIME_VERIFICATION(AttentionOp)
ROPE_RUNTIME_VERIFICATION(OnlineAttentionOp)
ROPE_RUNTIME_VERIFICATION(LinearAttentionOp)
ROPE_RUNTIME_VERIFICATION(SinusoidalOp)
#undef ROPE_RUNTIME_VERIFICATION

//===----------------------------------------------------------------------===//
// AssertOp
//===----------------------------------------------------------------------===//

LogicalResult AssertOp::verify() {
  // Every `{i}` must name a value: the runtime substitutes them blindly.
  StringRef message = getMessage();
  for (size_t i = message.find('{'); i != StringRef::npos;
       i = message.find('{', i + 1)) {
    size_t close = message.find('}', i);
    unsigned index;
    if (close == StringRef::npos ||
        message.slice(i + 1, close).getAsInteger(10, index))
      continue;
    if (index >= getValues().size())
      return emitOpError() << "expects a value for each placeholder, {"
                           << index << "} has none (" << getValues().size()
                           << " values)";
  }
  return success();
}

LogicalResult AssertOp::canonicalize(AssertOp op, PatternRewriter &rewriter) {
  if (!matchPattern(op.getCondition(), m_One()))
    return failure();
  rewriter.eraseOp(op);
  return success();
}

//===----------------------------------------------------------------------===//
// rope.attention's rotation clause
//===----------------------------------------------------------------------===//

// The op holds its rotation in one attribute, `rotary`; its text keeps the
// two spellings users write: `rotary(#rope.spec<...>)`, or
// `rotary_tables(%qc, %qs, %kc, %ks : ...)` followed by the rotated dims
// `rotary_layout<L>`, `rotary_dims = r`, `rotary_offset = o` (each printed
// when it differs from its default), which form a `#rope.pairs`.

using TableOperand = std::optional<OpAsmParser::UnresolvedOperand>;

static OptionalParseResult
parseRotation(OpAsmParser &parser, RotationAttrInterface &rotary,
              TableOperand &queryCos, TableOperand &querySin,
              TableOperand &keyCos, TableOperand &keySin, Type &queryCosType,
              Type &querySinType, Type &keyCosType, Type &keySinType) {
  SMLoc specLoc = parser.getCurrentLocation();
  bool any = false;
  if (succeeded(parser.parseOptionalKeyword("rotary"))) {
    any = true;
    Attribute attr;
    if (parser.parseLParen() || parser.parseAttribute(attr) ||
        parser.parseRParen())
      return failure();
    rotary = dyn_cast<RotationAttrInterface>(attr);
    if (!rotary)
      return parser.emitError(specLoc)
             << "expects a rotary spec (#rope.spec<...>), got " << attr;
  }
  if (succeeded(parser.parseOptionalKeyword("rotary_tables"))) {
    any = true;
    if (rotary)
      return parser.emitError(specLoc)
             << "expects either a rotary spec or rotary tables, not both";
    TableOperand *operands[] = {&queryCos, &querySin, &keyCos, &keySin};
    Type *types[] = {&queryCosType, &querySinType, &keyCosType, &keySinType};
    if (parser.parseLParen())
      return failure();
    for (auto [i, operand] : llvm::enumerate(operands))
      if ((i && parser.parseComma()) || parser.parseOperand(operand->emplace()))
        return failure();
    if (parser.parseColon())
      return failure();
    for (auto [i, type] : llvm::enumerate(types))
      if ((i && parser.parseComma()) || parser.parseType(*type))
        return failure();
    if (parser.parseRParen())
      return failure();
  }
  SMLoc pairsLoc = parser.getCurrentLocation();
  RotaryLayout layout = RotaryLayout::half;
  int64_t dims = 0, offset = 0;
  bool anyPairs = false;
  if (succeeded(parser.parseOptionalKeyword("rotary_layout"))) {
    anyPairs = true;
    StringRef name;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseLess() || parser.parseKeyword(&name) ||
        parser.parseGreater())
      return failure();
    std::optional<RotaryLayout> parsed = symbolizeRotaryLayout(name);
    if (!parsed)
      return parser.emitError(loc) << "expects a rotary layout (half or "
                                      "interleaved), got '"
                                   << name << "'";
    layout = *parsed;
  }
  for (auto [keyword, value] :
       {std::pair{"rotary_dims", &dims}, std::pair{"rotary_offset", &offset}}) {
    if (failed(parser.parseOptionalKeyword(keyword)))
      continue;
    anyPairs = true;
    if (parser.parseEqual() || parser.parseInteger(*value))
      return failure();
  }
  if (!any && !anyPairs)
    return std::nullopt;
  if (anyPairs && !keyCos)
    return parser.emitError(pairsLoc)
           << "expects rotary_layout, rotary_dims and rotary_offset only with "
              "rotary_tables";
  if (keyCos)
    rotary =
        RotaryPairsAttr::getChecked([&] { return parser.emitError(pairsLoc); },
                                    parser.getContext(), dims, offset, layout);
  return success(!keyCos || rotary);
}

static void printRotation(OpAsmPrinter &printer, AttentionOp,
                          RotationAttrInterface rotary, Value queryCos,
                          Value querySin, Value keyCos, Value keySin, Type,
                          Type, Type, Type) {
  auto pairs = dyn_cast_if_present<RotaryPairsAttr>(rotary);
  // An op whose tables are incomplete does not verify and prints in the
  // generic form; here all four are there or none.
  if (!queryCos || !querySin || !keySin)
    keyCos = Value();
  StringRef separator = "";
  auto next = [&]() -> OpAsmPrinter & {
    printer << separator;
    separator = " ";
    return printer;
  };
  // A spec, or (in an op that does not verify) pairs without tables.
  if (rotary && (!pairs || !keyCos))
    next() << "rotary(" << rotary << ")";
  if (keyCos)
    next() << "rotary_tables(" << queryCos << ", " << querySin << ", " << keyCos
           << ", " << keySin << " : " << queryCos.getType() << ", "
           << querySin.getType() << ", " << keyCos.getType() << ", "
           << keySin.getType() << ")";
  if (!pairs || !keyCos)
    return;
  if (pairs.getLayout() != RotaryLayout::half)
    next() << "rotary_layout<" << stringifyRotaryLayout(pairs.getLayout())
           << ">";
  if (pairs.getDims() != 0)
    next() << "rotary_dims = " << pairs.getDims();
  if (pairs.getOffset() != 0)
    next() << "rotary_offset = " << pairs.getOffset();
}

#define GET_OP_CLASSES
#include "rope/Dialect/Rope/IR/RopeOps.cpp.inc"
