//===- Sizes.h - which tensor sizes a program knows to be equal -*- C++ -*-===//
//
// A frontend exported with a dynamic sequence length computes each size its
// own way: `tensor.dim` of an argument, an `index_cast` of it into i64 and
// back, a `select` that guards a negative `view` size which cannot occur,
// a size taken from an `expand_shape` or the init of a linalg op, a cache
// one longer after a `concat` (the same length + 1 spelled through i64 or
// an `affine.apply`). Raising
// needs to know when two of them are the same (a broadcast guard that
// never fires, the query and key lengths of self-attention). A size is
// followed back through such steps to a canonical form; two sizes with the
// same canonical form are equal whatever the inputs.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_ANALYSIS_SIZES_H
#define ROPE_ANALYSIS_SIZES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::rope::analysis {

/// A size in canonical form: a constant, or `offset` plus dim `dim` of a
/// tensor whose shape is not followed further (a function argument, an op
/// this analysis does not know) or plus an integer value it cannot see
/// through.
struct Size {
  int64_t constant = ShapedType::kDynamic;
  Value tensor;
  int64_t dim = 0;
  Value scalar;
  int64_t offset = 0;
  /// Whether the size is known to be a dim (never negative) however its
  /// canonical form reads: a scalar that sizes a `tensor.empty` is a length
  /// where it was reached as the dim of that tensor. Not part of the
  /// canonical form: equal sizes compare equal whether or not one was
  /// reached as a dim.
  bool isDim = false;

  bool isConstant() const { return !ShapedType::isDynamic(constant); }
  bool operator==(const Size &other) const {
    return constant == other.constant && tensor == other.tensor &&
           dim == other.dim && scalar == other.scalar && offset == other.offset;
  }
  bool operator!=(const Size &other) const { return !(*this == other); }
};

/// For ops this layer does not know (a dialect above it): the operand whose
/// shape the op's result has, or null.
using SameShapeOperand = function_ref<Value(Operation *)>;

/// Dim `dim` of `tensor`, through the ops that define it.
Size sizeOfDim(Value tensor, int64_t dim, SameShapeOperand sameShape = {});

/// The size an integer or index value holds.
Size sizeOfValue(Value value, SameShapeOperand sameShape = {});

} // namespace mlir::rope::analysis

#endif // ROPE_ANALYSIS_SIZES_H
