//===- TensorCoreAttentionStaging.cpp - tiles into shared memory ----------===//
//
// Q (once per block), K and V (per key tile) into [rows][Dp] shared tiles with
// the 16-byte chunk c of row r at chunk c XOR (r mod min(8, chunks per row)):
// by cp.async, except the chunks of a rotated operand, which go through
// registers (load, rotate in f32, round, store) eight elements at a time.
//
//===----------------------------------------------------------------------===//

#include "attention/TensorCoreAttentionKernel.h"
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

nvidia::ChunkSwizzle AttentionKernel::swizzle() const {
  return nvidia::ChunkSwizzle(cfg.paddedDim / cfg.chunkElements,
                              cfg.chunkElements);
}

Value AttentionKernel::laneSwizzle(Value row, Value chunk) {
  return swizzle().lanePart(b, loc, row, chunk);
}

Value AttentionKernel::swizzledColumn(Value lanePart, int64_t chunk) {
  return swizzle().column(b, loc, lanePart, chunk);
}

Value AttentionKernel::swizzled(Value row, Value chunk) {
  return swizzle().column(b, loc, row, chunk);
}

/// A table is [S, w] or [B', S, w] (B' = 1 broadcasts); `width` elements
/// from column `col` of row `row` (a scalar for 1, else a vector).
Value AttentionKernel::tableAt(Value table, Value row, Value col, int64_t width) {
  auto type = cast<MemRefType>(table.getType());
  SmallVector<Value> indices;
  if (type.getRank() == 3)
    indices.push_back(type.getDimSize(0) == 1 ? idx(0) : batch);
  indices.append({row, col});
  if (width == 1)
    return memref::LoadOp::create(b, loc, table, indices);
  // Table chunks start at multiples of 4 f32 of rows of r/2 >= 16.
  return vector::LoadOp::create(b, loc, VectorType::get({width}, b.getF32Type()),
                                table, indices, /*nontemporal=*/false,
                                llvm::MaybeAlign(16));
}

/// The i64 position of sequence index `row` (positions [S] or [B, S]).
Value AttentionKernel::positionOf(Value positions, Value row) {
  auto type = cast<MemRefType>(positions.getType());
  SmallVector<Value> indices;
  if (type.getRank() == 2)
    indices.push_back(type.getDimSize(0) == 1 ? idx(0) : batch);
  indices.push_back(row);
  Value p = memref::LoadOp::create(b, loc, positions, indices);
  if (p.getType() == b.getI64Type())
    return p;
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), p);
}

//===----------------------------------------------------------------------===//
// Tiles into shared memory: Q once, K and V per key tile
//===----------------------------------------------------------------------===//

/// Where the rows of a tile come from: the leading indices of row `row` of
/// the tile (clamped inside the sequence, so every read is in bounds),
/// whether the row is inside the sequence, and, for a rotated operand, its
/// cos/sin tables (read at the clamped sequence index).
struct AttentionKernel::TileSource {
  Value buffer;
  int64_t rows; // of the tile
  std::function<SmallVector<Value>(Value)> leading;
  std::function<Value(Value)> sequenceIndex; // clamped
  std::function<Value(Value)> tableRow;      // of the cos/sin tables
  std::function<Value(Value)> inside;
  Value cos, sin;
};

AttentionKernel::TileSource AttentionKernel::querySource() {
  Value first = mul(queryTile, cfg.queryRows());
  TileSource src;
  src.buffer = buf.q;
  src.rows = cfg.queryRows();
  src.sequenceIndex = [this, first](Value row) {
    return minIdx(add(first, row), lastRow(sq));
  };
  src.leading = [this, src](Value row) {
    return SmallVector<Value>{batch, kvHead, group, src.sequenceIndex(row)};
  };
  src.inside = [this, first](Value row) {
    return cmp(arith::CmpIPredicate::slt, add(first, row), sq);
  };
  src.tableRow = [this, src](Value row) {
    return queryIndexOf(src.sequenceIndex(row));
  };
  if (cfg.rotateQuery) {
    src.cos = buf.qCos;
    src.sin = buf.qSin;
  }
  return src;
}

AttentionKernel::TileSource AttentionKernel::keySource(Value buffer, Value tile,
                                                       bool rotated) {
  Value first = mul(tile, Tiles::kKeys);
  TileSource src;
  src.buffer = buffer;
  src.rows = Tiles::kKeys;
  src.sequenceIndex = [this, first](Value row) {
    return minIdx(add(first, row), lastRow(sk));
  };
  src.leading = [this, src](Value row) {
    return SmallVector<Value>{batch, kvHead, src.sequenceIndex(row)};
  };
  src.inside = [this, first](Value row) {
    return cmp(arith::CmpIPredicate::slt, add(first, row), sk);
  };
  src.tableRow = src.sequenceIndex;
  if (rotated) {
    src.cos = buf.kCos;
    src.sin = buf.kSin;
  }
  return src;
}

/// cp.async of 16-byte chunks of a tile: `chunksPerRow` per row, the
/// row's chunk u mapped to chunk chunkOf(u); rows past the sequence are
/// zero-filled. The chunks divide evenly among the threads (a multiple of 2
/// per row), so there is no tail.
void AttentionKernel::copyChunksAsync(const TileSource &src, Value dst,
                                      int64_t chunksPerRow,
                                      function_ref<Value(Value)> chunkOf) {
  int64_t perThread = src.rows * chunksPerRow / kThreads;
  // Where a row's chunks divide the threads, a thread copies the same chunk
  // of rows kThreads / chunksPerRow apart: its row and chunk are computed
  // once, and its shared addresses differ by constants.
  bool sameChunk = kThreads % chunksPerRow == 0;
  Value firstRow = div(tid, chunksPerRow), ownChunk = rem(tid, chunksPerRow);
  for (int64_t i = 0; i < perThread; ++i) {
    Value unit = add(tid, i * kThreads);
    Value row = sameChunk ? add(firstRow, i * (kThreads / chunksPerRow))
                          : div(unit, chunksPerRow);
    Value chunk = chunkOf(sameChunk ? ownChunk : rem(unit, chunksPerRow));
    Value srcElements =
        arith::SelectOp::create(b, loc, src.inside(row), idx(cfg.chunkElements), idx(0));
    SmallVector<Value> indices = src.leading(row);
    indices.push_back(mul(chunk, cfg.chunkElements));
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
        ValueRange{row, swizzled(row, chunk)}, src.buffer, indices,
        b.getIndexAttr(cfg.chunkElements), srcElements, b.getUnitAttr());
  }
}

/// Stages a tile: by cp.async, except the rotated chunks of a rotated
/// operand, which go through registers (load, rotate in f32, round, store).
void AttentionKernel::stageTile(const TileSource &src, Value dst) {
  auto identity = [](Value u) { return u; };
  if (!src.cos) {
    copyChunksAsync(src, dst, cfg.headDim / cfg.chunkElements, identity);
    commit();
    return;
  }
  const RotaryRange &rot = cfg.rotary;
  int64_t ce = cfg.chunkElements;
  int64_t plain = (cfg.headDim - rot.dims) / ce;
  if (plain > 0)
    copyChunksAsync(src, dst, plain, [&](Value u) {
      Value below = cmp(arith::CmpIPredicate::ult, u, idx(rot.offset / ce));
      return arith::SelectOp::create(b, loc, below, u, add(u, rot.dims / ce))
          .getResult();
    });
  commit();
  if (rot.layout == RotaryLayout::half)
    stageRotatedHalf(src, dst);
  else
    stageRotatedInterleaved(src, dst);
}

/// Elements 8e..8e+7 of row `row` of the source, in f32.
Value AttentionKernel::loadEight(const TileSource &src, Value row, Value eight) {
  SmallVector<Value> indices = src.leading(row);
  indices.push_back(mul(eight, 8));
  // 16-byte aligned, as cp.async's (rows of D % 16 == 0 elements).
  Value raw = vector::LoadOp::create(b, loc, VectorType::get({8}, cfg.element),
                                     src.buffer, indices, /*nontemporal=*/false,
                                     llvm::MaybeAlign(16));
  return toF32(raw);
}

/// Stores eight f32 as elements 8e..8e+7 of row `row` of a shared tile:
/// one chunk, or two of f32, each at its swizzled place.
void AttentionKernel::storeEight(Value dst, Value row, Value eight, Value x) {
  if (!cfg.element.isF32())
    x = arith::TruncFOp::create(b, loc, VectorType::get({8}, cfg.element), x);
  int64_t ce = cfg.chunkElements;
  for (int64_t part = 0; part < 8 / ce; ++part) {
    Value chunk = add(mul(eight, 8 / ce), part);
    Value piece = x;
    if (ce != 8) {
      auto lanes = llvm::to_vector(llvm::seq<int64_t>(part * ce, (part + 1) * ce));
      piece = vector::ShuffleOp::create(b, loc, x, x, lanes);
    }
    vector::StoreOp::create(b, loc, piece, dst,
                            ValueRange{row, swizzled(row, chunk)},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
}

/// The thread's `count` units of a rotated tile, one after another: a loop
/// that LLVM must not unroll, since the unrolled loads of every unit (two
/// source and four table vectors each) would all be in flight at once, in
/// registers that the key loop needs for O and P.
void AttentionKernel::forEachUnit(int64_t count,
                                  function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, loc, idx(0), idx(count), idx(1));
  MLIRContext *ctx = b.getContext();
  auto noUnroll = LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/b.getBoolAttr(true), /*count=*/{}, /*runtimeDisable=*/{},
      /*full=*/{}, /*followupUnrolled=*/{}, /*followupRemainder=*/{},
      /*followupAll=*/{});
  // The name SCF's lowering moves onto the loop's back edge.
  loop->setAttr("llvm.loop_annotation",
                LLVM::LoopAnnotationAttr::get(
                    ctx, {}, {}, {}, noUnroll, {}, {}, {}, {}, {}, {}, {}, {},
                    {}, {}, {}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

/// Half layout: a unit is the eight elements 8c.. of the first half and
/// 8c + r/2.. of the second, rotated as vectors of 8 pairs.
void AttentionKernel::stageRotatedHalf(const TileSource &src, Value dst) {
  const RotaryRange &rot = cfg.rotary;
  int64_t h = rot.dims / 2, units = h / 8;
  int64_t width = cast<MemRefType>(src.cos.getType()).getShape().back();
  forEachUnit(src.rows * units / kThreads, [&](Value i) {
    Value unit = add(tid, mul(i, kThreads));
    Value row = div(unit, units), u = rem(unit, units);
    Value seq = src.tableRow(row);
    Value c0 = add(u, rot.offset / 8), c1 = add(c0, h / 8);
    Value a = loadEight(src, row, c0), second = loadEight(src, row, c1);
    // Tables of one coefficient per element hold the second member's at h.
    Value col0 = mul(u, 8), col1 = width == h ? col0 : add(col0, h);
    auto [r0, unused0] = lowering::buildPairRotation(
        b, loc, a, second, tableAt(src.cos, seq, col0, 8),
        tableAt(src.sin, seq, col0, 8));
    auto [unused1, r1] = lowering::buildPairRotation(
        b, loc, a, second, tableAt(src.cos, seq, col1, 8),
        tableAt(src.sin, seq, col1, 8));
    storeEight(dst, row, c0, r0);
    storeEight(dst, row, c1, r1);
  });
}

/// Interleaved layout: a unit is eight elements (four pairs), split into
/// their even and odd members, rotated, and interleaved back.
void AttentionKernel::stageRotatedInterleaved(const TileSource &src, Value dst) {
  const RotaryRange &rot = cfg.rotary;
  int64_t units = rot.dims / 8;
  int64_t width = cast<MemRefType>(src.cos.getType()).getShape().back();
  bool perPair = width == rot.dims / 2;
  SmallVector<int64_t> evens{0, 2, 4, 6}, odds{1, 3, 5, 7};
  auto members = [&](Value v) {
    return std::pair<Value, Value>{
        vector::ShuffleOp::create(b, loc, v, v, evens),
        vector::ShuffleOp::create(b, loc, v, v, odds)};
  };
  forEachUnit(src.rows * units / kThreads, [&](Value i) {
    Value unit = add(tid, mul(i, kThreads));
    Value row = div(unit, units), u = rem(unit, units);
    Value seq = src.tableRow(row);
    Value chunk = add(u, rot.offset / 8);
    auto [even, odd] = members(loadEight(src, row, chunk));
    Value cos0, sin0, cos1, sin1;
    if (perPair) {
      cos0 = cos1 = tableAt(src.cos, seq, mul(u, 4), 4);
      sin0 = sin1 = tableAt(src.sin, seq, mul(u, 4), 4);
    } else {
      std::tie(cos0, cos1) = members(tableAt(src.cos, seq, mul(u, 8), 8));
      std::tie(sin0, sin1) = members(tableAt(src.sin, seq, mul(u, 8), 8));
    }
    auto [r0, unused0] = lowering::buildPairRotation(b, loc, even, odd, cos0, sin0);
    auto [unused1, r1] = lowering::buildPairRotation(b, loc, even, odd, cos1, sin1);
    Value merged = vector::ShuffleOp::create(
        b, loc, r0, r1, ArrayRef<int64_t>{0, 4, 1, 5, 2, 6, 3, 7});
    storeEight(dst, row, chunk, merged);
  });
}

void AttentionKernel::stageQueryTile() { stageTile(querySource(), qSmem); }

void AttentionKernel::stageKeyTile(Value tile) {
  stageTile(keySource(buf.k, tile, cfg.rotateKey), kSmem);
}

void AttentionKernel::stageValueTile(Value tile) {
  stageTile(keySource(buf.v, tile, /*rotated=*/false), vSmem);
}

