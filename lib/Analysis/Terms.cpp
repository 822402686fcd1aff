//===- Terms.cpp - elements of tensors read through affine maps -----------===//

#include "rope/Analysis/Terms.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace mlir::rope::analysis {

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
  return makeTerm(value, AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                           value.getContext()));
}

Term atHeadIndex(Term t, int64_t j) {
  MLIRContext *ctx = t.map.getContext();
  unsigned numDims = t.map.getNumDims();
  return makeTerm(t.value,
                  t.map.replace(getAffineDimExpr(numDims - 1, ctx),
                                getAffineConstantExpr(j, ctx), numDims, 0));
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
