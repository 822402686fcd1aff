//===- Passes.h - rope conversion passes ------------------------*- C++ -*-===//

#ifndef ROPE_CONVERSION_PASSES_H
#define ROPE_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "rope/Conversion/RopeToLinalg/RopeToLinalg.h"

namespace mlir::rope {

#define GEN_PASS_DECL
#include "rope/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Conversion/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CONVERSION_PASSES_H
