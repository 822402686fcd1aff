//===- DecomposeAttentionRows.cpp - attention streamed row by row ---------===//
//
// rope.attention -> for each (batch, kv head, head of its group, query row)
// a loop over the keys with the online-softmax update on scalars and vectors:
//   s = scale·(R q)·(R k_j) (+ mask),  m' = max(m, s),
//   c = exp(m − m'),  p = exp(s − m'),  l' = c·l + p,  acc' = c·acc + p·v_j,
// and finally out = acc / l. On a GPU each row is one thread whose state
// lives in registers: neither S×S scores nor tile buffers exist, and a
// causal row never reads the keys in its future.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Utils/AttentionRules.h"
#include "rope/Dialect/Rope/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEATTENTIONROWS
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

namespace {

VectorType f32Vector(OpBuilder &b, int64_t n) {
  return VectorType::get({n}, b.getF32Type());
}

Value splat(OpBuilder &b, Location loc, Value scalar, int64_t n) {
  return vector::BroadcastOp::create(b, loc, f32Vector(b, n), scalar);
}

/// The `n` elements of `t` from `indices` along its last dim, as f32.
Value readRow(OpBuilder &b, Location loc, Value t, ValueRange indices,
              int64_t n) {
  Type elt = cast<RankedTensorType>(t.getType()).getElementType();
  Value pad = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  Value row = vector::TransferReadOp::create(
      b, loc, VectorType::get({n}, elt), t, indices, pad,
      ArrayRef<bool>{true});
  if (!elt.isF32())
    row = arith::ExtFOp::create(b, loc, f32Vector(b, n), row);
  return row;
}

/// Indices of sequence row `row` of batch `batch` in positions ([S] or
/// [B, S]) or tables ([S, h] or [B, S, h]; then the trailing 0 is added).
SmallVector<Value> sequenceIndices(OpBuilder &b, Location loc, Value t,
                                   Value batch, Value row, bool table) {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  SmallVector<Value> indices;
  if (rank == (table ? 3 : 2))
    indices.push_back(batch);
  indices.push_back(row);
  if (table)
    indices.push_back(arith::ConstantIndexOp::create(b, loc, 0));
  return indices;
}

/// The rotation of a head row (`d` wide) by the cos/sin rows (`h` wide) of
/// its position: pairs (a, b) → (a·cos − b·sin, b·cos + a·sin), the pairs
/// being (off + i, off + h + i) (half) or (off + 2i, off + 2i + 1)
/// (interleaved); other dims pass through. Only shuffles move lanes: they
/// map one to one onto LLVM (NVVM has no lowering for strided slices).
Value rotateRow(OpBuilder &b, Location loc, Value x, Value cos, Value sin,
                RotarySpecAttr spec, int64_t d) {
  int64_t r = spec.getRotaryDims(d), h = r / 2, off = spec.getOffset();
  bool interleaved = spec.getLayout() == RotaryLayout::interleaved;
  SmallVector<int64_t> firstLanes, secondLanes;
  for (int64_t i = 0; i < h; ++i) {
    firstLanes.push_back(interleaved ? off + 2 * i : off + i);
    secondLanes.push_back(interleaved ? off + 2 * i + 1 : off + h + i);
  }
  Value first = vector::ShuffleOp::create(b, loc, x, x, firstLanes);
  Value second = vector::ShuffleOp::create(b, loc, x, x, secondLanes);
  auto [newFirst, newSecond] = buildPairRotation(b, loc, first, second, cos, sin);
  // Lanes of shuffle(newFirst, newSecond): newFirst i is lane i, newSecond i
  // is lane h + i. Then each rotated dim of x takes its lane (x's own lanes
  // come first in the final shuffle, so rotated lanes are offset by d).
  SmallVector<int64_t> rowLanes(d);
  for (int64_t t = 0; t < d; ++t)
    rowLanes[t] = t;
  for (int64_t i = 0; i < h; ++i) {
    rowLanes[firstLanes[i]] = d + i;
    rowLanes[secondLanes[i]] = d + h + i;
  }
  SmallVector<int64_t> concat;
  for (int64_t i = 0; i < 2 * h; ++i)
    concat.push_back(i);
  Value rotated = vector::ShuffleOp::create(b, loc, newFirst, newSecond, concat);
  return vector::ShuffleOp::create(b, loc, x, rotated, rowLanes);
}

struct DecomposeAttentionRows : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    auto qType = cast<RankedTensorType>(op.getQuery().getType());
    auto vType = cast<RankedTensorType>(op.getValue().getType());
    int64_t d = qType.getDimSize(3), dv = vType.getDimSize(3);
    // Rows are vectors: their width must be known.
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv) || d == 0 ||
        dv == 0)
      return rewriter.notifyMatchFailure(op, "dynamic or empty head dim");
    // Streamed rows do not yet come from the tiled online op, whose
    // decomposition owns the window, soft-cap, sink and bias rules; such
    // attention takes the plain lowering.
    if (op.getWindowAttr() || op.getSoftcapAttr() || op.getSinks() ||
        op.getAlibiSlopes() || op.getRelativeBias())
      return rewriter.notifyMatchFailure(
          op, "window, softcap, sinks or position biases: plain lowering");

    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    AttentionPlan plan = planAttention(b, loc, op);
    bool defaultPositions = !op.getQueryPositions();

    CosSin qTable, kTable;
    if (plan.rotary) {
      // Default positions of a prefill (Sq = Sk) are the same for Q and K.
      std::optional<int64_t> staticSq = getConstantIntValue(plan.sq);
      bool samePositions =
          plan.qPos == plan.kPos ||
          (defaultPositions && staticSq && staticSq == getConstantIntValue(plan.sk));
      qTable = buildTable(b, loc, plan.qPos, plan.invFreq, plan.rotary);
      kTable = samePositions
                   ? qTable
                   : buildTable(b, loc, plan.kPos, plan.invFreq, plan.rotary);
    }

    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value sq = getValueOrCreateConstantIndexOp(b, loc, plan.sq);
    Value sk = getValueOrCreateConstantIndexOp(b, loc, plan.sk);
    Value groupSize = arith::ConstantIndexOp::create(b, loc, plan.g);
    Value scale = f32Const(b, loc, plan.scale);
    Value negInf = negInfF32(b, loc);
    Value f32Zero = f32Const(b, loc, 0.0);
    OpFoldResult hkv = b.getIndexAttr(plan.hkv), g = b.getIndexAttr(plan.g);
    OpFoldResult oneAttr = b.getIndexAttr(1);
    Value outInit = emptyTensor(b, loc, {plan.batch, hkv, g, plan.sq, plan.dv},
                                plan.elementType);

    auto rows = scf::ForallOp::create(
        b, loc, SmallVector<OpFoldResult>(4, b.getIndexAttr(0)),
        ArrayRef<OpFoldResult>{plan.batch, hkv, g, plan.sq},
        SmallVector<OpFoldResult>(4, oneAttr), ValueRange{outInit},
        /*mapping=*/std::nullopt,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value bi = args[0], kh = args[1], gi = args[2], qi = args[3];
          Value outSlice = args[4];

          // The query row, rotated and scaled once.
          Value q = readRow(b, loc, plan.q5, {bi, kh, gi, qi, zero}, d);
          if (plan.rotary)
            q = rotateRow(
                b, loc, q,
                readRow(b, loc, qTable.cos,
                        sequenceIndices(b, loc, qTable.cos, bi, qi, true),
                        plan.rotary.getRotaryDims(d) / 2),
                readRow(b, loc, qTable.sin,
                        sequenceIndices(b, loc, qTable.sin, bi, qi, true),
                        plan.rotary.getRotaryDims(d) / 2),
                plan.rotary, d);
          q = arith::MulFOp::create(b, loc, q, splat(b, loc, scale, d));

          // Keys in a causal row's future are not visited with the default
          // positions (query i sits at Sk − Sq + i); explicit positions are
          // compared key by key.
          Value keyEnd = sk;
          if (plan.causal && defaultPositions) {
            Value last = arith::AddIOp::create(
                b, loc, arith::SubIOp::create(b, loc, sk, sq),
                arith::AddIOp::create(b, loc, qi, one));
            keyEnd = arith::MinSIOp::create(
                b, loc, sk, arith::MaxSIOp::create(b, loc, last, zero));
          }
          Value qPos;
          if (plan.causal && !defaultPositions)
            qPos = positionToI64(
                b, loc,
                tensor::ExtractOp::create(
                    b, loc, plan.qPos,
                    sequenceIndices(b, loc, plan.qPos, bi, qi, false)));
          Value hq = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, kh, groupSize), gi);

          Value acc0 = arith::ConstantOp::create(
              b, loc, DenseElementsAttr::get(f32Vector(b, dv), 0.0f));
          auto keys = scf::ForOp::create(
              b, loc, zero, keyEnd, one, ValueRange{negInf, f32Zero, acc0},
              [&](OpBuilder &b, Location loc, Value kj, ValueRange state) {
                Value m = state[0], l = state[1], acc = state[2];
                Value k = readRow(b, loc, plan.k, {bi, kh, kj, zero}, d);
                if (plan.rotary) {
                  int64_t h = plan.rotary.getRotaryDims(d) / 2;
                  k = rotateRow(
                      b, loc, k,
                      readRow(b, loc, kTable.cos,
                              sequenceIndices(b, loc, kTable.cos, bi, kj, true), h),
                      readRow(b, loc, kTable.sin,
                              sequenceIndices(b, loc, kTable.sin, bi, kj, true), h),
                      plan.rotary, d);
                }
                Value s = vector::ReductionOp::create(
                    b, loc, vector::CombiningKind::ADD,
                    arith::MulFOp::create(b, loc, q, k),
                    arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
                Value visible;
                if (plan.mask)
                  s = attention::applyMaskElement(
                      b, loc, s, maskElement(b, loc, plan.mask, {bi, hq, qi, kj}),
                      visible);
                if (qPos) {
                  Value kPos = positionToI64(
                      b, loc,
                      tensor::ExtractOp::create(
                          b, loc, plan.kPos,
                          sequenceIndices(b, loc, plan.kPos, bi, kj, false)));
                  Value rule = attention::buildKeyVisibility(
                      b, loc, qPos, qPos, kPos, kPos, /*causal=*/true,
                      std::nullopt);
                  visible = visible
                                ? arith::AndIOp::create(b, loc, visible, rule)
                                      .getResult()
                                : rule;
                }
                s = attention::dropInvisible(b, loc, s, visible);
                // While every key so far is masked out (m' = −inf), shift by
                // 0 instead: p and c are then exactly 0, not NaN.
                Value mNew = arith::MaximumFOp::create(b, loc, m, s);
                Value allMasked = arith::CmpFOp::create(
                    b, loc, arith::CmpFPredicate::OEQ, mNew, negInf);
                Value shift = arith::SelectOp::create(b, loc, allMasked, f32Zero, mNew);
                Value c = math::ExpOp::create(
                    b, loc, arith::SubFOp::create(b, loc, m, shift));
                Value p = math::ExpOp::create(
                    b, loc, arith::SubFOp::create(b, loc, s, shift));
                Value lNew = arith::AddFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, l, c), p);
                Value v = readRow(b, loc, plan.v, {bi, kh, kj, zero}, dv);
                Value accNew = vector::FMAOp::create(
                    b, loc, v, splat(b, loc, p, dv),
                    arith::MulFOp::create(b, loc, acc, splat(b, loc, c, dv)));
                scf::YieldOp::create(b, loc, ValueRange{mNew, lNew, accNew});
              });

          // out = acc / l; a row with no visible key is 0.
          Value l = keys.getResult(1);
          Value seen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                             l, f32Zero);
          Value inverse = arith::SelectOp::create(
              b, loc, seen,
              arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0), l), f32Zero);
          Value out = arith::MulFOp::create(b, loc, keys.getResult(2),
                                            splat(b, loc, inverse, dv));
          if (!plan.elementType.isF32())
            out = arith::TruncFOp::create(
                b, loc, VectorType::get({dv}, plan.elementType), out);
          SmallVector<OpFoldResult> rowSizes = {oneAttr, oneAttr, oneAttr,
                                                oneAttr, b.getIndexAttr(dv)};
          Value rowTensor = emptyTensor(b, loc, rowSizes, plan.elementType);
          rowTensor = vector::TransferWriteOp::create(
                          b, loc, out, rowTensor,
                          ValueRange{zero, zero, zero, zero, zero},
                          ArrayRef<bool>{true})
                          .getResult();
          auto inParallel = scf::InParallelOp::create(b, loc);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(inParallel.getBody());
          tensor::ParallelInsertSliceOp::create(
              b, loc, rowTensor, outSlice,
              ArrayRef<OpFoldResult>{bi, kh, gi, qi, b.getIndexAttr(0)},
              rowSizes, SmallVector<OpFoldResult>(5, oneAttr));
        });

    Value result = tensor::CollapseShapeOp::create(
        b, loc, rows.getResult(0),
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    // The op may declare more (or less) static shape than the loops know.
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(b, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// The mask element for (batch, query head, query, key): the mask
  /// broadcasts trailing-aligned to [B, Hq, Sq, Sk]; its unit dims read
  /// index 0.
  static Value maskElement(OpBuilder &b, Location loc, Value mask,
                           ArrayRef<Value> targetIndices) {
    auto type = cast<RankedTensorType>(mask.getType());
    int64_t rank = type.getRank();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    SmallVector<Value> indices;
    for (int64_t i = 0; i < rank; ++i)
      indices.push_back(type.getDimSize(i) == 1 ? zero
                                                : targetIndices[4 - rank + i]);
    return tensor::ExtractOp::create(b, loc, mask, indices);
  }
};

struct RopeDecomposeAttentionRowsPass
    : public rope::impl::RopeDecomposeAttentionRowsBase<
          RopeDecomposeAttentionRowsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionRowsPatterns(patterns);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

void mlir::rope::populateDecomposeAttentionRowsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeAttentionRows>(patterns.getContext());
}
