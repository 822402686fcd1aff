//===- Passes.td - folding rotations into products -*- tablegen -*-===//
//
// Fusion rewrites rope ops together: a rotation of queries and keys becomes
// part of the Q·Kᵀ product of the attention that reads them.
//
//===----------------------------------------------------------------------===//
#ifndef ROPE_FUSION_PASSES_TD
#define ROPE_FUSION_PASSES_TD

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
    dim of `[B, H, S, D]`. Attention reads one set of positions for its
    rotation and its masks, so the spec moves in with the rotations'
    positions when those can be the attention's (it has none and nothing
    else needs them, or the same ones). Otherwise (a causal mask at default
    positions while the rotation reads position ids, as frontends export
    it; other positions; `dynamic` or `longrope` frequencies over different
    positions, which would see the largest of both), each rotation goes in
    as its own `rope.table` (`rotary_tables`), which is exactly what it
    computed, read by row.

    Rotations by tables (`rope.rotate_with_tables`, a frontend's cos/sin)
    fold the same way into `rotary_tables(...)`, when Q and K rotate the same
    dims with the same layout and their tables hold one row per token for
    all heads (`[S, w]`, `[B, S, w]`, `[B, 1, S, w]`); tables are read by
    row, so the attention's positions need not agree with anything; a table
    rotation in another layout that a transpose (keeping the head dim last)
    brings into attention's is moved after the transpose first (GPT-J).

    Rotated Q and K that meet in a plain product instead (a Q·Kᵀ that was
    not raised to attention: extra ops between, an unusual mask) fold into
    it: the product (any linalg op accumulating the product of its two
    inputs over the head dim) becomes a generic that reads the un-rotated
    tensors as pairs and rotates each pair in its body with its side's
    tables (a spec rotation's `rope.table`, or a table rotation's own
    cos/sin, per-element tables sliced per pair member), so no rotated
    tensor is left. With partial rotary the dims passed through are a
    product of slices of the inputs, accumulated first. Both sides must
    rotate the same dims with the same layout (pair t of Q meets pair t of
    K); otherwise the product is left alone.
  }];
  let dependentDialects = ["::mlir::rope::RopeDialect"];
}

#endif // ROPE_FUSION_PASSES_TD
