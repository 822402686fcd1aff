//===- AttentionFields.cpp - the attention ops by named fields -----------===//
//
// AttentionFields::of and the attention ops' builders from it: the one place
// that lists, operand by operand, what rope.attention and
// rope.online_attention are made of (the builders pass the fields on to the
// ODS-generated ones).
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/AttentionFields.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

using namespace mlir;
using namespace mlir::rope;

/// The fields both ops have, read alike (their accessors share names).
template <typename OpTy> static AttentionFields sharedFields(OpTy op) {
  AttentionFields f;
  f.query = op.getQuery();
  f.key = op.getKey();
  f.value = op.getValue();
  f.mask = op.getMask();
  f.queryPositions = op.getQueryPositions();
  f.keyPositions = op.getKeyPositions();
  f.queryCos = op.getQueryCos();
  f.querySin = op.getQuerySin();
  f.keyCos = op.getKeyCos();
  f.keySin = op.getKeySin();
  f.alibiSlopes = op.getAlibiSlopes();
  f.relativeBias = op.getRelativeBias();
  f.scale = op.getScaleAttr();
  f.causal = op.getCausalAttr();
  f.rotary = op.getRotaryAttr();
  f.window = op.getWindowAttr();
  f.softcap = op.getSoftcapAttr();
  f.relativeBuckets = op.getRelativeBucketsAttr();
  return f;
}

AttentionFields AttentionFields::of(AttentionOp op) {
  AttentionFields f = sharedFields(op);
  f.sinks = op.getSinks();
  return f;
}

AttentionFields AttentionFields::of(OnlineAttentionOp op) {
  AttentionFields f = sharedFields(op);
  f.outputs.assign(op.getOutputs().begin(), op.getOutputs().end());
  return f;
}

void AttentionOp::build(OpBuilder &b, OperationState &state, Type resultType,
                        const AttentionFields &f) {
  build(b, state, resultType, f.query, f.key, f.value, f.mask, f.queryPositions,
        f.keyPositions, f.sinks, f.alibiSlopes, f.relativeBias, f.queryCos,
        f.querySin, f.keyCos, f.keySin, f.scale, f.causal, f.rotary, f.window,
        f.softcap, f.relativeBuckets);
}

void OnlineAttentionOp::build(OpBuilder &b, OperationState &state,
                              TypeRange resultTypes, const AttentionFields &f) {
  // The online op's tables carry the frequencies: its rotation is only ever
  // `#rope.pairs` (a spec here is a bug in the caller).
  build(b, state, resultTypes, f.query, f.key, f.value, f.mask,
        f.queryPositions, f.keyPositions, f.queryCos, f.querySin, f.keyCos,
        f.keySin, f.alibiSlopes, f.relativeBias, f.outputs, f.scale, f.causal,
        cast_if_present<RotaryPairsAttr>(f.rotary), f.window, f.softcap,
        f.relativeBuckets);
}
