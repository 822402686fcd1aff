//===- Passes.h - rope transformation passes --------------------*- C++ -*-===//

#ifndef ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_H
#define ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace rope {

#define GEN_PASS_DECL
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"

} // namespace rope
} // namespace mlir

#endif // ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_H
