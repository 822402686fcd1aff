//===- TileAttention.cpp - tile online attention through its interfaces ---===//
//
// A thin driver over upstream scf::tileUsingSCF and the TilingInterface /
// PartialReductionOpInterface of rope.online_attention: parallel tiles of
// (kv head, query rows), or parallel key splits merged exactly (split-K),
// then a sequential loop over key tiles.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/bit.h"

#include <algorithm>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPETILEATTENTION
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

/// Tiles `op` with `options`, replaces it, and returns its tiled op.
static FailureOr<OnlineAttentionOp> tileAndReplace(RewriterBase &rewriter,
                                                   OnlineAttentionOp op,
                                                   const scf::SCFTilingOptions &options) {
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return op.emitOpError("could not be tiled");
  rewriter.replaceOp(op, tiled->replacements);
  auto tiledOp = dyn_cast<OnlineAttentionOp>(tiled->tiledOps.front());
  if (!tiledOp)
    return failure();
  return tiledOp;
}

/// Replaces `op` with the same attention on `query` (rotated: it keeps no
/// tables) and `key`, which keeps its tables and the op's rotation unless
/// `keyRotated`.
static OnlineAttentionOp withRotatedOperands(RewriterBase &rewriter,
                                             OnlineAttentionOp op, Value query,
                                             Value key, bool keyRotated) {
  AttentionFields fields = AttentionFields::of(op);
  fields.query = query;
  fields.key = key;
  fields.queryCos = fields.querySin = Value();
  if (keyRotated) {
    fields.keyCos = fields.keySin = Value();
    fields.rotary = {};
  }
  auto replacement = OnlineAttentionOp::create(rewriter, op.getLoc(),
                                               op.getResultTypes(), fields);
  rewriter.replaceOp(op, replacement.getResults());
  return replacement;
}

/// `x` rotated by `table` into a new f32 tensor. A whole tensor rotated
/// before the tiling (`whole`) over the full head takes one generic over the
/// pair view that computes both members of each pair (x read once); a tile's
/// takes one generic per member (buildMaterializedRotation: x read twice,
/// but the rotation stays out of the product that consumes it in the tile).
static Value rotateOnce(OpBuilder &b, Location loc, Value x,
                        lowering::CosSin table, RotaryRange dims,
                        int64_t seqDim, bool whole) {
  auto type = cast<RankedTensorType>(x.getType());
  if (!whole || dims.dims != type.getShape().back() ||
      llvm::is_contained(type.getShape(), 0))
    return lowering::buildMaterializedRotation(b, loc, x, table, dims, seqDim);
  return lowering::buildRotation(b, loc, x, table, dims, seqDim,
                                 b.getF32Type());
}

/// Rotates the query of `op` (a query tile, or the whole query when `whole`)
/// once, in f32, and gives `op` the rotated query without its tables, so that
/// the key loop built next does not rotate the same query tile again for
/// every key tile.
static OnlineAttentionOp rotateQueryOnce(RewriterBase &rewriter,
                                         OnlineAttentionOp op,
                                         bool whole = false) {
  std::optional<RotaryRange> range = op.getRotaryRange();
  if (!range || !op.getQueryCos())
    return op;
  rewriter.setInsertionPoint(op);
  Value rotated =
      rotateOnce(rewriter, op.getLoc(), op.getQuery(),
                 {op.getQueryCos(), op.getQuerySin()}, *range, 3, whole);
  return withRotatedOperands(rewriter, op, rotated, op.getKey(),
                             /*keyRotated=*/false);
}

/// Rotates the keys of `op` once, in f32, before it is tiled into query
/// tiles that each sweep every key: rotated in each (query tile, key tile),
/// every key would be rotated once per query tile. The query is rotated with
/// them (the same work as one tile at a time), and `op` becomes attention
/// without a rotation of its own. Keys of a narrower storage type keep their
/// rotation in the tiles, as it converts them too.
static OnlineAttentionOp rotateKeysOnce(RewriterBase &rewriter,
                                        OnlineAttentionOp op) {
  std::optional<RotaryRange> range = op.getRotaryRange();
  auto isF32 = [](Value v) {
    return getElementTypeOrSelf(v.getType()).isF32();
  };
  if (!range || !op.getKeyCos() || !isF32(op.getKey()) || !isF32(op.getQuery()))
    return op;
  rewriter.setInsertionPoint(op);
  Value key = rotateOnce(rewriter, op.getLoc(), op.getKey(),
                         {op.getKeyCos(), op.getKeySin()}, *range, 2,
                         /*whole=*/true);
  // Without query tables the query is rotated already.
  op = rotateQueryOnce(rewriter, op, /*whole=*/true);
  return withRotatedOperands(rewriter, op, op.getQuery(), key,
                             /*keyRotated=*/true);
}

/// Computes the key tables of `op` (a tile whose key cos/sin are slices of
/// one rope.table) where the tile reads them: the slices become the table of
/// the tile's own positions (TableOp's TilingInterface). Only for tiles that
/// visit each key once (split-K tiles hold every head and query row): the
/// table is then computed once per key as before, but tile by tile in the
/// loop that reads it, from the cache (32 KiB per 64 keys, read by every kv
/// head), not written whole to memory by a pass of its own and read back
/// (at 32k keys, 16 MiB each way beside 128 MiB of f16 K and V). Leaves
/// `op` as it is where the table does not tile.
static void computeKeyTablesInTile(RewriterBase &rewriter,
                                   OnlineAttentionOp op) {
  auto cosSlice = op.getKeyCos().getDefiningOp<tensor::ExtractSliceOp>();
  auto sinSlice = op.getKeySin().getDefiningOp<tensor::ExtractSliceOp>();
  if (!cosSlice || !sinSlice)
    return;
  auto table = cosSlice.getSource().getDefiningOp<TableOp>();
  if (!table || cosSlice.getSource() != table.getCos() ||
      sinSlice.getSource() != table.getSin() || !cosSlice.hasUnitStride() ||
      !sinSlice.hasUnitStride() || cosSlice.getType() != sinSlice.getType() ||
      !isEqualConstantIntOrValueArray(cosSlice.getMixedOffsets(),
                                      sinSlice.getMixedOffsets()) ||
      !isEqualConstantIntOrValueArray(cosSlice.getMixedSizes(),
                                      sinSlice.getMixedSizes()))
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(cosSlice);
  // A full tile's size is a constant map until canonicalisation folds it:
  // folded now, the tile's table has static positions (which its lowering
  // wants, see LowerTable).
  SmallVector<OpFoldResult> sizes = cosSlice.getMixedSizes();
  for (OpFoldResult &size : sizes) {
    auto value = dyn_cast<Value>(size);
    auto apply = value ? value.getDefiningOp<affine::AffineApplyOp>() : nullptr;
    if (apply && apply.getAffineMap().isSingleConstant())
      size =
          rewriter.getIndexAttr(apply.getAffineMap().getSingleConstantResult());
  }
  FailureOr<TilingResult> tile =
      table.getTiledImplementation(rewriter, cosSlice.getMixedOffsets(), sizes);
  if (failed(tile))
    return;
  for (auto [slice, value] :
       llvm::zip_equal(SmallVector<tensor::ExtractSliceOp>{cosSlice, sinSlice},
                       tile->tiledValues)) {
    if (value.getType() != slice.getType())
      value = tensor::CastOp::create(rewriter, slice.getLoc(), slice.getType(),
                                     value);
    rewriter.replaceOp(slice, value);
  }
}

/// The keys per step of the key loop of `op`'s tiles. A split's tiles of a
/// decode step (each kv head's queries in one tile) hold every kv head and
/// are read once, in one pass: each is worth fetching while the one before
/// it computes, which the CPU pipeline's rope-prefetch-streamed-tiles does
/// for tiles of up to 64 KiB (kSplitTileBytes). Such tiles take at most
/// that many bytes of key rows: 32 keys of 8 f16 kv heads of 128, 16 of f32
/// ones. Against 64-key tiles (128 or 256 KiB, fetched by the hardware
/// alone), decode with 32/8 heads: f16 1.03-1.09x at 1k-16k keys and 1.5x
/// at 32k; f32 1.2x at 16k-32k keys but 0.88x at 4k-8k, in L3, where the
/// per-tile work of a 16-key tile shows. The smaller tiles without their
/// prefetch are slower than 64 (f16 at 32k keys: 0.8x).
static int64_t keyTileSize(OnlineAttentionOp op,
                           const AttentionTilingOptions &options,
                           bool tilesHoldEveryKvHead) {
  auto keyType = cast<RankedTensorType>(op.getKey().getType());
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  int64_t kvHeads = keyType.getDimSize(1);
  int64_t headDim = keyType.getDimSize(3);
  int64_t sq = queryType.getDimSize(3);
  bool decodeStep = !ShapedType::isDynamic(sq) && sq <= options.queryTile;
  if (!tilesHoldEveryKvHead || !decodeStep || ShapedType::isDynamic(kvHeads) ||
      ShapedType::isDynamic(headDim))
    return options.keyTile;
  int64_t keyBits = kvHeads * headDim * keyType.getElementTypeBitWidth();
  if (keyBits == 0) // no kv heads or an empty head: nothing to size for
    return options.keyTile;
  int64_t keys = static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(
      AttentionTilingOptions::kSplitTileBytes * 8 / keyBits)));
  return std::clamp<int64_t>(keys, std::min<int64_t>(8, options.keyTile),
                             options.keyTile);
}

/// Where the query tile `op` may be partial (its query extent is a run-time
/// value), replaces it with `scf.if (extent == fullRows)`: the then-branch a
/// copy of `op` whose operands sliced to that extent are cast to `fullRows`
/// (every full tile, with static shapes), the else-branch `op` itself (the
/// last tile of a head). Returns the copies (full first), or just `op`.
static SmallVector<OnlineAttentionOp, 2>
versionFullQueryTile(RewriterBase &rewriter, OnlineAttentionOp op,
                     int64_t fullRows) {
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  unsigned queryDim = OnlineAttentionOp::kQueryDim;
  if (!queryType.isDynamicDim(queryDim))
    return {op};
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  OpFoldResult extent =
      tensor::getMixedSize(rewriter, loc, op.getQuery(), queryDim);
  auto rows = dyn_cast<Value>(extent);
  if (!rows)
    return {op};
  // The operands the tiling sliced to the tile's rows carry `rows` as the
  // size of those dims (the query, its positions, a mask, the outputs).
  auto fullType = [&](Value operand) -> Type {
    auto slice = operand.getDefiningOp<tensor::ExtractSliceOp>();
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!slice || !type)
      return operand.getType();
    SmallVector<int64_t> shape(type.getShape());
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    unsigned dim = 0;
    for (auto [i, size] : llvm::enumerate(slice.getMixedSizes())) {
      if (dropped.test(i))
        continue;
      if (dyn_cast<Value>(size) == rows)
        shape[dim] = fullRows;
      ++dim;
    }
    return type.clone(shape);
  };
  Value isFull = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::eq, rows,
      arith::ConstantIndexOp::create(rewriter, loc, fullRows));
  auto ifOp = scf::IfOp::create(rewriter, loc, op.getResultTypes(), isFull,
                                /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(ifOp.thenBlock());
  IRMapping full;
  for (Value operand : op->getOperands())
    if (Type type = fullType(operand); type != operand.getType())
      full.map(
          operand,
          tensor::CastOp::create(rewriter, loc, type, operand).getResult());
  Operation *fullTile = rewriter.clone(*op, full);
  // Its results take the types of its outputs (destination style).
  SmallVector<Value> fullResults;
  for (auto [result, output, original] : llvm::zip_equal(
           fullTile->getResults(), op.getOutputs(), op->getResults())) {
    Value value = result;
    value.setType(fullType(output));
    if (value.getType() != original.getType())
      value = tensor::CastOp::create(rewriter, loc, original.getType(), value);
    fullResults.push_back(value);
  }
  scf::YieldOp::create(rewriter, loc, fullResults);
  rewriter.setInsertionPointToStart(ifOp.elseBlock());
  Operation *partialTile = rewriter.clone(*op);
  scf::YieldOp::create(rewriter, loc, partialTile->getResults());
  rewriter.replaceOp(op, ifOp.getResults());
  return {cast<OnlineAttentionOp>(fullTile),
          cast<OnlineAttentionOp>(partialTile)};
}

/// The key loop of the query tile (or split) `tile`, peeled where its last
/// key tile may be partial; returns the key tiles.
static FailureOr<SmallVector<OnlineAttentionOp, 2>>
tileKeys(RewriterBase &rewriter, OnlineAttentionOp tile,
         const AttentionTilingOptions &options, bool keysVisitedOnce) {
  OpFoldResult zero = rewriter.getIndexAttr(0);
  SmallVector<OpFoldResult> keySizes(OnlineAttentionOp::kNumLoops, zero);
  keySizes[OnlineAttentionOp::kKeyDim] =
      rewriter.getIndexAttr(keyTileSize(tile, options, keysVisitedOnce));
  scf::SCFTilingOptions inner;
  inner.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  inner.setTileSizes(keySizes);
  inner.setReductionDims({OnlineAttentionOp::kKeyDim});
  FailureOr<OnlineAttentionOp> keyTile = tileAndReplace(rewriter, tile, inner);
  if (failed(keyTile))
    return failure();
  SmallVector<OnlineAttentionOp, 2> keyTiles = {*keyTile};
  // A dynamic (or not dividing) key extent: every tile but the last is full,
  // its sizes fold to constants; the last runs once, after the loop.
  auto loop = dyn_cast<scf::ForOp>((*keyTile)->getParentOp());
  scf::ForOp partial;
  if (options.peelPartialKeyTile && !options.oneRowPerTile && loop &&
      succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial)))
    llvm::append_range(keyTiles,
                       partial.getBody()->getOps<OnlineAttentionOp>());
  // After peeling: a full tile's table then has static positions.
  if (keysVisitedOnce)
    for (OnlineAttentionOp keyTile : keyTiles)
      computeKeyTablesInTile(rewriter, keyTile);
  return keyTiles;
}

/// How many ranges the parallel tiling splits the keys into (0 or 1: none,
/// the queries are tiled instead). Left automatic, the keys are split where
/// query tiles alone would be too few to keep the cores busy.
static int64_t keySplits(OnlineAttentionOp op,
                         const AttentionTilingOptions &options) {
  int64_t splits = options.oneRowPerTile ? 0 : options.splitKeys;
  if (splits >= 0)
    return splits;
  // Parallel tiles of the query tiling: kv heads × query tiles, known when
  // the query length is.
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  int64_t sq = qType.getDimSize(3);
  int64_t tiles =
      ShapedType::isDynamic(sq)
          ? AttentionTilingOptions::kAutoSplits
          : qType.getDimSize(1) * llvm::divideCeil(sq, options.queryTile);
  // One query tile per kv head whose keys are rotated as they are loaded
  // (decode over an un-rotated cache): a split holds every kv head in its
  // key tiles, so each key's cos/sin row is read once for all of them,
  // not once per kv head (as many bytes as an f16 K and V row together).
  bool rotatedKeysPerHead =
      !ShapedType::isDynamic(sq) && sq <= options.queryTile && op.getKeyCos();
  return tiles < AttentionTilingOptions::kAutoSplits || rotatedKeysPerHead
             ? AttentionTilingOptions::kAutoSplits
             : 0;
}

/// Sets the tile sizes of the parallel (forall) tiling of `op` into
/// `outer`: key ranges of a split, single rows, or query tiles per kv head.
/// The latter may rotate the keys first, replacing `op`; returns the op to
/// tile.
static OnlineAttentionOp
setOuterTileSizes(RewriterBase &rewriter, OnlineAttentionOp op,
                  const AttentionTilingOptions &options, int64_t splits,
                  scf::SCFTilingOptions &outer) {
  Location loc = op.getLoc();
  OpFoldResult zero = rewriter.getIndexAttr(0);
  SmallVector<OpFoldResult> tileSizes(OnlineAttentionOp::kNumLoops, zero);
  if (splits > 1) {
    // Key ranges of ceil(Sk / splits) (at least 1) with fresh partial states.
    rewriter.setInsertionPoint(op);
    Value sk = getValueOrCreateConstantIndexOp(
        rewriter, loc, tensor::getMixedSize(rewriter, loc, op.getKey(), 2));
    Value count = arith::ConstantIndexOp::create(rewriter, loc, splits);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value chunk = arith::MaxSIOp::create(
        rewriter, loc, arith::CeilDivSIOp::create(rewriter, loc, sk, count), one);
    tileSizes[OnlineAttentionOp::kKeyDim] = getAsOpFoldResult(chunk);
    outer.setReductionTilingStrategy(
        ReductionTilingStrategy::PartialReductionOuterParallel);
    outer.setReductionDims({OnlineAttentionOp::kKeyDim});
  } else if (options.oneRowPerTile) {
    for (unsigned dim :
         {OnlineAttentionOp::kBatchDim, OnlineAttentionOp::kKvHeadDim,
          OnlineAttentionOp::kGroupDim, OnlineAttentionOp::kQueryDim})
      tileSizes[dim] = rewriter.getIndexAttr(1);
  } else {
    tileSizes[OnlineAttentionOp::kKvHeadDim] = rewriter.getIndexAttr(1);
    // A query extent known to be shorter than the tile (decode, short
    // prompts) is one whole tile, so the tiles keep static shapes.
    int64_t sq =
        cast<RankedTensorType>(op.getQuery().getType()).getDimSize(3);
    int64_t queryTile = ShapedType::isDynamic(sq)
                            ? options.queryTile
                            : std::min(options.queryTile, sq);
    tileSizes[OnlineAttentionOp::kQueryDim] = rewriter.getIndexAttr(queryTile);
    // Several query tiles (or a length known only at run time) each sweep
    // every key: rotate the keys once, not once per query tile.
    if (ShapedType::isDynamic(sq) || sq > queryTile)
      op = rotateKeysOnce(rewriter, op);
  }
  outer.setTileSizes(tileSizes);
  return op;
}

FailureOr<SmallVector<OnlineAttentionOp, 2>>
mlir::rope::tileOnlineAttention(RewriterBase &rewriter, OnlineAttentionOp op,
                                const AttentionTilingOptions &options) {
  OpBuilder::InsertionGuard guard(rewriter);
  scf::SCFTilingOptions outer;
  outer.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  int64_t splits = keySplits(op, options);
  op = setOuterTileSizes(rewriter, op, options, splits, outer);
  FailureOr<OnlineAttentionOp> tiled = tileAndReplace(rewriter, op, outer);
  if (failed(tiled))
    return failure();
  *tiled = rotateQueryOnce(rewriter, *tiled);
  // Split-K tiles hold every kv head and query row: each key is visited
  // once, and its tables can be computed where they are read. This first
  // step gives the split its own table, which is what the key tiles' slices
  // then read from and take their own tables in place of (leaving it dead).
  bool keysVisitedOnce = splits > 1;
  if (keysVisitedOnce)
    computeKeyTablesInTile(rewriter, *tiled);

  SmallVector<OnlineAttentionOp, 2> queryTiles = {*tiled};
  if (options.versionPartialQueryTile && !options.oneRowPerTile && splits <= 1)
    queryTiles = versionFullQueryTile(rewriter, *tiled, options.queryTile);
  SmallVector<OnlineAttentionOp, 2> keyTiles;
  for (OnlineAttentionOp queryTile : queryTiles) {
    FailureOr<SmallVector<OnlineAttentionOp, 2>> tiles =
        tileKeys(rewriter, queryTile, options, keysVisitedOnce);
    if (failed(tiles))
      return failure();
    llvm::append_range(keyTiles, *tiles);
  }
  return keyTiles;
}

namespace {
struct RopeTileAttentionPass
    : public rope::impl::RopeTileAttentionBase<RopeTileAttentionPass> {
  using RopeTileAttentionBase::RopeTileAttentionBase;
  void runOnOperation() override {
    if (queryTile <= 0 || keyTile <= 0 || splitKeys < -1) {
      getOperation()->emitError()
          << "rope-tile-attention: query-tile and key-tile must be positive "
             "and split-keys -1 (automatic) or more, got "
          << static_cast<int64_t>(queryTile) << ", "
          << static_cast<int64_t>(keyTile) << " and "
          << static_cast<int64_t>(splitKeys);
      return signalPassFailure();
    }
    SmallVector<OnlineAttentionOp> ops;
    getOperation()->walk([&](OnlineAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    AttentionTilingOptions options{queryTile, keyTile, splitKeys};
    options.oneRowPerTile = rows;
    for (OnlineAttentionOp op : ops)
      if (failed(tileOnlineAttention(rewriter, op, options)))
        return signalPassFailure();
  }
};
} // namespace
