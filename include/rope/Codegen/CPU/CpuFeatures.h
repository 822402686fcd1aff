//===- CpuFeatures.h - the CPU features codegen selects by ------*- C++ -*-===//
//
// Which matrix and vector engines a CPU target has, as the contraction
// strategies ask: the host's (what the JIT compiles for) or a list given on
// the command line, so that every path can be compiled, and tested, on any
// machine.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_CPUFEATURES_H
#define ROPE_CODEGEN_CPU_CPUFEATURES_H

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::rope {

/// The features of a CPU target that select a contraction strategy, named
/// as LLVM names them (`amx-bf16`, `avx512bf16`, ...).
struct CpuFeatures {
  bool avx512f = false;
  bool avx512bf16 = false;
  bool avx512fp16 = false;
  bool amxTile = false;
  bool amxBf16 = false;
  bool amxFp16 = false;

  /// The host's, as LLVM detects them (read once per process).
  static const CpuFeatures &host();

  /// `spec`: "host", or a comma-separated list of feature names, each with
  /// an optional `+` (on) or `-` (off), applied in order from nothing, or
  /// from the host's where the list begins with "host" ("host,-amx-bf16").
  /// Fails with a message naming the first unknown feature.
  static FailureOr<CpuFeatures> parse(StringRef spec, std::string &error);

  /// Whether AMX tiles multiply inputs of `elementType` (bf16 with
  /// amx-bf16, f16 with amx-fp16).
  bool hasTileProducts(Type elementType) const;

  /// Whether AVX-512 BF16 dot products (vdpbf16ps: pairs of bf16 multiplied
  /// and summed into f32 lanes) multiply inputs of `elementType`: bf16 with
  /// avx512bf16. No x86 instruction sums f16 pairs into f32 lanes.
  bool hasDotProducts(Type elementType) const;

  /// The features on, comma-separated (for messages and objects).
  std::string str() const;
};

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_CPUFEATURES_H
