//===- KernelOperands.h - tensors in and out of hand-built kernels -*- C++ -*-===//
//
// The GPU kernels these passes build on tensors (attention, matmuls, the
// rotation) read their operands as buffers and write fresh ones, which
// bufferization then joins to the rest of the function: the pieces they
// all use for that.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_CODEGEN_GPU_COMMON_KERNELOPERANDS_H
#define ROPE_LIB_CODEGEN_GPU_COMMON_KERNELOPERANDS_H

#include "mlir/IR/Builders.h"

namespace mlir::rope::nvidia {

/// A read-only identity-layout buffer of `tensor` (null for a null tensor).
Value readOnlyBuffer(OpBuilder &b, Location loc, Value tensor);

/// A fresh buffer of `tensor`'s shape and type, with a leading dim of extent
/// `leading` when given (the splits of split-K).
Value allocLike(OpBuilder &b, Location loc, Value tensor, Value leading = {});

/// Whether `init` is a linalg.fill of zero (an accumulator that starts at
/// zero need not be read).
bool isZeroFill(Value init);

} // namespace mlir::rope::nvidia

#endif // ROPE_LIB_CODEGEN_GPU_COMMON_KERNELOPERANDS_H
