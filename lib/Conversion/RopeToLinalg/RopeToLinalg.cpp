//===- RopeToLinalg.cpp - lower rope ops to linalg on tensors -------------===//
//
// Every rope op becomes linalg.generic ops on tensors (plus tensor slicing and
// reshapes). The lowering is staged: rope.rotate first becomes a rope.table
// plus the multiply-add that applies it, identical tables are then shared, and
// finally each remaining op is expanded. Semantics: shared/DESIGN.md §4.
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/Passes.h"
#include "rope/Conversion/RopeToLinalg/RopeToLinalg.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include <cmath>
#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_CONVERTROPETOLINALG
#include "rope/Conversion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

//===----------------------------------------------------------------------===//
// Small building blocks
//===----------------------------------------------------------------------===//

/// Map from `numDims` loop dims to the listed ones.
AffineMap dimsMap(MLIRContext *ctx, unsigned numDims, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

SmallVector<unsigned> range(unsigned begin, unsigned end) {
  SmallVector<unsigned> r;
  for (unsigned i = begin; i < end; ++i)
    r.push_back(i);
  return r;
}

Value toF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

Value fromF32(OpBuilder &b, Location loc, Value v, Type type) {
  if (type.isF32())
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}

Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value f64Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Type elementType, TypedAttr value) {
  Value empty = emptyTensor(b, loc, sizes, elementType);
  Value cst = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, cst, empty).getResult(0);
}

Value negInfF32(OpBuilder &b, Location loc) {
  return f32Const(b, loc, -std::numeric_limits<double>::infinity());
}

/// A position element widened to i64.
Value positionToI64(OpBuilder &b, Location loc, Value p) {
  if (p.getType().isInteger(64))
    return p;
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), p);
}

/// `[len]` positions `offset, offset+1, ...` as i64.
Value buildIota(OpBuilder &b, Location loc, OpFoldResult len, Value offset) {
  MLIRContext *ctx = b.getContext();
  Value init = emptyTensor(b, loc, {len}, b.getI64Type());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{dimsMap(ctx, 1, {0})},
             ArrayRef<IteratorType>{kPar},
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value i = linalg::IndexOp::create(nb, nl, 0);
               Value i64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), i);
               linalg::YieldOp::create(nb, nl,
                                       ValueRange{arith::AddIOp::create(
                                           nb, nl, i64, offset)});
             })
      .getResult(0);
}

/// Largest entry of an integer tensor, as an i64 scalar.
Value buildMaxPosition(OpBuilder &b, Location loc, Value positions) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(positions.getType());
  unsigned rank = type.getRank();
  Value init = filledTensor(
      b, loc, {}, b.getI64Type(),
      b.getI64IntegerAttr(std::numeric_limits<int64_t>::min()));
  SmallVector<IteratorType> iters(rank, kRed);
  Value max =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{positions}, ValueRange{init},
          ArrayRef<AffineMap>{dimsMap(ctx, rank, range(0, rank)),
                              AffineMap::get(rank, 0, {}, ctx)},
          iters,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value p = positionToI64(nb, nl, args[0]);
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::MaxSIOp::create(nb, nl, p, args[1])});
          })
          .getResult(0);
  return tensor::ExtractOp::create(b, loc, max, ValueRange{});
}

Value f64Tensor(OpBuilder &b, Location loc, ArrayRef<double> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    b.getF64Type());
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, values));
}

//===----------------------------------------------------------------------===//
// Frequencies and tables
//===----------------------------------------------------------------------===//

/// Inverse frequencies (tensor<hxf64>) of `spec` for a head of `headDim`.
/// Kinds that depend on the largest position read it from `maxPosition` (an
/// i64 scalar); the others are compile-time constants.
Value buildInverseFrequencies(OpBuilder &b, Location loc, RotarySpecAttr spec,
                              int64_t headDim,
                              function_ref<Value()> maxPosition) {
  int64_t r = spec.getRotaryDims(headDim);
  if (!spec.dependsOnMaxPosition())
    return f64Tensor(b, loc, spec.getInverseFrequencies(headDim, 0));

  MLIRContext *ctx = b.getContext();
  Value maxPos = maxPosition();
  if (auto longrope = dyn_cast<LongRopeScalingAttr>(spec.getScaling())) {
    // Short factors up to the original context, long factors beyond it.
    int64_t orig = longrope.getOriginalMaxPositionEmbeddings();
    Value shortFreqs = f64Tensor(b, loc, spec.getInverseFrequencies(headDim, 0));
    Value longFreqs = f64Tensor(b, loc, spec.getInverseFrequencies(headDim, orig));
    Value lastAllowed = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(orig - 1));
    Value isLong = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                         maxPos, lastAllowed);
    return arith::SelectOp::create(b, loc, isLong, longFreqs, shortFreqs);
  }

  auto dynamic = cast<DynamicScalingAttr>(spec.getScaling());
  // θ'^(-2i/r) = θ^(-2i/r) · s^(-2i/(r-2)) with
  // s = factor·L/L_orig − (factor − 1), L = max(max_position + 1, L_orig).
  int64_t orig = dynamic.getOriginalMaxPositionEmbeddings();
  double factor = dynamic.getFactor();
  Value one = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1));
  Value len = arith::MaxSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, maxPos, one),
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(orig)));
  Value lenF = arith::SIToFPOp::create(b, loc, b.getF64Type(), len);
  Value ratio = arith::MulFOp::create(
      b, loc, lenF, f64Const(b, loc, factor / static_cast<double>(orig)));
  Value s = arith::SubFOp::create(b, loc, ratio, f64Const(b, loc, factor - 1.0));
  Value logS = math::LogOp::create(b, loc, s);

  SmallVector<double> exponents;
  for (int64_t i = 0; i < r / 2; ++i)
    exponents.push_back(-2.0 * static_cast<double>(i) / static_cast<double>(r - 2));
  Value baseFreqs = f64Tensor(
      b, loc, RotarySpecAttr::get(ctx, spec.getBase(), spec.getDims(), 0,
                                  spec.getLayout(), nullptr, std::nullopt, false)
                  .getInverseFrequencies(headDim, 0));
  Value expTensor = f64Tensor(b, loc, exponents);
  Value init = emptyTensor(b, loc, {b.getIndexAttr(r / 2)}, b.getF64Type());
  AffineMap id = dimsMap(ctx, 1, {0});
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{baseFreqs, expTensor},
             ValueRange{init}, ArrayRef<AffineMap>{id, id, id},
             ArrayRef<IteratorType>{kPar},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value e = arith::MulFOp::create(nb, nl, args[1], logS);
               Value scaled = arith::MulFOp::create(
                   nb, nl, args[0], math::ExpOp::create(nb, nl, e));
               linalg::YieldOp::create(nb, nl, ValueRange{scaled});
             })
      .getResult(0);
}

struct CosSin {
  Value cos, sin;
};

/// cos/sin tables of shape positions × [h] (f32) with the attention factor and
/// the direction folded in. The phase p·f is formed in f64 and reduced to
/// [-π, π] there; the f32 sine and cosine of the reduced phase are then
/// corrected to first order for the f32 rounding of the argument, which keeps
/// the tables within about an ulp for positions far beyond 2^20.
CosSin buildTable(OpBuilder &b, Location loc, Value positions, Value invFreq,
                  RotarySpecAttr spec) {
  MLIRContext *ctx = b.getContext();
  auto posType = cast<RankedTensorType>(positions.getType());
  unsigned pr = posType.getRank();
  int64_t h = cast<RankedTensorType>(invFreq.getType()).getDimSize(0);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, positions);
  sizes.push_back(b.getIndexAttr(h));
  Value init = emptyTensor(b, loc, sizes, b.getF32Type());
  double m = spec.getEffectiveAttentionFactor();
  double sinScale = spec.getInverse() ? -m : m;

  SmallVector<AffineMap> maps = {dimsMap(ctx, pr + 1, range(0, pr)),
                                 dimsMap(ctx, pr + 1, {pr}),
                                 dimsMap(ctx, pr + 1, range(0, pr + 1)),
                                 dimsMap(ctx, pr + 1, range(0, pr + 1))};
  SmallVector<IteratorType> iters(pr + 1, kPar);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType(), init.getType()},
      ValueRange{positions, invFreq}, ValueRange{init, init}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value p = arith::SIToFPOp::create(nb, nl, nb.getF64Type(),
                                          positionToI64(nb, nl, args[0]));
        Value phase = arith::MulFOp::create(nb, nl, p, args[1]);
        Value turns = math::RoundEvenOp::create(
            nb, nl,
            arith::MulFOp::create(nb, nl, phase, f64Const(nb, nl, 0.5 / M_PI)));
        Value reduced = arith::SubFOp::create(
            nb, nl, phase,
            arith::MulFOp::create(nb, nl, turns, f64Const(nb, nl, 2.0 * M_PI)));
        Value r32 = arith::TruncFOp::create(nb, nl, nb.getF32Type(), reduced);
        Value delta = arith::TruncFOp::create(
            nb, nl, nb.getF32Type(),
            arith::SubFOp::create(
                nb, nl, reduced,
                arith::ExtFOp::create(nb, nl, nb.getF64Type(), r32)));
        Value c0 = math::CosOp::create(nb, nl, r32);
        Value s0 = math::SinOp::create(nb, nl, r32);
        // cos(r + δ) ≈ cos r − δ sin r, sin(r + δ) ≈ sin r + δ cos r.
        Value c = arith::SubFOp::create(nb, nl, c0,
                                        arith::MulFOp::create(nb, nl, delta, s0));
        Value s = arith::AddFOp::create(nb, nl, s0,
                                        arith::MulFOp::create(nb, nl, delta, c0));
        if (m != 1.0)
          c = arith::MulFOp::create(nb, nl, c, f32Const(nb, nl, m));
        if (sinScale != 1.0)
          s = arith::MulFOp::create(nb, nl, s, f32Const(nb, nl, sinScale));
        linalg::YieldOp::create(nb, nl, ValueRange{c, s});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// Applies cos/sin tables to `x` (rank n, head dim last, sequence at
/// `seqDim`); the tables are [S, h] or [B, S, h]. The pairs are taken as two
/// slices of the head dim (contiguous halves, or stride-2 even/odd lanes), so
/// the rotation is one elementwise generic; dims outside the rotary range
/// pass through. The result has element type `resultType`.
Value buildRotation(OpBuilder &b, Location loc, Value x, CosSin table,
                    RotarySpecAttr spec, int64_t seqDim, Type resultType) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  unsigned n = xType.getRank();
  int64_t headDim = xType.getShape().back();
  int64_t r = spec.getRotaryDims(headDim), h = r / 2, off = spec.getOffset();
  bool interleaved = spec.getLayout() == RotaryLayout::interleaved;

  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  SmallVector<OpFoldResult> sliceSizes(sizes);
  sliceSizes.back() = b.getIndexAttr(h);
  SmallVector<OpFoldResult> first(n, b.getIndexAttr(0)), second(first);
  first.back() = b.getIndexAttr(off);
  second.back() = b.getIndexAttr(interleaved ? off + 1 : off + h);
  SmallVector<OpFoldResult> strides(n, b.getIndexAttr(1));
  strides.back() = b.getIndexAttr(interleaved ? 2 : 1);

  Value x1 = tensor::ExtractSliceOp::create(b, loc, x, first, sliceSizes, strides);
  Value x2 = tensor::ExtractSliceOp::create(b, loc, x, second, sliceSizes, strides);

  // The destination carries the pass-through dims.
  Value dest;
  Type xElt = xType.getElementType();
  if (r == headDim) {
    dest = emptyTensor(b, loc, sizes, resultType);
  } else if (resultType == xElt) {
    dest = x;
  } else {
    Value init = emptyTensor(b, loc, sizes, resultType);
    AffineMap id = AffineMap::getMultiDimIdentityMap(n, ctx);
    dest = linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{x}, ValueRange{init},
               ArrayRef<AffineMap>{id, id}, SmallVector<IteratorType>(n, kPar),
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value v = fromF32(nb, nl, toF32(nb, nl, args[0]), resultType);
                 linalg::YieldOp::create(nb, nl, ValueRange{v});
               })
               .getResult(0);
  }
  Value out1 = tensor::ExtractSliceOp::create(b, loc, dest, first, sliceSizes, strides);
  Value out2 = tensor::ExtractSliceOp::create(b, loc, dest, second, sliceSizes, strides);

  unsigned tableRank = cast<RankedTensorType>(table.cos.getType()).getRank();
  AffineMap tableMap =
      tableRank == 2
          ? dimsMap(ctx, n, {static_cast<unsigned>(seqDim), n - 1})
          : dimsMap(ctx, n, {0, static_cast<unsigned>(seqDim), n - 1});
  AffineMap id = AffineMap::getMultiDimIdentityMap(n, ctx);
  auto rotate = linalg::GenericOp::create(
      b, loc, TypeRange{out1.getType(), out2.getType()},
      ValueRange{x1, x2, table.cos, table.sin}, ValueRange{out1, out2},
      ArrayRef<AffineMap>{id, id, tableMap, tableMap, id, id},
      SmallVector<IteratorType>(n, kPar),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value a = toF32(nb, nl, args[0]), c = args[2];
        Value bb = toF32(nb, nl, args[1]), s = args[3];
        Value a2 = arith::SubFOp::create(nb, nl, arith::MulFOp::create(nb, nl, a, c),
                                         arith::MulFOp::create(nb, nl, bb, s));
        Value b2 = arith::AddFOp::create(nb, nl, arith::MulFOp::create(nb, nl, bb, c),
                                         arith::MulFOp::create(nb, nl, a, s));
        linalg::YieldOp::create(nb, nl,
                                ValueRange{fromF32(nb, nl, a2, resultType),
                                           fromF32(nb, nl, b2, resultType)});
      });
  Value result = tensor::InsertSliceOp::create(b, loc, rotate.getResult(0), dest,
                                               first, sliceSizes, strides);
  return tensor::InsertSliceOp::create(b, loc, rotate.getResult(1), result,
                                       second, sliceSizes, strides);
}

//===----------------------------------------------------------------------===//
// Attention helpers
//===----------------------------------------------------------------------===//

/// Positions of an attention operand: the given tensor, or the default
/// `offset + [0, len)`.
Value positionsOrIota(OpBuilder &b, Location loc, Value given, OpFoldResult len,
                      Value offset) {
  return given ? given : buildIota(b, loc, len, offset);
}

/// Map of positions ([S] or [B, S]) into a loop nest whose batch loop is
/// `batchDim` and sequence loop is `seqDim`.
AffineMap positionsMap(MLIRContext *ctx, Value positions, unsigned numDims,
                       unsigned batchDim, unsigned seqDim) {
  if (cast<RankedTensorType>(positions.getType()).getRank() == 1)
    return dimsMap(ctx, numDims, {seqDim});
  return dimsMap(ctx, numDims, {batchDim, seqDim});
}

/// [B, Hq, ...] -> [B, Hkv, G, ...] so that grouped heads index with plain
/// loop dims (the kv head is a loop of its own, not an affine quotient).
Value splitHeads(OpBuilder &b, Location loc, Value t, int64_t hkv, int64_t g) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  SmallVector<OpFoldResult> outSizes = {sizes[0], b.getIndexAttr(hkv),
                                        b.getIndexAttr(g)};
  SmallVector<int64_t> shape = {type.getDimSize(0), hkv, g};
  SmallVector<ReassociationIndices> reassoc = {{0}, {1, 2}};
  for (unsigned i = 2; i < type.getRank(); ++i) {
    outSizes.push_back(sizes[i]);
    shape.push_back(type.getDimSize(i));
    reassoc.push_back({static_cast<int64_t>(i + 1)});
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t, reassoc,
      outSizes);
}

/// The mask as an operand of the [b, kh, g, i, j] loop nest: unit dims are
/// dropped (they broadcast) and the head dim is split like the queries'.
std::pair<Value, AffineMap> prepareMask(OpBuilder &b, Location loc, Value mask,
                                        int64_t hkv, int64_t g) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t rank = type.getRank();
  // Target dim (0 = B, 1 = H, 2 = Sq, 3 = Sk) of each mask dim.
  SmallVector<int64_t> keptTargets;
  SmallVector<int64_t> keptShape;
  for (int64_t i = 0; i < rank; ++i) {
    if (type.getDimSize(i) == 1)
      continue;
    keptTargets.push_back(4 - rank + i);
    keptShape.push_back(type.getDimSize(i));
  }
  Value m = mask;
  if (static_cast<int64_t>(keptTargets.size()) != rank) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, mask);
    SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0)),
        ones(rank, b.getIndexAttr(1));
    m = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(keptShape, type.getElementType()), mask,
        zeros, sizes, ones);
  }
  SmallVector<unsigned> loops;
  auto headIt = llvm::find(keptTargets, 1);
  if (headIt != keptTargets.end()) {
    // Split the head dim of the mask into [Hkv, G].
    int64_t pos = headIt - keptTargets.begin();
    auto mType = cast<RankedTensorType>(m.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, m);
    SmallVector<OpFoldResult> outSizes;
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> reassoc;
    int64_t next = 0;
    for (int64_t i = 0; i < mType.getRank(); ++i) {
      if (i == pos) {
        outSizes.append({b.getIndexAttr(hkv), b.getIndexAttr(g)});
        shape.append({hkv, g});
        reassoc.push_back({next, next + 1});
        next += 2;
      } else {
        outSizes.push_back(sizes[i]);
        shape.push_back(mType.getDimSize(i));
        reassoc.push_back({next++});
      }
    }
    m = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, mType.getElementType()), m,
        reassoc, outSizes);
  }
  for (int64_t t : keptTargets) {
    switch (t) {
    case 0: loops.push_back(0); break;
    case 1: loops.append({1, 2}); break;
    case 2: loops.push_back(3); break;
    default: loops.push_back(4); break;
    }
  }
  return {m, dimsMap(ctx, 5, loops)};
}

/// Full attention, materialising the scores. Loop dims: b, kh (kv head),
/// g (query head within the group), i (query), j (key), d / e (head dims).
Value buildAttention(OpBuilder &b, Location loc, AttentionOp op) {
  MLIRContext *ctx = b.getContext();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  auto qType = cast<RankedTensorType>(q.getType());
  auto kType = cast<RankedTensorType>(k.getType());
  Type elt = qType.getElementType();
  Type f32 = b.getF32Type();
  int64_t hq = qType.getDimSize(1), hkv = kType.getDimSize(1), g = hq / hkv;

  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, q);
  SmallVector<OpFoldResult> kSizes = tensor::getMixedSizes(b, loc, k);
  SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(b, loc, v);
  OpFoldResult batch = qSizes[0], sq = qSizes[2], sk = kSizes[2], dv = vSizes[3];

  // Absolute positions, needed for causality and rotation.
  Value qPos = op.getQueryPositions(), kPos = op.getKeyPositions();
  bool needPositions = op.getCausal() || op.getRotary();
  if (needPositions && !qPos) {
    Value sqV = getValueOrCreateConstantIndexOp(b, loc, sq);
    Value skV = getValueOrCreateConstantIndexOp(b, loc, sk);
    Value offset = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), arith::SubIOp::create(b, loc, skV, sqV));
    Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
    qPos = positionsOrIota(b, loc, qPos, sq, offset);
    kPos = positionsOrIota(b, loc, kPos, sk, zero);
  }

  // Rotation inside the op: Q and K are rotated in f32 at their positions;
  // frequencies that depend on the length see the largest of both.
  if (auto spec = op.getRotary()) {
    Value maxPos;
    auto maxPosition = [&]() {
      if (!maxPos)
        maxPos = arith::MaxSIOp::create(b, loc, buildMaxPosition(b, loc, qPos),
                                        buildMaxPosition(b, loc, kPos));
      return maxPos;
    };
    int64_t headDim = qType.getDimSize(3);
    Value invFreq = buildInverseFrequencies(b, loc, *spec, headDim, maxPosition);
    CosSin qTable = buildTable(b, loc, qPos, invFreq, *spec);
    CosSin kTable = qPos == kPos ? qTable : buildTable(b, loc, kPos, invFreq, *spec);
    q = buildRotation(b, loc, q, qTable, *spec, 2, f32);
    k = buildRotation(b, loc, k, kTable, *spec, 2, f32);
  }

  Value q5 = splitHeads(b, loc, q, hkv, g);
  SmallVector<OpFoldResult> scoreSizes = {batch, b.getIndexAttr(hkv),
                                          b.getIndexAttr(g), sq, sk};
  SmallVector<OpFoldResult> rowSizes(scoreSizes.begin(), scoreSizes.end() - 1);

  // scores[b,kh,g,i,j] = Σ_d q[b,kh,g,i,d] k[b,kh,j,d]
  Value scoresInit = filledTensor(b, loc, scoreSizes, f32, b.getF32FloatAttr(0));
  Value scores =
      linalg::GenericOp::create(
          b, loc, scoresInit.getType(), ValueRange{q5, k}, ValueRange{scoresInit},
          ArrayRef<AffineMap>{dimsMap(ctx, 6, {0, 1, 2, 3, 5}),
                              dimsMap(ctx, 6, {0, 1, 4, 5}),
                              dimsMap(ctx, 6, {0, 1, 2, 3, 4})},
          ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kPar, kRed},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value prod = arith::MulFOp::create(nb, nl, toF32(nb, nl, args[0]),
                                               toF32(nb, nl, args[1]));
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[2], prod)});
          })
          .getResult(0);

  // logits = scale·scores (+ mask), masked entries -inf.
  SmallVector<Value> ins = {scores};
  SmallVector<AffineMap> maps = {dimsMap(ctx, 5, range(0, 5))};
  Value mask = op.getMask();
  bool boolMask = false;
  if (mask) {
    auto [m, map] = prepareMask(b, loc, mask, hkv, g);
    boolMask = cast<RankedTensorType>(m.getType()).getElementType().isInteger(1);
    ins.push_back(m);
    maps.push_back(map);
  }
  if (op.getCausal()) {
    ins.append({qPos, kPos});
    maps.append({positionsMap(ctx, qPos, 5, 0, 3), positionsMap(ctx, kPos, 5, 0, 4)});
  }
  maps.push_back(dimsMap(ctx, 5, range(0, 5)));
  double scale = op.getEffectiveScale();
  Value logits =
      linalg::GenericOp::create(
          b, loc, scores.getType(), ins, ValueRange{scores}, maps,
          SmallVector<IteratorType>(5, kPar),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value l = arith::MulFOp::create(nb, nl, args[0], f32Const(nb, nl, scale));
            unsigned next = 1;
            Value keep;
            if (mask) {
              Value m = args[next++];
              if (boolMask)
                keep = m;
              else
                l = arith::AddFOp::create(nb, nl, l, toF32(nb, nl, m));
            }
            if (op.getCausal()) {
              Value qp = positionToI64(nb, nl, args[next++]);
              Value kp = positionToI64(nb, nl, args[next++]);
              Value visible = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::sle, kp, qp);
              keep = keep ? arith::AndIOp::create(nb, nl, keep, visible).getResult()
                          : visible;
            }
            if (keep)
              l = arith::SelectOp::create(nb, nl, keep, l, negInfF32(nb, nl));
            linalg::YieldOp::create(nb, nl, ValueRange{l});
          })
          .getResult(0);

  // Row max, then p = exp(l - max) (0 where the whole row is masked).
  AffineMap rowMap = dimsMap(ctx, 5, {0, 1, 2, 3});
  AffineMap all5 = dimsMap(ctx, 5, range(0, 5));
  Value maxInit = filledTensor(b, loc, rowSizes, f32,
                               b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value rowMax =
      linalg::GenericOp::create(
          b, loc, maxInit.getType(), ValueRange{logits}, ValueRange{maxInit},
          ArrayRef<AffineMap>{all5, rowMap},
          ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::MaximumFOp::create(nb, nl, args[0], args[1])});
          })
          .getResult(0);
  Value probs =
      linalg::GenericOp::create(
          b, loc, logits.getType(), ValueRange{logits, rowMax}, ValueRange{logits},
          ArrayRef<AffineMap>{all5, rowMap, all5}, SmallVector<IteratorType>(5, kPar),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value masked = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                                 args[1], negInfF32(nb, nl));
            Value e = math::ExpOp::create(
                nb, nl, arith::SubFOp::create(nb, nl, args[0], args[1]));
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::SelectOp::create(nb, nl, masked,
                                                   f32Const(nb, nl, 0.0), e)});
          })
          .getResult(0);
  Value sumInit = filledTensor(b, loc, rowSizes, f32, b.getF32FloatAttr(0));
  Value rowSum =
      linalg::GenericOp::create(
          b, loc, sumInit.getType(), ValueRange{probs}, ValueRange{sumInit},
          ArrayRef<AffineMap>{all5, rowMap},
          ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
          })
          .getResult(0);

  // o[b,kh,g,i,e] = Σ_j p[b,kh,g,i,j] v[b,kh,j,e]
  SmallVector<OpFoldResult> outSizes = {batch, b.getIndexAttr(hkv),
                                        b.getIndexAttr(g), sq, dv};
  Value accInit = filledTensor(b, loc, outSizes, f32, b.getF32FloatAttr(0));
  Value acc =
      linalg::GenericOp::create(
          b, loc, accInit.getType(), ValueRange{probs, v}, ValueRange{accInit},
          ArrayRef<AffineMap>{dimsMap(ctx, 6, {0, 1, 2, 3, 5}),
                              dimsMap(ctx, 6, {0, 1, 5, 4}),
                              dimsMap(ctx, 6, {0, 1, 2, 3, 4})},
          ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kPar, kRed},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value prod = arith::MulFOp::create(nb, nl, args[0], toF32(nb, nl, args[1]));
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[2], prod)});
          })
          .getResult(0);

  Value outInit = emptyTensor(b, loc, outSizes, elt);
  Value out =
      linalg::GenericOp::create(
          b, loc, outInit.getType(), ValueRange{acc, rowSum}, ValueRange{outInit},
          ArrayRef<AffineMap>{all5, rowMap, all5}, SmallVector<IteratorType>(5, kPar),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value zero = f32Const(nb, nl, 0.0);
            Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                                args[1], zero);
            Value o = arith::SelectOp::create(
                nb, nl, empty, zero, arith::DivFOp::create(nb, nl, args[0], args[1]));
            linalg::YieldOp::create(nb, nl, ValueRange{fromF32(nb, nl, o, elt)});
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, out, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

/// φ(x) = elu(x) + 1, in f32.
Value buildEluPlusOne(OpBuilder &b, Location loc, Value x) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  unsigned n = type.getRank();
  Value init = emptyTensor(b, loc, tensor::getMixedSizes(b, loc, x), b.getF32Type());
  AffineMap id = AffineMap::getMultiDimIdentityMap(n, ctx);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{x}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, SmallVector<IteratorType>(n, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = toF32(nb, nl, args[0]);
               Value positive = arith::CmpFOp::create(
                   nb, nl, arith::CmpFPredicate::OGT, v, f32Const(nb, nl, 0.0));
               Value y = arith::SelectOp::create(
                   nb, nl, positive,
                   arith::AddFOp::create(nb, nl, v, f32Const(nb, nl, 1.0)),
                   math::ExpOp::create(nb, nl, v));
               linalg::YieldOp::create(nb, nl, ValueRange{y});
             })
      .getResult(0);
}

/// Accumulates lhs·rhs into `init` (f32) over the reduction loops of `iters`.
Value contract(OpBuilder &b, Location loc, Value lhs, Value rhs, Value init,
               ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iters) {
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{lhs, rhs}, ValueRange{init},
             maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value prod = arith::MulFOp::create(nb, nl, toF32(nb, nl, args[0]),
                                                  toF32(nb, nl, args[1]));
               linalg::YieldOp::create(
                   nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[2], prod)});
             })
      .getResult(0);
}

/// RoFormer eq. 19. Non-causal uses the linear-cost form (Σ_n k_n v_nᵀ once);
/// causal uses the masked quadratic form.
Value buildLinearAttention(OpBuilder &b, Location loc, LinearAttentionOp op) {
  MLIRContext *ctx = b.getContext();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  auto qType = cast<RankedTensorType>(q.getType());
  Type elt = qType.getElementType();
  Type f32 = b.getF32Type();
  int64_t d = qType.getDimSize(3);
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, q);
  SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(b, loc, v);
  OpFoldResult batch = qSizes[0], heads = qSizes[1], seq = qSizes[2], dv = vSizes[3];

  Value phiQ = buildEluPlusOne(b, loc, q), phiK = buildEluPlusOne(b, loc, k);
  Value rq = phiQ, rk = phiK;
  if (auto spec = op.getRotary()) {
    Value pos = op.getPositions();
    if (!pos)
      pos = buildIota(b, loc, seq,
                      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
    Value invFreq = buildInverseFrequencies(
        b, loc, *spec, d, [&]() { return buildMaxPosition(b, loc, pos); });
    CosSin table = buildTable(b, loc, pos, invFreq, *spec);
    rq = buildRotation(b, loc, phiQ, table, *spec, 2, f32);
    rk = buildRotation(b, loc, phiK, table, *spec, 2, f32);
  }

  SmallVector<OpFoldResult> outSizes = {batch, heads, seq, dv};
  SmallVector<OpFoldResult> rowSizes = {batch, heads, seq};
  Value num, den;
  if (!op.getCausal()) {
    // kv[b,h,d,e] = Σ_n rk[b,h,n,d] v[b,h,n,e]; num = rq · kv.
    Value kvInit = filledTensor(b, loc, {batch, heads, b.getIndexAttr(d), dv}, f32,
                                b.getF32FloatAttr(0));
    Value kv = contract(b, loc, rk, v, kvInit,
                        {dimsMap(ctx, 5, {0, 1, 4, 2}), dimsMap(ctx, 5, {0, 1, 4, 3}),
                         dimsMap(ctx, 5, {0, 1, 2, 3})},
                        {kPar, kPar, kPar, kPar, kRed});
    Value numInit = filledTensor(b, loc, outSizes, f32, b.getF32FloatAttr(0));
    num = contract(b, loc, rq, kv, numInit,
                   {dimsMap(ctx, 5, {0, 1, 2, 4}), dimsMap(ctx, 5, {0, 1, 4, 3}),
                    dimsMap(ctx, 5, {0, 1, 2, 3})},
                   {kPar, kPar, kPar, kPar, kRed});
    // ksum[b,h,d] = Σ_n φk; den = φq · ksum.
    Value ksumInit = filledTensor(b, loc, {batch, heads, b.getIndexAttr(d)}, f32,
                                  b.getF32FloatAttr(0));
    Value ksum =
        linalg::GenericOp::create(
            b, loc, ksumInit.getType(), ValueRange{phiK}, ValueRange{ksumInit},
            ArrayRef<AffineMap>{dimsMap(ctx, 4, {0, 1, 3, 2}),
                                dimsMap(ctx, 4, {0, 1, 2})},
            ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
            })
            .getResult(0);
    Value denInit = filledTensor(b, loc, rowSizes, f32, b.getF32FloatAttr(0));
    den = contract(b, loc, phiQ, ksum, denInit,
                   {dimsMap(ctx, 4, {0, 1, 2, 3}), dimsMap(ctx, 4, {0, 1, 3}),
                    dimsMap(ctx, 4, {0, 1, 2})},
                   {kPar, kPar, kPar, kRed});
  } else {
    // a[b,h,m,n] = rq_m · rk_n and w[b,h,m,n] = φq_m · φk_n, then sums over
    // n <= m only.
    SmallVector<OpFoldResult> sqSizes = {batch, heads, seq, seq};
    auto scoreMaps = SmallVector<AffineMap>{dimsMap(ctx, 5, {0, 1, 2, 4}),
                                            dimsMap(ctx, 5, {0, 1, 3, 4}),
                                            dimsMap(ctx, 5, {0, 1, 2, 3})};
    SmallVector<IteratorType> scoreIters = {kPar, kPar, kPar, kPar, kRed};
    Value a = contract(b, loc, rq, rk,
                       filledTensor(b, loc, sqSizes, f32, b.getF32FloatAttr(0)),
                       scoreMaps, scoreIters);
    Value w = contract(b, loc, phiQ, phiK,
                       filledTensor(b, loc, sqSizes, f32, b.getF32FloatAttr(0)),
                       scoreMaps, scoreIters);
    auto causalBody = [&](bool withValue) {
      return [&, withValue](OpBuilder &nb, Location nl, ValueRange args) {
        Value m = linalg::IndexOp::create(nb, nl, 2);
        Value n = linalg::IndexOp::create(nb, nl, withValue ? 4 : 3);
        Value visible =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule, n, m);
        Value term = withValue ? arith::MulFOp::create(nb, nl, args[0],
                                                       toF32(nb, nl, args[1]))
                                     .getResult()
                               : args[0];
        Value acc = args[withValue ? 2 : 1];
        Value sum = arith::AddFOp::create(nb, nl, acc, term);
        linalg::YieldOp::create(
            nb, nl, ValueRange{arith::SelectOp::create(nb, nl, visible, sum, acc)});
      };
    };
    Value numInit = filledTensor(b, loc, outSizes, f32, b.getF32FloatAttr(0));
    num = linalg::GenericOp::create(
              b, loc, numInit.getType(), ValueRange{a, v}, ValueRange{numInit},
              ArrayRef<AffineMap>{dimsMap(ctx, 5, {0, 1, 2, 4}),
                                  dimsMap(ctx, 5, {0, 1, 4, 3}),
                                  dimsMap(ctx, 5, {0, 1, 2, 3})},
              ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
              causalBody(true))
              .getResult(0);
    Value denInit = filledTensor(b, loc, rowSizes, f32, b.getF32FloatAttr(0));
    den = linalg::GenericOp::create(
              b, loc, denInit.getType(), ValueRange{w}, ValueRange{denInit},
              ArrayRef<AffineMap>{dimsMap(ctx, 4, {0, 1, 2, 3}),
                                  dimsMap(ctx, 4, {0, 1, 2})},
              ArrayRef<IteratorType>{kPar, kPar, kPar, kRed}, causalBody(false))
              .getResult(0);
  }

  Value outInit = emptyTensor(b, loc, outSizes, elt);
  return linalg::GenericOp::create(
             b, loc, outInit.getType(), ValueRange{num, den}, ValueRange{outInit},
             ArrayRef<AffineMap>{dimsMap(ctx, 4, {0, 1, 2, 3}),
                                 dimsMap(ctx, 4, {0, 1, 2}),
                                 dimsMap(ctx, 4, {0, 1, 2, 3})},
             SmallVector<IteratorType>(4, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value o = arith::DivFOp::create(nb, nl, args[0], args[1]);
               linalg::YieldOp::create(nb, nl, ValueRange{fromF32(nb, nl, o, elt)});
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// rope.rotate -> rope.table + the multiply-add that applies it. Keeping the
/// table an op of its own lets rotations that share a spec and positions
/// share it.
struct RotateToTable : public OpRewritePattern<RotateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RotateOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto table = TableOp::create(rewriter, loc, op.getPositions(), op.getSpec(),
                                 op.getHeadDim());
    Value result = buildRotation(rewriter, loc, op.getInput(),
                                 {table.getCos(), table.getSin()}, op.getSpec(),
                                 op.getNormalizedSeqDim(),
                                 op.getInput().getType().getElementType());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerTable : public OpRewritePattern<TableOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TableOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value invFreq = buildInverseFrequencies(
        rewriter, loc, op.getSpec(), op.getHeadDim(),
        [&]() { return buildMaxPosition(rewriter, loc, op.getPositions()); });
    CosSin table = buildTable(rewriter, loc, op.getPositions(), invFreq, op.getSpec());
    rewriter.replaceOp(op, {table.cos, table.sin});
    return success();
  }
};

struct LowerAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildAttention(rewriter, op.getLoc(), op));
    return success();
  }
};

struct LowerLinearAttention : public OpRewritePattern<LinearAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearAttentionOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildLinearAttention(rewriter, op.getLoc(), op));
    return success();
  }
};

/// PE(p, 2i) = sin(p·w_i), PE(p, 2i+1) = cos(p·w_i), w_i = base^(-2i/D); the
/// per-lane frequency is a compile-time constant and the phase is reduced in
/// f64 like the rotary tables.
struct LowerSinusoidal : public OpRewritePattern<SinusoidalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SinusoidalOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getResult().getType();
    unsigned n = type.getRank();
    int64_t dim = type.getShape().back();
    double base = op.getBase().convertToDouble();
    SmallVector<double> laneFreq;
    for (int64_t lane = 0; lane < dim; ++lane)
      laneFreq.push_back(std::pow(base, -static_cast<double>(lane - lane % 2) /
                                            static_cast<double>(dim)));
    Value freqs = f64Tensor(rewriter, loc, laneFreq);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, op.getPositions());
    sizes.push_back(rewriter.getIndexAttr(dim));
    Value init = emptyTensor(rewriter, loc, sizes, type.getElementType());
    Type elt = type.getElementType();
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{op.getPositions(), freqs},
            ValueRange{init},
            ArrayRef<AffineMap>{dimsMap(ctx, n, range(0, n - 1)),
                                dimsMap(ctx, n, {n - 1}),
                                dimsMap(ctx, n, range(0, n))},
            SmallVector<IteratorType>(n, kPar),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value p = arith::SIToFPOp::create(nb, nl, nb.getF64Type(),
                                                positionToI64(nb, nl, args[0]));
              Value phase = arith::MulFOp::create(nb, nl, p, args[1]);
              Value turns = math::RoundEvenOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, phase,
                                                f64Const(nb, nl, 0.5 / M_PI)));
              Value reduced = arith::SubFOp::create(
                  nb, nl, phase,
                  arith::MulFOp::create(nb, nl, turns, f64Const(nb, nl, 2.0 * M_PI)));
              Value r32 = arith::TruncFOp::create(nb, nl, nb.getF32Type(), reduced);
              Value lane = arith::IndexCastOp::create(
                  nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, n - 1));
              Value odd = arith::TruncIOp::create(nb, nl, nb.getI1Type(), lane);
              Value v = arith::SelectOp::create(nb, nl, odd,
                                                math::CosOp::create(nb, nl, r32),
                                                math::SinOp::create(nb, nl, r32));
              linalg::YieldOp::create(nb, nl, ValueRange{fromF32(nb, nl, v, elt)});
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Replaces each rope.table with an earlier identical one in the same block.
/// Tables are pure and cheap to compare; sharing them is what makes Q and K
/// read one cos/sin table.
void shareTables(Operation *root) {
  DenseMap<std::tuple<Block *, Value, Attribute, int64_t>, TableOp> seen;
  SmallVector<TableOp> duplicates;
  root->walk([&](TableOp op) {
    auto key = std::make_tuple(op->getBlock(), op.getPositions(),
                               Attribute(op.getSpec()), op.getHeadDim());
    auto [it, inserted] = seen.try_emplace(key, op);
    if (!inserted) {
      op.getCos().replaceAllUsesWith(it->second.getCos());
      op.getSin().replaceAllUsesWith(it->second.getSin());
      duplicates.push_back(op);
    }
  });
  for (TableOp op : duplicates)
    op.erase();
}

struct ConvertRopeToLinalgPass
    : public rope::impl::ConvertRopeToLinalgBase<ConvertRopeToLinalgPass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    MLIRContext *ctx = &getContext();
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);

    // Stage 1: rotations become tables plus their application.
    RewritePatternSet rotatePatterns(ctx);
    rotatePatterns.add<RotateToTable>(ctx);
    if (failed(applyPatternsGreedily(root, std::move(rotatePatterns), config)))
      return signalPassFailure();
    shareTables(root);

    // Stage 2: everything else.
    RewritePatternSet patterns(ctx);
    populateRopeToLinalgPatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns), config)))
      return signalPassFailure();

    WalkResult leftover = root->walk([](Operation *op) {
      if (isa<RopeDialect>(op->getDialect())) {
        op->emitOpError("could not be lowered to linalg");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::rope::populateRopeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RotateToTable, LowerTable, LowerAttention, LowerLinearAttention,
               LowerSinusoidal>(patterns.getContext());
}
