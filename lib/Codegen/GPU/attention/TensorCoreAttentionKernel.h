//===- TensorCoreAttentionKernel.h - the kernel's builder -------*- C++ -*-===//
//
// The builder of the tensor-core attention kernel (TensorCoreAttention.h),
// shared by its three files: TensorCoreAttention.cpp (the launch, the key
// loop, the online softmax), TensorCoreAttentionStaging.cpp (Q, K and V
// tiles into shared memory, rotated on the way) and TensorCoreAttentionMath.cpp
// (the products, by mma.sync or, for f32, by FMA in the same fragment
// layout, and the logits).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_CODEGEN_GPU_ATTENTION_TENSORCOREATTENTIONKERNEL_H
#define ROPE_LIB_CODEGEN_GPU_ATTENTION_TENSORCOREATTENTIONKERNEL_H

#include "common/TensorCoreUtils.h"
#include "rope/Codegen/GPU/TensorCoreAttention.h"
#include "rope/Dialect/Rope/IR/AttentionRules.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::rope::nvidia::detail {

using Tiles = TensorCoreAttentionTiles;

inline constexpr int64_t kThreads = 32 * Tiles::kWarps;
inline constexpr double kLog2E = 1.4426950408889634;
inline constexpr double kLn2 = 0.6931471805599453;

//===----------------------------------------------------------------------===//
// The kernel's configuration and operands
//===----------------------------------------------------------------------===//

struct KernelConfig {
  Type element;
  /// f16/bf16 products run on tensor cores; f32 ones as FMA by each lane on
  /// its own fragment elements (TF32 mma would round the operands to 10
  /// mantissa bits).
  bool tensorCores = true;
  /// Elements per 16-byte chunk of a shared tile row: 8, or 4 of f32.
  int64_t chunkElements = 8;
  int64_t headDim = 0, paddedDim = 0;
  attention::LogitRules rules;
  /// A rule reads each element (mask, ALiBi, T5 bias, or causal/window
  /// rules on explicit positions): every tile is ruled element by element.
  bool everyElement = false;
  bool affinePositions = true;
  RotaryRange rotary{0, 0, RotaryLayout::half};
  bool rotateQuery = false, rotateKey = false;
  /// Split-K: blocks also split the keys into `splits` ranges and write
  /// partial states, which the op's merge combines.
  bool splitKeys = false;
  /// Groups of 16 query rows per warp (Tiles::kMaxRowGroups at most).
  int64_t rowGroups = 1;
  /// Decode with GQA: the query heads of a kv head share one block, their
  /// queries packed as its rows (row = head in group · Sq + query), so the
  /// block reads each K/V tile once for all of them. The kernel then sees
  /// Q and the state as [.., 1, G·Sq, ..] views; this is G (0: unpacked).
  int64_t packedGroups = 0;

  int64_t queryRows() const { return Tiles::queryRows(rowGroups); }
  /// A lane's registers per row group: 4 f32 per 8-column tile of S (64
  /// keys) or of O (D columns).
  static constexpr int64_t scoresPerGroup() { return 4 * Tiles::kKeys / 8; }
  int64_t outputsPerGroup() const { return 4 * headDim / 8; }
  /// A lane's rows: two per group (rows 8 apart).
  int64_t laneRows() const { return 2 * rowGroups; }
};

/// Buffers the kernel reads and writes (null where the op has none).
struct KernelBuffers {
  Value q, k, v, qPos, kPos, qCos, qSin, kCos, kSin, mInit, lInit;
  Value mask, slopes, relativeBias;
  Value splits; // index, with splitKeys
  Value acc, m, l;
};

/// Per-thread registers of a warp's rows: for each row group g, 4 f32 per
/// 8-column tile n, element e of lane row r (0: row group·16 + laneGroup,
/// 1: 8 below) at g·(per group) + 4n + 2r + e.
using Accumulators = SmallVector<Value>;

//===----------------------------------------------------------------------===//
// The kernel body
//===----------------------------------------------------------------------===//

class AttentionKernel {
public:
  AttentionKernel(OpBuilder &b, Location loc, const KernelConfig &cfg,
                  const KernelBuffers &buf, gpu::LaunchOp launch)
      : b(b), loc(loc), cfg(cfg), buf(buf), launch(launch) {}

  void build();

private:
  // Small arithmetic.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, idx(y)); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, idx(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, idx(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, idx(y)); }
  Value minIdx(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxIdx(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value toI64(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  }
  Value extract(Value vec, int64_t i) {
    return vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{i});
  }

  void computeIds();
  nvidia::ChunkSwizzle swizzle() const;
  Value swizzled(Value row, Value chunk);
  Value laneSwizzle(Value row, Value chunk);
  Value swizzledColumn(Value lanePart, int64_t chunk);
  Value lastRow(Value extent) { return maxIdx(add(extent, -1), idx(0)); }
  Value tableAt(Value table, Value row, Value col, int64_t width);
  Value positionOf(Value positions, Value row);

  // Staging of Q, K and V tiles.
  struct TileSource;
  TileSource querySource();
  TileSource keySource(Value buffer, Value tile, bool rotated);
  void stageTile(const TileSource &src, Value dst);
  void stageQueryTile();
  void stageKeyTile(Value tile);
  void stageValueTile(Value tile);
  void copyChunksAsync(const TileSource &src, Value dst, int64_t chunksPerRow,
                       function_ref<Value(Value)> chunkOf);
  Value loadEight(const TileSource &src, Value row, Value eight);
  void storeEight(Value dst, Value row, Value eight, Value x);
  void forEachUnit(int64_t count, function_ref<void(Value)> body);
  void stageRotatedHalf(const TileSource &src, Value dst);
  void stageRotatedInterleaved(const TileSource &src, Value dst);
  void commit() { NVVM::CpAsyncCommitGroupOp::create(b, loc); }
  void waitAll() { NVVM::CpAsyncWaitGroupOp::create(b, loc, 0); }
  void barrier() { gpu::BarrierOp::create(b, loc); }

  // Math.
  Accumulators mma(ArrayRef<Value> a, Value b0, Value b1, ArrayRef<Value> c);
  Accumulators computeScores();
  Accumulators computeScoresByFma();
  Accumulators logits(Accumulators s, Value tile, bool ruled);
  Accumulators ruledLogits(Accumulators x, Value tile);
  Value queryPosition(Value row);
  Value keyPosition(Value key);
  Value maskElement(Value row, Value key);
  /// A scalar or vector in f32.
  Value toF32(Value x) {
    Type f32Type = b.getF32Type();
    if (auto vec = dyn_cast<VectorType>(x.getType()))
      f32Type = vec.clone(f32Type);
    return x.getType() == f32Type
               ? x
               : arith::ExtFOp::create(b, loc, f32Type, x).getResult();
  }
  Value quadReduce(Value v, bool isMax);
  void accumulateValues(ArrayRef<Value> p, Accumulators &o);
  void accumulateValuesByFma(ArrayRef<Value> p, Accumulators &o);

  // Loop.
  std::pair<Value, Value> keyTileRange();
  std::pair<Value, Value> visibleKeyTiles();
  std::pair<Value, Value> plainTiles(Value begin, Value end);
  SmallVector<Value> initialState();
  SmallVector<Value> softmaxStep(Accumulators &s, Accumulators &o,
                                 ValueRange maxes, ValueRange sums);
  SmallVector<Value> keyLoop(Value lo, Value hi, Value end, bool ruled,
                             ValueRange state);
  void buildKeyLoop();
  SmallVector<Value> stateIndices(Value row) {
    SmallVector<Value> at{batch, kvHead, group, row};
    if (cfg.splitKeys)
      at.insert(at.begin(), split);
    return at;
  }
  void storeResults(ArrayRef<Value> o, ArrayRef<Value> maxes,
                    ArrayRef<Value> sums);
  /// The lane's row `r` (of laneRows()) within the block's query tile.
  Value tileRow(int64_t r);

  OpBuilder &b;
  Location loc;
  const KernelConfig &cfg;
  const KernelBuffers &buf;
  gpu::LaunchOp launch;

  Value batch, kvHead, group, queryTile, tid, warp, lane, laneGroup, quad;
  Value split; // with splitKeys
  Value sq, sk, qSmem, kSmem, vSmem, slope;
  /// The query count the positions count (Sq; sq is G·Sq when packed).
  Value querySq;
  /// The query index of a row of the (packed) view.
  Value queryIndexOf(Value row) {
    return cfg.packedGroups
               ? arith::RemUIOp::create(b, loc, row, querySq).getResult()
               : row;
  }
  /// The block's first and last query index.
  std::pair<Value, Value> blockQueries();
  /// The lane's query rows (laneRows() of them), as sequence indices.
  SmallVector<Value> rows;
};

} // namespace mlir::rope::nvidia::detail

#endif // ROPE_LIB_CODEGEN_GPU_ATTENTION_TENSORCOREATTENTIONKERNEL_H
