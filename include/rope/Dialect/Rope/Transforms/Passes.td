//===- Passes.td - rope transformation passes --------------*- tablegen -*-===//

#ifndef ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_TD
#define ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeFoldRotationIntoQK : Pass<"rope-fold-rotation-into-qk"> {
  let summary = "Fold rope.rotate of Q and K into the attention that consumes them";
  let description = [{
    `rope.attention(rope.rotate(q, pq, s), rope.rotate(k, pk, s), v)` becomes
    `rope.attention(q, k, v) positions(pq, pk) rotary(s)`: the rotation moves
    onto the operands as they enter the Q·Kᵀ reduction and no rotated Q or K
    tensor exists any more. Both the plain lowering and
    `--rope-decompose-attention` then rotate inside the product (the latter
    once per tile). Works for every layout, partial rotary, scaling kind, GQA
    and causal attention, and for decode against an un-rotated KV cache (K is
    rotated on load at its own positions).

    The fold applies when both rotations use the same spec along the sequence
    dim of `[B, H, S, D]` and the attention's own positions (which decide
    causality) are absent or are the rotation positions. Without explicit
    positions, a causal attention uses its default positions, which may
    differ from the rotation's, so it is left alone. With `dynamic` or
    `longrope` scaling the frequencies depend on the largest position a
    rotation sees, so Q and K must share their positions tensor for the fold
    to preserve meaning.
  }];
  let dependentDialects = ["::mlir::rope::RopeDialect"];
}

def RopeDecomposeAttention : Pass<"rope-decompose-attention"> {
  let summary = "Tile rope.attention into an online-softmax (FlashAttention) loop nest";
  let description = [{
    Rewrites `rope.attention` into `scf.for` loops over query and key tiles
    on tensors. Each step keeps a running row max, row sum and output
    accumulator (online softmax), so memory is O(S·D) rather than the S×S
    scores. With a rotary spec the cos/sin tables are built once and the
    query (key) tile is rotated once per tile as it is loaded. For causal
    attention a key tile whose smallest position is greater than the query
    tile's largest is skipped; the test uses the positions themselves, so it is
    exact for any positions (decode, per-batch offsets), not only sorted ones.
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"64",
           "Query rows per tile">,
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"64",
           "Key rows per tile">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_TD
