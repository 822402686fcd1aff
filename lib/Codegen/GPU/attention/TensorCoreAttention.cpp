//===- TensorCoreAttention.cpp - attention on tensor cores ----------------===//
//
// rope.online_attention as one FlashAttention-2-style kernel (see the
// header). Per block: 4 warps, 128 query rows (64 for decode and f32), its
// query head and batch; per warp two groups of 16 rows (one), each spread by
// the mma.sync m16n8k16 fragments over the lanes: lane = 4·group + quad
// holds the group's rows `group` and `group + 8`, and in each 8-wide column
// tile the columns 2·quad and 2·quad + 1. The key loop runs over 64-key
// tiles in the order
//
//   wait K(j); barrier; issue V(j); S = Q·K(j)ᵀ; softmax step (O *= c);
//   wait V(j); barrier; issue K(j+1); O += P·V(j)
//
// so each tile's copy overlaps the other operand's math (the two shared
// buffers double-buffer each other, as in FlashAttention-2).
//
// Shared tiles are [64][Dp] (Dp: D rounded up to a power of two) with the
// 16-byte chunk c of row r stored at chunk c ^ (r mod min(8, Dp/8)): the
// eight rows one ldmatrix phase reads then fall on distinct banks.
//
//===----------------------------------------------------------------------===//

#include "attention/TensorCoreAttentionKernel.h"
#include "common/KernelOperands.h"
#include "common/TensorCoreUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::nvidia::detail;
using mlir::rope::nvidia::allocLike;
using mlir::rope::nvidia::isZeroFill;
using mlir::rope::nvidia::readOnlyBuffer;

namespace {

//===----------------------------------------------------------------------===//
// What the kernel accepts
//===----------------------------------------------------------------------===//

std::string whyNotElements(Type q, Type k, Type v) {
  if (q != k || q != v || !(q.isF16() || q.isBF16() || q.isF32()))
    return "Q, K and V are not all f16, all bf16 or all f32";
  return "";
}

std::string whyNotHeadDim(int64_t d, int64_t dv) {
  if (ShapedType::isDynamic(d) || d != dv)
    return "the head dims of Q and V are not one static D";
  if (d % 16 != 0 || d < 16 || d > Tiles::kMaxHeadDim)
    return "D is not a multiple of 16 in [16, " +
           std::to_string(Tiles::kMaxHeadDim) + "]";
  return "";
}

/// Rotated dims must cover whole 16-byte chunks, and (half layout) a pair's
/// members must sit in the same lane's fragment registers.
std::string whyNotRotation(RotaryRange dims) {
  if (dims.offset % 8 != 0)
    return "the rotated dims do not start on an 8-element chunk";
  if (dims.layout == RotaryLayout::half ? dims.dims % 32 != 0
                                        : dims.dims % 16 != 0)
    return "the rotary dims are not a multiple of 32 (half) or 16 "
           "(interleaved)";
  return "";
}

} // namespace


void AttentionKernel::computeIds() {
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  queryTile = blockIds.x;
  batch = blockIds.z;
  if (cfg.splitKeys) {
    batch = arith::DivUIOp::create(b, loc, blockIds.z, buf.splits);
    split = arith::RemUIOp::create(b, loc, blockIds.z, buf.splits);
  }
  int64_t groups = cast<MemRefType>(buf.q.getType()).getDimSize(2);
  Value g = ShapedType::isDynamic(groups)
                ? memref::DimOp::create(b, loc, buf.q, 2).getResult()
                : idx(groups);
  kvHead = arith::DivUIOp::create(b, loc, blockIds.y, g);
  group = arith::RemUIOp::create(b, loc, blockIds.y, g);
  tid = launch.getThreadIds().x;
  warp = div(tid, 32);
  lane = rem(tid, 32);
  laneGroup = div(lane, 4);
  quad = rem(lane, 4);
  sq = memref::DimOp::create(b, loc, buf.q, 3);
  sk = memref::DimOp::create(b, loc, buf.k, 2);
  querySq = cfg.packedGroups ? div(sq, cfg.packedGroups) : sq;
  qSmem = launch.getWorkgroupAttributions()[0];
  kSmem = launch.getWorkgroupAttributions()[1];
  vSmem = launch.getWorkgroupAttributions()[2];
  Value first = mul(queryTile, cfg.queryRows());
  rows.clear();
  for (int64_t r = 0; r < cfg.laneRows(); ++r)
    rows.push_back(add(first, tileRow(r)));
  if (buf.slopes)
    slope = toF32(memref::LoadOp::create(b, loc, buf.slopes,
                                         ValueRange{kvHead, group}));
}

std::pair<Value, Value> AttentionKernel::blockQueries() {
  if (cfg.packedGroups)
    return {idx(0), lastRow(querySq)};
  Value first = mul(queryTile, cfg.queryRows());
  return {first, minIdx(add(first, cfg.queryRows() - 1), lastRow(sq))};
}

Value AttentionKernel::tileRow(int64_t r) {
  int64_t groupRows = Tiles::kRowsPerGroup;
  return add(mul(warp, groupRows * cfg.rowGroups),
             add(laneGroup, groupRows * (r / 2) + 8 * (r % 2)));
}

//===----------------------------------------------------------------------===//
// The key loop
//===----------------------------------------------------------------------===//

/// The key tiles the block's queries can see. With the default positions
/// (query i at i + Sk − Sq, key j at j) causal ends the range after the
/// block's last query and a window starts it at its first query's window;
/// otherwise every tile is visited and masked.
std::pair<Value, Value> AttentionKernel::keyTileRange() {
  auto [begin, end] = visibleKeyTiles();
  if (!cfg.splitKeys)
    return {begin, end};
  // Split s takes tiles [s·n, (s + 1)·n), n = ceil(tiles / splits).
  Value tiles = div(add(sk, Tiles::kKeys - 1), Tiles::kKeys);
  Value per = arith::CeilDivUIOp::create(b, loc, tiles, buf.splits);
  Value first = arith::MulIOp::create(b, loc, split, per);
  return {maxIdx(begin, first), minIdx(end, add(first, per))};
}

std::pair<Value, Value> AttentionKernel::visibleKeyTiles() {
  Value tiles = div(add(sk, Tiles::kKeys - 1), Tiles::kKeys);
  if (!cfg.affinePositions || !(cfg.rules.causal || cfg.rules.window))
    return {idx(0), tiles};
  Value offset = arith::SubIOp::create(b, loc, sk, querySq);
  auto [firstQuery, lastQuery] = blockQueries();
  Value first = add(firstQuery, offset);
  Value last = add(lastQuery, offset);
  Value end = tiles;
  if (cfg.rules.causal) {
    // Keys 0..last: ceil((last + 1) / 64) tiles (none when last < 0).
    Value count = maxIdx(add(last, 1), idx(0));
    end = minIdx(tiles, div(add(count, Tiles::kKeys - 1), Tiles::kKeys));
  }
  Value begin = idx(0);
  if (cfg.rules.window) {
    Value earliest = maxIdx(add(first, 1 - *cfg.rules.window), idx(0));
    begin = minIdx(div(earliest, Tiles::kKeys), end);
  }
  return {begin, end};
}

/// The tiles of [begin, end) that no rule touches, [headEnd, tailBegin):
/// every key inside Sk and visible from every query of the block. With the
/// default positions, causal hides keys after the block's first query
/// (tiles from there on are ruled), a window hides keys at or before its
/// last query − W (tiles up to there are ruled).
std::pair<Value, Value> AttentionKernel::plainTiles(Value begin, Value end) {
  Value tail = minIdx(end, div(sk, Tiles::kKeys));
  Value offset = arith::SubIOp::create(b, loc, sk, querySq);
  auto [firstQuery, lastQuery] = blockQueries();
  Value first = add(firstQuery, offset);
  if (cfg.rules.causal)
    tail = minIdx(tail, div(maxIdx(add(first, 1), idx(0)), Tiles::kKeys));
  tail = maxIdx(tail, begin);
  Value head = begin;
  if (cfg.rules.window) {
    Value last = cfg.packedGroups ? add(lastQuery, offset)
                                  : add(first, cfg.queryRows() - 1);
    Value edge = add(last, Tiles::kKeys - *cfg.rules.window);
    head = minIdx(maxIdx(div(maxIdx(edge, idx(0)), Tiles::kKeys), begin), tail);
  }
  return {head, tail};
}

/// The loop's starting state: O = 0, then the max (log2 units) and the
/// lane's partial sum of each of its rows from the op's initial state. Only
/// quad 0 starts from the initial sum, so the quad's partial sums add up to
/// it.
SmallVector<Value> AttentionKernel::initialState() {
  SmallVector<Value> init(cfg.rowGroups * cfg.outputsPerGroup(), f32(0.0));
  int64_t n = cfg.laneRows();
  if (cfg.splitKeys) {
    // Each split starts empty; the merge adds the op's own initial state.
    init.append(n, f32(-INFINITY));
    init.append(n, f32(0.0));
    return init;
  }
  Value isFirst = cmp(arith::CmpIPredicate::eq, quad, idx(0));
  for (Value row : rows) {
    SmallVector<Value> at{batch, kvHead, group, minIdx(row, lastRow(sq))};
    Value m = memref::LoadOp::create(b, loc, buf.mInit, at);
    init.push_back(arith::MulFOp::create(b, loc, m, f32(kLog2E)));
  }
  for (Value row : rows) {
    SmallVector<Value> at{batch, kvHead, group, minIdx(row, lastRow(sq))};
    Value l = memref::LoadOp::create(b, loc, buf.lInit, at);
    init.push_back(arith::SelectOp::create(b, loc, isFirst, l, f32(0.0)));
  }
  return init;
}

/// One online-softmax step for each of the lane's rows (row group g, lane
/// row r at 2g + r): s becomes P (unrounded), O is rescaled; returns the new
/// maxes and partial sums.
SmallVector<Value> AttentionKernel::softmaxStep(Accumulators &s, Accumulators &o,
                                                ValueRange maxes, ValueRange sums) {
  Value negInf = f32(-INFINITY);
  SmallVector<Value> newMaxes, newSums;
  for (int64_t lr = 0; lr < cfg.laneRows(); ++lr) {
    int64_t r = lr % 2;
    int64_t sBase = (lr / 2) * cfg.scoresPerGroup();
    int64_t oBase = (lr / 2) * cfg.outputsPerGroup();
    Value mx = maxes[lr];
    for (int64_t n = 0; n < Tiles::kKeys / 8; ++n)
      for (int64_t e = 0; e < 2; ++e)
        mx =
            arith::MaximumFOp::create(b, loc, mx, s[sBase + 4 * n + 2 * r + e]);
    Value mNew = quadReduce(mx, /*isMax=*/true);
    // While a row has seen no visible key its max is −inf; exp2 then
    // subtracts 0 (every p is 0) instead of forming −inf − (−inf).
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew,
                                       negInf);
    Value base = arith::SelectOp::create(b, loc, none, f32(0.0), mNew);
    Value correction = math::Exp2Op::create(
        b, loc, arith::SubFOp::create(b, loc, maxes[lr], base));
    Value sum = arith::MulFOp::create(b, loc, sums[lr], correction);
    for (int64_t n = 0; n < Tiles::kKeys / 8; ++n)
      for (int64_t e = 0; e < 2; ++e) {
        Value &x = s[sBase + 4 * n + 2 * r + e];
        x = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, x, base));
        sum = arith::AddFOp::create(b, loc, sum, x);
      }
    for (int64_t n = 0; n < cfg.headDim / 8; ++n)
      for (int64_t e = 0; e < 2; ++e) {
        Value &x = o[oBase + 4 * n + 2 * r + e];
        x = arith::MulFOp::create(b, loc, x, correction);
      }
    newMaxes.push_back(mNew);
    newSums.push_back(sum);
  }
  newMaxes.append(newSums.begin(), newSums.end());
  return newMaxes;
}

/// One loop over key tiles [lo, hi) of the block's range [.., end), from
/// `state`; `ruled` tiles go through the op's rules element by element.
SmallVector<Value> AttentionKernel::keyLoop(Value lo, Value hi, Value end,
                                            bool ruled, ValueRange state) {
  int64_t numO = cfg.rowGroups * cfg.outputsPerGroup(),
          numRows = cfg.laneRows();
  auto loop = scf::ForOp::create(b, loc, lo, hi, idx(1), state);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value tile = loop.getInductionVar();
  ValueRange carried = loop.getRegionIterArgs();
  waitAll();
  barrier();
  stageValueTile(tile);
  Accumulators s = logits(computeScores(), tile, ruled);
  Accumulators o(carried.take_front(numO));
  SmallVector<Value> rowState =
      softmaxStep(s, o, carried.slice(numO, numRows),
                  carried.slice(numO + numRows, numRows));
  waitAll();
  barrier();
  Value next = add(tile, 1);
  auto prefetchNextKeys = [&] {
    auto prefetch = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::slt, next, end), false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(prefetch.thenBlock());
    stageKeyTile(next);
  };
  // An f32 K tile rotated on its way holds its loads, tables and rotated
  // values in registers; next to f32 P (32 registers, not 16 packed) and
  // O at D = 128 they would not fit, so it is staged once P is consumed.
  bool stageAfterValues = cfg.rotateKey && !cfg.tensorCores;
  if (!stageAfterValues)
    prefetchNextKeys();
  accumulateValues(s, o);
  if (stageAfterValues)
    prefetchNextKeys();
  o.append(rowState.begin(), rowState.end());
  scf::YieldOp::create(b, loc, o);
  return SmallVector<Value>(loop.getResults());
}

/// The block's key tiles in three loops, as FlashAttention-2 separates its
/// masked steps: ruled tiles before the plain ones (a window's edge), the
/// plain ones, ruled ones after (the causal diagonal, the end of the keys).
void AttentionKernel::buildKeyLoop() {
  auto [begin, end] = keyTileRange();
  auto prologue = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::slt, begin, end), false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(prologue.thenBlock());
    stageKeyTile(begin);
  }
  SmallVector<Value> state = initialState();
  if (cfg.everyElement) {
    state = keyLoop(begin, end, end, /*ruled=*/true, state);
  } else {
    auto [head, tail] = plainTiles(begin, end);
    if (cfg.rules.window)
      state = keyLoop(begin, head, end, /*ruled=*/true, state);
    state = keyLoop(head, tail, end, /*ruled=*/false, state);
    state = keyLoop(tail, end, end, /*ruled=*/true, state);
  }
  int64_t numO = cfg.rowGroups * cfg.outputsPerGroup(),
          numRows = cfg.laneRows();
  ArrayRef<Value> all(state);
  storeResults(all.take_front(numO), all.slice(numO, numRows),
               all.slice(numO + numRows, numRows));
}

/// acc, and (quad 0) the max in natural units and the quad's summed sum, of
/// the lane's rows inside Sq.
void AttentionKernel::storeResults(ArrayRef<Value> o, ArrayRef<Value> maxes,
                                   ArrayRef<Value> sums) {
  auto f32Pair = VectorType::get({2}, b.getF32Type());
  Value isFirst = cmp(arith::CmpIPredicate::eq, quad, idx(0));
  for (int64_t lr = 0; lr < cfg.laneRows(); ++lr) {
    Value sum = quadReduce(sums[lr], false);
    int64_t oBase = (lr / 2) * cfg.outputsPerGroup() + 2 * (lr % 2);
    auto inside = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::slt, rows[lr], sq), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(inside.thenBlock());
    for (int64_t n = 0; n < cfg.headDim / 8; ++n) {
      Value pair = vector::FromElementsOp::create(
          b, loc, f32Pair, ValueRange{o[oBase + 4 * n], o[oBase + 4 * n + 1]});
      SmallVector<Value> at = stateIndices(rows[lr]);
      at.push_back(add(mul(quad, 2), 8 * n));
      vector::StoreOp::create(b, loc, pair, buf.acc, at);
    }
    auto first = scf::IfOp::create(b, loc, isFirst, false);
    b.setInsertionPointToStart(first.thenBlock());
    SmallVector<Value> at = stateIndices(rows[lr]);
    memref::StoreOp::create(
        b, loc, arith::MulFOp::create(b, loc, maxes[lr], f32(kLn2)), buf.m, at);
    memref::StoreOp::create(b, loc, sum, buf.l, at);
  }
}

void AttentionKernel::build() {
  computeIds();
  // Q's tile lands with K's first one (the key loop waits for both).
  stageQueryTile();
  buildKeyLoop();
}

//===----------------------------------------------------------------------===//
// The launch
//===----------------------------------------------------------------------===//

namespace {

KernelBuffers buffersOf(OpBuilder &b, OnlineAttentionOp op,
                        const KernelConfig &cfg, Value splits) {
  Location loc = op.getLoc();
  KernelBuffers buf;
  buf.q = readOnlyBuffer(b, loc, op.getQuery());
  buf.k = readOnlyBuffer(b, loc, op.getKey());
  buf.v = readOnlyBuffer(b, loc, op.getValue());
  if (!cfg.affinePositions) {
    buf.qPos = readOnlyBuffer(b, loc, op.getQueryPositions());
    buf.kPos = readOnlyBuffer(b, loc, op.getKeyPositions());
  }
  buf.qCos = readOnlyBuffer(b, loc, op.getQueryCos());
  buf.qSin = readOnlyBuffer(b, loc, op.getQuerySin());
  buf.kCos = readOnlyBuffer(b, loc, op.getKeyCos());
  buf.kSin = readOnlyBuffer(b, loc, op.getKeySin());
  buf.mask = readOnlyBuffer(b, loc, op.getMask());
  buf.slopes = readOnlyBuffer(b, loc, op.getAlibiSlopes());
  buf.relativeBias = readOnlyBuffer(b, loc, op.getRelativeBias());
  buf.mInit = readOnlyBuffer(b, loc, op.getMaxInit());
  buf.lInit = readOnlyBuffer(b, loc, op.getSumInit());
  buf.splits = splits;
  buf.acc = allocLike(b, loc, op.getAccumulatorInit(), splits);
  buf.m = allocLike(b, loc, op.getMaxInit(), splits);
  buf.l = allocLike(b, loc, op.getSumInit(), splits);
  return buf;
}

KernelConfig configOf(OnlineAttentionOp op, bool affinePositions) {
  KernelConfig cfg;
  cfg.element = op.getQueryType().getElementType();
  cfg.tensorCores = !cfg.element.isF32();
  cfg.chunkElements = 16 / (cfg.element.getIntOrFloatBitWidth() / 8);
  cfg.headDim = op.getHeadDim();
  cfg.paddedDim = llvm::PowerOf2Ceil(cfg.headDim);
  attention::LogitRules &rules = cfg.rules;
  rules.scale = op.getScale().convertToDouble();
  if (auto cap = op.getSoftcap())
    rules.softcap = cap->convertToDouble();
  rules.causal = op.getCausal();
  rules.window = op.getWindow();
  rules.buckets = op.getRelativeBucketsAttr();
  cfg.affinePositions = affinePositions || !op.getQueryPositions();
  cfg.everyElement = op.getMask() || op.getAlibiSlopes() || op.getRelativeBias() ||
                     (!cfg.affinePositions && (rules.causal || rules.window));
  if (std::optional<RotaryRange> range = op.getRotaryRange())
    cfg.rotary = *range;
  cfg.rotateQuery = static_cast<bool>(op.getQueryCos());
  cfg.rotateKey = static_cast<bool>(op.getKeyCos());
  return cfg;
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

std::string nvidia::whyNotTensorCoreAttention(AttentionOp op) {
  auto q = op.getQuery().getType(), k = op.getKey().getType(),
       v = op.getValue().getType();
  std::string why = whyNotElements(q.getElementType(), k.getElementType(),
                                   v.getElementType());
  if (why.empty())
    why = whyNotHeadDim(q.getShape().back(), v.getShape().back());
  if (why.empty() && op.getRotaryRange())
    why = whyNotRotation(*op.getRotaryRange());
  return why;
}

std::string nvidia::whyNotTensorCoreAttention(OnlineAttentionOp op) {
  auto q = op.getQueryType();
  auto k = cast<RankedTensorType>(op.getKey().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  std::string why = whyNotElements(q.getElementType(), k.getElementType(),
                                   v.getElementType());
  if (why.empty())
    why = whyNotHeadDim(q.getShape().back(), v.getShape().back());
  if (why.empty() && op.getKeyCos() && !op.getQueryCos())
    why = "K is rotated inside but Q is not";
  if (why.empty() && op.getRotaryRange())
    why = whyNotRotation(*op.getRotaryRange());
  if (why.empty() && !isZeroFill(op.getAccumulatorInit()))
    why = "the accumulator does not start at zero";
  return why;
}

namespace {

/// Decode's packing of a kv head's query heads into one block's rows (the
/// kernel's packedGroups): the group size G where one query tile holds all
/// G·Sq rows, and no rule reads the query head (a mask, ALiBi slopes and T5
/// biases are per head); else 0.
int64_t packedGroupsOf(OnlineAttentionOp op, const KernelConfig &cfg) {
  RankedTensorType q = op.getQueryType();
  int64_t groups = q.getDimSize(2), rows = q.getDimSize(3);
  if (!cfg.splitKeys || ShapedType::isDynamic(groups) ||
      ShapedType::isDynamic(rows) || groups < 2 ||
      groups * rows > cfg.queryRows() || op.getMask() || op.getAlibiSlopes() ||
      op.getRelativeBias())
    return 0;
  return groups;
}

/// A view of `buffer` (identity layout) with its dims `dim` and `dim` + 1
/// ([G, Sq]) as [1, G·Sq]: the packed rows of decode.
Value packRows(OpBuilder &b, Location loc, Value buffer, int64_t dim) {
  if (!buffer)
    return buffer;
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (i == dim + 1)
      continue;
    reassociation.push_back(i == dim ? ReassociationIndices{i, i + 1}
                                     : ReassociationIndices{i});
  }
  Value collapsed =
      memref::CollapseShapeOp::create(b, loc, buffer, reassociation);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    int64_t n = i == dim       ? 1
                : i == dim + 1 ? type.getDimSize(dim) * type.getDimSize(dim + 1)
                               : type.getDimSize(i);
    shape.push_back(n);
    if (ShapedType::isDynamic(n))
      sizes.push_back(memref::DimOp::create(b, loc, buffer, i).getResult());
    else
      sizes.push_back(b.getIndexAttr(n));
  }
  return memref::ExpandShapeOp::create(b, loc, shape, collapsed, reassociation,
                                       sizes);
}

/// The kernel's view of the buffers when decode packs its rows: Q and the
/// states with [G, Sq] as [1, G·Sq] (after the split dim of the partial
/// states).
KernelBuffers packedView(OpBuilder &b, Location loc, const KernelConfig &cfg,
                         KernelBuffers buf) {
  if (!cfg.packedGroups)
    return buf;
  buf.q = packRows(b, loc, buf.q, 2);
  buf.mInit = packRows(b, loc, buf.mInit, 2);
  buf.lInit = packRows(b, loc, buf.lInit, 2);
  int64_t stateDim = cfg.splitKeys ? 3 : 2;
  buf.acc = packRows(b, loc, buf.acc, stateDim);
  buf.m = packRows(b, loc, buf.m, stateDim);
  buf.l = packRows(b, loc, buf.l, stateDim);
  return buf;
}

/// The number of key splits: enough blocks for `targetBlocks`, at most one
/// per key tile, at least 1.
Value splitCount(OpBuilder &b, Location loc, Value blocks, Value keys,
                 int64_t targetBlocks) {
  auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value wanted = arith::CeilDivUIOp::create(b, loc, idx(targetBlocks),
                                            arith::MaxUIOp::create(b, loc, blocks, idx(1)));
  Value tiles = arith::CeilDivUIOp::create(b, loc, keys, idx(Tiles::kKeys));
  return arith::MaxUIOp::create(b, loc, arith::MinUIOp::create(b, loc, wanted, tiles),
                                idx(1));
}

/// The launch: grid (query tiles, query heads, batch · splits), 4 warps,
/// three shared tiles; blocks outside the real extents do nothing.
void buildLaunch(OpBuilder &b, Location loc, const KernelConfig &cfg,
                 const KernelBuffers &buf, Value queryTiles, Value heads,
                 Value batches) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto atLeastOne = [&](Value v) -> Value {
    return arith::MaxUIOp::create(b, loc, v, one);
  };
  Value blocksZ = cfg.splitKeys ? arith::MulIOp::create(b, loc, batches, buf.splits)
                                : batches;
  auto tileType = [&](int64_t rows) {
    return MemRefType::get({rows, cfg.paddedDim}, cfg.element,
                           MemRefLayoutAttrInterface{},
                           gpu::AddressSpaceAttr::get(
                               b.getContext(), gpu::AddressSpace::Workgroup));
  };
  auto keyTile = tileType(Tiles::kKeys);
  auto launch = gpu::LaunchOp::create(
      b, loc, atLeastOne(queryTiles), atLeastOne(heads), atLeastOne(blocksZ),
      arith::ConstantIndexOp::create(b, loc, kThreads), one, one, nullptr,
      nullptr, {}, TypeRange{tileType(cfg.queryRows()), keyTile, keyTile});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 ids = launch.getBlockIds();
  auto lt = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  };
  Value live = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, lt(ids.x, queryTiles), lt(ids.y, heads)),
      lt(ids.z, blocksZ));
  auto body = scf::IfOp::create(b, loc, live, false);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(body.thenBlock());
  AttentionKernel(b, loc, cfg, buf, launch).build();
}

} // namespace

LogicalResult
nvidia::replaceWithTensorCoreAttention(RewriterBase &rewriter, OnlineAttentionOp op,
                                       const TensorCoreAttentionOptions &options) {
  if (!whyNotTensorCoreAttention(op).empty())
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  KernelConfig cfg = configOf(op, options.affinePositions);
  // Split-K where one query tile is all there is (decode): the blocks of
  // (heads × batch) alone may not fill the GPU, and each would run every key.
  int64_t sqStatic = op.getQueryType().getDimSize(3);
  cfg.splitKeys = options.targetBlocks > 0 &&
                  !ShapedType::isDynamic(sqStatic) &&
                  sqStatic <= Tiles::queryRows(1);
  // Two row groups per warp where the query tiles are full (prefill) and the
  // products run on tensor cores: each K/V fragment then feeds two mma.sync.
  // Decode keeps one (its rows are few), and f32's FMA products keep one
  // (their shared tiles and registers are twice the size).
  cfg.rowGroups = cfg.tensorCores && !cfg.splitKeys ? Tiles::kMaxRowGroups : 1;
  auto dim = [&](Value tensor, int64_t i) -> Value {
    return tensor::DimOp::create(rewriter, loc, tensor, i);
  };
  Value sq = dim(op.getQuery(), 3);
  Value queryTiles = arith::CeilDivUIOp::create(
      rewriter, loc, sq,
      arith::ConstantIndexOp::create(rewriter, loc, cfg.queryRows()));
  cfg.packedGroups = packedGroupsOf(op, cfg);
  // Packed, a block serves all G query heads of its kv head.
  Value heads = cfg.packedGroups ? dim(op.getQuery(), 1)
                                 : arith::MulIOp::create(rewriter, loc,
                                                         dim(op.getQuery(), 1),
                                                         dim(op.getQuery(), 2));
  Value batches = dim(op.getQuery(), 0);
  Value splits;
  if (cfg.splitKeys)
    splits = splitCount(rewriter, loc, arith::MulIOp::create(rewriter, loc, heads, batches),
                        dim(op.getKey(), 2), options.targetBlocks);
  KernelBuffers buf = buffersOf(rewriter, op, cfg, splits);
  buildLaunch(rewriter, loc, cfg, packedView(rewriter, loc, cfg, buf),
              queryTiles, heads, batches);

  SmallVector<Value> results;
  for (Value buffer : {buf.acc, buf.m, buf.l}) {
    auto type = cast<MemRefType>(buffer.getType());
    results.push_back(bufferization::ToTensorOp::create(
        rewriter, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
        buffer, /*restrict=*/true, /*writable=*/true));
  }
  if (cfg.splitKeys) {
    // The op's exact merge of the partial states (and of its own initial
    // state), over the leading split dim.
    SetVector<unsigned> keyDim;
    keyDim.insert(OnlineAttentionOp::kKeyDim);
    FailureOr<MergeResult> merged = op.mergeReductions(rewriter, loc, results, keyDim);
    if (failed(merged))
      return failure();
    results = merged->replacements;
  }
  rewriter.replaceOp(op, results);
  return success();
}
