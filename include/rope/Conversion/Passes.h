//===- Passes.h - rope conversion passes ------------------------*- C++ -*-===//

#ifndef ROPE_CONVERSION_PASSES_H
#define ROPE_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::rope {

#define GEN_PASS_DECL
#include "rope/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Conversion/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CONVERSION_PASSES_H
