//===- TensorCoreMatmul.h - contractions on tensor cores --------*- C++ -*-===//
//
// Matmuls with f16 or bf16 operands (linalg.matmul, linalg.batch_matmul and
// any linalg op that is a contraction C[b?, m, n] += A[b?, m, k]·B[b?, k, n]
// or ·B[b?, n, k], as frontends write projections x·Wᵀ) as one tiled
// mma.sync kernel: a block of 4 warps per 64×64 tile of C (each warp 32×32,
// 2×4 m16n8k16 tiles with f32 accumulators), K in steps of 64 staged in
// swizzled shared memory by cp.async, double-buffered, read with ldmatrix
// (transposed for a B stored [K, N]).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_GPU_TENSORCOREMATMUL_H
#define ROPE_CODEGEN_GPU_TENSORCOREMATMUL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include <string>

namespace mlir::rope::nvidia {

/// Why `op` cannot run as the tensor-core matmul ("" when it can): a
/// contraction with one m, n and k dim and at most one batch dim, A and B
/// f16 or both bf16 with k innermost in A (and in B, or n innermost), C
/// f32, f16 or bf16 of rank 2 or 3, the 16-byte chunks along the innermost
/// dims whole (K, and N for a B stored [K, N], multiples of 8).
std::string whyNotTensorCoreMatmul(linalg::LinalgOp op);

/// Replaces `op` (on tensors; whyNotTensorCoreMatmul accepts it) with the
/// kernel over buffers of its operands; its result is a fresh buffer
/// (bufferization.to_tensor). C = init + A·B, accumulated in f32.
LogicalResult replaceWithTensorCoreMatmul(RewriterBase &rewriter,
                                          linalg::LinalgOp op);

} // namespace mlir::rope::nvidia

#endif // ROPE_CODEGEN_GPU_TENSORCOREMATMUL_H
