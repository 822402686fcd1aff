//===- AttentionFields.h - what the attention ops are built from -*- C++
//-*-===//
//
// The operands and attributes of `rope.attention` and `rope.online_attention`
// by name. A pass that rebuilds an attention op with some fields changed
// reads them (`AttentionFields::of`), changes what it changes and builds the
// op from them (`AttentionOp::create(b, loc, type, fields)`), so a new
// attention feature (an operand or attribute) touches this struct and the
// ops' builders, not every pass that copies an op.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ATTENTIONFIELDS_H
#define ROPE_DIALECT_ROPE_IR_ATTENTIONFIELDS_H

#include "rope/Dialect/Rope/IR/RopeAttrs.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

namespace mlir::rope {
class AttentionOp;
class OnlineAttentionOp;

struct AttentionFields {
  Value query, key, value;
  Value mask;
  Value queryPositions, keyPositions;
  /// cos/sin tables of Q and K (rope.attention: all four or none;
  /// rope.online_attention: the key's alone when Q is rotated already).
  Value queryCos, querySin, keyCos, keySin;
  /// rope.attention only: one logit per query head joining the softmax.
  Value sinks;
  Value alibiSlopes, relativeBias;
  /// rope.online_attention only: the running state (acc, max, sum).
  SmallVector<Value, 3> outputs;
  /// rope.online_attention requires it; rope.attention derives 1/sqrt(D).
  FloatAttr scale;
  UnitAttr causal;
  /// A `#rope.spec` (rope.attention only) or, with tables, `#rope.pairs`.
  RotationAttrInterface rotary;
  IntegerAttr window;
  FloatAttr softcap;
  RelativeBucketsAttr relativeBuckets;

  static AttentionFields of(AttentionOp op);
  static AttentionFields of(OnlineAttentionOp op);
};

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_IR_ATTENTIONFIELDS_H
