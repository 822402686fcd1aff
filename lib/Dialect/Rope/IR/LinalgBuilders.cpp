//===- LinalgBuilders.cpp - linalg building blocks of rope lowerings ------===//

#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <array>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rope;

namespace mlir::rope::lowering {

/// Dot-product reductions may be reassociated and fused into FMAs: this is
/// what lets LLVM vectorise them. The tests' tolerances for attention are
/// stated in terms of f32 accumulation error, which this does not exceed.
static const arith::FastMathFlags kReduceFMF =
    arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;

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

/// Reduces an integer tensor to an i64 scalar with max (or min).
static Value buildPositionExtreme(OpBuilder &b, Location loc, Value positions,
                                  bool max) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(positions.getType());
  unsigned rank = type.getRank();
  Value init = filledTensor(
      b, loc, {}, b.getI64Type(),
      b.getI64IntegerAttr(max ? std::numeric_limits<int64_t>::min()
                              : std::numeric_limits<int64_t>::max()));
  SmallVector<IteratorType> iters(rank, kRed);
  Value extreme =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{positions}, ValueRange{init},
          ArrayRef<AffineMap>{dimsMap(ctx, rank, range(0, rank)),
                              AffineMap::get(rank, 0, {}, ctx)},
          iters,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value p = positionToI64(nb, nl, args[0]);
            Value r = max ? arith::MaxSIOp::create(nb, nl, p, args[1]).getResult()
                          : arith::MinSIOp::create(nb, nl, p, args[1]).getResult();
            linalg::YieldOp::create(nb, nl, ValueRange{r});
          })
          .getResult(0);
  return tensor::ExtractOp::create(b, loc, extreme, ValueRange{});
}

Value buildMaxPosition(OpBuilder &b, Location loc, Value positions) {
  return buildPositionExtreme(b, loc, positions, /*max=*/true);
}

Value buildMinPosition(OpBuilder &b, Location loc, Value positions) {
  return buildPositionExtreme(b, loc, positions, /*max=*/false);
}

Value buildReducedPhase(OpBuilder &b, Location loc, Value position,
                        Value frequency) {
  Value p = arith::SIToFPOp::create(b, loc, b.getF64Type(),
                                    positionToI64(b, loc, position));
  Value phase = arith::MulFOp::create(b, loc, p, frequency);
  Value turns = math::RoundEvenOp::create(
      b, loc, arith::MulFOp::create(b, loc, phase, f64Const(b, loc, 0.5 / M_PI)));
  return arith::SubFOp::create(
      b, loc, phase,
      arith::MulFOp::create(b, loc, turns, f64Const(b, loc, 2.0 * M_PI)));
}

Value buildShiftedExp(OpBuilder &b, Location loc, Value x, Value max) {
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                     negInfF32(b, loc));
  Value e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, max));
  return arith::SelectOp::create(b, loc, none, f32Const(b, loc, 0.0), e);
}

Value buildMultiplyAccumulate(OpBuilder &b, Location loc, Value lhs, Value rhs,
                              Value init, ArrayRef<AffineMap> maps,
                              ArrayRef<IteratorType> iters,
                              arith::FastMathFlags fastMath) {
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{lhs, rhs}, ValueRange{init},
             maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value prod = arith::MulFOp::create(nb, nl, toF32(nb, nl, args[0]),
                                                  toF32(nb, nl, args[1]), fastMath);
               Value sum = arith::AddFOp::create(nb, nl, toF32(nb, nl, args[2]),
                                                 prod, fastMath);
               linalg::YieldOp::create(
                   nb, nl, ValueRange{fromF32(nb, nl, sum, args[2].getType())});
             })
      .getResult(0);
}

Value buildElementwiseUpdateInPlace(
    OpBuilder &b, Location loc, ValueRange ins, ArrayRef<AffineMap> inMaps,
    Value dest, function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  unsigned n = cast<RankedTensorType>(dest.getType()).getRank();
  SmallVector<AffineMap> maps(inMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(n, b.getContext()));
  return linalg::GenericOp::create(
             b, loc, dest.getType(), ins, ValueRange{dest}, maps,
             SmallVector<IteratorType>(n, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, ValueRange{fn(nb, nl, args)});
             })
      .getResult(0);
}

Value buildElementwise(OpBuilder &b, Location loc, ValueRange ins,
                       ArrayRef<AffineMap> inMaps, Value like,
                       function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  // Into a fresh tensor, whose (undefined) elements fn does not read.
  Value init = emptyTensor(b, loc, tensor::getMixedSizes(b, loc, like),
                           b.getF32Type());
  return buildElementwiseUpdateInPlace(b, loc, ins, inMaps, init, fn);
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

/// cos and sin (f64; the caller rounds them to f32) of the phase x = p·f of
/// an integer position p and an f64 frequency f, in straight-line arithmetic
/// that vectorises (libm calls do not):
///   x = k·π/2 + r, k = round(2x/π), |r| ≤ π/4: π/2 in two parts whose sum
///     is exact to ~1e-33, each subtracted by one fused multiply-add, so r
///     carries only its own rounding for any phase an i64 position reaches;
///   sin r and cos r by Horner in r² of `terms` terms of their Taylor
///     series: with 6, up to r^11 and r^10 (the first terms left out,
///     r^13/13! and r^12/12!, are below 3e-11 and 2e-10 at π/4: under
///     0.005 ulp of f32); with 9, up to r^17 and r^16 (below 1e-15);
///   the quadrant k mod 4 swaps them (k odd) and flips their signs, read
///   from k's low bits.
/// With 6 terms, rounded to f32, the results are within 0.5 ulp + 0.005 ulp
/// of cos x and sin x, where x is p·f rounded to f64 once: the fewest
/// instructions that keep the tables' half-ulp bound (they are a decode
/// step's largest cost after its two products).
static std::pair<Value, Value> buildCosSinOfPhase(OpBuilder &b, Location loc,
                                                  Value position,
                                                  Value frequency,
                                                  int terms = 6) {
  Type i64 = b.getI64Type();
  auto cst = [&](double v) { return f64Const(b, loc, v); };
  auto icst = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
  };
  auto mul = [&](Value l, Value r) {
    return arith::MulFOp::create(b, loc, l, r).getResult();
  };
  auto fma = [&](Value x, Value y, Value z) {
    return math::FmaOp::create(b, loc, x, y, z).getResult();
  };
  Value x = mul(arith::SIToFPOp::create(b, loc, b.getF64Type(),
                                        positionToI64(b, loc, position)),
                frequency);
  // π/2 = kPio2Hi + kPio2Lo, kPio2Hi the double nearest π/2.
  constexpr double kPio2Hi = 1.5707963267948966;
  constexpr double kPio2Lo = 6.123233995736766e-17;
  Value k = math::RoundEvenOp::create(b, loc, mul(x, cst(2.0 / M_PI)));
  Value negK = arith::NegFOp::create(b, loc, k);
  Value r = fma(negK, cst(kPio2Lo), fma(negK, cst(kPio2Hi), x));
  // Past 2^52 (positions near the ends of i64) x no longer resolves its
  // quadrant and r is noise: kept within ±π/2 there, the pair stays a
  // rotation (cos² + sin² = 1 to 1e-6). Below, |r| ≤ π/4 + 2^-53·|x|.
  r = arith::MaximumFOp::create(
      b, loc, arith::MinimumFOp::create(b, loc, r, cst(M_PI_2)), cst(-M_PI_2));
  Value r2 = mul(r, r);
  // Taylor coefficients: sin r = r·Σ (−1)^i r^{2i}/(2i+1)!,
  // cos r = Σ (−1)^i r^{2i}/(2i)!, i < terms.
  SmallVector<double> sinCoefficients(terms), cosCoefficients(terms);
  double factorial = 1.0;
  cosCoefficients[0] = 1.0;
  for (int n = 1; n < 2 * terms; ++n) {
    factorial *= n;
    double sign = ((n / 2) % 2) ? -1.0 : 1.0;
    (n % 2 ? sinCoefficients : cosCoefficients)[n / 2] = sign / factorial;
  }
  auto series = [&](ArrayRef<double> coefficients) {
    Value acc = cst(coefficients.back());
    for (double c : llvm::reverse(coefficients.drop_back()))
      acc = fma(acc, r2, cst(c));
    return acc;
  };
  Value sinR = mul(r, series(sinCoefficients));
  Value cosR = series(cosCoefficients);
  // Quadrant q = k mod 4 (two's complement keeps it right for k < 0): sin x
  // is ±sin r for even q and ±cos r for odd q, negative for q ∈ {2, 3}; cos
  // x is ±cos r or ∓sin r, negative for q ∈ {1, 2}, i.e. where q + 1 has
  // bit 1 set.
  Value q = arith::FPToSIOp::create(b, loc, i64, k);
  auto bitSet = [&](Value v, int64_t bit) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                 arith::AndIOp::create(b, loc, v, icst(bit)),
                                 icst(0))
        .getResult();
  };
  Value odd = bitSet(q, 1);
  Value sinV = arith::SelectOp::create(b, loc, odd, cosR, sinR);
  Value cosV = arith::SelectOp::create(b, loc, odd, sinR, cosR);
  Value negSin = bitSet(q, 2);
  Value negCos = bitSet(arith::AddIOp::create(b, loc, q, icst(1)), 2);
  sinV = arith::SelectOp::create(b, loc, negSin,
                                 arith::NegFOp::create(b, loc, sinV), sinV);
  cosV = arith::SelectOp::create(b, loc, negCos,
                                 arith::NegFOp::create(b, loc, cosV), cosV);
  return {cosV, sinV};
}

/// Yields a table entry from cos and sin (f64): the attention factor and
/// the direction applied in f64, then one rounding to f32.
static void yieldTableEntry(OpBuilder &b, Location loc, Value cos, Value sin,
                            RotarySpecAttr spec) {
  double m = spec.getEffectiveAttentionFactor();
  double sinScale = spec.getInverse() ? -m : m;
  if (m != 1.0)
    cos = arith::MulFOp::create(b, loc, cos, f64Const(b, loc, m));
  if (sinScale != 1.0)
    sin = arith::MulFOp::create(b, loc, sin, f64Const(b, loc, sinScale));
  Type f32 = b.getF32Type();
  linalg::YieldOp::create(
      b, loc,
      ValueRange{arith::TruncFOp::create(b, loc, f32, cos),
                 arith::TruncFOp::create(b, loc, f32, sin)});
}

/// cos/sin tables of shape positions × [h] (f32) with the attention factor and
/// the direction folded in (buildCosSinOfPhase, then yieldTableEntry).
CosSin buildTable(OpBuilder &b, Location loc, Value positions, Value invFreq,
                  RotarySpecAttr spec) {
  MLIRContext *ctx = b.getContext();
  auto posType = cast<RankedTensorType>(positions.getType());
  unsigned pr = posType.getRank();
  int64_t h = cast<RankedTensorType>(invFreq.getType()).getDimSize(0);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, positions);
  sizes.push_back(b.getIndexAttr(h));
  Value init = emptyTensor(b, loc, sizes, b.getF32Type());
  SmallVector<AffineMap> maps = {dimsMap(ctx, pr + 1, range(0, pr)),
                                 dimsMap(ctx, pr + 1, {pr}),
                                 dimsMap(ctx, pr + 1, range(0, pr + 1)),
                                 dimsMap(ctx, pr + 1, range(0, pr + 1))};
  SmallVector<IteratorType> iters(pr + 1, kPar);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType(), init.getType()},
      ValueRange{positions, invFreq}, ValueRange{init, init}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto [c, s] = buildCosSinOfPhase(nb, nl, args[0], args[1]);
        yieldTableEntry(nb, nl, c, s, spec);
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// Whether `positions` [n] (1-D, static) of a table with frequencies known
/// at compile time may take buildTableOfRun.
bool tableTakesRunCheck(Value positions, RotarySpecAttr spec) {
  auto type = cast<RankedTensorType>(positions.getType());
  return !spec.dependsOnMaxPosition() && type.getRank() == 1 &&
         type.hasStaticShape() && type.getDimSize(0) >= kMinTableRun &&
         type.getDimSize(0) <= kMaxTableRun;
}

namespace {
/// cos and sin of j·f for the offsets j < n into a run of positions and
/// each of its frequencies f, [n, h] row-major.
struct RunOffsets {
  int64_t n;
  SmallVector<double> cos, sin;
};
} // namespace

/// The offsets of a run of `n` positions, computed here in double (libm:
/// within an ulp of f64) rather than by the program.
static RunOffsets runOffsets(ArrayRef<double> freqs, int64_t n) {
  RunOffsets offsets{n, {}, {}};
  for (int64_t j = 0; j < n; ++j)
    for (double f : freqs) {
      offsets.cos.push_back(std::cos(static_cast<double>(j) * f));
      offsets.sin.push_back(std::sin(static_cast<double>(j) * f));
    }
  return offsets;
}

/// Whether positions[j] = positions[0] + j for every j (`first` is
/// positions[0] as i64), as an i1: the run takes its table from positions[0]
/// alone where it holds.
static Value buildIsConsecutive(OpBuilder &b, Location loc, Value positions,
                                Value first) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  Value allInit = filledTensor(b, loc, {}, b.getI1Type(), b.getBoolAttr(true));
  Value all =
      linalg::GenericOp::create(
          b, loc, allInit.getType(), ValueRange{positions}, ValueRange{allInit},
          ArrayRef<AffineMap>{dimsMap(ctx, 1, {0}), dimsMap(ctx, 1, {})},
          ArrayRef<IteratorType>{kRed},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value j = arith::IndexCastOp::create(
                nb, nl, i64, linalg::IndexOp::create(nb, nl, 0));
            Value expected = arith::AddIOp::create(nb, nl, first, j);
            Value same =
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                      positionToI64(nb, nl, args[0]), expected);
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{
                    arith::AndIOp::create(nb, nl, args[1], same).getResult()});
          })
          .getResult(0);
  return tensor::ExtractOp::create(b, loc, all, ValueRange{});
}

/// Yields the [n, h] tables of a run of consecutive positions from `first`
/// (positions[0] as i64): each entry from the cos and sin of first·f and of
/// its offset j·f, so that only h phases take the polynomial.
static void yieldConsecutiveTable(OpBuilder &b, Location loc, Value first,
                                  Value invFreq, const RunOffsets &offsets,
                                  RotarySpecAttr spec) {
  MLIRContext *ctx = b.getContext();
  int64_t n = offsets.n;
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  int64_t h = cast<RankedTensorType>(invFreq.getType()).getDimSize(0);
  auto offsetTable = [&](ArrayRef<double> values) -> Value {
    auto type = RankedTensorType::get({n, h}, f64);
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(type, values));
  };
  auto tableType = RankedTensorType::get({n, h}, f32);
  // cos and sin of positions[0]·f, with the longer series (their
  // error adds to every entry's, as an absolute error).
  Value baseInit = emptyTensor(b, loc, {b.getIndexAttr(h)}, f64);
  AffineMap id1 = dimsMap(ctx, 1, {0});
  auto base = linalg::GenericOp::create(
      b, loc, TypeRange{baseInit.getType(), baseInit.getType()},
      ValueRange{invFreq}, ValueRange{baseInit, baseInit},
      ArrayRef<AffineMap>{id1, id1, id1}, ArrayRef<IteratorType>{kPar},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto [c, s] = buildCosSinOfPhase(nb, nl, first, args[0],
                                         /*terms=*/9);
        linalg::YieldOp::create(nb, nl, ValueRange{c, s});
      });
  // cos((p0 + j)f) = cos(p0 f)cos(jf) − sin(p0 f)sin(jf), and sin
  // alike, in f64.
  Value init = emptyTensor(b, loc, {b.getIndexAttr(n), b.getIndexAttr(h)}, f32);
  AffineMap perPair = dimsMap(ctx, 2, {1}), all2 = dimsMap(ctx, 2, {0, 1});
  auto table = linalg::GenericOp::create(
      b, loc, TypeRange{tableType, tableType},
      ValueRange{base.getResult(0), base.getResult(1), offsetTable(offsets.cos),
                 offsetTable(offsets.sin)},
      ValueRange{init, init},
      ArrayRef<AffineMap>{perPair, perPair, all2, all2, all2, all2},
      ArrayRef<IteratorType>{kPar, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto mul = [&](Value l, Value r) {
          return arith::MulFOp::create(nb, nl, l, r).getResult();
        };
        Value c0 = args[0], s0 = args[1], cj = args[2], sj = args[3];
        Value c = arith::SubFOp::create(nb, nl, mul(c0, cj), mul(s0, sj));
        Value s = arith::AddFOp::create(nb, nl, mul(s0, cj), mul(c0, sj));
        yieldTableEntry(nb, nl, c, s, spec);
      });
  scf::YieldOp::create(b, loc, table.getResults());
}

CosSin buildTableOfRun(OpBuilder &b, Location loc, Value positions,
                       RotarySpecAttr spec, int64_t headDim) {
  int64_t n = cast<RankedTensorType>(positions.getType()).getDimSize(0);
  SmallVector<double> freqs = spec.getInverseFrequencies(headDim, 0);
  Value invFreq = f64Tensor(b, loc, freqs);
  RunOffsets offsets = runOffsets(freqs, n);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first = positionToI64(
      b, loc, tensor::ExtractOp::create(b, loc, positions, ValueRange{zero}));
  Value consecutive = buildIsConsecutive(b, loc, positions, first);
  auto ifOp = scf::IfOp::create(
      b, loc, consecutive,
      [&](OpBuilder &tb, Location tl) {
        yieldConsecutiveTable(tb, tl, first, invFreq, offsets, spec);
      },
      [&](OpBuilder &eb, Location el) {
        CosSin table = buildTable(eb, el, positions, invFreq, spec);
        scf::YieldOp::create(eb, el, ValueRange{table.cos, table.sin});
      });
  return {ifOp.getResult(0), ifOp.getResult(1)};
}

std::pair<Value, Value> buildPairRotation(OpBuilder &b, Location loc, Value a,
                                          Value second, Value cos, Value sin,
                                          arith::FastMathFlags fastMath) {
  auto mul = [&](Value l, Value r) {
    return arith::MulFOp::create(b, loc, l, r, fastMath).getResult();
  };
  Value newFirst =
      arith::SubFOp::create(b, loc, mul(a, cos), mul(second, sin), fastMath);
  Value newSecond =
      arith::AddFOp::create(b, loc, mul(second, cos), mul(a, sin), fastMath);
  return {newFirst, newSecond};
}

namespace {
/// Where a rotation turns a tensor whose last dim is the head: the range
/// [off, off + r) of h = r / 2 pairs, as a slice of the tensor.
struct RotatedSlice {
  int64_t r, h, off;
  bool interleaved;
  /// The range is the whole head dim.
  bool whole;
  /// The tensor's sizes, and the range as a slice of it.
  SmallVector<OpFoldResult> tensorSizes, offsets, sizes, strides;
};

RotatedSlice rotatedSlice(OpBuilder &b, Location loc, Value x,
                          RotaryRange dims) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned n = type.getRank();
  int64_t headDim = type.getShape().back();
  RotatedSlice range;
  range.r = dims.dims;
  range.h = range.r / 2;
  range.off = dims.offset;
  range.interleaved = dims.layout == RotaryLayout::interleaved;
  range.whole = range.r == headDim;
  range.tensorSizes = tensor::getMixedSizes(b, loc, x);
  range.offsets.assign(n, b.getIndexAttr(0));
  range.offsets.back() = b.getIndexAttr(range.off);
  range.sizes = range.tensorSizes;
  range.sizes.back() = b.getIndexAttr(range.r);
  range.strides.assign(n, b.getIndexAttr(1));
  return range;
}

/// The rotated range of `t` viewed as [.., 2, h] (half: member c of pair t
/// at c·h + t) or [.., h, 2] (interleaved: at 2t + c).
Value pairView(OpBuilder &b, Location loc, Value t, const RotatedSlice &range) {
  if (!range.whole)
    t = tensor::ExtractSliceOp::create(b, loc, t, range.offsets, range.sizes,
                                       range.strides);
  auto type = cast<RankedTensorType>(t.getType());
  int64_t n = type.getRank();
  SmallVector<int64_t> shape(type.getShape().drop_back());
  SmallVector<OpFoldResult> sizes(ArrayRef(range.sizes).drop_back());
  for (int64_t extent : range.interleaved
                            ? std::array<int64_t, 2>{range.h, 2}
                            : std::array<int64_t, 2>{2, range.h}) {
    shape.push_back(extent);
    sizes.push_back(b.getIndexAttr(extent));
  }
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t i = 0; i + 1 < n; ++i)
    reassoc.push_back({i});
  reassoc.push_back({n - 1, n});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t, reassoc,
      sizes);
}

/// Map of a pair view over `numLoops` loops whose first `leading` are the
/// view's leading dims: pair `pair`, member `member`.
AffineMap pairMap(MLIRContext *ctx, unsigned numLoops, unsigned leading,
                  AffineExpr pair, AffineExpr member, bool interleaved) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < leading; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  return pairReadMap(exprs, numLoops, pair, member,
                     interleaved ? RotaryLayout::interleaved
                                 : RotaryLayout::half);
}

/// Map of a cos/sin table over loops whose first ones are the leading
/// (non-head) dims of a rank-`rank` tensor rotated as `range` says, with the
/// sequence at `seqDim`, reading the coefficient of member `member` of pair
/// `pair`.
AffineMap tableMap(MLIRContext *ctx, Value table, unsigned numLoops,
                   unsigned rank, int64_t seqDim, const RotatedSlice &range,
                   AffineExpr pair, AffineExpr member) {
  SmallVector<AffineExpr> leading;
  for (unsigned i = 0; i + 1 < rank; ++i)
    leading.push_back(getAffineDimExpr(i, ctx));
  return tableReadMap(
      table, leading, numLoops, seqDim,
      {range.r, range.off,
       range.interleaved ? RotaryLayout::interleaved : RotaryLayout::half},
      pair, member);
}
} // namespace

AffineMap tableReadMap(Value table, ArrayRef<AffineExpr> inputIndices,
                       unsigned numLoops, int64_t seqDim, RotaryRange dims,
                       AffineExpr pair, AffineExpr member) {
  MLIRContext *ctx = table.getContext();
  auto type = cast<RankedTensorType>(table.getType());
  int64_t h = dims.dims / 2;
  SmallVector<AffineExpr> exprs;
  for (auto [tableDim, dim] : llvm::enumerate(getTableRowDims(
           inputIndices.size() + 1, type.getRank(), seqDim)))
    exprs.push_back(type.getDimSize(tableDim) == 1
                        ? getAffineConstantExpr(0, ctx)
                        : inputIndices[dim]);
  // Tables of one coefficient per pair are read at the pair, those of one
  // per element at the member's own element.
  if (type.getShape().back() == h)
    exprs.push_back(pair);
  else
    exprs.push_back(dims.layout == RotaryLayout::interleaved ? pair * 2 + member
                                                             : member * h + pair);
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

AffineMap pairReadMap(ArrayRef<AffineExpr> leading, unsigned numLoops,
                      AffineExpr pair, AffineExpr member, RotaryLayout layout) {
  SmallVector<AffineExpr> exprs(leading);
  if (layout == RotaryLayout::interleaved)
    exprs.append({pair, member});
  else
    exprs.append({member, pair});
  return AffineMap::get(numLoops, 0, exprs, pair.getContext());
}

Value buildPairView(OpBuilder &b, Location loc, Value x, RotaryRange dims) {
  return pairView(b, loc, x, rotatedSlice(b, loc, x, dims));
}

/// Applies cos/sin tables to `x` (rank n, head dim last, sequence at
/// `seqDim`). One generic over the pair view (..., c, t) produces every
/// element from both members of its pair, read through constant-indexed
/// maps: x is read once and the result written once, in place, with the
/// innermost loop running along t. The tables are read at the element
/// produced (c, t), which for tables of one coefficient per pair is t. Dims
/// outside the rotary range pass through. The result has element type
/// `resultType`.
Value buildRotation(OpBuilder &b, Location loc, Value x, CosSin table,
                    RotaryRange dims, int64_t seqDim, Type resultType) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  unsigned n = xType.getRank();
  RotatedSlice range = rotatedSlice(b, loc, x, dims);
  ArrayRef<OpFoldResult> sizes = range.tensorSizes;

  // The destination carries the pass-through dims.
  Value dest;
  if (range.whole) {
    dest = emptyTensor(b, loc, sizes, resultType);
  } else if (resultType == xType.getElementType()) {
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
  Value xPairs = pairView(b, loc, x, range);
  Value outPairs = pairView(b, loc, dest, range);

  // Loops: x's leading dims, then c (pair member), then t (pair index).
  unsigned numLoops = n + 1;
  unsigned cDim = n - 1, tDim = n;
  AffineExpr t = getAffineDimExpr(tDim, ctx);
  auto memberMap = [&](AffineExpr member) {
    return pairMap(ctx, numLoops, n - 1, t, member, range.interleaved);
  };
  AffineMap tables = tableMap(ctx, table.cos, numLoops, n, seqDim, range, t,
                              getAffineDimExpr(cDim, ctx));
  Value rotated =
      linalg::GenericOp::create(
          b, loc, outPairs.getType(),
          ValueRange{xPairs, xPairs, table.cos, table.sin}, ValueRange{outPairs},
          ArrayRef<AffineMap>{memberMap(getAffineConstantExpr(0, ctx)),
                              memberMap(getAffineConstantExpr(1, ctx)), tables,
                              tables, memberMap(getAffineDimExpr(cDim, ctx))},
          SmallVector<IteratorType>(numLoops, kPar),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value a = toF32(nb, nl, args[0]), bb = toF32(nb, nl, args[1]);
            auto [first, second] =
                buildPairRotation(nb, nl, a, bb, toF32(nb, nl, args[2]),
                                  toF32(nb, nl, args[3]));
            Value member = linalg::IndexOp::create(nb, nl, cDim);
            Value isFirst = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq, member,
                arith::ConstantIndexOp::create(nb, nl, 0));
            Value v = arith::SelectOp::create(nb, nl, isFirst, first, second);
            linalg::YieldOp::create(nb, nl, ValueRange{fromF32(nb, nl, v, resultType)});
          })
          .getResult(0);

  SmallVector<ReassociationIndices> collapse;
  for (unsigned i = 0; i + 1 < n; ++i)
    collapse.push_back({static_cast<int64_t>(i)});
  collapse.push_back({static_cast<int64_t>(n - 1), static_cast<int64_t>(n)});
  Value rotatedRange = tensor::CollapseShapeOp::create(b, loc, rotated, collapse);
  if (range.whole)
    return rotatedRange;
  return tensor::InsertSliceOp::create(b, loc, rotatedRange, dest, range.offsets,
                                       range.sizes, range.strides);
}

CosSin buildMemberCoefficients(OpBuilder &b, Location loc, CosSin table,
                               RotaryRange dims, int64_t member) {
  auto type = cast<RankedTensorType>(table.cos.getType());
  int64_t h = dims.dims / 2;
  if (type.getShape().back() == h)
    return table;
  bool interleaved = dims.layout == RotaryLayout::interleaved;
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, table.cos);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  offsets.back() = b.getIndexAttr(interleaved ? member : member * h);
  sizes.back() = b.getIndexAttr(h);
  strides.back() = b.getIndexAttr(interleaved ? 2 : 1);
  auto slice = [&](Value t) -> Value {
    return tensor::ExtractSliceOp::create(b, loc, t, offsets, sizes, strides);
  };
  return {slice(table.cos), slice(table.sin)};
}

Value buildMaterializedRotation(OpBuilder &b, Location loc, Value x,
                                CosSin table, RotaryRange dims,
                                int64_t seqDim) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto xType = cast<RankedTensorType>(x.getType());
  unsigned n = xType.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(n, ctx);
  RotatedSlice range = rotatedSlice(b, loc, x, dims);
  ArrayRef<OpFoldResult> sizes = range.tensorSizes;

  // An empty tensor has nothing to rotate (and slices at offsets into an
  // empty dim would not verify).
  if (llvm::is_contained(xType.getShape(), 0))
    return emptyTensor(b, loc, sizes, f32);
  // The result, holding x (in f32) where dims pass through.
  Value dest =
      range.whole
          ? emptyTensor(b, loc, sizes, f32)
          : buildElementwise(b, loc, {x}, {id}, x,
                             [](OpBuilder &b, Location loc, ValueRange a) {
                               return toF32(b, loc, a[0]);
                             });
  Value pairs = pairView(b, loc, x, range);

  // Loops: x's leading dims, then t (pair index).
  AffineExpr t = getAffineDimExpr(n - 1, ctx);
  auto memberMap = [&](int64_t member) {
    return pairMap(ctx, n, n - 1, t, getAffineConstantExpr(member, ctx),
                   range.interleaved);
  };
  SmallVector<OpFoldResult> halfSizes(range.sizes);
  halfSizes.back() = b.getIndexAttr(range.h);
  SmallVector<OpFoldResult> offsets(range.offsets), strides(range.strides);
  // One generic per pair member, each inserted before the next is computed:
  // both can then be computed in place in the result (empty-tensor
  // elimination needs the destination of an insertion to exist before the
  // computation of what it inserts).
  for (int64_t member : {0, 1}) {
    Value init = emptyTensor(b, loc, halfSizes, f32);
    CosSin memberTable = buildMemberCoefficients(b, loc, table, dims, member);
    AffineMap tables = tableMap(ctx, memberTable.cos, n, n, seqDim, range, t,
                                getAffineConstantExpr(member, ctx));
    Value half =
        linalg::GenericOp::create(
            b, loc, init.getType(),
            ValueRange{pairs, pairs, memberTable.cos, memberTable.sin},
            ValueRange{init},
            ArrayRef<AffineMap>{memberMap(0), memberMap(1), tables, tables, id},
            SmallVector<IteratorType>(n, kPar),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              auto rotated = buildPairRotation(
                  nb, nl, toF32(nb, nl, args[0]), toF32(nb, nl, args[1]),
                  toF32(nb, nl, args[2]), toF32(nb, nl, args[3]));
              linalg::YieldOp::create(
                  nb, nl, ValueRange{member == 0 ? rotated.first : rotated.second});
            })
            .getResult(0);
    // Member c of pair t goes to off + c·h + t (half) or off + 2t + c
    // (interleaved).
    offsets.back() = b.getIndexAttr(range.interleaved ? range.off + member
                                                      : range.off + member * range.h);
    strides.back() = b.getIndexAttr(range.interleaved ? 2 : 1);
    dest = tensor::InsertSliceOp::create(b, loc, half, dest, offsets, halfSizes,
                                         strides);
  }
  return dest;
}

/// Head dims [begin, end) of `input`.
static Value sliceHead(OpBuilder &b, Location loc, Value input, int64_t begin,
                       int64_t end) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets.back() = b.getIndexAttr(begin);
  sizes.back() = b.getIndexAttr(end - begin);
  return tensor::ExtractSliceOp::create(b, loc, input, offsets, sizes, strides);
}

/// `acc` plus the products of the head dims that the rotation of `dims`
/// passes through (before and after it): plain products of slices, which
/// need no pair view.
static Value accumulatePassThrough(OpBuilder &b, Location loc,
                                   ArrayRef<ProductSide> sides,
                                   RotaryRange dims, Value acc,
                                   AffineMap initMap,
                                   ArrayRef<IteratorType> iterators,
                                   arith::FastMathFlags fastMath) {
  int64_t headDim =
      cast<RankedTensorType>(sides[0].input.getType()).getShape().back();
  for (auto [begin, end] :
       {std::pair<int64_t, int64_t>{0, dims.offset},
        std::pair<int64_t, int64_t>{dims.offset + dims.dims, headDim}}) {
    if (begin == end)
      continue;
    acc = buildMultiplyAccumulate(
        b, loc, sliceHead(b, loc, sides[0].input, begin, end),
        sliceHead(b, loc, sides[1].input, begin, end), acc,
        {sides[0].map, sides[1].map, initMap}, iterators, fastMath);
  }
  return acc;
}

namespace {
/// The inputs of the product over the rotated pairs and their maps, in the
/// order yieldPairProducts reads them.
struct PairOperands {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
};
} // namespace

/// Per side both members of pair t (the loop `reduction`), then (where it
/// rotates) cos and sin of member 0 and of member 1 (the same tables when
/// they hold one coefficient per pair), each read at the pair.
static PairOperands pairOperands(OpBuilder &b, Location loc,
                                 ArrayRef<ProductSide> sides, RotaryRange dims,
                                 unsigned numLoops, unsigned reduction) {
  MLIRContext *ctx = b.getContext();
  AffineExpr t = getAffineDimExpr(reduction, ctx);
  AffineExpr members[2] = {getAffineConstantExpr(0, ctx),
                           getAffineConstantExpr(1, ctx)};
  PairOperands operands;
  SmallVector<Value> &inputs = operands.inputs;
  SmallVector<AffineMap> &maps = operands.maps;
  for (const ProductSide &side : sides) {
    Value pairs = buildPairView(b, loc, side.input, dims);
    ArrayRef<AffineExpr> leading = side.map.getResults().drop_back();
    inputs.append({pairs, pairs});
    for (AffineExpr c : members)
      maps.push_back(pairReadMap(leading, numLoops, t, c, dims.layout));
    if (!side.tables.cos)
      continue;
    for (auto [index, c] : llvm::enumerate(members)) {
      CosSin coefficients =
          buildMemberCoefficients(b, loc, side.tables, dims, index);
      AffineMap table = tableReadMap(coefficients.cos, leading, numLoops,
                                     side.seqDim, dims, t, c);
      inputs.append({coefficients.cos, coefficients.sin});
      maps.append({table, table});
    }
  }
  return operands;
}

/// The body of the product over the rotated pairs: `args` holds
/// pairOperands' inputs, then the accumulator. Adds both members' products
/// of the pair, each side's members rotated first where `rotates` says.
static void yieldPairProducts(OpBuilder &b, Location loc, ValueRange args,
                              const bool (&rotates)[2],
                              arith::FastMathFlags fastMath, Type outType) {
  // The rotation feeds the products only: where they may contract, so may
  // its a·cos − b·sin (an FMA each, one rounding less than a rotated tensor
  // takes, and fewer instructions in a decode step's key loop).
  arith::FastMathFlags rotationFlags =
      fastMath & arith::FastMathFlags::contract;
  // Per side: the members a, b; where it rotates, cos and sin of member 0,
  // then of member 1.
  auto f32 = [&](unsigned i) { return toF32(b, loc, args[i]); };
  unsigned next = 0;
  std::pair<Value, Value> member[2];
  for (unsigned side = 0; side < 2; ++side) {
    Value a = f32(next), second = f32(next + 1);
    member[side] = {a, second};
    if (rotates[side]) {
      member[side] = {buildPairRotation(b, loc, a, second, f32(next + 2),
                                        f32(next + 3), rotationFlags)
                          .first,
                      buildPairRotation(b, loc, a, second, f32(next + 4),
                                        f32(next + 5), rotationFlags)
                          .second};
      next += 4;
    }
    next += 2;
  }
  auto mul = [&](Value l, Value r) -> Value {
    return arith::MulFOp::create(b, loc, l, r, fastMath);
  };
  Value pair =
      arith::AddFOp::create(b, loc, mul(member[0].first, member[1].first),
                            mul(member[0].second, member[1].second), fastMath);
  Value sum = arith::AddFOp::create(b, loc, f32(next), pair, fastMath);
  linalg::YieldOp::create(b, loc, ValueRange{fromF32(b, loc, sum, outType)});
}

Value buildProductRotatingPairs(OpBuilder &b, Location loc,
                                ArrayRef<ProductSide> sides, RotaryRange dims,
                                Value init, AffineMap initMap,
                                ArrayRef<IteratorType> iterators,
                                unsigned reduction,
                                arith::FastMathFlags fastMath) {
  assert(sides.size() == 2 && "a product has two sides");
  Value acc = accumulatePassThrough(b, loc, sides, dims, init, initMap,
                                    iterators, fastMath);
  PairOperands operands =
      pairOperands(b, loc, sides, dims, iterators.size(), reduction);
  operands.maps.push_back(initMap);
  Type outType = getElementTypeOrSelf(acc.getType());
  bool rotates[2] = {static_cast<bool>(sides[0].tables.cos),
                     static_cast<bool>(sides[1].tables.cos)};
  return linalg::GenericOp::create(
             b, loc, acc.getType(), operands.inputs, ValueRange{acc},
             operands.maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               yieldPairProducts(nb, nl, args, rotates, fastMath, outType);
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Attention helpers
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Attention pieces
//===----------------------------------------------------------------------===//

static Value buildRowReduction(OpBuilder &b, Location loc, Value x, bool max) {
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  sizes.pop_back();
  double initValue = max ? -std::numeric_limits<double>::infinity() : 0.0;
  Value init = filledTensor(b, loc, sizes, b.getF32Type(),
                            b.getF32FloatAttr(initValue));
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{x}, ValueRange{init},
             ArrayRef<AffineMap>{dimsMap(ctx, 5, range(0, 5)),
                                 dimsMap(ctx, 5, {0, 1, 2, 3})},
             ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               // In any order (kReduceFMF), so that the reduction along the
               // row vectorizes: partial maxima and sums per vector lane,
               // then one horizontal step, instead of a scalar chain.
               Value r = max ? arith::MaximumFOp::create(nb, nl, args[0],
                                                         args[1], kReduceFMF)
                                   .getResult()
                             : arith::AddFOp::create(nb, nl, args[0], args[1],
                                                     kReduceFMF)
                                   .getResult();
               linalg::YieldOp::create(nb, nl, ValueRange{r});
             })
      .getResult(0);
}

Value buildRowMax(OpBuilder &b, Location loc, Value x) {
  return buildRowReduction(b, loc, x, /*max=*/true);
}

Value buildRowSum(OpBuilder &b, Location loc, Value x) {
  return buildRowReduction(b, loc, x, /*max=*/false);
}

Value buildProbsTimesValues(OpBuilder &b, Location loc, Value p, Value v,
                            Value acc) {
  MLIRContext *ctx = b.getContext();
  // Loops (b, kh, g, i, j, e): the key loop j is outside the value-dim loop
  // e, so the innermost loop streams contiguous rows of V and of acc.
  return buildMultiplyAccumulate(
      b, loc, p, v, acc,
      {dimsMap(ctx, 6, {0, 1, 2, 3, 4}), dimsMap(ctx, 6, {0, 1, 4, 5}),
       dimsMap(ctx, 6, {0, 1, 2, 3, 5})},
      {kPar, kPar, kPar, kPar, kRed, kPar}, kReduceFMF);
}

Value buildNormalizedOutput(OpBuilder &b, Location loc, Value acc, Value rowSum,
                            Type elementType) {
  MLIRContext *ctx = b.getContext();
  Value init = emptyTensor(b, loc, tensor::getMixedSizes(b, loc, acc), elementType);
  AffineMap all5 = dimsMap(ctx, 5, range(0, 5));
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{acc, rowSum}, ValueRange{init},
             ArrayRef<AffineMap>{all5, dimsMap(ctx, 5, {0, 1, 2, 3}), all5},
             SmallVector<IteratorType>(5, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value zero = f32Const(nb, nl, 0.0);
               Value empty = arith::CmpFOp::create(
                   nb, nl, arith::CmpFPredicate::OEQ, args[1], zero);
               Value o = arith::SelectOp::create(
                   nb, nl, empty, zero,
                   arith::DivFOp::create(nb, nl, args[0], args[1]));
               linalg::YieldOp::create(nb, nl,
                                       ValueRange{fromF32(nb, nl, o, elementType)});
             })
      .getResult(0);
}

} // namespace mlir::rope::lowering
