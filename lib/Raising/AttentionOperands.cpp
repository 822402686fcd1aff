//===- AttentionOperands.cpp - Q, K and V of a raised attention -----------===//
//
// Part of --rope-raise's attention matcher (RaiseAttention.cpp): the tensors
// that a frontend's attention reads as Q, K, V (and, for
// AttentionMaskRules.cpp, as the mask), found in the attention space
// whatever views the export put between them and their use.
//
//===----------------------------------------------------------------------===//

#include "AttentionOperands.h"

#include "rope/Analysis/OpClassification.h"
#include "rope/Analysis/Sizes.h"
#include "rope/Analysis/Terms.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::analysis;
using namespace mlir::rope::raising;

namespace {

/// The kv head that query head `h` reads with `hkv` kv heads of `heads`.
AffineExpr kvHeadOf(AffineExpr h, int64_t heads, int64_t hkv) {
  if (hkv == 1)
    return getAffineConstantExpr(0, h.getContext());
  if (hkv == heads)
    return h;
  return h.floorDiv(heads / hkv);
}

/// The kv head counts GQA allows for `heads` query heads, fewest first: its
/// divisors, found by trial up to a bound that real models (at most a few
/// hundred heads) never reach, so that a mutant's 2^63 − 1 heads cost
/// microseconds, not centuries; past the bound only the divisors paired
/// with those tried are kept.
SmallVector<int64_t> kvHeadCounts(int64_t heads) {
  constexpr int64_t kMaxTrial = int64_t(1) << 16;
  SmallVector<int64_t> small, large;
  for (int64_t d = 1; d <= kMaxTrial && d <= heads / d; ++d) {
    if (heads % d != 0)
      continue;
    small.push_back(d);
    if (d != heads / d)
      large.push_back(heads / d);
  }
  small.append(large.rbegin(), large.rend());
  return small;
}

/// The product of the divisors (floordiv, ceildiv and mod by constants)
/// in `e`, saturating at `limit`: a quasi-affine function of one index n is
/// a linear function plus one periodic in n with a period that divides it.
int64_t divisorProduct(AffineExpr e, int64_t limit) {
  int64_t product = 1;
  e.walk([&](AffineExpr sub) {
    auto binary = dyn_cast<AffineBinaryOpExpr>(sub);
    if (!binary || binary.getKind() == AffineExprKind::Add ||
        binary.getKind() == AffineExprKind::Mul)
      return;
    auto divisor = dyn_cast<AffineConstantExpr>(binary.getRHS());
    int64_t d = divisor ? std::abs(divisor.getValue()) : limit;
    product = d != 0 && product <= limit / std::max<int64_t>(d, 1)
                  ? product * std::max<int64_t>(d, 1)
                  : limit;
  });
  return std::min(product, limit);
}

} // namespace

bool raising::sameIndex(AffineExpr a, AffineExpr b, int64_t nExtent) {
  if (a == b)
    return true;
  for (unsigned k = 0; k < kNumDims; ++k)
    if (k != kN && (a.isFunctionOfDim(k) || b.isFunctionOfDim(k)))
      return false;
  constexpr int64_t kMaxPeriod = int64_t(1) << 12;
  constexpr int64_t kMaxPoints = int64_t(1) << 16;
  int64_t period = divisorProduct(a, kMaxPeriod);
  period = std::min(kMaxPeriod, period * divisorProduct(b, kMaxPeriod));
  if (period < kMaxPeriod &&
      (ShapedType::isDynamic(nExtent) || nExtent > 2 * period))
    nExtent = 2 * period;
  else if (ShapedType::isDynamic(nExtent) || nExtent > kMaxPoints)
    return false;
  MLIRContext *ctx = a.getContext();
  SmallVector<AffineExpr> dims;
  for (unsigned k = 0; k < kNumDims; ++k)
    dims.push_back(getAffineDimExpr(k, ctx));
  auto at = [&](AffineExpr e, int64_t n) -> std::optional<int64_t> {
    dims[kN] = getAffineConstantExpr(n, ctx);
    auto c = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(e.replaceDimsAndSymbols(dims, {}), kNumDims, 0));
    return c ? std::optional<int64_t>(c.getValue()) : std::nullopt;
  };
  for (int64_t n = 0; n < nExtent; ++n) {
    std::optional<int64_t> x = at(a, n), y = at(b, n);
    if (!x || !y || *x != *y)
      return false;
  }
  return true;
}

Value raising::deepestTensorRead(Term t, analysis::ViewOptions options,
                                 function_ref<bool(Term)> accepts) {
  Value found;
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    if (isa<RankedTensorType>(t.value.getType()) && accepts(t))
      found = t.value;
    // Not past a slice that keeps part of a dim: the tensor before it is
    // larger (more keys, more rows, other heads) than the one the program
    // attends over, and would be taken whole.
    Operation *def = t.value.getDefiningOp();
    if (isa_and_nonnull<tensor::ExtractSliceOp, tosa::SliceOp>(def)) {
      auto source = cast<RankedTensorType>(def->getOperand(0).getType());
      auto result = cast<RankedTensorType>(t.value.getType());
      if (source.getRank() != result.getRank() ||
          source.getShape() != result.getShape() || !source.hasStaticShape())
        break;
    }
    std::optional<Term> next = stepView(t, options);
    if (!next)
      break;
    if (!isa<RankedTensorType>(next->value.getType())) {
      // Into a body: on only when it yields an operand element (a copy,
      // a broadcast, a transpose), or reads one with tensor.extract at
      // indices of its loops (torch-mlir's broadcasts at dynamic sizes).
      if (!(isa<BlockArgument>(next->value) ||
            next->value.getDefiningOp<tensor::ExtractOp>()) ||
          !(next = stepView(*next, options)))
        break;
    }
    t = *next;
  }
  return found;
}

analysis::Size OperandRead::getSize(int64_t p) const {
  int64_t missing = 4 - getSourceType().getRank();
  if (p < missing)
    return analysis::Size{1, {}, 0, {}};
  return analysis::sizeOfDim(source, permutation[p - missing],
                             getRotationInput);
}

Value OperandRead::materialize(OpBuilder &b, Location loc) const {
  RankedTensorType type = getSourceType();
  int64_t rank = type.getRank();
  Value operand = source;
  if (!llvm::equal(permutation, llvm::seq<int64_t>(0, rank))) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, source);
    SmallVector<OpFoldResult> shape;
    for (int64_t p : permutation)
      shape.push_back(sizes[p]);
    Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    operand = linalg::TransposeOp::create(b, loc, operand, init, permutation)
                  .getResult()[0];
  }
  if (rank == 4)
    return operand;
  // [S, D] -> [1, 1, S, D]; [H, S, D] -> [1, H, S, D].
  SmallVector<int64_t> shape;
  for (int64_t p = 0; p < 4; ++p)
    shape.push_back(getDimSize(p));
  SmallVector<ReassociationIndices> reassociation;
  reassociation.push_back(llvm::to_vector(llvm::seq<int64_t>(0, 5 - rank)));
  for (int64_t p = 5 - rank; p < 4; ++p)
    reassociation.push_back({p});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), operand,
      reassociation);
}

OperandRead raising::findOperand(Term t, ArrayRef<AffineExpr> expected,
                                 int64_t nExtent, analysis::ViewOptions options,
                                 std::optional<int64_t> heads) {
  MLIRContext *ctx = t.value.getContext();
  // The indices a read of `read`'s rank stands for, if the others are unit.
  auto trailing = [&](Term read) -> std::optional<ArrayRef<AffineExpr>> {
    auto type = cast<RankedTensorType>(read.value.getType());
    int64_t rank = type.getRank();
    if (rank < 2 || rank > 4 ||
        !llvm::all_of(expected.drop_back(rank),
                      [](AffineExpr e) { return isa<AffineConstantExpr>(e); }))
      return std::nullopt;
    return expected.take_back(rank);
  };
  Value exact = deepestTensorRead(t, options, [&](Term read) {
    std::optional<ArrayRef<AffineExpr>> indices = trailing(read);
    if (!indices)
      return false;
    int64_t rank = cast<RankedTensorType>(read.value.getType()).getRank();
    OperandRead asIs{read.value,
                     llvm::to_vector<4>(llvm::seq<int64_t>(0, rank))};
    if (heads && asIs.getDimSize(1) != *heads)
      return false;
    Term want =
        makeTerm(read.value, AffineMap::get(kNumDims, 0, *indices, ctx));
    return llvm::all_of(
        llvm::zip_equal(want.map.getResults(), read.map.getResults()),
        [&](auto pair) {
          return sameIndex(std::get<0>(pair), std::get<1>(pair), nExtent);
        });
  });
  if (exact) {
    int64_t rank = cast<RankedTensorType>(exact.getType()).getRank();
    return {exact, llvm::to_vector<4>(llvm::seq<int64_t>(0, rank))};
  }
  OperandRead found;
  deepestTensorRead(t, options, [&](Term read) {
    std::optional<ArrayRef<AffineExpr>> indices = trailing(read);
    if (!indices)
      return false;
    auto type = cast<RankedTensorType>(read.value.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t, 4> permutation;
    SmallVector<bool, 4> used(rank, false);
    for (AffineExpr want : *indices) {
      bool unit = isa<AffineConstantExpr>(want);
      int64_t match = -1;
      for (int64_t k = 0; k < rank && match < 0; ++k) {
        if (used[k])
          continue;
        if (unit ? type.getDimSize(k) == 1
                 : sameIndex(read.map.getResult(k), want, nExtent))
          match = k;
      }
      if (match < 0)
        return false;
      used[match] = true;
      permutation.push_back(match);
    }
    OperandRead candidate{read.value, permutation};
    if (heads && candidate.getDimSize(1) != *heads)
      return false;
    found = candidate;
    return true;
  });
  return found;
}

std::pair<OperandRead, OperandRead>
raising::findKeyValue(Term keyTerm, Term valueTerm, int64_t batch, AffineExpr b,
                      AffineExpr h, int64_t heads) {
  MLIRContext *ctx = h.getContext();
  AffineExpr j = dimExpr(ctx, kJ), e = dimExpr(ctx, kE), d = dimExpr(ctx, kD);
  OperandRead key, value;
  // A repeat's broadcast guard on K's or V's own length reads as the
  // identity: the attention's keys and values must be one length, which a
  // broadcast of one of them would break (its run-time check says so).
  analysis::ViewOptions ownLengths;
  ownLengths.ownSizeGuardsAsIndex = true;
  int64_t nExtent = batchHeadExtent(batch, heads);
  for (int64_t hkv : kvHeadCounts(heads)) {
    if (key)
      break;
    AffineExpr kvHead = kvHeadOf(h, heads, hkv);
    // Each of hkv heads: not a tensor of fewer that a broadcast widens
    // (DiffLlama's V halves, each repeated back to hkv heads).
    key = findOperand(keyTerm, {b, kvHead, j, d}, nExtent, ownLengths, hkv);
    value = findOperand(valueTerm, {b, kvHead, j, e}, nExtent, ownLengths, hkv);
    if (!key || !value)
      key = value = OperandRead();
  }
  return {key, value};
}
