//===- AttentionRules.cpp - the rules of attention, once ------------------===//

#include "rope/Dialect/Rope/IR/AttentionRules.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

namespace mlir::rope::attention {

static Value i64Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}

static Value andOf(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x)
    return y;
  if (!y)
    return x;
  return arith::AndIOp::create(b, loc, x, y);
}

Value buildKeyVisibility(OpBuilder &b, Location loc, Value qLo, Value qHi,
                         Value kLo, Value kHi, bool causal,
                         std::optional<int64_t> window) {
  Value visible;
  // The earliest key is not after the latest query.
  if (causal)
    visible = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, kLo, qHi);
  // The latest key is inside the window of the earliest query:
  // p_q − W < p_k, written p_q − p_k < W so that no position near the i64
  // limits overflows (positions are token indices, far from them).
  if (window) {
    Value distance = arith::SubIOp::create(b, loc, qLo, kHi);
    visible = andOf(b, loc, visible,
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          distance, i64Const(b, loc, *window)));
  }
  return visible;
}

Value buildEveryKeyVisible(OpBuilder &b, Location loc, Value qLo, Value qHi,
                           Value kLo, Value kHi, bool causal,
                           std::optional<int64_t> window) {
  // The same two rules at the other corners of the tile: its latest key is
  // not after its earliest query, and its earliest key is inside the window
  // of its latest query.
  return buildKeyVisibility(b, loc, /*qLo=*/qHi, /*qHi=*/qLo, /*kLo=*/kHi,
                            /*kHi=*/kLo, causal, window);
}

Value buildSoftcap(OpBuilder &b, Location loc, Value logit, double cap) {
  Value scaled = arith::MulFOp::create(b, loc, logit, f32Const(b, loc, 1.0 / cap));
  return arith::MulFOp::create(b, loc, math::TanhOp::create(b, loc, scaled),
                               f32Const(b, loc, cap));
}

Value buildAlibiBias(OpBuilder &b, Location loc, Value slope, Value qPos,
                     Value kPos) {
  Value distance = math::AbsIOp::create(b, loc,
                                        arith::SubIOp::create(b, loc, qPos, kPos));
  Value d = arith::SIToFPOp::create(b, loc, b.getF32Type(), distance);
  return arith::MulFOp::create(b, loc, arith::NegFOp::create(b, loc, slope), d);
}

Value buildRelativeBucket(OpBuilder &b, Location loc, Value qPos, Value kPos,
                          RelativeBucketsAttr buckets) {
  Type i64 = b.getI64Type();
  Value zero = i64Const(b, loc, 0);
  Value relative = arith::SubIOp::create(b, loc, kPos, qPos);
  int64_t perDirection = buckets.getBucketsPerDirection();
  int64_t maxExact = buckets.getMaxExact();
  Value base = zero, n;
  if (buckets.getBidirectional()) {
    // Keys after the query use the upper half of the buckets.
    Value after =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, relative, zero);
    base = arith::SelectOp::create(b, loc, after, i64Const(b, loc, perDirection),
                                   zero);
    n = math::AbsIOp::create(b, loc, relative);
  } else {
    // Only keys before the query are told apart; later ones are distance 0.
    n = arith::SubIOp::create(b, loc, zero,
                              arith::MinSIOp::create(b, loc, relative, zero));
  }
  // Positions more than 2^63 - 1 apart wrap the subtraction, and the
  // distance of INT64_MIN has no absolute value: such a distance is the
  // largest one, so the bucket stays within the table.
  n = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, n, zero),
      i64Const(b, loc, std::numeric_limits<int64_t>::max()), n);
  // max_exact + trunc(log(n / max_exact) / log(max_distance / max_exact) ·
  // (buckets − max_exact)), in f32 as T5 computes it, clamped to the last
  // bucket. For n < max_exact the value is unused (and may be −inf).
  Type f32 = b.getF32Type();
  Value ratio = arith::DivFOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, f32, n),
      f32Const(b, loc, static_cast<double>(maxExact)));
  // T5 divides by the Python (f64) log, which the f32 tensor op rounds.
  float logRange = static_cast<float>(
      std::log(static_cast<double>(buckets.getMaxDistance()) /
               static_cast<double>(maxExact)));
  Value scaled = arith::MulFOp::create(
      b, loc,
      arith::DivFOp::create(b, loc, math::LogOp::create(b, loc, ratio),
                            f32Const(b, loc, logRange)),
      f32Const(b, loc, static_cast<double>(perDirection - maxExact)));
  // Large distances only: the quotient is then non-negative and finite.
  Value small =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, n,
                            i64Const(b, loc, maxExact));
  Value safe = arith::SelectOp::create(b, loc, small, f32Const(b, loc, 0.0), scaled);
  Value large = arith::AddIOp::create(
      b, loc, i64Const(b, loc, maxExact), arith::FPToSIOp::create(b, loc, i64, safe));
  large = arith::MinSIOp::create(b, loc, large, i64Const(b, loc, perDirection - 1));
  Value bucket = arith::AddIOp::create(
      b, loc, base, arith::SelectOp::create(b, loc, small, n, large));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), bucket);
}

Value applyMaskElement(OpBuilder &b, Location loc, Value logit, Value element,
                       Value &visible) {
  if (element.getType().isInteger(1)) {
    visible = andOf(b, loc, visible, element);
    return logit;
  }
  return arith::AddFOp::create(b, loc, logit, toF32(b, loc, element));
}

Value dropInvisible(OpBuilder &b, Location loc, Value logit, Value visible) {
  if (!visible)
    return logit;
  return arith::SelectOp::create(b, loc, visible, logit, negInfF32(b, loc));
}

Value buildLogit(OpBuilder &b, Location loc, const LogitRules &rules,
                 Value score, const LogitInputs &in) {
  Value logit = arith::MulFOp::create(b, loc, score, f32Const(b, loc, rules.scale));
  if (rules.softcap)
    logit = buildSoftcap(b, loc, logit, *rules.softcap);
  Value visible;
  if (in.maskElement)
    logit = applyMaskElement(b, loc, logit, in.maskElement, visible);
  if (Value rule = buildKeyVisibility(b, loc, in.qPos, in.qPos, in.kPos, in.kPos,
                                      rules.causal, rules.window))
    visible = andOf(b, loc, visible, rule);
  if (in.slope)
    logit = arith::AddFOp::create(
        b, loc, logit, buildAlibiBias(b, loc, in.slope, in.qPos, in.kPos));
  if (in.relativeBias) {
    Value bucket = buildRelativeBucket(b, loc, in.qPos, in.kPos, rules.buckets);
    logit = arith::AddFOp::create(b, loc, logit, in.relativeBias(bucket));
  }
  return dropInvisible(b, loc, logit, visible);
}

} // namespace mlir::rope::attention
