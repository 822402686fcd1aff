//===- Passes.h - rope GPU codegen passes -----------------------*- C++ -*-===//

#ifndef ROPE_CODEGEN_GPU_PASSES_H
#define ROPE_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rope {

#define GEN_PASS_DECL
#include "rope/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Codegen/GPU/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CODEGEN_GPU_PASSES_H
