//===- RopeDialect.h - rope dialect -----------------------------*- C++ -*-===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H
#define ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "rope/Dialect/Rope/IR/RopeOpsDialect.h.inc"

#endif // ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H
