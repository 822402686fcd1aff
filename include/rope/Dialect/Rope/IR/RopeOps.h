//===- RopeOps.h - rope operations ------------------------------*- C++ -*-===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEOPS_H
#define ROPE_DIALECT_ROPE_IR_ROPEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "rope/Dialect/Rope/IR/AttentionFields.h"
#include "rope/Dialect/Rope/IR/ExtentRelations.h"
#include "rope/Dialect/Rope/IR/RopeAttrs.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/IR/RopeTraits.h"

namespace mlir::rope {
/// For cos/sin tables of rank `tableRank` applied to an input of rank
/// `inputRank` with its sequence at `seqDim` (non-negative): the input dim
/// that each table dim but the last follows (see rope.rotate_with_tables).
/// Empty when the tables have none of the accepted forms.
SmallVector<int64_t> getTableRowDims(int64_t inputRank, int64_t tableRank,
                                     int64_t seqDim);
} // namespace mlir::rope

#define GET_OP_CLASSES
#include "rope/Dialect/Rope/IR/RopeOps.h.inc"

namespace mlir::rope {
/// The input of a rotation (rope.rotate or rope.rotate_with_tables), whose
/// shape its result has; null for any other op.
Value getRotationInput(Operation *op);
} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_IR_ROPEOPS_H
