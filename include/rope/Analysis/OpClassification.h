//===- OpClassification.h - what a frontend op does to elements -*- C++ -*-===//
//
// Which ops the raising matchers see through and which they read as
// arithmetic, stated once for every frontend spelling (arith/math, linalg
// named ops and generics, tensor, tosa). An op either only moves elements
// (slices, concatenations, reshapes, casts, broadcasts and transposes, which
// in linalg are bodies that yield a block argument): `stepView` turns a term
// of its result into the term of the operand element it reads. Or it
// computes each element from its operands' elements at the same point:
// `classify` says what it computes, with the operands as terms. A new
// spelling is supported here, once, and every matcher built on these gets it.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_ANALYSIS_OPCLASSIFICATION_H
#define ROPE_ANALYSIS_OPCLASSIFICATION_H

#include "rope/Analysis/Terms.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <utility>

namespace mlir::rope::analysis {

//===----------------------------------------------------------------------===//
// Index-only ops
//===----------------------------------------------------------------------===//

/// What a caller of stepView can vouch for.
struct ViewOptions {
  /// A tensor read in a linalg body at `select(n == 1, 0, i)`, for loop
  /// index i and n the tensor's own size along that dim, is read at i even
  /// where n is not shown to be the loop's extent. That is exact when they
  /// are equal; when n is 1 and the loop longer, the program broadcasts the
  /// dim, which the caller must rule out itself (rope.attention's keys and
  /// values must be one length: a K or V broadcast so fails its run-time
  /// check rather than computing something else).
  bool ownSizeGuardsAsIndex = false;
};

/// One step through an op that only moves elements: the term of the operand
/// element that `t` reads, or nothing when `t` is computed (or unknown).
std::optional<Term> stepView(Term t, ViewOptions options = {});

/// `t` followed through every index-only op to the computation (or value
/// without a known definition) it reads.
Term peelViews(Term t);

//===----------------------------------------------------------------------===//
// Elementwise computations
//===----------------------------------------------------------------------===//

enum class Kind {
  Add,
  Sub,
  Mul,
  Div,
  Neg,
  Cos,
  Sin,
  Exp,
  Pow,
  Reciprocal,
  /// Signed integer to float.
  IntToFloat,
  /// Integer widening (value-preserving).
  IntExtend,
  /// Between float types.
  FloatCast,
};

/// What `t` computes from its operands at the same iteration point.
struct Computation {
  Kind kind;
  SmallVector<Term, 2> operands;
};

/// The elementwise computation that defines `t`, if it is one we know.
/// Operands of tosa ops broadcast implicitly (unit dims), which the terms'
/// canonical form expresses.
std::optional<Computation> classify(Term t);

/// A binary computation's operands in both orders (for commuted operands).
SmallVector<std::pair<Term, Term>, 2> bothOrders(const Computation &c);

/// Whether `op` accumulates the product of its two inputs (each possibly
/// widened or narrowed) into its one output over exactly one reduction loop,
/// as matmuls and batch matmuls do: that loop.
std::optional<unsigned> getMultiplyAccumulateLoop(linalg::LinalgOp op);

/// Bits of the element type of `type` (of `type` itself when it is a
/// scalar); an index counts as 64.
unsigned bitWidth(Type type);

} // namespace mlir::rope::analysis

#endif // ROPE_ANALYSIS_OPCLASSIFICATION_H
