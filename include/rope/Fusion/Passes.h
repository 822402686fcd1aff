//===- Passes.h - folding rotations into products ---------------*- C++ -*-===//

#ifndef ROPE_FUSION_PASSES_H
#define ROPE_FUSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace rope {

#define GEN_PASS_DECL
#include "rope/Fusion/Passes.h.inc"

/// attention(rotate(q), rotate(k), v) -> attention(q, k, v) rotary(...), and
/// the same fold into a plain Q·Kᵀ product.
void populateFoldRotationIntoQKPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "rope/Fusion/Passes.h.inc"

} // namespace rope
} // namespace mlir

#endif // ROPE_FUSION_PASSES_H
