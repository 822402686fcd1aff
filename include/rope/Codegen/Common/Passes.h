//===- Passes.h - rope codegen passes for every target ----------*- C++ -*-===//

#ifndef ROPE_CODEGEN_COMMON_PASSES_H
#define ROPE_CODEGEN_COMMON_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::rope {

#define GEN_PASS_DECL
#include "rope/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Codegen/Common/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CODEGEN_COMMON_PASSES_H
