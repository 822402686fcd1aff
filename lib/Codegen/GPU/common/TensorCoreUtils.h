//===- TensorCoreUtils.h - pieces the tensor-core kernels share -*- C++ -*-===//
//
// What the attention and matmul kernels build alike: the mma.sync of one
// m16n8k16 tile, and the XOR swizzle of 16-byte chunks in shared tiles.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_CODEGEN_GPU_COMMON_TENSORCOREUTILS_H
#define ROPE_LIB_CODEGEN_GPU_COMMON_TENSORCOREUTILS_H

#include "mlir/IR/Builders.h"

namespace mlir::rope::nvidia {

/// One mma.sync m16n8k16 (row.col, f32 accumulators) of `element` (f16 or
/// bf16) operands: A as four pairs (vector<2xelement>), B as two, C as four
/// f32; returns D. bf16 pairs travel as the i32 registers PTX takes them in.
SmallVector<Value> buildMmaSync(OpBuilder &b, Location loc, Type element,
                                ArrayRef<Value> a, Value b0, Value b1,
                                ArrayRef<Value> c);

/// Shared tiles store the 16-byte chunk c of row r at chunk c XOR (r mod p),
/// p = min(8, chunks per row) (a power of two): the rows one ldmatrix phase
/// reads fall on distinct banks.
struct ChunkSwizzle {
  int64_t phases;
  /// Elements per 16-byte chunk: 8 of f16/bf16, 4 of f32.
  int64_t chunkElements;
  explicit ChunkSwizzle(int64_t chunksPerRow, int64_t chunkElements = 8)
      : phases(std::min<int64_t>(8, chunksPerRow)),
        chunkElements(chunkElements) {}
  /// The stored column (in elements) of chunk `chunk` of row `row`.
  Value column(OpBuilder &b, Location loc, Value row, Value chunk) const;
  /// For ldmatrix, where a lane reads rows r + 16·i and chunks c + 2·j (r,
  /// c its own, c in {0, 1}; i, j static): the lane's part c XOR (r mod p),
  /// once ...
  Value lanePart(OpBuilder &b, Location loc, Value row, Value chunk) const;
  /// ... then the column of chunk c + 2j as one XOR with a constant and a
  /// constant offset.
  Value column(OpBuilder &b, Location loc, Value lanePart, int64_t chunk) const;
};

} // namespace mlir::rope::nvidia

#endif // ROPE_LIB_CODEGEN_GPU_COMMON_TENSORCOREUTILS_H
