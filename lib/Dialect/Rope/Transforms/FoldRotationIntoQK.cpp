//===- FoldRotationIntoQK.cpp - rotate Q and K inside attention -----------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFOLDROTATIONINTOQK
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// What attention rotates inside: un-rotated Q and K, and either a spec
/// with the positions it reads or the four tables with the dims they rotate.
struct InsideRotation {
  Value query, key;
  RotarySpecAttr spec;
  Value queryPositions, keyPositions;
  SmallVector<Value, 4> tables;
  RotaryLayoutAttr layout;
  IntegerAttr dims, offset;
};

/// `op` with Q and K replaced by `rotation`'s, which it then rotates inside.
void replaceWithRotatingAttention(PatternRewriter &rewriter, AttentionOp op,
                                  const InsideRotation &rotation) {
  Value positions[2] = {op.getQueryPositions(), op.getKeyPositions()};
  if (rotation.queryPositions)
    positions[0] = rotation.queryPositions, positions[1] = rotation.keyPositions;
  Value tables[4] = {};
  llvm::copy(rotation.tables, tables);
  rewriter.replaceOpWithNewOp<AttentionOp>(
      op, op.getResult().getType(), rotation.query, rotation.key, op.getValue(),
      op.getMask(), positions[0], positions[1], op.getSinks(),
      op.getAlibiSlopes(), op.getRelativeBias(), tables[0], tables[1],
      tables[2], tables[3], op.getScaleAttr(), op.getCausalAttr(),
      rotation.spec, rotation.layout, rotation.dims, rotation.offset,
      op.getWindowAttr(), op.getSoftcapAttr(), op.getRelativeBucketsAttr());
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
    bool samePositions =
        op.getQueryPositions()
            ? op.getQueryPositions() == q.getPositions() &&
                  op.getKeyPositions() == k.getPositions()
            : !op.needsPositions();
    if (!samePositions ||
        (q.getSpec().dependsOnMaxPosition() &&
         q.getPositions() != k.getPositions())) {
      if (!rotationTablesFitAttention(q) || !rotationTablesFitAttention(k))
        return rewriter.notifyMatchFailure(
            op, "positions differ and a table would not have one row per token");
      InsideRotation rotation;
      rotation.query = q.getInput();
      rotation.key = k.getInput();
      int64_t headDim = q.getHeadDim();
      auto qTable = TableOp::create(rewriter, op.getLoc(), q.getPositions(),
                                    q.getSpec(), headDim);
      TableOp kTable =
          k.getPositions() == q.getPositions()
              ? qTable
              : TableOp::create(rewriter, op.getLoc(), k.getPositions(),
                                k.getSpec(), headDim);
      rotation.tables = {qTable.getCos(), qTable.getSin(), kTable.getCos(),
                         kTable.getSin()};
      RotarySpecAttr spec = q.getSpec();
      if (spec.getLayout() != RotaryLayout::half)
        rotation.layout = RotaryLayoutAttr::get(getContext(), spec.getLayout());
      if (spec.getRotaryDims(headDim) != headDim)
        rotation.dims = rewriter.getI64IntegerAttr(spec.getRotaryDims(headDim));
      if (spec.getOffset() != 0)
        rotation.offset = rewriter.getI64IntegerAttr(spec.getOffset());
      replaceWithRotatingAttention(rewriter, op, rotation);
      return success();
    }
    InsideRotation rotation;
    rotation.query = q.getInput();
    rotation.key = k.getInput();
    rotation.spec = q.getSpec();
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
    if (q.getLayout() != RotaryLayout::half)
      rotation.layout = q.getLayoutAttr();
    if (q.getDims() != 0)
      rotation.dims = q.getDimsAttr();
    if (q.getOffset() != 0)
      rotation.offset = q.getOffsetAttr();
    replaceWithRotatingAttention(rewriter, op, rotation);
    return success();
  }
};

/// A frontend may rotate Q or K in another layout and transpose it into
/// attention's (GPT-J rotates [B, S, H, D]). The rotation commutes with a
/// transpose that keeps the head dim last: rotate the transposed input, with
/// the tables transposed alike (or, in the [S, w] / [B, S, w] forms, read
/// along the moved sequence dim), so the rotation then meets the attention.
struct RotateBeforeTransposeIntoAttention
    : public OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    Value result = transpose.getResult()[0];
    if (!llvm::any_of(result.getUsers(), [&](Operation *user) {
          auto attention = dyn_cast<AttentionOp>(user);
          return attention && !attention.rotatesInside() &&
                 (attention.getQuery() == result ||
                  attention.getKey() == result);
        }))
      return rewriter.notifyMatchFailure(transpose, "does not feed attention");
    auto rotation = transpose.getInput().getDefiningOp<RotateWithTablesOp>();
    if (!rotation || !rotation->hasOneUse())
      return rewriter.notifyMatchFailure(transpose, "not a lone table rotation");
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    int64_t rank = permutation.size();
    if (permutation.back() != rank - 1)
      return rewriter.notifyMatchFailure(transpose, "moves the head dim");
    int64_t seqDim =
        llvm::find(permutation, rotation.getNormalizedSeqDim()) -
        permutation.begin();
    Location loc = transpose.getLoc();
    auto transposed = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape;
      for (int64_t dim : permutation)
        shape.push_back(type.getDimSize(dim));
      if (!type.hasStaticShape())
        return {};
      Value init =
          tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
      return linalg::TransposeOp::create(rewriter, loc, v, init, permutation)
          .getResult()[0];
    };
    Value cos = rotation.getCos(), sin = rotation.getSin();
    int64_t tableRank = cast<RankedTensorType>(cos.getType()).getRank();
    if (tableRank == rank) {
      if (!cast<RankedTensorType>(cos.getType()).hasStaticShape())
        return rewriter.notifyMatchFailure(transpose, "dynamic table shape");
    } else if (tableRank == 3 && permutation.front() != 0) {
      return rewriter.notifyMatchFailure(transpose, "moves the batch dim");
    }
    Value input = transposed(rotation.getInput());
    if (!input)
      return rewriter.notifyMatchFailure(transpose, "dynamic input shape");
    if (tableRank == rank) {
      cos = transposed(cos);
      sin = transposed(sin);
    }
    // Tables of the input's rank say by their own dims where they apply;
    // the sequence dim then keeps its default.
    if (tableRank == rank)
      seqDim = -2;
    rewriter.replaceOpWithNewOp<RotateWithTablesOp>(
        transpose, input, cos, sin, rotation.getLayoutAttr(),
        rotation.getDimsAttr(), rotation.getOffsetAttr(),
        rewriter.getI64IntegerAttr(seqDim));
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
               RotateBeforeTransposeIntoAttention>(patterns.getContext());
}
