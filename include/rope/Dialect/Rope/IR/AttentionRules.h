//===- AttentionRules.h - the rules of attention, once ----------*- C++ -*-===//
//
// Every rule that decides what a logit of attention is, and which keys a
// query sees, is one function here, on scalars (or vectors) of f32 and i64.
// The decomposition of rope.online_attention, the tile guard that skips
// invisible key tiles and the conversion of rope.attention all call them,
// so a rule (and a new attention feature) lives in one place.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ATTENTIONRULES_H
#define ROPE_DIALECT_ROPE_IR_ATTENTIONRULES_H

#include "rope/Dialect/Rope/IR/RopeAttrs.h"

#include "mlir/IR/Builders.h"
#include <optional>

namespace mlir::rope::attention {

/// Whether some key at a position in [kLo, kHi] is visible from some query at
/// a position in [qLo, qHi] (i64 scalars): causal means p_k <= p_q, a window
/// W adds p_q − W < p_k. With qLo = qHi and kLo = kHi this is the exact rule
/// for one (query, key) pair; on the bounds of a tile it is the test that a
/// tile holds any visible pair. Null when every key is visible.
Value buildKeyVisibility(OpBuilder &b, Location loc, Value qLo, Value qHi,
                         Value kLo, Value kHi, bool causal,
                         std::optional<int64_t> window);

/// Whether every key at a position in [kLo, kHi] is visible from every query
/// at a position in [qLo, qHi] under the same rules: on a tile's bounds, the
/// test that the tile needs no visibility rule at all (a key tile wholly
/// before the diagonal of causal attention). Null when every key is visible.
Value buildEveryKeyVisible(OpBuilder &b, Location loc, Value qLo, Value qHi,
                           Value kLo, Value kHi, bool causal,
                           std::optional<int64_t> window);

/// logit ← c·tanh(logit / c) (Gemma 2's soft-capping), f32.
Value buildSoftcap(OpBuilder &b, Location loc, Value logit, double cap);

/// ALiBi's bias −slope·|p_q − p_k| (slope f32, positions i64).
Value buildAlibiBias(OpBuilder &b, Location loc, Value slope, Value qPos,
                     Value kPos);

/// T5's bucket (an index) of the distance p_k − p_q (i64 positions), as T5
/// defines it: exact below max_exact, logarithmic up to max_distance (the log
/// evaluated in f32, as T5 does), the far side of a bidirectional bias offset
/// by half the buckets.
Value buildRelativeBucket(OpBuilder &b, Location loc, Value qPos, Value kPos,
                          RelativeBucketsAttr buckets);

/// A mask element applied to a logit: an i1 element is visibility (returned
/// in `visible`, and-ed with what it holds), a float element is added.
Value applyMaskElement(OpBuilder &b, Location loc, Value logit, Value element,
                       Value &visible);

/// The logit of a visible key, −inf otherwise (`visible` may be null).
Value dropInvisible(OpBuilder &b, Location loc, Value logit, Value visible);

/// The rules that turn a score q·k into its logit.
struct LogitRules {
  double scale = 1.0;
  std::optional<double> softcap;
  bool causal = false;
  std::optional<int64_t> window;
  RelativeBucketsAttr buckets; // with a T5 bias
};

/// What one logit reads besides its score (null where the op has none).
struct LogitInputs {
  Value maskElement;  // i1 (visibility) or a float to add
  Value qPos, kPos;   // i64, where a rule reads positions
  Value slope;        // f32 ALiBi slope of the query head
  /// The T5 bias (f32) of the query head at a bucket (an index).
  function_ref<Value(Value)> relativeBias = nullptr;
};

/// The logit of one (query, key) pair, f32, in the op's order: scale·score,
/// soft-capped, plus the float mask, ALiBi and T5 bias, −inf where the i1
/// mask, causal or window rule hides the key. Every lowering of attention
/// builds its logits with this.
Value buildLogit(OpBuilder &b, Location loc, const LogitRules &rules,
                 Value score, const LogitInputs &in);

} // namespace mlir::rope::attention

#endif // ROPE_DIALECT_ROPE_IR_ATTENTIONRULES_H
