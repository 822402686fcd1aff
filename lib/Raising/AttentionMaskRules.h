//===- AttentionMaskRules.h - the mask of a raised attention ----*- C++ -*-===//
//
// What the mask of a frontend's attention amounts to, as --rope-raise's
// attention matcher (RaiseAttention.cpp) asks AttentionMaskRules.cpp: an
// additive mask or a select of the logits that only hides keys as causal
// attention (or a sliding window) does becomes that rule, with at most one
// boolean input (a padding mask) kept as rope.attention's mask operand;
// any other mask is the operand itself.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_RAISING_ATTENTIONMASKRULES_H
#define ROPE_LIB_RAISING_ATTENTIONMASKRULES_H

#include "rope/Analysis/Terms.h"

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>

namespace mlir::rope::raising {

/// What the additive mask of the logits amounts to.
struct MaskRule {
  bool causal = false;
  std::optional<int64_t> window;
  /// A mask that is neither nothing nor causal: the operand to keep, as a
  /// tensor broadcasting to [B, Hq, Sq, Sk].
  Value operand;
  /// The operand is a boolean that hides where true (to be negated into
  /// attention's "may attend" mask).
  bool operandHidesWhenTrue = false;
  /// When set, the operand does not broadcast to [B, Hq, Sq, Sk] but is read
  /// through this map of the attention's indices (AttentionDim: n, i, j):
  /// a mask over the kv heads that the frontend repeats to the query heads
  /// with K and V (Doge's dynamic mask, read at h floordiv G). The raise
  /// gathers it to [B, Hq, Sq, Sk], as the frontend's repeat did.
  AffineMap operandGather;
};

/// A mask applied by a select of the logits: `select(c, x, hidden)` (or
/// `select(c, hidden, x)`), with `hidden` −inf or the most negative floats.
struct SelectMask {
  analysis::Term condition;
  bool hidesWhenTrue;
  analysis::Term logits;
};

/// The select of the logits that `t` reads through, if its other value
/// hides the keys.
std::optional<SelectMask> matchSelectMask(analysis::Term t);

/// The rule of the masks of the logits over `n` batch·heads of [Sq, Sk],
/// read at `canonical` ([B, H, Sq, Sk] indices): `additiveMasks` added to
/// the scores, `selectMask` (if any) hiding some of them. A mask that only
/// hides keys as causal attention (or a window) does is that rule, so causal
/// tiles can be skipped; any other is an operand (negated before use when
/// the rule says it is a boolean that hides where true). `miss` says why a
/// mask is neither.
LogicalResult matchMaskRule(ArrayRef<analysis::Term> additiveMasks,
                            const std::optional<SelectMask> &selectMask,
                            ArrayRef<AffineExpr> canonical, int64_t n,
                            int64_t sq, int64_t sk, MaskRule &rule,
                            function_ref<LogicalResult(const Twine &)> miss);

} // namespace mlir::rope::raising

#endif // ROPE_LIB_RAISING_ATTENTIONMASKRULES_H
