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

def RopeConvertAttentionToOnline : Pass<"rope-convert-attention-to-online"> {
  let summary = "Convert rope.attention to rope.online_attention and its normalisation";
  let description = [{
    Each `rope.attention` becomes a `rope.online_attention` that starts from
    the empty state (accumulator 0, running max −inf, running sum 0; with
    sinks, max = sink and sum = 1, one logit seen that adds no value), then
    `acc / sum` (0 for a row that saw no visible key), collapsed back to
    `[B, Hq, Sq, Dv]`. Whatever the online op needs explicit is made so:
    default positions (keys at `0..Sk-1`, queries right-aligned to them)
    where a rule needs positions, query heads split as `[B, Hkv, G, Sq, D]`,
    the mask as rank 5, ALiBi slopes and the T5 table per `[Hkv, G]`, and the
    cos/sin tables of a rotary spec as `rope.table` ops (one for Q and K when
    their positions are the same; one over both when the frequencies depend
    on the largest position).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeTileAttention : Pass<"rope-tile-attention"> {
  let summary = "Tile rope.online_attention through its TilingInterface";
  let description = [{
    Tiles every `rope.online_attention` with upstream `scf::tileUsingSCF`:
    an `scf.forall` over (kv head, `query-tile` query rows), or, with
    `split-keys = N > 1`, an `scf.forall` over N key ranges whose partial
    states are merged exactly afterwards (split-K through
    `PartialReductionOpInterface`, for decode); then an `scf.for` over
    `key-tile` keys carrying the state. With `rows`, every (batch, kv head,
    group head, query row) is a parallel tile of its own (the GPU rows
    configuration). Each tile is again a `rope.online_attention` on slices
    of every operand.
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"64",
           "Query rows per parallel tile">,
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"64",
           "Keys per step of the key loop">,
    Option<"splitKeys", "split-keys", "int64_t", /*default=*/"-1",
           "Split the keys into this many parallel partial states (0, 1: no "
           "split; -1: 4 splits when kv heads × query tiles are fewer than 4)">,
    Option<"rows", "rows", "bool", /*default=*/"false",
           "One query row per parallel tile (query-tile and split-keys "
           "unused)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeSkipInvisibleAttentionTiles : Pass<"rope-skip-invisible-attention-tiles"> {
  let summary = "Skip causal or windowed key tiles that no query of the tile sees";
  let description = [{
    Wraps each `rope.online_attention` that is a key tile of a loop (its
    parent is an `scf.for`) and is causal or windowed in an `scf.if` on the
    bounds of its positions: the tile runs only when its earliest key is not
    after its latest query (causal) and its latest key is inside the window
    of its earliest query; otherwise the state passes through unchanged.
    The test uses the positions themselves, so it is exact for any
    positions (decode, per-sequence offsets), not only sorted ones.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeDecomposeOnlineAttention : Pass<"rope-decompose-online-attention"> {
  let summary = "Decompose rope.online_attention into linalg (one online-softmax step)";
  let description = [{
    Replaces each `rope.online_attention` with its
    `linalg::AggregatedOpInterface` decomposition: Q and K rotated as they
    are loaded, the logits of the tile (scale, soft-cap, mask, ALiBi, T5
    bias, causal and window rules), and the online-softmax update of the
    (accumulator, max, sum) state, all `linalg.generic` on tensors.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeDecomposeAttention : Pass<"rope-decompose-attention"> {
  let summary = "Tile rope.attention into online-softmax (FlashAttention) loops";
  let description = [{
    The CPU configuration of attention, composed from the steps above:
    `rope.attention` to `rope.online_attention`, tiled (an `scf.forall` over
    kv heads and query tiles, or over key splits with `split-keys`), a loop
    over key tiles, causal and window key tiles that no query sees skipped,
    and each tile decomposed. Memory is O(S·D) rather than the S×S scores;
    the cos/sin tables are built once and each tile of Q and K is rotated as
    it is loaded.
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"64",
           "Query rows per tile">,
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"64",
           "Key rows per tile">,
    Option<"splitKeys", "split-keys", "int64_t", /*default=*/"-1",
           "Split the keys into this many parallel partial states (0, 1: no "
           "split; -1: 4 splits when kv heads × query tiles are fewer than 4)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeDecomposeAttentionRows : Pass<"rope-decompose-attention-rows"> {
  let summary = "Attention one query row per parallel tile (the GPU rows "
                "configuration)";
  let description = [{
    The GPU configuration of `rope.attention`: converted to
    `rope.online_attention`, tiled through its `TilingInterface` with one
    tile per (batch, kv head, group head, query row) in an `scf.forall`
    (one GPU thread each once `--rope-lower-to-nvvm` maps it), the query row
    rotated once, then an `scf.for` over `key-tile` keys carrying the
    (accumulator, max, sum) state, key tiles that the row cannot see
    skipped, and each tile decomposed by the op itself. Every feature of the
    op (masks, window, soft-cap, sinks, ALiBi, T5 bias, rotary tables) goes
    through it. The thread's temporaries (its rotated query and key rows,
    scores) are of static size, so the head dims must be static; attention
    with dynamic or empty head dims is left to the plain lowering.
  }];
  let options = [
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"1",
           "Keys per step of a row's key loop">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

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
    * one additive mask: when every element evaluates at compile time
      (iota comparisons, selects, integer arithmetic and casts, `triu`
      constants, in arith or tosa) and it only hides keys as causal
      attention does, optionally with a sliding window, it becomes `causal`
      (and `window`); otherwise the tensor itself is the mask operand;
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
    one mask) are left unchanged.

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
  let dependentDialects = [
    "::mlir::rope::RopeDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeInsertRuntimeChecks : Pass<"rope-insert-runtime-checks"> {
  let summary = "Check the rope ops' shape relations at run time where "
                "extents are dynamic";
  let description = [{
    The verifier checks how a rope op's operand extents relate (positions
    have one entry per token, keys and values have the same sequence
    length, a mask dim is 1 or the extent it broadcasts to, ...) where the
    extents are static. Where one is dynamic, a caller's mistake would
    otherwise become an out-of-bounds access of its memory. This pass asks
    each rope op (its `RuntimeVerifiableOpInterface`) to check those
    relations just before it runs, with the verifier's own message: a
    `rope.assert` per relation that quotes both extents, prefixed with the
    op's location (`file:line:col: error: 'rope.rotate' op expects positions
    to have {1} entries along the sequence, got {0}`). Each dynamically
    shaped result is also checked to take at most 2^63 - 1 bytes, so that
    no allocation size wraps. The checks run once per call, not per element.

    Only rope ops are instrumented (upstream's
    `--generate-runtime-verification` takes them too, with every other op
    that has the interface). `--rope-lower-to-cpu` and `--rope-lower-to-nvvm`
    run it first (option `runtime-checks`), and lower the asserts with
    `--rope-lower-runtime-checks`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeTestSpecRecovery : Pass<"rope-test-spec-recovery"> {
  let summary = "Testing aid: recover each rope.rotate's spec from its "
                "frequencies and check the round trip";
  let description = [{
    `--rope-raise` recovers a `#rope.spec` from the frequencies it finds in
    the IR. This pass checks that recovery against the spec's own frequency
    code, for every `rope.rotate`: the spec's inverse frequencies (at the
    largest position `max-position`, for `dynamic` and `longrope`), the spec
    recovered from them (with the rotation's `dims` and `offset`, which
    `--rope-raise` takes from where the rotated dims sit in the head), and
    that spec's inverse frequencies, which must be the same within the
    recovery's tolerance (2^-21 relative), with the same attention factor
    (within 2^-23), layout and direction.

    Each rotation gets a remark: `same spec: ...` when the recovered spec is
    the spec itself (no scaling, linear scaling, per-frequency factors that
    leave the two highest frequencies alone, each with parameters of at most
    7 significant digits), else `same frequencies: ...` with the spec
    recovered (YaRN, Llama 3, LongRoPE and `dynamic` come back as a base with
    per-frequency factors, or as a base alone). A rotation whose round trip
    fails is an error, and the pass fails. The IR is left unchanged.
  }];
  let options = [
    Option<"maxPosition", "max-position", "int64_t", /*default=*/"0",
           "The largest position, for the scaling kinds whose frequencies "
           "depend on it">
  ];
}

#endif // ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_TD
