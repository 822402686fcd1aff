//===- FoldRotationIntoQK.cpp - rotate Q and K inside attention -----------===//

#include "rope/Fusion/Passes.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"
#include "rope/Analysis/OpClassification.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFOLDROTATIONINTOQK
#include "rope/Fusion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// What attention rotates inside: un-rotated Q and K, and either a spec
/// with the positions it reads or the four tables with the dims they rotate
/// (`#rope.pairs`).
struct InsideRotation {
  Value query, key;
  RotationAttrInterface rotary;
  Value queryPositions, keyPositions;
  SmallVector<Value, 4> tables;
};

/// `op` with Q and K replaced by `rotation`'s, which it then rotates inside.
void replaceWithRotatingAttention(PatternRewriter &rewriter, AttentionOp op,
                                  const InsideRotation &rotation) {
  AttentionFields fields = AttentionFields::of(op);
  fields.query = rotation.query;
  fields.key = rotation.key;
  if (rotation.queryPositions) {
    fields.queryPositions = rotation.queryPositions;
    fields.keyPositions = rotation.keyPositions;
  }
  if (!rotation.tables.empty()) {
    fields.queryCos = rotation.tables[0];
    fields.querySin = rotation.tables[1];
    fields.keyCos = rotation.tables[2];
    fields.keySin = rotation.tables[3];
  }
  fields.rotary = rotation.rotary;
  rewriter.replaceOpWithNewOp<AttentionOp>(op, op.getResult().getType(),
                                           fields);
}

/// The rotation feeding an attention operand along its sequence dim (2).
template <typename RotationOp>
RotationOp rotationAlongSequence(Value v) {
  auto rotate = v.getDefiningOp<RotationOp>();
  if (!rotate || rotate.getNormalizedSeqDim() != 2)
    return {};
  return rotate;
}

/// Whether the tables of `rotation` (positions × [r/2], from rope.table)
/// would hold one row per token of its input, as attention reads them: its
/// positions are `[S]` or `[B, S]` of the input's sequence.
bool rotationTablesFitAttention(RotateOp rotation) {
  auto positions = cast<RankedTensorType>(rotation.getPositions().getType());
  RankedTensorType input = rotation.getInput().getType();
  int64_t seq = positions.getShape().back();
  if (seq != input.getDimSize(2))
    return false;
  return positions.getRank() == 1 || positions.getDimSize(0) == 1 ||
         positions.getDimSize(0) == input.getDimSize(0);
}

/// Whether `a` and `b` hold the same positions: one value, or the results
/// of two identical side-effect-free ops of the same operands (frontends
/// reshape the position ids once for each rotation).
bool samePositions(Value a, Value b) {
  if (a == b)
    return true;
  auto resultA = dyn_cast_or_null<OpResult>(a);
  auto resultB = dyn_cast_or_null<OpResult>(b);
  if (!resultA || !resultB ||
      resultA.getResultNumber() != resultB.getResultNumber())
    return false;
  Operation *opA = resultA.getOwner(), *opB = resultB.getOwner();
  return isMemoryEffectFree(opA) && opA->getNumRegions() == 0 &&
         OperationEquivalence::isEquivalentTo(
             opA, opB, OperationEquivalence::IgnoreLocations);
}

/// The rope.table of `rotation`'s coefficients.
TableOp buildTableOf(PatternRewriter &rewriter, Location loc,
                     RotateOp rotation) {
  return TableOp::create(rewriter, loc, rotation.getPositions(),
                         rotation.getSpec(), rotation.getHeadDim());
}

/// The rope.table of Q's and of K's rotation: one, shared, when both read
/// the same positions with the same spec.
std::pair<TableOp, TableOp> buildRotationTables(PatternRewriter &rewriter,
                                                Location loc, RotateOp q,
                                                RotateOp k) {
  TableOp qTable = buildTableOf(rewriter, loc, q);
  if (samePositions(k.getPositions(), q.getPositions()) &&
      k.getSpec() == q.getSpec())
    return {qTable, qTable};
  return {qTable, buildTableOf(rewriter, loc, k)};
}

struct FoldRotationsIntoAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.rotatesInside())
      return rewriter.notifyMatchFailure(op, "already rotates inside");
    auto q = rotationAlongSequence<RotateOp>(op.getQuery());
    auto k = rotationAlongSequence<RotateOp>(op.getKey());
    if (!q || !k)
      return rewriter.notifyMatchFailure(op, "Q or K is not a rotation");
    if (q.getSpec() != k.getSpec())
      return rewriter.notifyMatchFailure(op, "Q and K rotate differently");
    // Attention reads one set of positions for its rotation and its masks.
    // When they cannot be the rotations' (the attention has positions of its
    // own, or masks by default positions), or when length-dependent
    // frequencies (dynamic, longrope) would see the largest of Q's and K's
    // positions instead of each its own, the rotations go in as their
    // tables: exactly what each computes, read by row.
    bool positionsShared =
        op.getQueryPositions()
            ? op.getQueryPositions() == q.getPositions() &&
                  op.getKeyPositions() == k.getPositions()
            : !op.needsPositions();
    if (!positionsShared ||
        (q.getSpec().dependsOnMaxPosition() &&
         !samePositions(q.getPositions(), k.getPositions()))) {
      if (!rotationTablesFitAttention(q) || !rotationTablesFitAttention(k))
        return rewriter.notifyMatchFailure(
            op, "positions differ and a table would not have one row per token");
      InsideRotation rotation;
      rotation.query = q.getInput();
      rotation.key = k.getInput();
      int64_t headDim = q.getHeadDim();
      auto [qTable, kTable] = buildRotationTables(rewriter, op.getLoc(), q, k);
      rotation.tables = {qTable.getCos(), qTable.getSin(), kTable.getCos(),
                         kTable.getSin()};
      // The tables carry the frequencies; the op keeps the rotated dims.
      RotaryRange range = q.getRotaryRange();
      rotation.rotary = RotaryPairsAttr::get(
          getContext(), range.dims == headDim ? 0 : range.dims, range.offset,
          range.layout);
      replaceWithRotatingAttention(rewriter, op, rotation);
      return success();
    }
    InsideRotation rotation;
    rotation.query = q.getInput();
    rotation.key = k.getInput();
    rotation.rotary = q.getSpec();
    rotation.queryPositions = q.getPositions();
    rotation.keyPositions = k.getPositions();
    replaceWithRotatingAttention(rewriter, op, rotation);
    return success();
  }
};

/// Whether attention can read `rotation`'s tables as its own: one row per
/// token along the sequence, the same for every head.
bool tablesFitAttention(RotateWithTablesOp rotation) {
  RankedTensorType input = rotation.getInput().getType();
  RankedTensorType table = rotation.getCos().getType();
  int64_t rank = table.getRank();
  if (table.getDimSize(rank - 2) != input.getDimSize(2))
    return false;
  return rank != 4 || table.getDimSize(1) == 1;
}

/// Rotations by tables (a frontend's cos/sin) fold the same way; the tables
/// are indexed by row, so no positions need agree.
struct FoldTableRotationsIntoAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.rotatesInside())
      return rewriter.notifyMatchFailure(op, "already rotates inside");
    auto q = rotationAlongSequence<RotateWithTablesOp>(op.getQuery());
    auto k = rotationAlongSequence<RotateWithTablesOp>(op.getKey());
    if (!q || !k)
      return rewriter.notifyMatchFailure(op, "Q or K is not a table rotation");
    if (q.getLayout() != k.getLayout() ||
        q.getRotaryDims() != k.getRotaryDims() ||
        q.getRotaryOffset() != k.getRotaryOffset())
      return rewriter.notifyMatchFailure(op, "Q and K rotate different dims");
    if (!tablesFitAttention(q) || !tablesFitAttention(k))
      return rewriter.notifyMatchFailure(
          op, "tables vary by head or broadcast along the sequence");
    InsideRotation rotation;
    rotation.query = q.getInput();
    rotation.key = k.getInput();
    rotation.tables = {q.getCos(), q.getSin(), k.getCos(), k.getSin()};
    rotation.rotary = RotaryPairsAttr::get(getContext(), q.getDims(),
                                           q.getOffset(), q.getLayout());
    replaceWithRotatingAttention(rewriter, op, rotation);
    return success();
  }
};

/// The operand and the permutation of a transpose in either spelling.
Value transposeSource(linalg::TransposeOp op) { return op.getInput(); }
Value transposeSource(tosa::TransposeOp op) { return op.getInput1(); }
SmallVector<int64_t> transposePermutation(linalg::TransposeOp op) {
  return llvm::to_vector(op.getPermutation());
}
SmallVector<int64_t> transposePermutation(tosa::TransposeOp op) {
  return llvm::to_vector_of<int64_t>(op.getPerms());
}

/// A frontend may rotate Q or K in another layout and transpose it into
/// attention's (GPT-J rotates [B, S, H, D]). The rotation commutes with a
/// transpose that keeps the head dim last: rotate the transposed input, with
/// the tables transposed alike (or, in the [S, w] / [B, S, w] forms, read
/// along the moved sequence dim), so the rotation then meets the attention.
/// The transpose is linalg's or tosa's; the new ones are linalg's.
template <typename TransposeOp>
struct RotateBeforeTransposeIntoAttention
    : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern<TransposeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    Value result = transpose->getResult(0);
    if (!llvm::any_of(result.getUsers(), [&](Operation *user) {
          auto attention = dyn_cast<AttentionOp>(user);
          return attention && !attention.rotatesInside() &&
                 (attention.getQuery() == result ||
                  attention.getKey() == result);
        }))
      return rewriter.notifyMatchFailure(transpose, "does not feed attention");
    auto rotation =
        transposeSource(transpose).template getDefiningOp<RotateWithTablesOp>();
    if (!rotation || !rotation->hasOneUse())
      return rewriter.notifyMatchFailure(transpose, "not a lone table rotation");
    SmallVector<int64_t> permutation = transposePermutation(transpose);
    int64_t rank = permutation.size();
    if (permutation.back() != rank - 1)
      return rewriter.notifyMatchFailure(transpose, "moves the head dim");
    int64_t seqDim =
        llvm::find(permutation, rotation.getNormalizedSeqDim()) -
        permutation.begin();
    Location loc = transpose.getLoc();
    auto transposed = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, v);
      SmallVector<OpFoldResult> shape;
      for (int64_t dim : permutation)
        shape.push_back(sizes[dim]);
      Value init =
          tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
      return linalg::TransposeOp::create(rewriter, loc, v, init, permutation)
          .getResult()[0];
    };
    Value cos = rotation.getCos(), sin = rotation.getSin();
    int64_t tableRank = cast<RankedTensorType>(cos.getType()).getRank();
    if (tableRank == 3 && permutation.front() != 0)
      return rewriter.notifyMatchFailure(transpose, "moves the batch dim");
    Value input = transposed(rotation.getInput());
    if (tableRank == rank) {
      cos = transposed(cos);
      sin = transposed(sin);
    }
    // Tables of the input's rank say by their own dims where they apply;
    // the sequence dim then keeps its default.
    if (tableRank == rank)
      seqDim = -2;
    Value rotated = RotateWithTablesOp::create(
        rewriter, loc, input, cos, sin, rotation.getLayoutAttr(),
        rotation.getDimsAttr(), rotation.getOffsetAttr(),
        rewriter.getI64IntegerAttr(seqDim));
    // The transpose may have stated more static sizes than its operand had.
    if (rotated.getType() != result.getType())
      rotated = tensor::CastOp::create(rewriter, loc, result.getType(), rotated);
    rewriter.replaceOp(transpose, rotated);
    return success();
  }
};

/// A rotation that an operand of a contraction reads, through views: the
/// un-rotated input, the dims it turns, its cos/sin tables (as
/// rope.rotate_with_tables reads them; a spec rotation's are built from its
/// positions once the fold is certain), and the map from the contraction's
/// loops to the input's indices.
struct RotatedOperand {
  Operation *rotation;
  Value input;
  RotaryRange dims;
  int64_t seqDim;
  AffineMap map;
  Value cos, sin;
};

std::optional<RotatedOperand> rotatedOperand(linalg::LinalgOp op,
                                             OpOperand &operand) {
  analysis::Term t = analysis::peelViews(analysis::makeTerm(
      operand.get(), op.getMatchingIndexingMap(&operand)));
  if (auto rotation = t.value.getDefiningOp<RotateOp>())
    return RotatedOperand{rotation,
                          rotation.getInput(),
                          rotation.getRotaryRange(),
                          rotation.getNormalizedSeqDim(),
                          t.map,
                          Value(),
                          Value()};
  if (auto rotation = t.value.getDefiningOp<RotateWithTablesOp>())
    return RotatedOperand{rotation,
                          rotation.getInput(),
                          rotation.getRotaryRange(),
                          rotation.getNormalizedSeqDim(),
                          t.map,
                          rotation.getCos(),
                          rotation.getSin()};
  return std::nullopt;
}

/// Gives the spec rotations among `sides` their tables: rope.table of their
/// positions, one shared when both rotate alike.
void buildSpecTables(PatternRewriter &rewriter, Location loc,
                     MutableArrayRef<RotatedOperand> sides) {
  auto q = dyn_cast<RotateOp>(sides[0].rotation);
  auto k = dyn_cast<RotateOp>(sides[1].rotation);
  std::pair<TableOp, TableOp> tables;
  if (q && k)
    tables = buildRotationTables(rewriter, loc, q, k);
  else if (q)
    tables.first = buildTableOf(rewriter, loc, q);
  else if (k)
    tables.second = buildTableOf(rewriter, loc, k);
  for (auto [side, table] :
       llvm::zip_equal(sides, std::array{tables.first, tables.second}))
    if (table) {
      side.cos = table.getCos();
      side.sin = table.getSin();
    }
}

/// Matches a product `op` of two rotated operands, `sides`, reduced along
/// `reduction`: the rotated head of both, whose dims they pair alike.
LogicalResult matchRotatedProduct(linalg::LinalgOp op,
                                  PatternRewriter &rewriter,
                                  unsigned &reduction,
                                  std::array<RotatedOperand, 2> &sides) {
  std::optional<unsigned> loop = analysis::getMultiplyAccumulateLoop(op);
  if (!loop || op->getNumResults() != 1)
    return rewriter.notifyMatchFailure(op, "not a product");
  reduction = *loop;
  std::optional<RotatedOperand> lhs =
      rotatedOperand(op, *op.getDpsInputOperand(0));
  std::optional<RotatedOperand> rhs =
      rotatedOperand(op, *op.getDpsInputOperand(1));
  if (!lhs || !rhs)
    return rewriter.notifyMatchFailure(op, "an operand is not rotated");
  sides = {*lhs, *rhs};
  AffineExpr d = getAffineDimExpr(reduction, op.getContext());
  for (RotatedOperand &side : sides) {
    // The reduction runs along the rotated head, and only there.
    AffineMap map = side.map;
    if (map.getResults().back() != d ||
        llvm::any_of(map.getResults().drop_back(), [&](AffineExpr e) {
          return e.isFunctionOfDim(reduction);
        }))
      return rewriter.notifyMatchFailure(op, "the reduction is not the head");
  }
  // Both sides must pair the same head dims alike, so that pair t of one
  // meets pair t of the other.
  RotaryRange dims = sides[0].dims;
  int64_t headDim =
      cast<RankedTensorType>(sides[0].input.getType()).getShape().back();
  if (sides[1].dims.dims != dims.dims || sides[1].dims.offset != dims.offset ||
      sides[1].dims.layout != dims.layout ||
      cast<RankedTensorType>(sides[1].input.getType()).getShape().back() !=
          headDim)
    return rewriter.notifyMatchFailure(op, "Q and K rotate different dims");
  return success();
}

/// Rotated Q and K that meet in a plain product (a Q·Kᵀ that was not raised
/// to attention: extra ops between, an unusual mask): the product reads
/// the un-rotated tensors and rotates them as they enter the reduction, so
/// no rotated tensor is needed. The reduction over the head dim splits: the
/// dims a partial rotation passes through are one product (of slices of
/// the inputs), the rotated ones another over the pairs, each side's pair
/// rotated in the product's body by its own tables (a frontend's, or
/// `rope.table` of a spec rotation's positions), both members' products
/// added into the first product's result.
struct FoldRotationsIntoProduct
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    unsigned reduction;
    std::array<RotatedOperand, 2> sides;
    if (failed(matchRotatedProduct(op, rewriter, reduction, sides)))
      return failure();
    Location loc = op.getLoc();
    buildSpecTables(rewriter, loc, sides);

    std::array<lowering::ProductSide, 2> productSides;
    for (auto [side, productSide] : llvm::zip_equal(sides, productSides))
      productSide = {side.input, side.map, {side.cos, side.sin}, side.seqDim};
    Value product = lowering::buildProductRotatingPairs(
        rewriter, loc, productSides, sides[0].dims,
        op.getDpsInitOperand(0)->get(),
        op.getMatchingIndexingMap(op.getDpsInitOperand(0)),
        op.getIteratorTypesArray(), reduction);
    rewriter.replaceOp(op, product);
    return success();
  }
};

struct RopeFoldRotationIntoQKPass
    : public rope::impl::RopeFoldRotationIntoQKBase<RopeFoldRotationIntoQKPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldRotationIntoQKPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::rope::populateFoldRotationIntoQKPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldRotationsIntoAttention, FoldTableRotationsIntoAttention,
               RotateBeforeTransposeIntoAttention<linalg::TransposeOp>,
               RotateBeforeTransposeIntoAttention<tosa::TransposeOp>>(
      patterns.getContext());
  // Products that attention did not take (lower benefit: attention first).
  patterns.add<FoldRotationsIntoProduct>(patterns.getContext(), /*benefit=*/0);
}
