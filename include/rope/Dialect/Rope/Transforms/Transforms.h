//===- Transforms.h - attention transformations -----------------*- C++ -*-===//
//
// The steps every attention lowering is configured from. rope.attention
// becomes rope.online_attention (plus the final normalisation); that op is
// tiled through its TilingInterface (query tiles in parallel, key tiles as a
// reduction, or split-K), key tiles that no query can see are guarded away,
// and each remaining op is decomposed into linalg by its own
// decomposeOperation. The passes in Passes.td are thin drivers over these.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_TRANSFORMS_TRANSFORMS_H
#define ROPE_DIALECT_ROPE_TRANSFORMS_TRANSFORMS_H

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// Replaces `op` with a rope.online_attention from its initial state (zero
/// accumulator, max −inf and sum 0; with sinks the max is the sink and the
/// sum 1), followed by acc / sum (0 for a row with no visible key). Default
/// positions are made explicit where a rule needs them, queries are split by
/// their kv head, and the cos/sin tables of a rotary spec are rope.table ops
/// (one for Q and K when they share positions). Returns the new op.
FailureOr<OnlineAttentionOp> convertToOnlineAttention(RewriterBase &rewriter,
                                                      AttentionOp op);

/// How online attention is tiled: query tiles (CPU), or one query row per
/// tile (GPU rows).
struct AttentionTilingOptions {
  /// Query rows per parallel tile (an scf.forall over kv heads × query tiles).
  int64_t queryTile = 64;
  /// Keys per step of the sequential key loop. Split tiles of a decode step,
  /// which hold every kv head, take at most kSplitTileBytes of key rows: the
  /// largest tile the CPU pipeline prefetches while the one before it
  /// computes (rope-prefetch-streamed-tiles; see tileOnlineAttention).
  int64_t keyTile = 64;
  static constexpr int64_t kSplitTileBytes = 64 * 1024;
  /// When above 1, the keys are first split into this many ranges whose
  /// partial states are computed in parallel and merged (split-K, for decode);
  /// the kv heads and queries then stay whole in each split. -1 chooses:
  /// kAutoSplits splits when the query tiles offer fewer than kAutoSplits
  /// parallel tiles (decode with few kv heads), or when each kv head has
  /// one query tile and the keys are rotated as they are loaded (decode
  /// over an un-rotated cache: the key tiles of a split hold every kv head,
  /// which then share each key's cos/sin row), else none.
  int64_t splitKeys = -1;
  static constexpr int64_t kAutoSplits = 4;
  /// GPU rows: every (batch, kv head, group head, query row) is a parallel
  /// tile of its own (one GPU thread); queryTile and splitKeys are unused.
  bool oneRowPerTile = false;
  /// Keys not known to fill whole key tiles: the key loop's last, partial
  /// tile is peeled off (scf::peelForLoopAndSimplifyBounds), so that every
  /// other tile has a static key extent, the shape the CPU micro-kernels
  /// take. Off for one row per tile, whose key loop has no contraction.
  bool peelPartialKeyTile = true;
  /// Query rows not known to fill whole query tiles (a prompt whose length
  /// is known at run time): each parallel tile checks whether it is full
  /// (scf.if), and a full one runs a copy of the tile with a static query
  /// extent, the shape the CPU micro-kernels, row reductions and tile
  /// prefetching take; only the last tile of each head runs the dynamic
  /// copy. Off for one row per tile.
  bool versionPartialQueryTile = true;
  /// Causal and windowed key tiles that every query of the tile sees whole
  /// (all but the diagonal's in prefill) run without the visibility rules
  /// (guardInvisibleKeyTile), where the query length is static: the copy
  /// doubles the tile's code, which a run-time length (a frontend's JIT
  /// graph) would pay in compile time. Off for one row per tile: a GPU
  /// thread's key loop would carry both copies of the tile in its registers.
  bool unmaskVisibleKeyTiles = true;
  /// Tiles with at most this many static query rows per kv head (decode)
  /// rotate their keys inside the Q·Kᵀ reduction rather than into a tile
  /// of rotated keys (OnlineAttentionOp::decompose); 0: never.
  int64_t rowsRotatingKeysInScores = 0;
};

/// Tiles `op` through its interfaces: either parallel query tiles or parallel
/// key splits (PartialReductionOpInterface), then a loop over key tiles.
/// Returns the tiled ops: for each version of the query tile (the full one
/// first, see versionPartialQueryTile), the key loop's, then the peeled last
/// key tile's where there is one.
FailureOr<SmallVector<OnlineAttentionOp, 2>>
tileOnlineAttention(RewriterBase &rewriter, OnlineAttentionOp op,
                    const AttentionTilingOptions &options);

/// Wraps `op` (a key tile in a loop) in an scf.if that skips it when no query
/// of its tile can see any of its keys (causal or window, from the bounds of
/// its positions; exact for any positions). With `unmaskVisibleTiles`, a tile
/// whose every key every query sees runs a copy of `op` without causal and
/// window instead. Fails when nothing is to guard.
LogicalResult guardInvisibleKeyTile(RewriterBase &rewriter,
                                    OnlineAttentionOp op,
                                    bool unmaskVisibleTiles = false);

/// Replaces `op` with its decomposition into linalg on tensors
/// (OnlineAttentionOp::decompose with `rowsRotatingKeysInScores`).
LogicalResult decomposeOnlineAttention(RewriterBase &rewriter,
                                       OnlineAttentionOp op,
                                       int64_t rowsRotatingKeysInScores = 0);

/// Decomposes every rope.online_attention under `root`; reports (emitOpError)
/// the first one that cannot be.
LogicalResult decomposeAllOnlineAttention(Operation *root,
                                          int64_t rowsRotatingKeysInScores = 0);

/// The whole configuration of attention the passes share: converts each
/// rope.attention under `root` that `accept` takes to online attention,
/// tiles it as `options` says, guards its invisible key tiles and
/// decomposes it (the others are left to the plain lowering).
LogicalResult tileAndDecomposeAttention(Operation *root,
                                        const AttentionTilingOptions &options,
                                        function_ref<bool(AttentionOp)> accept);


} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_TRANSFORMS_TRANSFORMS_H
