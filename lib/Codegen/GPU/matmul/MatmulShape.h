//===- MatmulShape.h - the contractions the GPU kernels take ----*- C++ -*-===//
//
// What the matmul kernels (tensor cores, register tiles) read off a linalg
// contraction: which loop is m, n, k and batch, where B keeps K.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_CODEGEN_GPU_MATMUL_MATMULSHAPE_H
#define ROPE_LIB_CODEGEN_GPU_MATMUL_MATMULSHAPE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::rope::nvidia {

/// The roles of a contraction's dims and operands.
struct MatmulShape {
  std::optional<unsigned> batch;
  unsigned m, n, k;
  bool aHasBatch = false, bHasBatch = false;
  /// B stored [.., N, K] (K innermost, x·Wᵀ) rather than [.., K, N].
  bool bTransposed = false;
};

/// The shape of `op` when it is a contraction C[b?, m, n] += A[b?, m, k] ·
/// B[b?, k, n] (or B[b?, n, k]) with one m, n, k dim and at most one batch.
FailureOr<MatmulShape> matmulShapeOf(linalg::LinalgOp op);

} // namespace mlir::rope::nvidia

#endif // ROPE_LIB_CODEGEN_GPU_MATMUL_MATMULSHAPE_H
