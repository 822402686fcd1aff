//===- SymbolicEvaluation.h - elements as functions of the point -*- C++ -*-===//
//
// What an element of a term is as a function of the iteration point, when
// it follows from loop indices and constants by index arithmetic,
// comparisons, logic and selects: the ops attention masks are built from
// (iota compares, `triu`/`tril`, `torch.where`, sums of such masks). The
// answer is piecewise: each piece a formula over comparisons of affine
// functions of the point, and a value that is a constant or an affine
// function of the point. Unlike ConstantEvaluation, which computes one
// element, this describes all of them at once, so a mask of any size is
// understood without visiting its elements.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_ANALYSIS_SYMBOLICEVALUATION_H
#define ROPE_ANALYSIS_SYMBOLICEVALUATION_H

#include "rope/Analysis/Terms.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/SmallVector.h"
#include <memory>
#include <optional>

namespace mlir::rope::analysis {

/// A truth value of the iteration point: `expr >= 0`, `expr == 0`, an
/// opaque truth value (a boolean tensor the program reads, numbered), and
/// their negations, conjunctions and disjunctions.
class Formula {
public:
  enum class Op { True, AtLeastZero, Zero, Opaque, Not, And, Or };

  static Formula alwaysTrue();
  static Formula atLeastZero(AffineExpr expr);
  static Formula zero(AffineExpr expr);
  static Formula opaque(unsigned id);
  Formula operator!() const;
  Formula operator&&(const Formula &other) const;
  Formula operator||(const Formula &other) const;

  /// The formula with every affine expression rewritten by `rewrite`; none
  /// when `rewrite` refuses one.
  std::optional<Formula>
  mapExprs(function_ref<std::optional<AffineExpr>(AffineExpr)> rewrite) const;
  /// Its truth, each comparison's expression valued by `value`, opaque
  /// value `id` by `opaque(id)`.
  bool holds(function_ref<int64_t(AffineExpr)> value,
             function_ref<bool(unsigned)> opaque = nullptr) const;
  /// Calls `fn` on each compared expression.
  void forEachExpr(function_ref<void(AffineExpr)> fn) const;
  /// Calls `fn` on the id of each opaque atom.
  void forEachOpaque(function_ref<void(unsigned)> fn) const;

private:
  struct Node;
  explicit Formula(std::shared_ptr<const Node> node) : node(std::move(node)) {}
  bool holdsAt(const Node &n, function_ref<int64_t(AffineExpr)> value,
               function_ref<bool(unsigned)> opaque) const;
  std::shared_ptr<const Node> node;
};

/// One piece of a piecewise value: where it applies and what it is there.
struct Piece {
  Formula when;
  /// The value: `affine` (an integer function of the point) when set, else
  /// `constant`.
  std::optional<AffineExpr> affine;
  double constant = 0.0;
};

/// The element `t` reads as pieces whose formulas partition the iteration
/// space (overlaps agree), when it follows from loop indices and constants;
/// none otherwise, or when it takes more than a few dozen pieces. With
/// `opaque`, a boolean that does not follow from them (an i1 tensor
/// computed from the program's inputs: a padding mask) becomes an opaque
/// atom: the read of the tensor it comes from is appended to `opaque`, its
/// position the atom's id.
std::optional<SmallVector<Piece>>
evaluateSymbolically(Term t, SmallVectorImpl<Term> *opaque = nullptr);

} // namespace mlir::rope::analysis

#endif // ROPE_ANALYSIS_SYMBOLICEVALUATION_H
