//===- ConvertAttentionToOnline.cpp - attention to its online form --------===//
//
// rope.attention -> rope.online_attention from the initial state, then
// acc / sum. Everything the online op needs explicit is made so here, once:
// default positions, the [B, Hkv, G, ...] split of the query heads, the rank-5
// mask, per-head operands as [Hkv, G], the cos/sin tables, the scale, and the
// sinks as the initial (max, sum) of each row.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPECONVERTATTENTIONTOONLINE
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

namespace {

/// Expands `t` so that its dim `dim` (of extent hkv·g, or a static 1 that
/// broadcasts) becomes the two dims [hkv, g] (or [1, 1]).
Value splitHeadDim(OpBuilder &b, Location loc, Value t, int64_t dim, int64_t hkv,
                   int64_t g) {
  auto type = cast<RankedTensorType>(t.getType());
  if (type.isDynamicDim(dim)) {
    // Only a static 1 broadcasts: a dynamic extent is hkv·g, which the op's
    // runtime checks make sure of.
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = hkv * g;
    type = RankedTensorType::get(shape, type.getElementType());
    t = tensor::CastOp::create(b, loc, type, t);
  }
  bool broadcast = type.getDimSize(dim) == 1 && hkv * g != 1;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  SmallVector<OpFoldResult> outSizes;
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> reassoc;
  int64_t next = 0;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (i == dim) {
      int64_t a = broadcast ? 1 : hkv, c = broadcast ? 1 : g;
      outSizes.append({b.getIndexAttr(a), b.getIndexAttr(c)});
      shape.append({a, c});
      reassoc.push_back({next, next + 1});
      next += 2;
      continue;
    }
    outSizes.push_back(sizes[i]);
    shape.push_back(type.getDimSize(i));
    reassoc.push_back({next++});
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t, reassoc,
      outSizes);
}

/// The mask (rank 2 to 4, trailing-aligned to [B, Hq, Sq, Sk]) as rank 5
/// [B, Hkv, G, Sq, Sk] with static 1s where it broadcasts.
Value mask5(OpBuilder &b, Location loc, Value mask, int64_t hkv, int64_t g) {
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t rank = type.getRank();
  if (rank < 4) {
    // Leading unit dims: the first group of the expansion holds them.
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, mask);
    SmallVector<OpFoldResult> outSizes(4 - rank, b.getIndexAttr(1));
    SmallVector<int64_t> shape(4 - rank, 1);
    outSizes.append(sizes.begin(), sizes.end());
    shape.append(type.getShape().begin(), type.getShape().end());
    SmallVector<ReassociationIndices> reassoc;
    ReassociationIndices first;
    for (int64_t i = 0; i <= 4 - rank; ++i)
      first.push_back(i);
    reassoc.push_back(first);
    for (int64_t i = 5 - rank; i < 4; ++i)
      reassoc.push_back({i});
    mask = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), mask,
        reassoc, outSizes);
  }
  return splitHeadDim(b, loc, mask, 1, hkv, g);
}

/// The cos/sin tables of Q and K, and the positions the online op reads
/// them with.
struct RotaryTables {
  CosSin q, k;
  Value qPos, kPos;
};

/// `positions` as [B, S] (broadcast along the batch of `batchLike` when it is
/// [S]) and i64.
Value widenPositions(OpBuilder &b, Location loc, Value positions,
                     Value batchLike) {
  auto type = cast<RankedTensorType>(positions.getType());
  if (type.getRank() == 1) {
    SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, batchLike, 0),
                                       tensor::getMixedSize(b, loc, positions, 0)};
    Value init = emptyTensor(b, loc, sizes, type.getElementType());
    positions =
        linalg::BroadcastOp::create(b, loc, positions, init, ArrayRef<int64_t>{0})
            .getResult()[0];
  }
  if (type.getElementType().isInteger(64))
    return positions;
  Value init = emptyTensor(b, loc, tensor::getMixedSizes(b, loc, positions),
                           b.getI64Type());
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{positions}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, SmallVector<IteratorType>(2, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl,
                                       ValueRange{positionToI64(nb, nl, args[0])});
             })
      .getResult(0);
}

/// cos/sin tables of Q and K. Frequencies that depend on the largest
/// position must see the largest of Q's and K's: then one table over both
/// position sets (joined along the sequence, as [B, S] i64 when either is
/// [B, S], the positions the op then reads too) is built and split.
RotaryTables buildTables(OpBuilder &b, Location loc, RotarySpecAttr spec,
                         int64_t headDim, Value qPos, Value kPos) {
  auto table = [&](Value positions) -> CosSin {
    auto op = TableOp::create(b, loc, positions, spec, headDim);
    return {op.getCos(), op.getSin()};
  };
  if (qPos == kPos) {
    CosSin t = table(qPos);
    return {t, t, qPos, kPos};
  }
  if (!spec.dependsOnMaxPosition())
    return {table(qPos), table(kPos), qPos, kPos};
  auto rank = [](Value v) { return cast<RankedTensorType>(v.getType()).getRank(); };
  if (rank(qPos) != rank(kPos) ||
      cast<RankedTensorType>(qPos.getType()).getElementType() !=
          cast<RankedTensorType>(kPos.getType()).getElementType()) {
    Value batchLike = rank(qPos) == 2 ? qPos : kPos;
    qPos = widenPositions(b, loc, qPos, batchLike);
    kPos = widenPositions(b, loc, kPos, batchLike);
  }
  int64_t seqDim = rank(qPos) - 1;
  CosSin both = table(tensor::ConcatOp::create(b, loc, seqDim, ValueRange{qPos, kPos}));
  OpFoldResult sq = tensor::getMixedSize(b, loc, qPos, seqDim);
  OpFoldResult sk = tensor::getMixedSize(b, loc, kPos, seqDim);
  auto part = [&](Value t, OpFoldResult offset, OpFoldResult size) -> Value {
    auto type = cast<RankedTensorType>(t.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    offsets[seqDim] = offset;
    sizes[seqDim] = size;
    return tensor::ExtractSliceOp::create(b, loc, t, offsets, sizes, strides);
  };
  auto split = [&](OpFoldResult offset, OpFoldResult size) -> CosSin {
    return {part(both.cos, offset, size), part(both.sin, offset, size)};
  };
  return {split(b.getIndexAttr(0), sq), split(sq, sk), qPos, kPos};
}

/// An attention table (`[S, w]`, `[B, S, w]` or `[B, 1, S, w]`, any float
/// type) as the online op reads it: `[S, w]`, or `[B, S, w]` when it varies
/// by batch, in f32. Dropping a static-1 batch keeps tiles from slicing a
/// broadcast dim.
Value rowsOfTable(OpBuilder &b, Location loc, Value table) {
  auto type = cast<RankedTensorType>(table.getType());
  int64_t rank = type.getRank();
  if (rank > 2) {
    // [b, (1,) S, w]: the unit head dim joins the sequence, a unit batch
    // joins it too.
    SmallVector<ReassociationIndices> reassoc;
    if (type.getDimSize(0) == 1)
      reassoc = {llvm::to_vector(llvm::seq<int64_t>(0, rank - 1)), {rank - 1}};
    else if (rank == 4)
      reassoc = {{0}, {1, 2}, {3}};
    if (!reassoc.empty())
      table = tensor::CollapseShapeOp::create(b, loc, table, reassoc);
  }
  if (type.getElementType().isF32())
    return table;
  int64_t n = cast<RankedTensorType>(table.getType()).getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(n, b.getContext());
  return buildElementwise(b, loc, {table}, {id}, table,
                          [](OpBuilder &b, Location loc, ValueRange a) {
                            return toF32(b, loc, a[0]);
                          });
}

/// The positions of `op`'s queries and keys ([Sq] and [Sk]): its own or,
/// where it needs some, the default ones: keys at 0..Sk-1, queries
/// right-aligned to them.
std::pair<Value, Value> buildPositions(OpBuilder &b, Location loc,
                                       AttentionOp op, OpFoldResult sq,
                                       OpFoldResult sk) {
  Value qPos = op.getQueryPositions(), kPos = op.getKeyPositions();
  if (!qPos && op.needsPositions()) {
    Value sqV = getValueOrCreateConstantIndexOp(b, loc, sq);
    Value skV = getValueOrCreateConstantIndexOp(b, loc, sk);
    Value offset = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), arith::SubIOp::create(b, loc, skV, sqV));
    qPos = buildIota(b, loc, sq, offset);
    // A prefill of known length: queries and keys share their positions
    // (and so their cos/sin table).
    std::optional<int64_t> sqStatic = getConstantIntValue(sq);
    kPos = sqStatic && sqStatic == getConstantIntValue(sk)
               ? qPos
               : buildIota(b, loc, sk,
                           arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
  }
  return {qPos, kPos};
}

/// The rotated dims of the online op that `op` becomes, none without a
/// rotation; sets `tables` to the cos/sin of Q and K it reads (and `qPos`,
/// `kPos` to the positions it reads them with). The online op rotates by
/// tables only: a spec's frequencies become tables here.
RotaryPairsAttr buildOnlineTables(OpBuilder &b, Location loc, AttentionOp op,
                                  int64_t headDim, Value &qPos, Value &kPos,
                                  SmallVectorImpl<Value> &tables) {
  if (RotarySpecAttr spec = op.getRotarySpec()) {
    RotaryTables t = buildTables(b, loc, spec, headDim, qPos, kPos);
    tables.assign({t.q.cos, t.q.sin, t.k.cos, t.k.sin});
    qPos = t.qPos;
    kPos = t.kPos;
    return RotaryPairsAttr::get(b.getContext(), spec.getDims(),
                                spec.getOffset(), spec.getLayout());
  }
  if (!op.getKeyCos())
    return {};
  for (Value t :
       {op.getQueryCos(), op.getQuerySin(), op.getKeyCos(), op.getKeySin()})
    tables.push_back(rowsOfTable(b, loc, t));
  return cast<RotaryPairsAttr>(op.getRotaryAttr());
}

/// The (acc, max, sum) state an online attention starts from.
struct OnlineState {
  Value acc, max, sum;
};

/// The initial state of `op`'s rows ([B, Hkv, G, Sq], `rows`; acc with `dv`
/// more): nothing seen (0, −inf, 0), or the sink as one logit seen with no
/// value: (0, sink, 1).
OnlineState buildInitialState(OpBuilder &b, Location loc, AttentionOp op,
                              ArrayRef<OpFoldResult> rows, OpFoldResult dv,
                              int64_t hkv, int64_t g) {
  Type f32 = b.getF32Type();
  SmallVector<OpFoldResult> accSizes(rows);
  accSizes.push_back(dv);
  Value acc0 = filledTensor(b, loc, accSizes, f32, b.getF32FloatAttr(0));
  Value max0, sum0;
  if (Value sinks = op.getSinks()) {
    MLIRContext *ctx = b.getContext();
    Value sinks2 = splitHeadDim(b, loc, sinks, 0, hkv, g);
    Value like = emptyTensor(b, loc, rows, f32);
    max0 = buildElementwise(b, loc, {sinks2}, {dimsMap(ctx, 4, {1, 2})}, like,
                            [](OpBuilder &b, Location loc, ValueRange a) {
                              return toF32(b, loc, a[0]);
                            });
    sum0 = filledTensor(b, loc, rows, f32, b.getF32FloatAttr(1));
  } else {
    max0 = filledTensor(b, loc, rows, f32,
                        b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    sum0 = filledTensor(b, loc, rows, f32, b.getF32FloatAttr(0));
  }
  return {acc0, max0, sum0};
}

} // namespace

FailureOr<OnlineAttentionOp>
mlir::rope::convertToOnlineAttention(RewriterBase &rewriter, AttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  auto qType = op.getQuery().getType();
  auto kType = op.getKey().getType();
  // No heads at all (Hq = Hkv = 0): one empty group of one.
  int64_t hkv = kType.getDimSize(1);
  int64_t g = hkv == 0 ? 1 : qType.getDimSize(1) / hkv;
  int64_t headDim = qType.getDimSize(3);
  SmallVector<OpFoldResult> qSizes =
      tensor::getMixedSizes(b, loc, op.getQuery());
  OpFoldResult batch = qSizes[0], sq = qSizes[2];
  OpFoldResult sk = tensor::getMixedSize(b, loc, op.getKey(), 2);
  OpFoldResult dv = tensor::getMixedSize(b, loc, op.getValue(), 3);

  auto [qPos, kPos] = buildPositions(b, loc, op, sq, sk);
  SmallVector<Value> tables;
  RotaryPairsAttr rotary =
      buildOnlineTables(b, loc, op, headDim, qPos, kPos, tables);

  Value q5 = splitHeads(b, loc, op.getQuery(), hkv, g);
  Value mask = op.getMask() ? mask5(b, loc, op.getMask(), hkv, g) : Value();
  Value slopes = op.getAlibiSlopes()
                     ? splitHeadDim(b, loc, op.getAlibiSlopes(), 0, hkv, g)
                     : Value();
  Value bias = op.getRelativeBias()
                   ? splitHeadDim(b, loc, op.getRelativeBias(), 1, hkv, g)
                   : Value();

  SmallVector<OpFoldResult> rows = {batch, b.getIndexAttr(hkv),
                                    b.getIndexAttr(g), sq};
  auto [acc0, max0, sum0] = buildInitialState(b, loc, op, rows, dv, hkv, g);

  // The same attention on split heads, tables instead of a spec, the scale
  // explicit, the sinks in the initial state.
  AttentionFields fields = AttentionFields::of(op);
  fields.query = q5;
  fields.mask = mask;
  fields.queryPositions = qPos;
  fields.keyPositions = kPos;
  if (rotary) {
    fields.queryCos = tables[0];
    fields.querySin = tables[1];
    fields.keyCos = tables[2];
    fields.keySin = tables[3];
  }
  fields.rotary = rotary;
  fields.sinks = Value();
  fields.alibiSlopes = slopes;
  fields.relativeBias = bias;
  fields.outputs = {acc0, max0, sum0};
  fields.scale = b.getF64FloatAttr(op.getEffectiveScale());
  auto online = OnlineAttentionOp::create(
      b, loc, TypeRange{acc0.getType(), max0.getType(), sum0.getType()},
      fields);

  Value out = buildNormalizedOutput(b, loc, online.getResult(0),
                                    online.getResult(2),
                                    qType.getElementType());
  Value result = tensor::CollapseShapeOp::create(
      b, loc, out, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  if (result.getType() != op.getType())
    result = tensor::CastOp::create(b, loc, op.getType(), result);
  rewriter.replaceOp(op, result);
  return online;
}

namespace {
struct RopeConvertAttentionToOnlinePass
    : public rope::impl::RopeConvertAttentionToOnlineBase<
          RopeConvertAttentionToOnlinePass> {
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops)
      if (failed(convertToOnlineAttention(rewriter, op)))
        return signalPassFailure();
  }
};
} // namespace
