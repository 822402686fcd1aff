//===- Passes.h - rope codegen passes for every target ----------*- C++ -*-===//

#ifndef ROPE_CODEGEN_COMMON_PASSES_H
#define ROPE_CODEGEN_COMMON_PASSES_H

#include "rope/Dialect/Rope/IR/RopeDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rope {

#define GEN_PASS_DECL
#include "rope/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Codegen/Common/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CODEGEN_COMMON_PASSES_H
