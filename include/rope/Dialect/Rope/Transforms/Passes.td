//===- Passes.td - rope transformation passes --------------*- tablegen -*-===//

#ifndef ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_TD
#define ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    `key-tile` keys carrying the state. Where the keys are not known to fill
    whole key tiles (a dynamic length), the loop's last, partial tile is
    peeled off into a loop of its own, so that every other tile has a static
    key extent: the shape the CPU micro-kernels take. Likewise for the
    queries (a prompt whose length is known at run time): each query tile
    checks whether it is full (`scf.if`), and a full one runs a copy of the
    tile whose query extent is `query-tile`, only each head's last tile the
    dynamic one (torch.compile prefill, S = 4096, GQA 32/8: the attention
    25% slower than with a static length before, level after). Where several query
    tiles (or a length known only at run time) each sweep every key, the
    f32 keys and queries are rotated once, whole, before the tiling (in the
    tiles, each key would be rotated once per query tile); otherwise the
    one query tile is rotated once, before its key loop, and each key tile
    rotates its keys. Split-K tiles hold every kv head and query row, so
    each key is visited once: their key cos/sin become the `rope.table` of
    the tile's own positions (`rope.table`'s tiling), computed where they
    are read instead of sliced from a table of every key written to memory
    beforehand. With `rows`, every (batch, kv head, group head, query row)
    is a parallel tile of its own (the GPU rows configuration). Each tile is
    again a `rope.online_attention` on slices of every operand.
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"64",
           "Query rows per parallel tile">,
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"64",
           "Keys per step of the key loop">,
    Option<"splitKeys", "split-keys", "int64_t", /*default=*/"-1",
           "Split the keys into this many parallel partial states (0, 1: no "
           "split; -1: 4 splits when kv heads × query tiles are fewer than 4, "
           "or each kv head has one query tile and the keys are rotated as "
           "they are loaded)">,
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

    With `unmask-visible-tiles`, a tile that runs is versioned once more: when
    every query of the tile sees every key of it (its latest key is not after
    its earliest query, and its earliest key is inside the window of its
    latest query: in prefill, every tile but the diagonal's), a copy of the
    op without `causal` and `window` runs, whose scores need no position
    compare and select.
  }];
  let options = [
    Option<"unmaskVisibleTiles", "unmask-visible-tiles", "bool",
           /*default=*/"true",
           "Run key tiles that every query sees whole without the causal and "
           "window rules">
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
    over key tiles (its partial last tile peeled off, so that the full ones
    have static shapes), causal and window key tiles that no query sees
    skipped, and each tile decomposed. Memory is O(S·D) rather than the S×S scores;
    the cos/sin tables are built once and each tile of Q and K is rotated as
    it is loaded: into a tile of its own, or, in a tile of at most
    `rows-rotating-keys-in-scores` query rows per kv head (decode), K's pairs
    inside the Q·Kᵀ reduction, where a register block rotates each key once
    for all its rows and no rotated copy of K is written.
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"64",
           "Query rows per tile">,
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"64",
           "Key rows per tile">,
    Option<"splitKeys", "split-keys", "int64_t", /*default=*/"-1",
           "Split the keys into this many parallel partial states (0, 1: no "
           "split; -1: 4 splits when kv heads × query tiles are fewer than 4, "
           "or each kv head has one query tile and the keys are rotated as "
           "they are loaded)">,
    Option<"rowsRotatingKeysInScores", "rows-rotating-keys-in-scores",
           "int64_t", /*default=*/"8",
           "Tiles with at most this many query rows per kv head (decode) "
           "rotate each key pair inside the Q·Kᵀ reduction, in registers, "
           "instead of into a tile of rotated keys; 0: never">
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

    Besides the rope ops, the linalg ops on tensors in a function's body
    (what a frontend wrote) are instrumented with upstream's checks: every
    operand extent that a loop reads agrees with the loop's extent (a
    frontend that types an operand `[B, 1, 64]` where it is `[B, S, 64]`
    would otherwise make the loops write past it; torch-mlir once did).
    Other ops are not (upstream's `--generate-runtime-verification` takes
    every op that has the interface). `--rope-lower-to-cpu` and `--rope-lower-to-nvvm`
    run it first (option `runtime-checks`), and lower the asserts with
    `--rope-lower-runtime-checks`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::index::IndexDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_DIALECT_ROPE_TRANSFORMS_PASSES_TD
