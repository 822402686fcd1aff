//===- ExtentRelations.h - shape rules checked statically or at run time --===//
//
// The rope ops relate the extents of their operands: positions have one entry
// per token, keys and values have the same sequence length, a mask dim is 1 or
// the extent it broadcasts to. An op lists those relations once
// (`getExtentRelations()`); its verifier checks the ones whose extents are
// both static, and its runtime verification (RuntimeVerifiableOpInterface,
// driven by --rope-insert-runtime-checks) checks the others before the op
// runs, with the same message and the extents found at run time.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_EXTENTRELATIONS_H
#define ROPE_DIALECT_ROPE_IR_EXTENTRELATIONS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Interfaces/RuntimeVerifiableOpInterface.h"
#include <string>

namespace mlir::rope {

/// An extent: dim `dim` of the ranked tensor `value`, or, without a value,
/// the constant `dim`.
struct Extent {
  Value value;
  int64_t dim = 0;

  static Extent of(Value value, int64_t dim) { return {value, dim}; }
  static Extent constant(int64_t extent) { return {Value(), extent}; }

  /// The extent when the type (or the constant) fixes it, else kDynamic.
  int64_t getStatic() const;
  /// The extent as an index value at `b`'s insertion point.
  Value materialize(OpBuilder &b, Location loc) const;
};

/// `actual` must equal `expected`; with `broadcast`, `actual` may also be a
/// static 1 (the lowerings read a dim that broadcasts at index 0, which they
/// know from the type: a dynamic extent must equal `expected` even when it
/// is 1 at run time). `message` completes "'op' op ..." with `{0}` for the
/// actual extent and `{1}` for the expected one.
struct ExtentRelation {
  Extent actual, expected;
  bool broadcast = false;
  std::string message;
};

/// Emits the first relation that static extents violate as an op error.
LogicalResult verifyStaticExtentRelations(Operation *op,
                                          ArrayRef<ExtentRelation> relations);

/// The common body of the rope ops' `generateRuntimeVerification`: a
/// `rope.assert` before `op` for each relation with a dynamic side, and one
/// that each dynamically shaped result's byte count fits in 63 bits, unless
/// an operand already is as large (what the op allocates besides is no
/// larger than a result or an operand).
void buildRuntimeChecks(
    Operation *op, ArrayRef<ExtentRelation> relations, OpBuilder &b,
    Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage);

/// "file:line:col: error: 'op' op <message>", the way MLIR prints a
/// diagnostic of `op`, for messages of checks that run after compilation.
std::string formatRuntimeDiagnostic(Operation *op, StringRef message);

/// The "file:line:col" that begins such a message (`loc` as MLIR prints it
/// where it holds no file location).
std::string formatRuntimeLocation(Location loc);

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_IR_EXTENTRELATIONS_H
