//===- DecomposeAttention.cpp - FlashAttention-style attention ------------===//
//
// rope.attention -> for each query tile, for each key tile: logits of the
// tile, then the online-softmax update
//   m' = max(m, rowmax(s)),  c = exp(m − m'),  p = exp(s − m'),
//   l' = c·l + rowsum(p),    acc' = c·acc + p·V,
// and finally out = acc / l. Only tiles exist; the S×S scores never do.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEATTENTION
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

namespace {

/// Slice [offset, offset + size) of dim `dim` of `t`, all of every other dim.
Value sliceDim(OpBuilder &b, Location loc, Value t, int64_t dim,
               OpFoldResult offset, OpFoldResult size) {
  auto type = cast<RankedTensorType>(t.getType());
  int64_t rank = type.getRank();
  if (dim < 0)
    dim += rank;
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  offsets[dim] = offset;
  sizes[dim] = size;
  return tensor::ExtractSliceOp::create(b, loc, t, offsets, sizes, strides);
}

/// Positions and tables are [S] / [S, h] or [B, S] / [B, S, h]: the sequence
/// is dim 0 or 1 by rank.
Value slicePositions(OpBuilder &b, Location loc, Value pos, OpFoldResult offset,
                     OpFoldResult size) {
  return sliceDim(b, loc, pos, -1, offset, size);
}
CosSin sliceTable(OpBuilder &b, Location loc, CosSin table, OpFoldResult offset,
                  OpFoldResult size) {
  return {sliceDim(b, loc, table.cos, -2, offset, size),
          sliceDim(b, loc, table.sin, -2, offset, size)};
}

/// Elementwise generic over the rank of `like` (f32 result).
Value elementwise(OpBuilder &b, Location loc, ValueRange ins,
                  ArrayRef<AffineMap> inMaps, Value like,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  auto type = cast<RankedTensorType>(like.getType());
  unsigned n = type.getRank();
  Value init = emptyTensor(b, loc, tensor::getMixedSizes(b, loc, like),
                           b.getF32Type());
  SmallVector<AffineMap> maps(inMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(n, b.getContext()));
  return linalg::GenericOp::create(
             b, loc, init.getType(), ins, ValueRange{init}, maps,
             SmallVector<IteratorType>(n, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, ValueRange{fn(nb, nl, args)});
             })
      .getResult(0);
}

/// The query heads of kv head `kh` (G of them) of a mask whose head dim (rank
/// 3 or 4: third from last) is not broadcast; other masks are returned whole.
Value sliceMaskHeads(OpBuilder &b, Location loc, Value mask, Value kh, int64_t g) {
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t headDim = type.getRank() - 3;
  if (headDim < 0 || type.getDimSize(headDim) == 1)
    return mask;
  Value first = arith::MulIOp::create(b, loc, kh,
                                      arith::ConstantIndexOp::create(b, loc, g));
  return sliceDim(b, loc, mask, headDim, first, b.getIndexAttr(g));
}

struct DecomposeAttention : public OpRewritePattern<AttentionOp> {
  DecomposeAttention(MLIRContext *ctx, int64_t queryTile, int64_t keyTile)
      : OpRewritePattern(ctx), queryTile(queryTile), keyTile(keyTile) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    // An empty query or key sequence has nothing to tile (and slices of a
    // zero-sized dim at folded constant offsets would not verify); the plain
    // lowering handles it.
    if (op.getQuery().getType().getDimSize(2) == 0 ||
        op.getKey().getType().getDimSize(2) == 0)
      return rewriter.notifyMatchFailure(op, "empty query or key sequence");
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type f32 = b.getF32Type();
    AttentionPlan plan = planAttention(b, loc, op);

    // Tables for all positions, built once; tiles slice them.
    CosSin qTable, kTable;
    if (plan.rotary) {
      qTable = buildTable(b, loc, plan.qPos, plan.invFreq, plan.rotary);
      kTable = plan.qPos == plan.kPos
                   ? qTable
                   : buildTable(b, loc, plan.kPos, plan.invFreq, plan.rotary);
    }

    Value sq = getValueOrCreateConstantIndexOp(b, loc, plan.sq);
    Value sk = getValueOrCreateConstantIndexOp(b, loc, plan.sk);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value qStep = arith::ConstantIndexOp::create(b, loc, queryTile);
    Value kStep = arith::ConstantIndexOp::create(b, loc, keyTile);
    OpFoldResult hkv = b.getIndexAttr(plan.hkv), g = b.getIndexAttr(plan.g);
    Value outInit = emptyTensor(b, loc, {plan.batch, hkv, g, plan.sq, plan.dv},
                                plan.elementType);
    float negInf = -std::numeric_limits<float>::infinity();

    // (kv head, query tile) pairs are independent: each owns its block of
    // the output. They form an scf.forall, which the CPU pipeline runs on all
    // cores; the kv heads keep decode (a single query tile) parallel too.
    AttentionPlan tilePlan = plan;
    tilePlan.hkv = 1;
    OpFoldResult one = b.getIndexAttr(1);
    auto queryLoop = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{hkv, plan.sq},
        ArrayRef<OpFoldResult>{one, b.getIndexAttr(queryTile)}, ValueRange{outInit},
        /*mapping=*/std::nullopt,
        [&](OpBuilder &b, Location loc, ValueRange regionArgs) {
          Value kh = regionArgs[0];
          Value qi = regionArgs[1];
          Value outSlice = regionArgs[2];
          // This kv head's keys, values and (mask) query heads.
          Value kHead = sliceDim(b, loc, plan.k, 1, kh, one);
          Value vHead = sliceDim(b, loc, plan.v, 1, kh, one);
          Value maskHead = plan.mask ? sliceMaskHeads(b, loc, plan.mask, kh, plan.g)
                                     : Value();
          Value tq = arith::MinSIOp::create(
              b, loc, qStep, arith::SubIOp::create(b, loc, sq, qi));
          Value qBlock = sliceDim(b, loc, sliceDim(b, loc, plan.q5, 1, kh, one), 3,
                                  qi, tq);
          Value qPos = plan.qPos ? slicePositions(b, loc, plan.qPos, qi, tq) : Value();
          if (plan.rotary)
            qBlock = buildRotation(b, loc, qBlock, sliceTable(b, loc, qTable, qi, tq),
                                   plan.rotary, 3, f32);
          SmallVector<OpFoldResult> rowSizes = {plan.batch, one, g, tq};
          SmallVector<OpFoldResult> accSizes = {plan.batch, one, g, tq, plan.dv};
          Value m0 = filledTensor(b, loc, rowSizes, f32, b.getF32FloatAttr(negInf));
          Value l0 = filledTensor(b, loc, rowSizes, f32, b.getF32FloatAttr(0));
          Value acc0 = filledTensor(b, loc, accSizes, f32, b.getF32FloatAttr(0));
          Value qMax = plan.causal ? buildMaxPosition(b, loc, qPos) : Value();

          auto keyLoop = scf::ForOp::create(
              b, loc, zero, sk, kStep, ValueRange{m0, l0, acc0},
              [&](OpBuilder &b, Location loc, Value kj, ValueRange kIter) {
                Value tk = arith::MinSIOp::create(
                    b, loc, kStep, arith::SubIOp::create(b, loc, sk, kj));
                Value kPos =
                    plan.kPos ? slicePositions(b, loc, plan.kPos, kj, tk) : Value();
                auto update = [&](OpBuilder &b, Location loc) {
                  SmallVector<Value> next =
                      onlineSoftmaxStep(b, loc, tilePlan, kHead, vHead, maskHead,
                                        kTable, qBlock, qPos, kPos,
                                        qi, tq, kj, tk, kIter);
                  scf::YieldOp::create(b, loc, next);
                };
                if (!plan.causal) {
                  update(b, loc);
                  return;
                }
                // Skip key tiles entirely in the future of every query.
                Value visible = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::sle,
                    buildMinPosition(b, loc, kPos), qMax);
                auto ifOp = scf::IfOp::create(
                    b, loc, visible, update,
                    [&](OpBuilder &b, Location loc) {
                      scf::YieldOp::create(b, loc, kIter);
                    });
                scf::YieldOp::create(b, loc, ifOp.getResults());
              });

          Value out = buildNormalizedOutput(b, loc, keyLoop.getResult(2),
                                            keyLoop.getResult(1), plan.elementType);
          SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), kh,
                                               b.getIndexAttr(0), qi,
                                               b.getIndexAttr(0)};
          SmallVector<OpFoldResult> strides(5, b.getIndexAttr(1));
          auto inParallel = scf::InParallelOp::create(b, loc);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(inParallel.getBody());
          tensor::ParallelInsertSliceOp::create(b, loc, out, outSlice, offsets,
                                                accSizes, strides);
        });

    Value result = tensor::CollapseShapeOp::create(
        b, loc, queryLoop.getResult(0),
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    // The op may declare more (or less) static shape than the loops know.
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(b, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// One key tile of the online softmax; returns (m', l', acc').
  SmallVector<Value> onlineSoftmaxStep(OpBuilder &b, Location loc,
                                       const AttentionPlan &plan, Value kHead,
                                       Value vHead, Value maskHead, CosSin kTable,
                                       Value qBlock, Value qPos, Value kPos,
                                       Value qi, Value tq, Value kj, Value tk,
                                       ValueRange state) const {
    MLIRContext *ctx = b.getContext();
    Value m = state[0], l = state[1], acc = state[2];
    Value kBlock = sliceDim(b, loc, kHead, 2, kj, tk);
    Value vBlock = sliceDim(b, loc, vHead, 2, kj, tk);
    if (plan.rotary)
      kBlock = buildRotation(b, loc, kBlock, sliceTable(b, loc, kTable, kj, tk),
                             plan.rotary, 2, b.getF32Type());
    Value mask = maskHead ? sliceMask(b, loc, maskHead, qi, tq, kj, tk) : Value();
    Value logits = buildLogits(b, loc, plan, qBlock, kBlock, mask, qPos, kPos);

    AffineMap row = dimsMap(ctx, 5, {0, 1, 2, 3});
    AffineMap all5 = dimsMap(ctx, 5, range(0, 5));
    AffineMap all4 = dimsMap(ctx, 4, range(0, 4));
    Value tileMax = buildRowMax(b, loc, logits);
    Value mNew = elementwise(b, loc, {m, tileMax}, {all4, all4}, m,
                             [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                               return arith::MaximumFOp::create(b, loc, a[0], a[1]);
                             });
    // p = exp(s − m') and the correction exp(m − m'), both 0 while the row
    // has seen no visible key (m' = −inf).
    Value p = elementwise(b, loc, {logits, mNew}, {all5, row}, logits,
                          [&](OpBuilder &b, Location loc, ValueRange a) {
                            return buildShiftedExp(b, loc, a[0], a[1]);
                          });
    Value correction = elementwise(b, loc, {m, mNew}, {all4, all4}, m,
                                   [&](OpBuilder &b, Location loc, ValueRange a) {
                                     return buildShiftedExp(b, loc, a[0], a[1]);
                                   });
    Value tileSum = buildRowSum(b, loc, p);
    Value lNew = elementwise(
        b, loc, {l, correction, tileSum}, {all4, all4, all4}, l,
        [](OpBuilder &b, Location loc, ValueRange a) -> Value {
          return arith::AddFOp::create(b, loc,
                                       arith::MulFOp::create(b, loc, a[0], a[1]), a[2]);
        });
    Value scaledAcc = elementwise(b, loc, {acc, correction}, {all5, row}, acc,
                                  [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                                    return arith::MulFOp::create(b, loc, a[0], a[1]);
                                  });
    Value accNew = buildProbsTimesValues(b, loc, p, vBlock, scaledAcc);
    return {mNew, lNew, accNew};
  }

  int64_t queryTile, keyTile;
};

struct RopeDecomposeAttentionPass
    : public rope::impl::RopeDecomposeAttentionBase<RopeDecomposeAttentionPass> {
  using RopeDecomposeAttentionBase::RopeDecomposeAttentionBase;

  void runOnOperation() override {
    if (queryTile <= 0 || keyTile <= 0) {
      getOperation()->emitError()
          << "rope-decompose-attention: query-tile and key-tile must be "
             "positive, got "
          << static_cast<int64_t>(queryTile) << " and "
          << static_cast<int64_t>(keyTile);
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(patterns, queryTile, keyTile);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

void mlir::rope::populateDecomposeAttentionPatterns(RewritePatternSet &patterns,
                                                    int64_t queryTile,
                                                    int64_t keyTile) {
  patterns.add<DecomposeAttention>(patterns.getContext(), queryTile, keyTile);
}
