//===- Terms.cpp - elements of tensors read through affine maps -----------===//

#include "rope/Analysis/Terms.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include <algorithm>
#include <optional>

using namespace mlir;

namespace mlir::rope::analysis {

namespace {

/// The smallest and largest value of `e` when every dim d_i lies in
/// [0, extents[i]), or nothing when unbounded or unknown.
std::optional<std::pair<int64_t, int64_t>> rangeOf(AffineExpr e,
                                                   ArrayRef<int64_t> extents) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return std::make_pair(c.getValue(), c.getValue());
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    if (d.getPosition() >= extents.size() ||
        ShapedType::isDynamic(extents[d.getPosition()]) ||
        extents[d.getPosition()] < 1)
      return std::nullopt;
    return std::make_pair<int64_t, int64_t>(0, extents[d.getPosition()] - 1);
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  auto lhs = rangeOf(bin.getLHS(), extents);
  auto rhs = rangeOf(bin.getRHS(), extents);
  if (!lhs || !rhs)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add: {
    std::optional<int64_t> lo = llvm::checkedAdd(lhs->first, rhs->first);
    std::optional<int64_t> hi = llvm::checkedAdd(lhs->second, rhs->second);
    if (!lo || !hi)
      return std::nullopt;
    return std::make_pair(*lo, *hi);
  }
  case AffineExprKind::Mul: {
    SmallVector<int64_t, 4> corners;
    for (int64_t x : {lhs->first, lhs->second})
      for (int64_t y : {rhs->first, rhs->second}) {
        std::optional<int64_t> product = llvm::checkedMul(x, y);
        if (!product)
          return std::nullopt;
        corners.push_back(*product);
      }
    return std::make_pair(*llvm::min_element(corners),
                          *llvm::max_element(corners));
  }
  case AffineExprKind::FloorDiv:
    if (rhs->first != rhs->second || rhs->first <= 0 || lhs->first < 0)
      return std::nullopt;
    return std::make_pair(lhs->first / rhs->first, lhs->second / rhs->first);
  case AffineExprKind::Mod:
    if (rhs->first != rhs->second || rhs->first <= 0)
      return std::nullopt;
    return std::make_pair<int64_t, int64_t>(0, rhs->first - 1);
  default:
    return std::nullopt;
  }
}

/// The summands of `e` (a tree of additions).
void collectSummands(AffineExpr e, SmallVectorImpl<AffineExpr> &summands) {
  if (e.getKind() == AffineExprKind::Add) {
    auto add = cast<AffineBinaryOpExpr>(e);
    collectSummands(add.getLHS(), summands);
    collectSummands(add.getRHS(), summands);
    return;
  }
  summands.push_back(e);
}

/// `e` with every `x floordiv c` and `x mod c` resolved where the dims'
/// ranges decide it: x = c·q + r with r in [0, c) gives q and r.
AffineExpr simplifyWithRanges(AffineExpr e, ArrayRef<int64_t> extents) {
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return e;
  AffineExpr lhs = simplifyWithRanges(bin.getLHS(), extents);
  AffineExpr rhs = simplifyWithRanges(bin.getRHS(), extents);
  auto divisor = dyn_cast<AffineConstantExpr>(rhs);
  bool division = e.getKind() == AffineExprKind::FloorDiv ||
                  e.getKind() == AffineExprKind::Mod;
  if (!division || !divisor || divisor.getValue() <= 0)
    return getAffineBinaryOpExpr(e.getKind(), lhs, rhs);
  int64_t c = divisor.getValue();
  SmallVector<AffineExpr> summands;
  collectSummands(lhs, summands);
  AffineExpr multiple = getAffineConstantExpr(0, e.getContext());
  AffineExpr rest = multiple;
  for (AffineExpr summand : summands) {
    if (summand.getLargestKnownDivisor() % c == 0)
      multiple = multiple + summand;
    else
      rest = rest + summand;
  }
  std::optional<std::pair<int64_t, int64_t>> range = rangeOf(rest, extents);
  if (!range || range->first < 0 || range->second >= c)
    return getAffineBinaryOpExpr(e.getKind(), lhs, rhs);
  return e.getKind() == AffineExprKind::Mod ? rest : multiple.floorDiv(c);
}

} // namespace

Term makeTerm(Value value, AffineMap map, const Term &space) {
  if (space.extents.empty())
    return makeTerm(value, map);
  SmallVector<AffineExpr> results;
  for (AffineExpr result : map.getResults())
    results.push_back(simplifyWithRanges(result, space.extents));
  Term t = makeTerm(
      value, AffineMap::get(map.getNumDims(), 0, results, map.getContext()));
  t.extents = space.extents;
  return t;
}

Term makeTerm(Value value, AffineMap map) {
  map = simplifyAffineMap(map);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return {value, map};
  assert(map.getNumResults() == static_cast<unsigned>(type.getRank()) &&
         "a tensor term has one index per dim");
  AffineExpr zero = getAffineConstantExpr(0, map.getContext());
  SmallVector<AffineExpr> results(map.getResults());
  bool changed = false;
  for (auto [extent, result] : llvm::zip_equal(type.getShape(), results)) {
    if (extent == 1 && result != zero) {
      result = zero;
      changed = true;
    }
  }
  if (changed)
    map = AffineMap::get(map.getNumDims(), 0, results, map.getContext());
  return {value, map};
}

Term identityTerm(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Term t = makeTerm(value, AffineMap::getMultiDimIdentityMap(
                               type.getRank(), value.getContext()));
  t.extents.assign(type.getShape().begin(), type.getShape().end());
  return t;
}

Term atHeadIndex(Term t, int64_t j) {
  MLIRContext *ctx = t.map.getContext();
  unsigned numDims = t.map.getNumDims();
  return makeTerm(t.value,
                  t.map.replace(getAffineDimExpr(numDims - 1, ctx),
                                getAffineConstantExpr(j, ctx), numDims, 0),
                  t);
}

bool isIdentityRead(Term t, RankedTensorType type) {
  if (t.value.getType() != type ||
      t.map.getNumDims() != static_cast<unsigned>(type.getRank()))
    return false;
  for (auto [i, result] : llvm::enumerate(t.map.getResults())) {
    if (type.getDimSize(i) == 1
            ? !isa<AffineConstantExpr>(result)
            : result != getAffineDimExpr(i, t.map.getContext()))
      return false;
  }
  return true;
}

} // namespace mlir::rope::analysis
