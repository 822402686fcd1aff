//===- RopeAttrs.h - rope attributes ----------------------------*- C++ -*-===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEATTRS_H
#define ROPE_DIALECT_ROPE_IR_ROPEATTRS_H

#include "llvm/ADT/Hashing.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"
#include <optional>

// Attribute storage hashes its parameters with llvm::hash_combine, which only
// knows integers, pointers and types with a hash_value overload; `double` has
// no namespace for ADL to find one in. Hash reals by their bits: spec
// parameters are verified positive, so the +0/-0 mismatch of bitwise hashing
// against operator== cannot arise.
template <>
struct llvm::hashing::detail::is_hashable_data<double> : std::true_type {};

namespace mlir {

/// Reals in attribute parameters: MLIR provides field parsers for integers and
/// attributes only.
template <>
struct FieldParser<double> {
  static FailureOr<double> parse(AsmParser &parser) {
    double value;
    if (parser.parseFloat(value))
      return failure();
    return value;
  }
};

template <>
struct FieldParser<std::optional<double>> {
  static FailureOr<std::optional<double>> parse(AsmParser &parser) {
    FailureOr<double> value = FieldParser<double>::parse(parser);
    if (failed(value))
      return failure();
    return std::optional<double>(*value);
  }
};

namespace rope {
/// The largest number of frequencies (rotary dims, sinusoidal encoding dim)
/// an op may have: the lowering builds them as compile-time constants, and
/// an absurd static dim (e.g. 2^40) must be a diagnostic, not an
/// out-of-memory abort. Real models use at most a few hundred.
inline constexpr int64_t kMaxFrequencyDims = int64_t(1) << 16;

/// The largest inverse frequency a spec may imply, in radians per position.
/// Unscaled frequencies are at most 1; the phase p·f is reduced in f64,
/// which resolves it while |p·f| < 2^52, i.e. for positions up to 2^32 at
/// this bound. Larger ones come from factors near zero (a linear factor of
/// 1e-300) and rotate by noise.
inline constexpr double kMaxFrequency = 1048576.0;
} // namespace rope

namespace rope::detail {
FailureOr<bool> parseBool(AsmParser &parser);
FailureOr<SmallVector<double>> parseF64List(AsmParser &parser);
void printF64List(AsmPrinter &printer, ArrayRef<double> values);
} // namespace rope::detail
} // namespace mlir

#include "rope/Dialect/Rope/IR/RopeEnums.h.inc"

namespace mlir::rope {
/// The dims of a head that a rotation turns, resolved against the head dim:
/// `dims` of them from `offset`, paired by `layout`
/// (RotationAttrInterface::getRange).
struct RotaryRange {
  int64_t dims;
  int64_t offset;
  RotaryLayout layout;
};
} // namespace mlir::rope

#include "rope/Dialect/Rope/IR/RopeAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "rope/Dialect/Rope/IR/RopeAttrs.h.inc"

#endif // ROPE_DIALECT_ROPE_IR_ROPEATTRS_H
