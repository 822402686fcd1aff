//===- ConstantEvaluation.h - constants and constant subgraphs --*- C++ -*-===//
//
// Reading the constants frontends export (`dense`, splats, and the
// `dense_resource` blobs torch-mlir uses for a model's buffers) and
// evaluating, at compile time, an element that follows from constants and
// loop indices alone. This is how the raising matchers learn values a
// program computes rather than states: a frequency computed as
// `1 / base ** (arange(0, r, 2) / r)`, a factor of −1, a zero init, a
// constant column index. Evaluation follows the program's own precision: it
// computes in f64 and rounds to each op's result type as the program would.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_ANALYSIS_CONSTANTEVALUATION_H
#define ROPE_ANALYSIS_CONSTANTEVALUATION_H

#include "rope/Analysis/Terms.h"

#include "mlir/IR/Attributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::rope::analysis {

/// `value` converted to f64.
double toDouble(APFloat value);

/// Whether `v` is a constant whose every element is zero.
bool isZeroConstant(Value v);

/// Constant integer contents of a shape or index operand.
std::optional<SmallVector<int64_t>> constantIndices(Value v);

/// The element of constant `attr` that `map` reads. Where an index of the
/// map is not constant, the element must be the same at every index of that
/// dim (a splat, or a constant repeated along it).
std::optional<double> readConstant(Attribute attr, AffineMap map);

/// The value `t` reads, when it follows from constants and loop indices
/// alone, computed in f64 and rounded to each op's result type as the
/// program would.
std::optional<double> evaluate(Term t);

} // namespace mlir::rope::analysis

#endif // ROPE_ANALYSIS_CONSTANTEVALUATION_H
