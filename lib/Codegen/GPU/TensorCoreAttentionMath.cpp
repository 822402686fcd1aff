//===- TensorCoreAttentionMath.cpp - the kernel's products and logits -----===//
//
// Q·Kᵀ and P·V of a warp's 16 rows as mma.sync m16n8k16 on ldmatrix
// fragments, and the logits of the scores by the op's rules.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreAttentionKernel.h"
#include "TensorCoreUtils.h"

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

//===----------------------------------------------------------------------===//
// Tensor-core math
//===----------------------------------------------------------------------===//

/// One mma.sync m16n8k16 (row.col, f32 accumulators): A as four pairs, B as
/// two. bf16 pairs travel as the i32 registers PTX takes them in.
Accumulators AttentionKernel::mma(ArrayRef<Value> a, Value b0, Value b1,
                                  ArrayRef<Value> c) {
  return nvidia::buildMmaSync(b, loc, cfg.element, a, b0, b1, c);
}

/// S = Q·K(tile)ᵀ for the warp's 16 rows: 4 accumulators per 8-key tile.
/// Per k-chunk, one ldmatrix.x4 gives the warp's A fragment of Q (lanes
/// 8m..8m+7 address rows 8·(m % 2).. of chunk m / 2) and one per 16 keys the
/// B fragments of two key tiles (rows 8·(m / 2).. of chunk m % 2).
Accumulators AttentionKernel::computeScores() {
  Accumulators s(4 * Tiles::kKeys / 8, f32(0.0));
  Value matrix = div(lane, 8);
  Value qRow = add(add(mul(warp, 16), mul(rem(matrix, 2), 8)), rem(lane, 8));
  Value qChunk = div(matrix, 2);
  Value kRow = add(mul(div(matrix, 2), 8), rem(lane, 8));
  Value kChunk = rem(matrix, 2);
  auto fragType = VectorType::get({4, 2}, cfg.element);
  Value qLane = laneSwizzle(qRow, qChunk), kLane = laneSwizzle(kRow, kChunk);
  auto ldmatrix = [&](Value smem, Value row, Value lanePart, int64_t chunk) {
    return nvgpu::LdMatrixOp::create(b, loc, fragType, smem,
                                     ValueRange{row, swizzledColumn(lanePart, chunk)},
                                     /*transpose=*/false, /*numTiles=*/4)
        .getResult();
  };
  for (int64_t c = 0; c < cfg.headDim / 16; ++c) {
    Value qFrag = ldmatrix(qSmem, qRow, qLane, 2 * c);
    SmallVector<Value> a{extract(qFrag, 0), extract(qFrag, 1),
                         extract(qFrag, 2), extract(qFrag, 3)};
    for (int64_t np = 0; np < Tiles::kKeys / 16; ++np) {
      Value frag = ldmatrix(kSmem, add(kRow, 16 * np), kLane, 2 * c);
      for (int64_t t = 0; t < 2; ++t) {
        int64_t n = 2 * np + t;
        Accumulators d = mma(a, extract(frag, 2 * t), extract(frag, 2 * t + 1),
                             ArrayRef(s).slice(4 * n, 4));
        std::copy(d.begin(), d.end(), s.begin() + 4 * n);
      }
    }
  }
  return s;
}

/// The op's logit of each score in log2 units, so that exp2 gives the
/// softmax's exp: with every rule (`ruled`), or, on a tile that no rule
/// touches, the scale (and soft-cap) with log2(e) folded in.
Accumulators AttentionKernel::logits(Accumulators s, Value tile, bool ruled) {
  if (ruled)
    return ruledLogits(s, tile);
  for (Value &x : s) {
    if (cfg.rules.softcap) {
      x = arith::MulFOp::create(b, loc, x, f32(cfg.rules.scale));
      x = attention::buildSoftcap(b, loc, x, *cfg.rules.softcap);
      x = arith::MulFOp::create(b, loc, x, f32(kLog2E));
    } else {
      x = arith::MulFOp::create(b, loc, x, f32(cfg.rules.scale * kLog2E));
    }
  }
  return s;
}

/// The i64 position of the query in row `row` of the block's tile, and of
/// key `key`, for the rules.
Value AttentionKernel::queryPosition(Value row) {
  if (cfg.affinePositions)
    return toI64(add(row, arith::SubIOp::create(b, loc, sk, sq)));
  return positionOf(buf.qPos, minIdx(row, lastRow(sq)));
}

Value AttentionKernel::keyPosition(Value key) {
  if (cfg.affinePositions)
    return toI64(key);
  return positionOf(buf.kPos, minIdx(key, lastRow(sk)));
}

/// Element (row, key) of the rank-5 mask; a static 1 broadcasts.
Value AttentionKernel::maskElement(Value row, Value key) {
  auto type = cast<MemRefType>(buf.mask.getType());
  SmallVector<Value> at{batch, kvHead, group, minIdx(row, lastRow(sq)),
                        minIdx(key, lastRow(sk))};
  for (int64_t i = 0; i < 5; ++i)
    if (type.getDimSize(i) == 1)
      at[i] = idx(0);
  return memref::LoadOp::create(b, loc, buf.mask, at);
}

/// Every score through the op's rules (attention::buildLogit), −inf past
/// the last key, then in log2 units.
Accumulators AttentionKernel::ruledLogits(Accumulators x, Value tile) {
  bool positions = cfg.rules.causal || cfg.rules.window || buf.slopes ||
                   buf.relativeBias;
  Value rows[2] = {rowLo, rowHi};
  Value qPos[2];
  if (positions)
    for (int64_t r = 0; r < 2; ++r)
      qPos[r] = queryPosition(rows[r]);
  auto bias = [&](Value bucket) -> Value {
    Value t = memref::LoadOp::create(b, loc, buf.relativeBias,
                                     ValueRange{bucket, kvHead, group});
    return toF32(t);
  };
  for (int64_t n = 0; n < Tiles::kKeys / 8; ++n)
    for (int64_t e = 0; e < 2; ++e) {
      Value key = add(add(mul(tile, Tiles::kKeys), mul(quad, 2)), 8 * n + e);
      Value inside = cmp(arith::CmpIPredicate::slt, key, sk);
      Value kPos = positions ? keyPosition(key) : Value();
      for (int64_t r = 0; r < 2; ++r) {
        attention::LogitInputs in;
        if (buf.mask)
          in.maskElement = maskElement(rows[r], key);
        in.qPos = qPos[r];
        in.kPos = kPos;
        in.slope = slope;
        if (buf.relativeBias)
          in.relativeBias = bias;
        Value &v = x[4 * n + 2 * r + e];
        v = attention::buildLogit(b, loc, cfg.rules, v, in);
        v = attention::dropInvisible(b, loc, v, inside);
        v = arith::MulFOp::create(b, loc, v, f32(kLog2E));
      }
    }
  return x;
}

/// The max or sum over the four lanes (quad) that share a row.
Value AttentionKernel::quadReduce(Value v, bool isMax) {
  for (int32_t offset : {1, 2}) {
    Value other = gpu::ShuffleOp::create(b, loc, v, offset, 32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    v = isMax ? arith::MaximumFOp::create(b, loc, v, other).getResult()
              : arith::AddFOp::create(b, loc, v, other).getResult();
  }
  return v;
}

/// O += P·V(tile): P's A fragment for keys 16kk.. is the score accumulators
/// of key tiles 2kk and 2kk + 1, rounded; V's B fragments come from
/// ldmatrix.trans, lanes 8m..8m+7 addressing rows of matrix
/// m = (keys + 8·(m % 2), chunk + m / 2).
void AttentionKernel::accumulateValues(ArrayRef<Value> p, Accumulators &o) {
  auto pairType = VectorType::get({2}, cfg.element);
  auto f32Pair = VectorType::get({2}, b.getF32Type());
  auto pack = [&](Value x, Value y) -> Value {
    Value v = vector::FromElementsOp::create(b, loc, f32Pair, ValueRange{x, y});
    return arith::TruncFOp::create(b, loc, pairType, v);
  };
  Value matrix = div(lane, 8);
  Value rowInPair = add(mul(rem(matrix, 2), 8), rem(lane, 8));
  Value chunkInPair = div(matrix, 2);
  Value lanePart = laneSwizzle(rowInPair, chunkInPair);
  auto fragType = VectorType::get({4, 2}, cfg.element);
  for (int64_t kk = 0; kk < Tiles::kKeys / 16; ++kk) {
    ArrayRef<Value> lo = p.slice(8 * kk, 4), hi = p.slice(8 * kk + 4, 4);
    SmallVector<Value> a{pack(lo[0], lo[1]), pack(lo[2], lo[3]),
                         pack(hi[0], hi[1]), pack(hi[2], hi[3])};
    Value row = add(rowInPair, 16 * kk);
    for (int64_t dp = 0; dp < cfg.headDim / 16; ++dp) {
      Value frag = nvgpu::LdMatrixOp::create(
          b, loc, fragType, vSmem,
          ValueRange{row, swizzledColumn(lanePart, 2 * dp)},
          /*transpose=*/true, /*numTiles=*/4);
      for (int64_t t = 0; t < 2; ++t) {
        int64_t n = 2 * dp + t;
        Accumulators d = mma(a, extract(frag, 2 * t), extract(frag, 2 * t + 1),
                             ArrayRef(o).slice(4 * n, 4));
        std::copy(d.begin(), d.end(), o.begin() + 4 * n);
      }
    }
  }
}

