//===- PrefetchStreamedTiles.cpp - next tiles fetched during the FMAs -----===//
//
// A loop that reads one tile of a buffer per iteration (the attention's key
// loop over K and V) otherwise waits on memory at the start of each tile:
// the first register blocks that touch a tile stall on its lines while
// later ones find them in cache. Here the register blocks of an iteration
// prefetch the tile that the loop reads next, a line or two per reduction
// step, so that the fetch overlaps their FMAs.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEPREFETCHSTREAMEDTILES
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

/// Tiles smaller than this (a tile's positions) are cheap to fetch when read.
static constexpr int64_t kMinTileBytes = 4096;

/// Lines a reduction step may prefetch: more would crowd its loads.
static constexpr int64_t kMaxLinesPerStep = 8;

static constexpr int64_t kLineBytes = 64;

namespace {
/// Tiles of a buffer defined outside a loop, one per iteration: the reads'
/// index along `dim` is the loop's induction variable plus an offset inside
/// the tile, the indices before `dim` are loop-invariant, and `dim` is the
/// buffer's last dim or the one before a contiguous last dim (one row per
/// index, read whole).
struct Stream {
  Value buffer;
  unsigned dim;
  SmallVector<Value> leading;
  /// Position of the first read in the loop body (pre-order).
  int64_t order;
};

/// A register block's loop nest inside the streaming loop: its loops, from
/// the outermost down to the reduction loop that carries the accumulators.
struct RegisterBlockNest {
  SmallVector<scf::ForOp> loops;
  /// Position of the nest's last op in the loop body (pre-order).
  int64_t end;
};
} // namespace

static std::optional<int64_t> tripCount(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()),
                         ub = getConstantIntValue(loop.getUpperBound()),
                         step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *step <= 0 || *ub <= *lb)
    return std::nullopt;
  return llvm::divideCeil(*ub - *lb, *step);
}

/// Whether `index` is `iv` or one addition (affine.apply, arith.addi) away.
static bool isInductionPlusOffset(Value index, Value iv) {
  if (index == iv)
    return true;
  Operation *def = index.getDefiningOp();
  if (auto apply = dyn_cast_if_present<affine::AffineApplyOp>(def))
    return llvm::is_contained(apply.getMapOperands(), iv);
  if (auto add = dyn_cast_if_present<arith::AddIOp>(def))
    return add.getLhs() == iv || add.getRhs() == iv;
  return false;
}

static bool isDefinedOutside(Value value, scf::ForOp loop) {
  return !loop->isAncestor(value.getParentRegion()->getParentOp());
}

/// Elements of one row of `stream`'s buffer (1 without a last dim).
static int64_t rowElements(const Stream &stream) {
  auto type = cast<MemRefType>(stream.buffer.getType());
  return stream.dim + 1 < type.getRank() ? type.getShape().back() : 1;
}

/// Bytes of one tile of `stream`, `step` rows.
static int64_t tileBytes(const Stream &stream, int64_t step) {
  auto type = cast<MemRefType>(stream.buffer.getType());
  return step * rowElements(stream) * type.getElementTypeBitWidth() / 8;
}

/// The stream that `read` (in `loop`) belongs to, if it reads a tile per
/// iteration.
static std::optional<Stream> streamOf(scf::ForOp loop,
                                      vector::TransferReadOp read) {
  Value buffer = read.getBase();
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !isDefinedOutside(buffer, loop) ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  Value iv = loop.getInductionVar();
  std::optional<unsigned> dim;
  for (auto [i, index] : llvm::enumerate(read.getIndices())) {
    if (!isInductionPlusOffset(index, iv))
      continue;
    if (dim)
      return std::nullopt;
    dim = i;
  }
  int64_t rank = type.getRank();
  if (!dim || *dim + 2 < rank)
    return std::nullopt;
  Stream stream{buffer, *dim, {}, 0};
  for (Value index : read.getIndices().take_front(*dim)) {
    if (!isDefinedOutside(index, loop))
      return std::nullopt;
    stream.leading.push_back(index);
  }
  if (*dim + 1 < rank) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (type.isDynamicDim(rank - 1) ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1)
      return std::nullopt;
  }
  return stream;
}

/// Whether `loop` is a register block's reduction loop: it carries one 2-D
/// vector of accumulators that FMAs update.
static bool isRegisterBlockReduction(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1)
    return false;
  auto type = dyn_cast<VectorType>(loop.getRegionIterArgs()[0].getType());
  return type && type.getRank() == 2 &&
         llvm::any_of(loop.getBody()->getOperations(),
                      [](Operation &op) { return isa<vector::FMAOp>(op); });
}

/// Prefetches (to L2), from the reduction loop of `nest`, the tile of
/// `stream` that `loop` reads at iteration iv + `ahead`: its lines spread
/// over the nest's iterations, the same number in each.
static void prefetchFrom(OpBuilder &b, scf::ForOp loop,
                         const RegisterBlockNest &nest, const Stream &stream,
                         int64_t ahead) {
  auto type = cast<MemRefType>(stream.buffer.getType());
  int64_t step = *getConstantIntValue(loop.getStep());
  int64_t lineElements = kLineBytes * 8 / type.getElementTypeBitWidth();
  int64_t linesPerRow = llvm::divideCeil(rowElements(stream), lineElements);
  int64_t iterations = 1;
  for (scf::ForOp l : nest.loops)
    iterations *= *tripCount(l);
  int64_t perStep = llvm::divideCeil(step * linesPerRow, iterations);
  if (perStep > kMaxLinesPerStep)
    return;

  scf::ForOp reduction = nest.loops.back();
  Location loc = reduction.getLoc();
  MLIRContext *ctx = b.getContext();
  b.setInsertionPointToStart(reduction.getBody());
  // The nest's iteration number, 0 .. iterations - 1, over its ivs (dims
  // 0 .. n - 1); dim n is the streaming loop's iv.
  AffineExpr id = getAffineConstantExpr(0, ctx);
  SmallVector<OpFoldResult> ivs;
  int64_t stride = iterations;
  for (auto [i, l] : llvm::enumerate(nest.loops)) {
    scf::ForOp nestLoop = l;
    stride /= *tripCount(nestLoop);
    int64_t lb = *getConstantIntValue(nestLoop.getLowerBound());
    int64_t s = *getConstantIntValue(nestLoop.getStep());
    id = id + (getAffineDimExpr(i, ctx) - lb).floorDiv(s) * stride;
    ivs.push_back(nestLoop.getInductionVar());
  }
  unsigned n = nest.loops.size();
  ivs.push_back(loop.getInductionVar());
  AffineExpr tileStart = getAffineDimExpr(n, ctx) + ahead;
  // The last tile's successor lies past the buffer: its rows are clamped.
  Value lastRow;
  if (type.isDynamicDim(stream.dim))
    lastRow = arith::SubIOp::create(
        b, loc, memref::DimOp::create(b, loc, stream.buffer, stream.dim),
        arith::ConstantIndexOp::create(b, loc, 1));
  else
    lastRow =
        arith::ConstantIndexOp::create(b, loc, type.getDimSize(stream.dim) - 1);
  for (int64_t j = 0; j < perStep; ++j) {
    AffineExpr line = id * perStep + j;
    Value row = affine::makeComposedAffineApply(
        b, loc,
        AffineMap::get(n + 1, 0, tileStart + line.floorDiv(linesPerRow)), ivs);
    SmallVector<Value> indices(stream.leading);
    indices.push_back(arith::MinSIOp::create(b, loc, row, lastRow));
    if (stream.dim + 1 < type.getRank())
      indices.push_back(getValueOrCreateConstantIndexOp(
          b, loc,
          affine::makeComposedFoldedAffineApply(
              b, loc,
              AffineMap::get(n + 1, 0, (line % linesPerRow) * lineElements),
              ivs)));
    memref::PrefetchOp::create(b, loc, stream.buffer, indices,
                               /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
  }
}

/// The streams of `loop` and the register-block nests in its body.
static void collect(scf::ForOp loop, int64_t step,
                    SmallVectorImpl<Stream> &streams,
                    SmallVectorImpl<RegisterBlockNest> &nests) {
  DenseMap<Operation *, int64_t> order;
  loop.getBody()->walk<WalkOrder::PreOrder>(
      [&](Operation *op) { order[op] = order.size(); });
  loop.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
      std::optional<Stream> stream = streamOf(loop, read);
      if (!stream || tileBytes(*stream, step) < kMinTileBytes)
        return;
      if (llvm::none_of(streams, [&](const Stream &s) {
            return s.buffer == stream->buffer && s.dim == stream->dim &&
                   s.leading == stream->leading;
          })) {
        stream->order = order[op];
        streams.push_back(*stream);
      }
      return;
    }
    auto reduction = dyn_cast<scf::ForOp>(op);
    if (!reduction || !isRegisterBlockReduction(reduction))
      return;
    RegisterBlockNest nest;
    for (Operation *p = reduction; p != loop; p = p->getParentOp())
      if (auto l = dyn_cast<scf::ForOp>(p))
        nest.loops.insert(nest.loops.begin(), l);
    if (llvm::any_of(nest.loops, [](scf::ForOp l) { return !tripCount(l); }))
      return;
    nest.end = order[nest.loops.front()];
    nest.loops.front()->walk([&](Operation *nested) {
      nest.end = std::max(nest.end, order[nested]);
    });
    nests.push_back(nest);
  });
}

/// Adds the prefetches of `loop` to the nests that are not in `served` yet
/// (an inner streaming loop's), and adds them to it.
static void prefetchStreams(scf::ForOp loop,
                            llvm::DenseSet<Operation *> &served) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!step || *step <= 0)
    return;
  SmallVector<Stream> streams;
  SmallVector<RegisterBlockNest> nests;
  collect(loop, *step, streams, nests);
  // Only a loop around two or more nests (the attention's Q·Kᵀ and P·V):
  // the outer loops of a single nest stream the operands that its own
  // reduction reads next.
  llvm::SmallPtrSet<Operation *, 4> outermost;
  for (const RegisterBlockNest &nest : nests)
    outermost.insert(nest.loops.front());
  if (streams.empty() || outermost.size() < 2)
    return;
  OpBuilder b(loop.getContext());
  for (const RegisterBlockNest &nest : nests) {
    if (!served.insert(nest.loops.back()).second)
      continue;
    // The first stream read after the nest in this iteration, else the
    // first one of the next iteration.
    const Stream *next = llvm::find_if(
        streams, [&](const Stream &s) { return s.order > nest.end; });
    int64_t ahead = 0;
    if (next == streams.end()) {
      next = &streams.front();
      ahead = *step;
    }
    prefetchFrom(b, loop, nest, *next, ahead);
  }
}

namespace {
struct RopePrefetchStreamedTilesPass
    : public rope::impl::RopePrefetchStreamedTilesBase<
          RopePrefetchStreamedTilesPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (!isRegisterBlockReduction(loop))
        loops.push_back(loop);
    });
    // Inner loops first (post-order): a nest prefetches for its innermost
    // streaming loop.
    llvm::DenseSet<Operation *> served;
    for (scf::ForOp loop : loops)
      prefetchStreams(loop, served);
  }
};
} // namespace
