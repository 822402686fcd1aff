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
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"
#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEPREFETCHSTREAMEDTILES
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

/// Tiles smaller than this (a tile's positions) are cheap to fetch when read.
static constexpr int64_t kMinTileBytes = 4096;

/// Tiles larger than this are left to the hardware's stream prefetchers:
/// a decode split's K or V tile of 64 keys of every kv head (128 KiB in
/// f16) ran slower prefetched. Decode's split tiles are sized to this
/// instead (AttentionTilingOptions::kSplitTileBytes: 32 f16 keys of 8 kv
/// heads), and prefetched they run faster than without, where the hardware
/// alone loses the many streams of their kv heads (benchmarks/README.md).
static constexpr int64_t kMaxTileBytes = 64 * 1024;

/// Lines a reduction step may prefetch: more would crowd its loads.
static constexpr int64_t kMaxLinesPerStep = 8;

static constexpr int64_t kLineBytes = 64;

namespace {
/// Tiles of a buffer defined outside a loop, one per iteration: a box of
/// the buffer whose offset along `dim` is `start` over `startOperands` (its
/// dims; the loop's induction variable plus loop-invariant values), and
/// whose offsets along the other dims are loop-invariant (or 0 where the box
/// spans the whole dim).
struct Stream {
  Value buffer;
  unsigned dim;
  AffineExpr start;
  SmallVector<OpFoldResult> startOperands;
  SmallVector<OpFoldResult> offsets;
  SmallVector<int64_t> sizes;
  /// Position of the first access in the loop body (pre-order).
  int64_t order;

  bool sameTiles(const Stream &other) const {
    return buffer == other.buffer && dim == other.dim && sizes == other.sizes &&
           start == other.start &&
           isEqualConstantIntOrValueArray(startOperands, other.startOperands) &&
           llvm::all_of(llvm::seq<unsigned>(0, sizes.size()), [&](unsigned d) {
             return d == dim ||
                    isEqualConstantIntOrValue(offsets[d], other.offsets[d]);
           });
  }
};

/// A register block's loop nest inside the streaming loop: its loops, from
/// the outermost down to the reduction loop that carries the accumulators.
struct RegisterBlockNest {
  SmallVector<scf::ForOp> loops;
  /// Position of the nest's last op in the loop body (pre-order).
  int64_t end;
};
} // namespace

/// The loop's static trip count where it runs at least once from a constant
/// lower bound by a constant step (what a nest's iteration number is built
/// from).
static std::optional<int64_t> tripCount(scf::ForOp loop) {
  std::optional<APInt> count = loop.getStaticTripCount();
  if (!count || count->isZero() || !getConstantIntValue(loop.getLowerBound()) ||
      !getConstantIntValue(loop.getStep()))
    return std::nullopt;
  return count->getSExtValue();
}

/// Where the tile that `index` reads in starts, if `index` follows `loop`:
/// `index` is the induction variable, or one addition (arith.addi,
/// affine.apply) of it and loop-invariant values and offsets inside the
/// tile (values defined in the loop, taken as 0). Sets `stream.start` and
/// `stream.startOperands`.
static bool setTileStart(Value index, scf::ForOp loop, Stream &stream) {
  MLIRContext *ctx = loop.getContext();
  Value iv = loop.getInductionVar();
  Builder b(ctx);
  auto operand = [&](Value v) -> OpFoldResult {
    return v == iv || loop.isDefinedOutsideOfLoop(v) ? OpFoldResult(v)
                                                     : b.getIndexAttr(0);
  };
  stream.startOperands.clear();
  if (index == iv) {
    stream.start = getAffineDimExpr(0, ctx);
    stream.startOperands.push_back(iv);
    return true;
  }
  Operation *def = index.getDefiningOp();
  if (auto add = dyn_cast_if_present<arith::AddIOp>(def)) {
    if (add.getLhs() != iv && add.getRhs() != iv)
      return false;
    stream.start = getAffineDimExpr(0, ctx) + getAffineDimExpr(1, ctx);
    stream.startOperands = {operand(add.getLhs()), operand(add.getRhs())};
    return true;
  }
  auto apply = dyn_cast_if_present<affine::AffineApplyOp>(def);
  if (!apply || !llvm::is_contained(apply.getMapOperands(), iv))
    return false;
  // The map's dims and symbols become dims 0 .. n - 1.
  AffineMap map = apply.getAffineMap();
  SmallVector<AffineExpr> symbols;
  for (unsigned i = 0; i < map.getNumSymbols(); ++i)
    symbols.push_back(getAffineDimExpr(map.getNumDims() + i, ctx));
  stream.start = map.getResult(0).replaceSymbols(symbols);
  for (Value v : apply.getMapOperands())
    stream.startOperands.push_back(operand(v));
  return true;
}

/// Bytes of one tile of `stream`.
static int64_t tileBytes(const Stream &stream) {
  auto type = cast<MemRefType>(stream.buffer.getType());
  // Saturated: a tile of absurd static sizes is simply not prefetched.
  uint64_t bytes = type.getElementTypeBitWidth() / 8;
  for (int64_t size : stream.sizes)
    bytes = llvm::SaturatingMultiply(bytes, static_cast<uint64_t>(size));
  return static_cast<int64_t>(
      std::min<uint64_t>(bytes, std::numeric_limits<int64_t>::max()));
}

/// Whether `buffer` can hold a stream: a memref of whole bytes whose last
/// dim is static and contiguous (lines run along it).
static bool isStreamable(Value buffer, scf::ForOp loop) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || type.getRank() == 0 || !loop.isDefinedOutsideOfLoop(buffer) ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0 ||
      type.isDynamicDim(type.getRank() - 1))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The stream that `read` (in `loop`) belongs to: its index along one dim
/// follows the loop (the tile is `step` long there, from the induction
/// variable), the last dim is read whole, and every other index is
/// loop-invariant (one element) or varies inside the loop (the whole dim,
/// which must be static).
static std::optional<Stream> streamOfRead(scf::ForOp loop, int64_t step,
                                          vector::TransferReadOp read) {
  Value buffer = read.getBase();
  if (!isStreamable(buffer, loop))
    return std::nullopt;
  auto type = cast<MemRefType>(buffer.getType());
  Value iv = loop.getInductionVar();
  Builder b(loop.getContext());
  Stream stream{buffer, 0, AffineExpr(), {}, {}, {}, 0};
  std::optional<unsigned> dim;
  for (auto [d, index] : llvm::enumerate(read.getIndices())) {
    bool last = d + 1 == static_cast<size_t>(type.getRank());
    if (!dim && setTileStart(index, loop, stream)) {
      dim = d;
      stream.offsets.push_back(iv);
      stream.sizes.push_back(step);
    } else if (!last && loop.isDefinedOutsideOfLoop(index)) {
      stream.offsets.push_back(index);
      stream.sizes.push_back(1);
    } else if (!type.isDynamicDim(d)) {
      stream.offsets.push_back(b.getIndexAttr(0));
      stream.sizes.push_back(type.getDimSize(d));
    } else {
      return std::nullopt;
    }
  }
  if (!dim)
    return std::nullopt;
  stream.dim = *dim;
  return stream;
}

/// The stream of `subview` (in `loop`): a static box of unit strides whose
/// offset along one dim follows the loop, the others loop-invariant.
static std::optional<Stream> streamOfSubView(scf::ForOp loop,
                                             memref::SubViewOp subview) {
  Value buffer = subview.getSource();
  if (!isStreamable(buffer, loop) || !subview.hasUnitStride() ||
      subview.getSourceType().getRank() !=
          static_cast<int64_t>(subview.getMixedSizes().size()))
    return std::nullopt;
  Stream stream{buffer, 0, AffineExpr(), {}, subview.getMixedOffsets(), {}, 0};
  for (OpFoldResult size : subview.getMixedSizes()) {
    std::optional<int64_t> s = getConstantIntValue(size);
    if (!s)
      return std::nullopt;
    stream.sizes.push_back(*s);
  }
  for (auto [d, offset] : llvm::enumerate(stream.offsets)) {
    auto value = dyn_cast<Value>(offset);
    if (!value || loop.isDefinedOutsideOfLoop(value))
      continue;
    if (stream.start || !setTileStart(value, loop, stream))
      return std::nullopt;
    stream.dim = d;
  }
  if (!stream.start)
    return std::nullopt;
  return stream;
}

/// Whether `loop` is a register block's reduction loop: it carries one
/// vector of accumulators (a block of rows, or of rows × lanes) that FMAs
/// update.
static bool isRegisterBlockReduction(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1)
    return false;
  auto type = dyn_cast<VectorType>(loop.getRegionIterArgs()[0].getType());
  return type && type.getRank() >= 2 &&
         llvm::any_of(loop.getBody()->getOperations(),
                      [](Operation &op) { return isa<vector::FMAOp>(op); });
}

/// The cache lines of a tile of `cells` and the iterations of `nest`; none
/// when either product passes int64_t (absurd static sizes, not prefetched).
static std::optional<std::pair<int64_t, int64_t>>
linesAndIterations(ArrayRef<int64_t> cells, const RegisterBlockNest &nest) {
  int64_t lines = 1, iterations = 1;
  for (int64_t c : cells)
    if (llvm::MulOverflow(lines, c, lines))
      return std::nullopt;
  for (scf::ForOp l : nest.loops)
    if (llvm::MulOverflow(iterations, *tripCount(l), iterations))
      return std::nullopt;
  return std::make_pair(lines, iterations);
}

/// Prefetches (to L2), from the reduction loop of `nest`, the tile of
/// `stream` that `loop` reads `ahead` iterations' worth of elements later
/// (0: the one of this iteration): its lines spread over the nest's
/// iterations, the same number in each.
static void prefetchFrom(OpBuilder &b, scf::ForOp loop,
                         const RegisterBlockNest &nest, const Stream &stream,
                         int64_t ahead) {
  auto type = cast<MemRefType>(stream.buffer.getType());
  unsigned rank = type.getRank();
  // The tile as a row-major array of cache lines: its last dim in lines.
  int64_t lineElements = kLineBytes * 8 / type.getElementTypeBitWidth();
  SmallVector<int64_t> cells(stream.sizes);
  cells.back() = llvm::divideCeil(cells.back(), lineElements);
  std::optional<std::pair<int64_t, int64_t>> counts =
      linesAndIterations(cells, nest);
  if (!counts)
    return;
  auto [lines, iterations] = *counts;
  int64_t perStep = llvm::divideCeil(lines, iterations);
  if (perStep > kMaxLinesPerStep)
    return;

  scf::ForOp reduction = nest.loops.back();
  Location loc = reduction.getLoc();
  MLIRContext *ctx = b.getContext();
  b.setInsertionPointToStart(reduction.getBody());
  // The nest's iteration number, 0 .. iterations - 1, over its ivs (dims
  // 0 .. n - 1).
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
    // The line's position in the tile, dim by dim (the last in lines).
    AffineExpr line = id * perStep + j;
    SmallVector<AffineExpr> position(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      position[d] = line % cells[d];
      line = line.floorDiv(cells[d]);
    }
    position.back() = position.back() * lineElements;
    SmallVector<Value> indices;
    for (unsigned d = 0; d < rank; ++d) {
      // offset + position, dims 0 .. n - 1 the nest's ivs, from n the
      // offset's operands.
      SmallVector<OpFoldResult> operands(ivs);
      AffineExpr offset = getAffineDimExpr(n, ctx);
      if (d == stream.dim) {
        offset = stream.start.shiftDims(stream.startOperands.size(), n) + ahead;
        llvm::append_range(operands, stream.startOperands);
      } else {
        operands.push_back(stream.offsets[d]);
      }
      Value index = getValueOrCreateConstantIndexOp(
          b, loc,
          affine::makeComposedFoldedAffineApply(
              b, loc, AffineMap::get(operands.size(), 0, offset + position[d]),
              operands));
      if (d == stream.dim)
        index = arith::MinSIOp::create(b, loc, index, lastRow);
      indices.push_back(index);
    }
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
  auto addStream = [&](std::optional<Stream> stream, Operation *op) {
    if (!stream || tileBytes(*stream) < kMinTileBytes ||
        tileBytes(*stream) > kMaxTileBytes ||
        llvm::any_of(streams,
                     [&](const Stream &s) { return s.sameTiles(*stream); }))
      return;
    stream->order = order[op];
    streams.push_back(*stream);
  };
  loop.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto read = dyn_cast<vector::TransferReadOp>(op))
      return addStream(streamOfRead(loop, step, read), op);
    if (auto subview = dyn_cast<memref::SubViewOp>(op))
      return addStream(streamOfSubView(loop, subview), op);
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
