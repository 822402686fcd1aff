//===- Passes.td - raising frontend IR to rope ops -*- tablegen -*-===//
//
// Raising reads the IR a frontend wrote (linalg, tensor, arith, math, tosa)
// and recognises rotary embeddings and attention in it, whatever their
// spelling, as rope ops. Matchers shared with fusion live in rope/Analysis.
//
//===----------------------------------------------------------------------===//
#ifndef ROPE_RAISING_PASSES_TD
#define ROPE_RAISING_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeRaise : Pass<"rope-raise"> {
  let summary = "Raise rotary embeddings and attention as frontends emit them to rope ops";
  let description = [{
    Frontends do not emit `rope` ops. torch-mlir, TOSA-based frontends and
    hand-written lowerings spell a rotary embedding as `x·cos + rot(x)·sin`,
    where `rot` moves the partner of each rotation pair into place and
    negates one member, and `cos`/`sin` are tables of `positions ⊗ inv_freq`.
    This pass recognises that computation and replaces it with
    `rope.rotate %x, %positions rotary(#rope.spec<...>)` when the tables say
    their spec, else with `rope.rotate_with_tables %x, %cos, %sin`, so that
    `--rope-fold-rotation-into-qk` and the rest of the rope pipeline apply.

    Recognised shapes, one pattern each (the operands of every product and
    sum in either order):

    * half layout (Llama/NeoX `rotate_half`): `x·cos + cat(−x2, x1)·sin` with
      `x1, x2` the two halves of the head, `cos = cos(cat(f, f))`;
    * interleaved layout (GPT-J/RoFormer `rotate_every_two`):
      `x·cos + stack(−x_odd, x_even)·sin` with the even/odd elements taken by
      stride-2 slices (or a `[.., h, 2]` reshape and unit slices) and
      interleaved back by a concatenation along a new dim and a collapse;
      the tables repeat each frequency for both members of a pair;
    * partial rotary (GPT-NeoX `rotary_pct`, GPT-J `rotary_dim`): a
      concatenation (or insertion) of a rotation of `r` head dims with the
      other dims passed through becomes one rotation with `dims = r` and
      `offset` where the rotated dims start.

    `x·cos − rot(x)·sin`, and a `rot` that negates the other member, are the
    inverse rotation (`inverse = true`). The pairing is checked element by
    element of the head, so anything that computes exactly a rotation is
    raised: `x·sin + rot(x)·cos`, for instance, is the inverse rotation of
    `rot(x)`.

    Each shape is recognised whatever the spelling: `arith`/`math` on
    tensors; `linalg` named ops (`linalg.add`, `linalg.mul`, `linalg.negf`,
    `linalg.broadcast`, `linalg.transpose`, `linalg.fill`,
    `linalg.elementwise`, `linalg.map`, ...) or `linalg.generic` with
    broadcasting indexing maps and fused bodies, including `inv_freq @
    positions` as a matmul with a unit reduction into a zero-filled init
    (Hugging Face's `LlamaRotaryEmbedding`); `tensor` slices (strided
    included), `concat`, `insert_slice`, `expand_shape`, `collapse_shape`;
    and `tosa` (`slice`, `concat`, `reshape`, `tile`, `transpose`, `negate`,
    `mul`, `add`, `sub`, `cos`, `sin`, `cast`, `gather`, with implicit
    broadcasting). Mixed spellings match too, and so does the IR after
    elementwise fusion (one generic computing the whole expression, reshapes
    moved past it) or after the upstream TOSA lowering: the matchers follow
    every operand through the index-only ops to the arithmetic behind it,
    one head element at a time.

    A spec is recovered from the tables when they are either

    * computed in the IR: `cos`/`sin` (optionally times a constant, the
      attention factor, and cast between float types) of
      `sitofp(positions) · inv_freq`, with `inv_freq` a constant (`dense`,
      or a `dense_resource` blob as torch-mlir exports buffers) or computed
      from constants (evaluated at compile time in the program's float
      types); or
    * gathered by position from constant caches `[L, W]` holding
      `m·cos(p·f)` and `m·sin(p·f)` (`cos_cached[position_ids]`, as
      torch-mlir lowers it with `tensor.extract` in a linalg body, or
      `tosa.gather`): `m` from row 0, `f = atan2(sin[1], cos[1])`, and every
      row checked within `2^-21·m·(1 + p·f)`.

    The positions are an integer tensor indexed by the sequence dim: `[S]`,
    or `[B, S]` with `B` the leading dim. Unit dims are collapsed
    (position_ids `[1, S]` becomes `[S]`), and decode's one position per
    sequence becomes `[B, 1]` along the unit sequence dim. The two members
    of each pair must share their frequency. With `h` frequencies:

    * `inv_freq_i = base^(−i/h) / factor` within 2^-21 relative (a few ulps of
      f32, what `1 / base ** (arange(0, r, 2) / r)` computes in f32) gives
      `base` and, when `factor != 1`, `#rope.linear<factor>`; `base` and
      `factor` are the shortest decimals (at most 7 significant digits) that
      fit, else the exact fit;
    * any other positive frequencies give `#rope.freq_factors` relative to
      the base implied by the two highest frequencies (Llama 3, YaRN and
      LongRoPE tables are raised this way), each factor the shortest decimal
      that keeps its frequency within 2^-21;
    * a constant factor on both tables (or `m` of the caches) is the
      `attention_factor`.

    Otherwise (tables passed in as arguments or weights, slices and gathers
    of caches that are not constants, float positions, tables that are no
    rotation at all) the rotation becomes `rope.rotate_with_tables` with the
    tables themselves as operands: that op applies `x·cos + rot(x)·sin`
    element for element, so nothing about the tables needs proving. A table
    qualifies when it is read element for element along the head (its last
    dim at the head index) and each other dim is a static 1 or follows a
    leading dim of `x` in order; the innermost such tensor along its views
    is taken (the table before any broadcast to the shape of `x`) and
    reshaped to the rank of `x` with unit dims where it broadcasts. When a
    sum reads as a rotation in several ways, one with a spec wins. The
    inverse direction with opaque tables is not raised (the op would need
    `−sin`).

    The raised rotation forms the phase in f64 (see `rope.rotate`), so it
    differs from the original f32 program by the original's own rounding of
    `f32(p)·inv_freq` (and, for half-precision tables, by their rounding),
    and by at most 2^-21 relative in the frequencies.

    Attention (RaiseAttention.cpp): `softmax(scale·Q·Kᵀ + mask)·V` as
    frontends export it becomes `rope.attention`, read element by element
    from the output back (so any arrangement of transposes, reshapes and
    broadcasts between the ops is only a map on the way):
    * Q·Kᵀ and P·V as batched contractions (`linalg.batch_matmul`,
      `tosa.matmul`, or any linalg op with one reduction whose body adds a
      product to a zero init), over the collapsed batch·head dim, expanded
      back to `[B, H, S, D]` (`tensor.expand_shape` or `tosa.reshape`); or,
      for one unbatched head, 2-D products (`linalg.matmul`) of `[S, D]`
      operands, which attention reads as `[1, 1, S, D]`;
    * the scale as products or quotients by constants, on the scores or on Q
      and Kᵀ (SDPA's √scale each);
    * soft-capping `c·tanh(x/c)` (Gemma 2);
    * one additive mask: when it only hides keys as causal attention does,
      optionally with a sliding window, it becomes `causal` (and `window`).
      The mask is read symbolically, at any size (its element as pieces
      over comparisons of affine functions of the query and key indices:
      iota generics, `linalg.index`, integer arithmetic, casts, logic,
      selects and fills, in arith or tosa), and the rule follows from the
      Sq + Sk query–key distances when hiding depends on the distance
      alone. One boolean tensor from the program's inputs may be and-ed or
      or-ed in (a padding mask): when the keys it hides are hidden at every
      distance, it is the mask operand beside the rule (negated when true
      means hidden; rows that then see no key get zeros). A constant mask (`triu` folded to `dense`) is evaluated element
      by element up to 2^16 elements. Otherwise the tensor itself (an
      argument, or computed in the function) is the mask operand;
    * a boolean mask applied by a select of the logits (`arith.select` or
      `tosa.select`: `torch.where`, `masked_fill` with −inf or the most
      negative float): causal/window as above, else attention's i1 mask,
      negated (a `linalg.generic` of `xori`) when true means hidden;
    * softmax as `linalg.softmax` or spelled out: `exp(x − max_j x) /
      Σ_j exp(...)` or `exp(...) · reciprocal(Σ_j exp(...))`, the row
      reductions as linalg ops (the max with or without torch's argmax) or
      `tosa.reduce_max` / `tosa.reduce_sum`, and SDPA's guard that zeroes
      rows whose keys are all hidden;
    * GQA through HF's `repeat_kv` (a broadcast and a collapse): K and V are
      taken before the repeat; Q, K or V read in another dim order get a
      `linalg.transpose`. K and V repeated some other way (tiled, say) are
      taken after the repeat, as heads of their own.
    Near misses (a softmax over the queries, an unnormalised exp, more than
    one mask) are left unchanged. With `report`, each attention whose P·V
    product, softmax and logits were recognised but that is not raised gets
    a remark at its root op saying why ("rope-raise: attention not raised:
    K and V are not read as [B, Hkv, S, D] by query head", ...).

    Left unchanged:

    * tables that exist only inside a fused linalg body (computed there
      from positions generated in the body): no spec can be proved from
      them and there is no tensor to take as a table;
    * tables built from different positions or frequencies for cos and sin
      (tables computed twice are fine: they are compared by content);
    * a fused linalg body that computes more than the rotation (e.g. the
      rotation times a scale): the root must be the final sum or a reshape of
      it;
    * the "split" spelling `cat(x1·cos − x2·sin, x2·cos + x1·sin)` with
      half-width tables, and complex-number formulations (`view_as_complex`);
    * anything that is not exactly a rotation: a swapped concatenation, a
      negation on both members, a partner off by one, cos in both products,
      mismatched halves of the frequency table, a cache entry off its phase.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Remark on each near miss (attention recognised but not raised) "
           "with the reason">
  ];
  let dependentDialects = [
    "::mlir::rope::RopeDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_RAISING_PASSES_TD
