//===- RopeTraits.h - traits every rope op has ------------------*- C++ -*-===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPETRAITS_H
#define ROPE_DIALECT_ROPE_IR_ROPETRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::rope {
namespace detail {
/// Fails, at `op`, when a static shaped operand or result of `op` holds more
/// bytes than int64_t counts (elements × element bytes): no buffer of it
/// can be allocated or indexed, and the lowering's size arithmetic wraps.
LogicalResult verifyStaticSizesFit(Operation *op);
} // namespace detail

/// Every static shape of the op has a byte size that fits in int64_t.
template <typename ConcreteType>
class StaticSizesFit : public OpTrait::TraitBase<ConcreteType, StaticSizesFit> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return detail::verifyStaticSizesFit(op);
  }
};
} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_IR_ROPETRAITS_H
