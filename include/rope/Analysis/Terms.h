//===- Terms.h - elements of tensors read through affine maps ---*- C++ -*-===//
//
// What the raising matchers (--rope-raise) walk instead of ops. Frontends
// spell one computation in many ways (arith on tensors, linalg named ops or
// fused generics with broadcasting maps, tosa with implicit broadcasting),
// but every op involved either moves elements around or computes element i
// of its result from elements of its operands at the same i. A `Term` names
// "the element that a value holds at a point of an iteration space", so two
// spellings of the same element compare equal once followed to where the
// element is computed (OpClassification.h), and fixing the last (head) dim
// to a constant j names "element j of every head", which is how a rotation's
// pairing and its tables are checked one head element at a time.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_ANALYSIS_TERMS_H
#define ROPE_ANALYSIS_TERMS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::rope::analysis {

/// Bounds on walks over use-def chains; real rotations need a few dozen steps.
inline constexpr unsigned kMaxViewSteps = 64;

/// `value` read through `map`: element `i` of the iteration space is
/// `value[map(i)]`. A tensor is indexed by its dims; a scalar computed in the
/// body of a linalg op by that op's loops; any other scalar ignores the index
/// (its map has no results).
///
/// Where the iteration space is the index space of a tensor (identityTerm),
/// `extents` holds its dims' sizes (ShapedType::kDynamic where unknown) and
/// every term read from it keeps them, so that the indices can be simplified
/// with the dims' ranges: `(d1 * 4 + d2) floordiv 4` is `d1` when d2 < 4,
/// which is how a reshape that merges dims undoes one that split them.
/// Terms compare by value and map alone.
struct Term {
  Value value;
  AffineMap map;
  SmallVector<int64_t, 4> extents = {};

  bool operator==(const Term &other) const {
    return value == other.value && map == other.map;
  }
  bool operator!=(const Term &other) const { return !(*this == other); }
};

/// A term in canonical form, so that equal reads compare equal whatever the
/// spelling: the map simplified, and every static unit dim of a tensor read
/// at 0 (the only index a valid program can use there, however a frontend
/// wrote the broadcast).
Term makeTerm(Value value, AffineMap map);

/// `makeTerm` in the iteration space of `space` (same dims, same extents).
Term makeTerm(Value value, AffineMap map, const Term &space);

/// `value` read at the iteration point itself; `value` has the iteration
/// space's shape.
Term identityTerm(Value value);

/// `t` at the iteration points whose last (head) dim is `j`.
Term atHeadIndex(Term t, int64_t j);

/// Whether `t` reads all of a tensor of `type` at the iteration point itself.
bool isIdentityRead(Term t, RankedTensorType type);

} // namespace mlir::rope::analysis

#endif // ROPE_ANALYSIS_TERMS_H
