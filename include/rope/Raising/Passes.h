//===- Passes.h - raising frontend IR to rope ops ---------------*- C++ -*-===//

#ifndef ROPE_RAISING_PASSES_H
#define ROPE_RAISING_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace rope {
class RaiseReport;

#define GEN_PASS_DECL
#include "rope/Raising/Passes.h.inc"

/// Frontend spellings of a rotary embedding (slices, negation, concatenation,
/// cos/sin tables of the positions) -> rope.rotate (RaiseRotary.cpp).
void populateRaiseRotaryPatterns(RewritePatternSet &patterns);
/// Frontend spellings of attention (Q·Kᵀ, scale, mask, softmax, P·V) ->
/// rope.attention (RaiseAttention.cpp). Near misses (the chain recognised,
/// the raise refused) go to `report` when there is one.
void populateRaiseAttentionPatterns(RewritePatternSet &patterns,
                                    RaiseReport *report = nullptr);

#define GEN_PASS_REGISTRATION
#include "rope/Raising/Passes.h.inc"

} // namespace rope
} // namespace mlir

#endif // ROPE_RAISING_PASSES_H
