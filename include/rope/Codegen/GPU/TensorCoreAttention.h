//===- TensorCoreAttention.h - attention on tensor cores --------*- C++ -*-===//
//
// The tensor-core configuration of rope.online_attention on NVIDIA GPUs
// (sm_80 and later), in the style of FlashAttention-2: one block of four
// warps per (batch, query head, 128 query rows), each warp 32 rows (with
// one row group, for decode and f32: 64 and 16); K and V
// tiles of 64 keys staged in swizzled shared memory by cp.async (K rotated
// in f32 on the way when the op rotates it), read with ldmatrix (V
// transposed); Q·Kᵀ and P·V as mma.sync m16n8k16 with f32 accumulators; the
// online softmax in registers (quad shuffles, exp2 with the scale folded
// in), P taken from the score accumulators as the A operand of P·V. f32
// runs the same kernel with both products as FMA in the fragment layout
// (TensorCoreAttentionMath.cpp). Every
// rule that decides a logit or a key's visibility is the op's own
// (AttentionRules), so the kernel computes exactly the op.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_GPU_TENSORCOREATTENTION_H
#define ROPE_CODEGEN_GPU_TENSORCOREATTENTION_H

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/IR/PatternMatch.h"
#include <string>

namespace mlir::rope::nvidia {

/// The kernel's tiling. A warp holds one or two groups of 16 query rows
/// (the m16 of mma.sync): with two, each K and V fragment it loads from
/// shared memory feeds two products instead of one, which halves the
/// shared-memory reads per product of the loop that bounds the kernel.
struct TensorCoreAttentionTiles {
  static constexpr int64_t kWarps = 4;
  static constexpr int64_t kRowsPerGroup = 16;
  static constexpr int64_t kMaxRowGroups = 2;
  static constexpr int64_t kKeys = 64;        // per key tile
  static constexpr int64_t kMaxHeadDim = 128; // registers: O, S
  /// Query rows per block with `rowGroups` groups per warp.
  static constexpr int64_t queryRows(int64_t rowGroups) {
    return kRowsPerGroup * rowGroups * kWarps;
  }
};

/// Why `op` cannot run as the tensor-core kernel ("" when it can): f16,
/// bf16 or f32 Q, K and V (one type), a static head dim D = Dv that is a multiple of 16 up to
/// 128, the accumulator starting at zero, and rotated dims that fall on
/// whole 8-element chunks.
std::string whyNotTensorCoreAttention(AttentionOp op);
std::string whyNotTensorCoreAttention(OnlineAttentionOp op);

struct TensorCoreAttentionOptions {
  /// The op's positions are the default ones (keys at 0..Sk−1, queries at
  /// Sk−Sq..Sk−1), so the kernel computes them and skips, by its loop
  /// bounds, the key tiles that causal or window rules hide from a whole
  /// query tile; otherwise it reads them and rules every tile.
  bool affinePositions = false;
  /// Split-K: with one query tile (static Sq <= 64, i.e. decode), the keys
  /// are split into as many ranges as it takes for the grid to reach this
  /// many blocks (at most one per key tile); 0 never splits.
  int64_t targetBlocks = 0;
};

/// Replaces `op` (which whyNotTensorCoreAttention accepts) with the kernel: a
/// gpu.launch over buffers of its operands, its three results
/// bufferization.to_tensor of fresh buffers (with split-K, the op's
/// mergeReductions of the partial states).
LogicalResult replaceWithTensorCoreAttention(RewriterBase &rewriter,
                                             OnlineAttentionOp op,
                                             const TensorCoreAttentionOptions &options);

} // namespace mlir::rope::nvidia

#endif // ROPE_CODEGEN_GPU_TENSORCOREATTENTION_H
