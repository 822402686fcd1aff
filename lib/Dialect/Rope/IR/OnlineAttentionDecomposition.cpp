//===- OnlineAttentionDecomposition.cpp - one online-softmax step ---------===//
//
// linalg::AggregatedOpInterface of rope.online_attention: the op over its
// (possibly tiled) operands becomes linalg on tensors:
//   Q and K rotated as they are loaded (from the tables): into tiles of
//   their own, or K's pairs inside the Q·Kᵀ reduction (a decode tile),
//   s = scale·Q·Kᵀ, capped, biased (mask, ALiBi, T5), −inf where not visible,
//   m' = max(m, rowmax(s)), p = exp(s − m'), c = exp(m − m'),
//   l' = c·l + rowsum(p), acc' = c·acc + p·V.
// Every rule is a call into AttentionRules; this file only arranges them.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/IR/AttentionRules.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

/// Dot-product reductions may be reassociated and contracted into FMAs (what
/// lets LLVM vectorise them); the tests' tolerances are stated for f32
/// accumulation in any order.
static const arith::FastMathFlags kReduceFMF =
    arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;

/// Map of a rank-5 mask over the (b, kh, g, i, j) loops: a static 1 reads
/// index 0 (it broadcasts).
static AffineMap maskMap(MLIRContext *ctx, Value mask) {
  auto type = cast<RankedTensorType>(mask.getType());
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < 5; ++i)
    exprs.push_back(type.getDimSize(i) == 1 ? getAffineConstantExpr(0, ctx)
                                            : getAffineDimExpr(i, ctx));
  return AffineMap::get(5, 0, exprs, ctx);
}

/// The zeroed f32 scores [b, kh, g, i, j] of a tile of `q` [b, kh, g, i, d]
/// against `k` [b, kh, j, d], which its Q·Kᵀ accumulates into.
static Value buildZeroScores(OpBuilder &b, Location loc, Value q, Value k) {
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, q);
  SmallVector<OpFoldResult> sizes(qSizes.begin(), qSizes.begin() + 4);
  sizes.push_back(tensor::getMixedSize(b, loc, k, 2));
  return filledTensor(b, loc, sizes, b.getF32Type(), b.getF32FloatAttr(0));
}

/// scores[b,kh,g,i,j] = Σ_d q[b,kh,g,i,d]·k[b,kh,j,d] of a tile (f32).
static Value buildTileScores(OpBuilder &b, Location loc, Value q, Value k) {
  MLIRContext *ctx = b.getContext();
  return buildMultiplyAccumulate(
      b, loc, q, k, buildZeroScores(b, loc, q, k),
      {dimsMap(ctx, 6, {0, 1, 2, 3, 5}), dimsMap(ctx, 6, {0, 1, 4, 5}),
       dimsMap(ctx, 6, {0, 1, 2, 3, 4})},
      {kPar, kPar, kPar, kPar, kPar, kRed}, kReduceFMF);
}

/// Whether the scores of `op`'s tile rotate K inside their reduction: K
/// rotates, Q does not (any more: a tile's Q was rotated once, outside the
/// key loop), and the tile holds at most `maxRows` static query rows per kv
/// head. Then each key's rotation serves a register block's rows in
/// registers; a taller tile pays for a rotated copy of K instead (the
/// rotation would be repeated per block of rows). Only the half layout:
/// its pair members are two contiguous runs, read along the reduction as
/// K is stored; the interleaved layout's members alternate.
static bool rotatesKeysInScores(OnlineAttentionOp op, int64_t maxRows) {
  std::optional<RotaryRange> range = op.getRotaryRange();
  if (maxRows <= 0 || !range || op.getQueryCos() ||
      range->layout != RotaryLayout::half)
    return false;
  ArrayRef<int64_t> q = op.getQueryType().getShape();
  int64_t group = q[OnlineAttentionOp::kGroupDim],
          rows = q[OnlineAttentionOp::kQueryDim];
  return !ShapedType::isDynamic(group) && !ShapedType::isDynamic(rows) &&
         group * rows <= maxRows;
}

/// The scores of a tile whose K pairs are rotated inside the reduction
/// (buildProductRotatingPairs: no rotated K exists). Loops (b, kh, g, i, j,
/// d), d the reduction, as buildTileScores'.
static Value buildTileScoresRotatingKeys(OpBuilder &b, Location loc,
                                         OnlineAttentionOp op, Value q) {
  MLIRContext *ctx = b.getContext();
  Value k = op.getKey();
  Value init = buildZeroScores(b, loc, q, k);
  ProductSide query{q, dimsMap(ctx, 6, {0, 1, 2, 3, 5})};
  ProductSide key{k, dimsMap(ctx, 6, {0, 1, 4, 5}),
                  CosSin{op.getKeyCos(), op.getKeySin()}, /*seqDim=*/2};
  return buildProductRotatingPairs(b, loc, {query, key}, *op.getRotaryRange(),
                                   init, dimsMap(ctx, 6, {0, 1, 2, 3, 4}),
                                   {kPar, kPar, kPar, kPar, kPar, kRed},
                                   /*reduction=*/5, kReduceFMF);
}

/// The inputs that the logits of `op`'s tile are computed from, with their
/// maps over the (b, kh, g, i, j) loops (and the output's last): the
/// scores, then the mask, the positions and the ALiBi slopes the op has.
static void collectLogitInputs(MLIRContext *ctx, OnlineAttentionOp op,
                               Value scores, SmallVectorImpl<Value> &ins,
                               SmallVectorImpl<AffineMap> &maps) {
  ins.push_back(scores);
  maps.push_back(dimsMap(ctx, 5, range(0, 5)));
  if (Value mask = op.getMask()) {
    ins.push_back(mask);
    maps.push_back(maskMap(ctx, mask));
  }
  Value qPos = op.getQueryPositions(), kPos = op.getKeyPositions();
  if (qPos) {
    ins.append({qPos, kPos});
    maps.append(
        {positionsMap(ctx, qPos, 5, 0, 3), positionsMap(ctx, kPos, 5, 0, 4)});
  }
  if (Value slopes = op.getAlibiSlopes()) {
    ins.push_back(slopes);
    maps.push_back(dimsMap(ctx, 5, {1, 2}));
  }
  maps.push_back(dimsMap(ctx, 5, range(0, 5)));
}

namespace {
/// The rules of the op's logits, and which optional inputs the logits
/// generic reads (in collectLogitInputs' order) besides the T5 table.
struct TileLogitRules {
  attention::LogitRules rules;
  bool hasMask, hasPositions, hasSlopes;
  Value biasTable;
};
} // namespace

static TileLogitRules getLogitRules(OnlineAttentionOp op) {
  TileLogitRules t;
  t.hasMask = static_cast<bool>(op.getMask());
  t.hasPositions = static_cast<bool>(op.getQueryPositions());
  t.hasSlopes = static_cast<bool>(op.getAlibiSlopes());
  t.biasTable = op.getRelativeBias();
  t.rules.buckets = op.getRelativeBucketsAttr();
  t.rules.scale = op.getScale().convertToDouble();
  if (auto cap = op.getSoftcap())
    t.rules.softcap = cap->convertToDouble();
  t.rules.causal = op.getCausal();
  if (IntegerAttr w = op.getWindowAttr())
    t.rules.window = w.getInt();
  return t;
}

/// The body of the logits generic over the inputs of collectLogitInputs:
/// the op's logit of each score (attention::buildLogit).
static void buildLogitsBody(OpBuilder &nb, Location nl, ValueRange args,
                            const TileLogitRules &t) {
  unsigned next = 1;
  attention::LogitInputs in;
  if (t.hasMask)
    in.maskElement = args[next++];
  if (t.hasPositions) {
    in.qPos = positionToI64(nb, nl, args[next++]);
    in.kPos = positionToI64(nb, nl, args[next++]);
  }
  if (t.hasSlopes)
    in.slope = toF32(nb, nl, args[next++]);
  auto bias = [&](Value bucket) -> Value {
    Value b = tensor::ExtractOp::create(
        nb, nl, t.biasTable,
        ValueRange{bucket, linalg::IndexOp::create(nb, nl, 1),
                   linalg::IndexOp::create(nb, nl, 2)});
    return toF32(nb, nl, b);
  };
  if (t.biasTable)
    in.relativeBias = bias;
  linalg::YieldOp::create(
      nb, nl, ValueRange{attention::buildLogit(nb, nl, t.rules, args[0], in)});
}

/// logits[b,kh,g,i,j] of the op's tile (f32) from its scores.
static Value buildTileLogits(OpBuilder &b, Location loc, OnlineAttentionOp op,
                             Value scores) {
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  collectLogitInputs(b.getContext(), op, scores, ins, maps);
  TileLogitRules rules = getLogitRules(op);
  return linalg::GenericOp::create(
             b, loc, scores.getType(), ins, ValueRange{scores}, maps,
             SmallVector<IteratorType>(5, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               buildLogitsBody(nb, nl, args, rules);
             })
      .getResult(0);
}

FailureOr<SmallVector<Value>> OnlineAttentionOp::decomposeOperation(OpBuilder &b) {
  return decompose(b, /*rowsRotatingKeysInScores=*/0);
}

FailureOr<SmallVector<Value>>
OnlineAttentionOp::decompose(OpBuilder &b, int64_t rowsRotatingKeysInScores) {
  Location loc = getLoc();
  MLIRContext *ctx = b.getContext();
  Value q = getQuery(), k = getKey();
  Value scores;
  if (rotatesKeysInScores(*this, rowsRotatingKeysInScores)) {
    scores = buildTileScoresRotatingKeys(b, loc, *this, q);
  } else {
    if (std::optional<RotaryRange> dims = getRotaryRange()) {
      if (getQueryCos())
        q = buildMaterializedRotation(b, loc, q, {getQueryCos(), getQuerySin()},
                                      *dims, 3);
      k = buildMaterializedRotation(b, loc, k, {getKeyCos(), getKeySin()},
                                    *dims, 2);
    }
    scores = buildTileScores(b, loc, q, k);
  }
  Value logits = buildTileLogits(b, loc, *this, scores);

  // The state is updated in place, in the op's outs (its destinations): a
  // loop over key tiles then carries one buffer of each (the accumulator is
  // the output tile itself) instead of fresh ones per key tile. These
  // updates read their outputs; rope-fuse-elementwise-ops never fuses such
  // a generic into a consumer.
  Value m = getMaxInit(), l = getSumInit(), acc = getAccumulatorInit();
  AffineMap row = dimsMap(ctx, 5, {0, 1, 2, 3});
  AffineMap all4 = dimsMap(ctx, 4, range(0, 4));
  AffineMap all5 = dimsMap(ctx, 5, range(0, 5));
  Value tileMax = buildRowMax(b, loc, logits);
  // m' = max(m, rowmax(s)) over m, and beside it the correction
  // c = exp(m − m'), which needs the old m. Like p = exp(s − m') below, c is 0
  // while the row has seen no visible key (m' = −inf): the empty-row rule of
  // buildShiftedExp.
  Value correctionInit =
      emptyTensor(b, loc, tensor::getMixedSizes(b, loc, m), b.getF32Type());
  auto maxStep = linalg::GenericOp::create(
      b, loc, TypeRange{m.getType(), correctionInit.getType()},
      ValueRange{tileMax}, ValueRange{m, correctionInit},
      ArrayRef<AffineMap>{all4, all4, all4}, SmallVector<IteratorType>(4, kPar),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        Value mNew = arith::MaximumFOp::create(nb, nl, a[1], a[0]);
        linalg::YieldOp::create(
            nb, nl, ValueRange{mNew, buildShiftedExp(nb, nl, a[1], mNew)});
      });
  Value mNew = maxStep.getResult(0), correction = maxStep.getResult(1);
  Value p = buildElementwise(b, loc, {logits, mNew}, {all5, row}, logits,
                             [](OpBuilder &b, Location loc, ValueRange a) {
                               return buildShiftedExp(b, loc, a[0], a[1]);
                             });
  Value lNew = buildElementwiseUpdateInPlace(
      b, loc, {correction, buildRowSum(b, loc, p)}, {all4, all4}, l,
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, a[2], a[0]), a[1]);
      });
  Value scaledAcc = buildElementwiseUpdateInPlace(
      b, loc, {correction}, {row}, acc,
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return arith::MulFOp::create(b, loc, a[1], a[0]);
      });
  Value accNew = buildProbsTimesValues(b, loc, p, getValue(), scaledAcc);
  SmallVector<Value> results = {accNew, mNew, lNew};
  // The loops may know more (or less) static shape than the op declared.
  for (auto [value, type] : llvm::zip_equal(results, getResultTypes()))
    if (value.getType() != type)
      value = tensor::CastOp::create(b, loc, type, value);
  return results;
}
