//===- TensorCoreAttentionMath.cpp - the kernel's products and logits -----===//
//
// Q·Kᵀ and P·V of a warp's row groups as mma.sync m16n8k16 on ldmatrix
// fragments (f16, bf16) or as FMA in the same fragment layout (f32), and the
// logits of the scores by the op's rules.
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

//===----------------------------------------------------------------------===//
// Tensor-core math
//===----------------------------------------------------------------------===//

/// One mma.sync m16n8k16 (row.col, f32 accumulators): A as four pairs, B as
/// two. bf16 pairs travel as the i32 registers PTX takes them in.
Accumulators AttentionKernel::mma(ArrayRef<Value> a, Value b0, Value b1,
                                  ArrayRef<Value> c) {
  return nvidia::buildMmaSync(b, loc, cfg.element, a, b0, b1, c);
}

/// S = Q·K(tile)ᵀ for the warp's row groups: 4 accumulators per 8-key tile
/// and group. Per k-chunk, one ldmatrix.x4 per group gives its A fragment of
/// Q (lanes 8m..8m+7 address rows 8·(m % 2).. of chunk m / 2) and one per 16
/// keys the B fragments of two key tiles (rows 8·(m / 2).. of chunk m % 2),
/// which every group's product uses.
Accumulators AttentionKernel::computeScores() {
  if (!cfg.tensorCores)
    return computeScoresByFma();
  int64_t groups = cfg.rowGroups, perGroup = cfg.scoresPerGroup();
  Accumulators s(groups * perGroup, f32(0.0));
  Value matrix = div(lane, 8);
  Value qRowInGroup = add(mul(rem(matrix, 2), 8), rem(lane, 8));
  Value qChunk = div(matrix, 2);
  Value kRow = add(mul(div(matrix, 2), 8), rem(lane, 8));
  Value kChunk = rem(matrix, 2);
  auto fragType = VectorType::get({4, 2}, cfg.element);
  // The groups' rows are 16 apart, so they share their swizzle (row mod 8):
  // one lane part, and their addresses differ by a constant.
  Value qRow = add(mul(warp, Tiles::kRowsPerGroup * groups), qRowInGroup);
  Value qLane = laneSwizzle(qRow, qChunk);
  SmallVector<Value> qRows;
  for (int64_t g = 0; g < groups; ++g)
    qRows.push_back(add(qRow, Tiles::kRowsPerGroup * g));
  Value kLane = laneSwizzle(kRow, kChunk);
  auto ldmatrix = [&](Value smem, Value row, Value lanePart, int64_t chunk) {
    return nvgpu::LdMatrixOp::create(b, loc, fragType, smem,
                                     ValueRange{row, swizzledColumn(lanePart, chunk)},
                                     /*transpose=*/false, /*numTiles=*/4)
        .getResult();
  };
  for (int64_t c = 0; c < cfg.headDim / 16; ++c) {
    SmallVector<SmallVector<Value>> a;
    for (int64_t g = 0; g < groups; ++g) {
      Value qFrag = ldmatrix(qSmem, qRows[g], qLane, 2 * c);
      a.push_back({extract(qFrag, 0), extract(qFrag, 1), extract(qFrag, 2),
                   extract(qFrag, 3)});
    }
    for (int64_t np = 0; np < Tiles::kKeys / 16; ++np) {
      Value frag = ldmatrix(kSmem, add(kRow, 16 * np), kLane, 2 * c);
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t t = 0; t < 2; ++t) {
          int64_t at = g * perGroup + 4 * (2 * np + t);
          Accumulators d =
              mma(a[g], extract(frag, 2 * t), extract(frag, 2 * t + 1),
                  ArrayRef(s).slice(at, 4));
          std::copy(d.begin(), d.end(), s.begin() + at);
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
    return toI64(
        add(queryIndexOf(row), arith::SubIOp::create(b, loc, sk, querySq)));
  return positionOf(buf.qPos, queryIndexOf(minIdx(row, lastRow(sq))));
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
  SmallVector<Value> qPos(rows.size());
  if (positions)
    for (auto [pos, row] : llvm::zip_equal(qPos, rows))
      pos = queryPosition(row);
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
      for (int64_t lr = 0; lr < cfg.laneRows(); ++lr) {
        attention::LogitInputs in;
        if (buf.mask)
          in.maskElement = maskElement(rows[lr], key);
        in.qPos = qPos[lr];
        in.kPos = kPos;
        in.slope = slope;
        if (buf.relativeBias)
          in.relativeBias = bias;
        Value &v =
            x[(lr / 2) * cfg.scoresPerGroup() + 4 * n + 2 * (lr % 2) + e];
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

/// O += P·V(tile): a group's A fragment of P for keys 16kk.. is its score
/// accumulators of key tiles 2kk and 2kk + 1, rounded; V's B fragments come
/// from ldmatrix.trans, lanes 8m..8m+7 addressing rows of matrix
/// m = (keys + 8·(m % 2), chunk + m / 2), and feed every group's product.
void AttentionKernel::accumulateValues(ArrayRef<Value> p, Accumulators &o) {
  if (!cfg.tensorCores)
    return accumulateValuesByFma(p, o);
  auto pairType = VectorType::get({2}, cfg.element);
  auto f32Pair = VectorType::get({2}, b.getF32Type());
  auto pack = [&](Value x, Value y) -> Value {
    Value v = vector::FromElementsOp::create(b, loc, f32Pair, ValueRange{x, y});
    return arith::TruncFOp::create(b, loc, pairType, v);
  };
  int64_t groups = cfg.rowGroups;
  Value matrix = div(lane, 8);
  Value rowInPair = add(mul(rem(matrix, 2), 8), rem(lane, 8));
  Value chunkInPair = div(matrix, 2);
  Value lanePart = laneSwizzle(rowInPair, chunkInPair);
  auto fragType = VectorType::get({4, 2}, cfg.element);
  for (int64_t kk = 0; kk < Tiles::kKeys / 16; ++kk) {
    SmallVector<SmallVector<Value>> a;
    for (int64_t g = 0; g < groups; ++g) {
      ArrayRef<Value> lo = p.slice(g * cfg.scoresPerGroup() + 8 * kk, 4);
      ArrayRef<Value> hi = p.slice(g * cfg.scoresPerGroup() + 8 * kk + 4, 4);
      a.push_back({pack(lo[0], lo[1]), pack(lo[2], lo[3]), pack(hi[0], hi[1]),
                   pack(hi[2], hi[3])});
    }
    Value row = add(rowInPair, 16 * kk);
    for (int64_t dp = 0; dp < cfg.headDim / 16; ++dp) {
      Value frag = nvgpu::LdMatrixOp::create(
          b, loc, fragType, vSmem,
          ValueRange{row, swizzledColumn(lanePart, 2 * dp)},
          /*transpose=*/true, /*numTiles=*/4);
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t t = 0; t < 2; ++t) {
          int64_t at = g * cfg.outputsPerGroup() + 4 * (2 * dp + t);
          Accumulators d =
              mma(a[g], extract(frag, 2 * t), extract(frag, 2 * t + 1),
                  ArrayRef(o).slice(at, 4));
          std::copy(d.begin(), d.end(), o.begin() + at);
        }
    }
  }
}


//===----------------------------------------------------------------------===//
// f32 products by FMA, in the fragment layout
//===----------------------------------------------------------------------===//

/// S = Q·K(tile)ᵀ in f32: each lane computes its own fragment elements (rows
/// lo and hi against keys 8n + 2·quad + e) as dot products over D, a 16-byte
/// chunk at a time: per chunk one Q load per row and one K load per key.
/// The swizzle spreads the 8 Q rows, and the 4 key rows a warp reads
/// together, over distinct banks. The keys go in two halves, each its own
/// loop over D: a chunk's K loads then take 32 registers, not 64 (the
/// scheduler issues them all before the FMAs).
Accumulators AttentionKernel::computeScoresByFma() {
  assert(cfg.rowGroups == 1 && "f32 products hold one row group per warp");
  constexpr int64_t kHalves = 2, kGroups = Tiles::kKeys / 8 / kHalves;
  Value qRows[2] = {tileRow(0), tileRow(1)};
  auto chunkType = VectorType::get({4}, b.getF32Type());
  Accumulators s;
  for (int64_t half = 0; half < kHalves; ++half) {
    auto chunks = scf::ForOp::create(b, loc, idx(0), idx(cfg.headDim / 4), idx(1),
                                     SmallVector<Value>(4 * kGroups, f32(0.0)));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(chunks.getBody());
    Value chunk = chunks.getInductionVar();
    auto load = [&](Value smem, Value row) -> Value {
      return vector::LoadOp::create(b, loc, chunkType, smem,
                                    ValueRange{row, swizzled(row, chunk)});
    };
    Value q[2] = {load(qSmem, qRows[0]), load(qSmem, qRows[1])};
    SmallVector<Value> acc(chunks.getRegionIterArgs());
    for (int64_t g = 0; g < kGroups; ++g)
      for (int64_t e = 0; e < 2; ++e) {
        int64_t n = half * kGroups + g;
        Value k = load(kSmem, add(mul(quad, 2), 8 * n + e));
        for (int64_t r = 0; r < 2; ++r) {
          Value &x = acc[4 * g + 2 * r + e];
          for (int64_t i = 0; i < 4; ++i)
            x = math::FmaOp::create(b, loc, extract(q[r], i), extract(k, i), x);
        }
      }
    scf::YieldOp::create(b, loc, acc);
    b.setInsertionPointAfter(chunks);
    s.append(chunks.getResults().begin(), chunks.getResults().end());
  }
  return s;
}

/// O += P·V(tile) in f32 on each lane's own O elements (rows lo and hi,
/// columns 8j + 2·quad + e). The lane holds P only at its quad's keys
/// (8n + 2·quad + e); key 8n + 2q + e of its rows is register 4n + 2r + e
/// of lane 4·group + q, so one shuffle per row and key brings it, and the
/// warp reads that key's row of V together (pairs, one 8-byte load per
/// column tile, broadcast).
void AttentionKernel::accumulateValuesByFma(ArrayRef<Value> p, Accumulators &o) {
  auto quads = scf::ForOp::create(b, loc, idx(0), idx(4), idx(1), o);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(quads.getBody());
    Value q = quads.getInductionVar();
    Value source = arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                              add(mul(laneGroup, 4), q));
    Value width = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(32));
    // Column 8j + 2·quad is element 2·(quad % 2) of chunk 2j + quad / 2.
    Value halfQuad = div(quad, 2), inChunk = mul(rem(quad, 2), 2);
    auto pairType = VectorType::get({2}, b.getF32Type());
    SmallVector<Value> acc(quads.getRegionIterArgs());
    for (int64_t n = 0; n < Tiles::kKeys / 8; ++n)
      for (int64_t e = 0; e < 2; ++e) {
        Value key = add(mul(q, 2), 8 * n + e);
        Value pr[2];
        for (int64_t r = 0; r < 2; ++r)
          pr[r] = gpu::ShuffleOp::create(b, loc, p[4 * n + 2 * r + e], source,
                                         width, gpu::ShuffleMode::IDX)
                      .getShuffleResult();
        for (int64_t j = 0; j < cfg.headDim / 8; ++j) {
          Value column = add(swizzled(key, add(halfQuad, 2 * j)), inChunk);
          Value v = vector::LoadOp::create(b, loc, pairType, vSmem,
                                           ValueRange{key, column});
          for (int64_t r = 0; r < 2; ++r)
            for (int64_t c = 0; c < 2; ++c) {
              Value &x = acc[4 * j + 2 * r + c];
              x = math::FmaOp::create(b, loc, pr[r], extract(v, c), x);
            }
        }
      }
    scf::YieldOp::create(b, loc, acc);
  }
  o.assign(quads.getResults().begin(), quads.getResults().end());
}
