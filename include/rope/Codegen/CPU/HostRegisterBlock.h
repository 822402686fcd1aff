//===- HostRegisterBlock.h - micro-kernel sizes for the host CPU -*- C++ -*-===//
//
// The register block of the contraction micro-kernels
// (--rope-vectorize-contractions) that fits the vector register file of the
// CPU the code will run on. The JIT and the ahead-of-time object files both
// compile for the host CPU, so the host's features decide it.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_HOSTREGISTERBLOCK_H
#define ROPE_CODEGEN_CPU_HOSTREGISTERBLOCK_H

#include <cstdint>

namespace mlir::rope {

/// Rows of A (broadcasts) × columns of B (f32 lanes) accumulated in
/// registers across a contraction's K loop.
struct RegisterBlockShape {
  int64_t rows;
  int64_t columns;
};

/// The block that keeps the host's FMA units busy without spilling: half
/// the vector registers hold accumulators (enough independent FMA chains to
/// cover the FMA latency on two ports), the rest hold B's vectors and A's
/// broadcasts. AVX-512 (32 registers of 16 f32): 8 × 32, sixteen
/// accumulators; AVX2 and anything else (16 registers of 8 f32): 4 × 16,
/// eight accumulators.
RegisterBlockShape getHostRegisterBlock();

/// The block that `rows` × `columns` options ask for, where 0 (the options'
/// default) stands for the host's size (getHostRegisterBlock) in that
/// direction.
RegisterBlockShape resolveRegisterBlock(int64_t rows, int64_t columns);

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_HOSTREGISTERBLOCK_H
