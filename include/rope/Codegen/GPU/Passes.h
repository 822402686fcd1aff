//===- Passes.h - rope GPU codegen passes -----------------------*- C++ -*-===//

#ifndef ROPE_CODEGEN_GPU_PASSES_H
#define ROPE_CODEGEN_GPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::rope {

#define GEN_PASS_DECL
#include "rope/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Codegen/GPU/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CODEGEN_GPU_PASSES_H
