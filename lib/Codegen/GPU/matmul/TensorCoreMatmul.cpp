//===- TensorCoreMatmul.cpp - contractions on tensor cores ----------------===//
//
// The kernel of TensorCoreMatmul.h. Block (m-tile, n-tile, batch) of 4 warps
// in a 2×2 grid, each warp 32×32 of C: m-tiles 2·wm, 2·wm + 1 and n-tiles
// 4·wn .. 4·wn + 3 of m16n8k16 shape. Per K step of 64: wait for the stage,
// barrier, issue the copy of the next step into the other stage, then 4
// k16 sub-steps of 2 A and 2 B ldmatrix.x4 and 8 mma.sync each.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/TensorCoreMatmul.h"
#include "common/KernelOperands.h"
#include "common/TensorCoreUtils.h"
#include "matmul/MatmulShape.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::rope;
using mlir::rope::nvidia::MatmulShape;

namespace {

constexpr int64_t kTileM = 64, kTileN = 64, kTileK = 64, kThreads = 128;

struct MatmulBuffers {
  Value a, b, init, c;
};

class MatmulKernel {
public:
  MatmulKernel(OpBuilder &b, Location loc, const MatmulShape &shape, Type element,
               const MatmulBuffers &buf, bool zeroInit, gpu::LaunchOp launch)
      : b(b), loc(loc), shape(shape), element(element), buf(buf),
        zeroInit(zeroInit), launch(launch), swizzle(kTileK / 8) {}

  void build();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, int64_t y) {
    return y == 0 ? x : arith::AddIOp::create(b, loc, x, idx(y)).getResult();
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, idx(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, idx(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, idx(y)); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value clamp(Value x, Value extent) {
    Value last = arith::MaxSIOp::create(b, loc, add(extent, -1), idx(0));
    return arith::MinSIOp::create(b, loc, x, last);
  }
  Value extract(Value vec, int64_t i) {
    return vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{i});
  }
  SmallVector<Value> indices(bool hasBatch, Value row, Value col) {
    SmallVector<Value> at;
    if (hasBatch)
      at.push_back(batch);
    at.append({row, col});
    return at;
  }

  void stage(Value kStep, Value slot);
  void copyTile(Value src, bool hasBatch, Value smem, Value slot, Value rowBase,
                Value rowExtent, Value colBase, Value colExtent);
  void compute(Value slot, SmallVectorImpl<Value> &acc);
  void storeResults(ArrayRef<Value> acc);

  OpBuilder &b;
  Location loc;
  const MatmulShape &shape;
  Type element;
  const MatmulBuffers &buf;
  bool zeroInit;
  gpu::LaunchOp launch;
  nvidia::ChunkSwizzle swizzle;
  Value batch, tileM, tileN, tid, lane, warpM, warpN, sizeM, sizeN, sizeK;
  Value aSmem, bSmem;
};

/// cp.async of a [64][64] tile, rows rowBase.. of an operand whose rows
/// (extent rowExtent) are its second-innermost dim and columns colBase..
/// its innermost (extent colExtent, a multiple of 8): 4 chunks per thread,
/// zero-filled outside.
void MatmulKernel::copyTile(Value src, bool hasBatch, Value smem, Value slot,
                            Value rowBase, Value rowExtent, Value colBase,
                            Value colExtent) {
  for (int64_t i = 0; i < 64 * 8 / kThreads; ++i) {
    Value unit = add(tid, i * kThreads);
    Value row = div(unit, 8), chunk = rem(unit, 8);
    Value r = add(rowBase, row), col = add(colBase, mul(chunk, 8));
    Value inside = arith::AndIOp::create(b, loc, lt(r, rowExtent), lt(col, colExtent));
    Value count = arith::SelectOp::create(b, loc, inside, idx(8), idx(0));
    SmallVector<Value> at = indices(hasBatch, clamp(r, rowExtent),
                                    clamp(col, colExtent));
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), smem,
        ValueRange{slot, row, swizzle.column(b, loc, row, chunk)}, src, at,
        b.getIndexAttr(8), count, b.getUnitAttr());
  }
}

void MatmulKernel::stage(Value kStep, Value slot) {
  Value k0 = mul(kStep, kTileK);
  copyTile(buf.a, shape.aHasBatch, aSmem, slot, mul(tileM, kTileM), sizeM, k0,
           sizeK);
  if (shape.bTransposed)
    copyTile(buf.b, shape.bHasBatch, bSmem, slot, mul(tileN, kTileN), sizeN, k0,
             sizeK);
  else
    copyTile(buf.b, shape.bHasBatch, bSmem, slot, k0, sizeK, mul(tileN, kTileN),
             sizeN);
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

/// One K step from stage `slot`: per k16, A fragments of the warp's two
/// m-tiles and B fragments of its four n-tiles, 8 mma.sync.
void MatmulKernel::compute(Value slot, SmallVectorImpl<Value> &acc) {
  auto fragType = VectorType::get({4, 2}, element);
  Value matrix = div(lane, 8), r8 = rem(lane, 8);
  // A [m][k]: lanes 8m.. address rows 8·(m % 2) of chunk m / 2.
  Value aRow = add(add(mul(warpM, 32), mul(rem(matrix, 2), 8)), r8);
  Value aLane = swizzle.lanePart(b, loc, aRow, div(matrix, 2));
  // B [n][k] as K in attention: rows 8·(m / 2) of chunk m % 2. B [k][n] as
  // V: ldmatrix.trans of rows (k) 8·(m % 2) of chunk (n) m / 2 of the warp's
  // four (its chunk bits and the static 2·pair's do not overlap, so the
  // warp's offset joins the lane's part).
  Value bRow = shape.bTransposed
                   ? add(add(mul(warpN, 32), mul(div(matrix, 2), 8)), r8)
                   : add(mul(rem(matrix, 2), 8), r8);
  Value bChunk = shape.bTransposed ? rem(matrix, 2)
                                   : add(mul(warpN, 4), div(matrix, 2));
  Value bLane = swizzle.lanePart(b, loc, bRow, bChunk);
  auto ldmatrix = [&](Value smem, Value row, Value column, bool transpose) {
    return nvgpu::LdMatrixOp::create(b, loc, fragType, smem,
                                     ValueRange{slot, row, column}, transpose, 4)
        .getResult();
  };
  for (int64_t ks = 0; ks < kTileK / 16; ++ks) {
    SmallVector<SmallVector<Value>> a;
    for (int64_t mt = 0; mt < 2; ++mt) {
      Value f = ldmatrix(aSmem, add(aRow, 16 * mt),
                         swizzle.column(b, loc, aLane, 2 * ks), false);
      a.push_back({extract(f, 0), extract(f, 1), extract(f, 2), extract(f, 3)});
    }
    for (int64_t np = 0; np < 2; ++np) {
      Value f = shape.bTransposed
                    ? ldmatrix(bSmem, add(bRow, 16 * np),
                               swizzle.column(b, loc, bLane, 2 * ks), false)
                    : ldmatrix(bSmem, add(bRow, 16 * ks),
                               swizzle.column(b, loc, bLane, 2 * np), true);
      for (int64_t t = 0; t < 2; ++t)
        for (int64_t mt = 0; mt < 2; ++mt) {
          int64_t tile = 4 * (4 * mt + 2 * np + t);
          SmallVector<Value> d = nvidia::buildMmaSync(
              b, loc, element, a[mt], extract(f, 2 * t), extract(f, 2 * t + 1),
              ArrayRef<Value>(acc).slice(tile, 4));
          std::copy(d.begin(), d.end(), acc.begin() + tile);
        }
    }
  }
}

/// C (+ init) of the warp's tiles inside M × N, converted to C's type.
void MatmulKernel::storeResults(ArrayRef<Value> acc) {
  Value group = div(lane, 4), quad = rem(lane, 4);
  Type cType = cast<MemRefType>(buf.c.getType()).getElementType();
  for (int64_t mt = 0; mt < 2; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      Value row = add(add(add(mul(tileM, kTileM), mul(warpM, 32)), 16 * mt + 8 * h),
                      group);
      for (int64_t nt = 0; nt < 4; ++nt)
        for (int64_t e = 0; e < 2; ++e) {
          Value col = add(add(add(mul(tileN, kTileN), mul(warpN, 32)), 8 * nt + e),
                          mul(quad, 2));
          Value inside = arith::AndIOp::create(b, loc, lt(row, sizeM), lt(col, sizeN));
          auto guard = scf::IfOp::create(b, loc, inside, false);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(guard.thenBlock());
          Value v = acc[4 * (4 * mt + nt) + 2 * h + e];
          SmallVector<Value> at = indices(static_cast<bool>(shape.batch), row, col);
          if (!zeroInit) {
            Value init = memref::LoadOp::create(b, loc, buf.init, at);
            if (!init.getType().isF32())
              init = arith::ExtFOp::create(b, loc, b.getF32Type(), init);
            v = arith::AddFOp::create(b, loc, v, init);
          }
          if (!cType.isF32())
            v = arith::TruncFOp::create(b, loc, cType, v);
          memref::StoreOp::create(b, loc, v, buf.c, at);
        }
    }
}

void MatmulKernel::build() {
  gpu::KernelDim3 ids = launch.getBlockIds();
  tileM = ids.x;
  tileN = ids.y;
  batch = ids.z;
  tid = launch.getThreadIds().x;
  lane = rem(tid, 32);
  Value warp = div(tid, 32);
  warpM = div(warp, 2);
  warpN = rem(warp, 2);
  auto cType = cast<MemRefType>(buf.c.getType());
  int64_t rank = cType.getRank();
  sizeM = memref::DimOp::create(b, loc, buf.c, rank - 2);
  sizeN = memref::DimOp::create(b, loc, buf.c, rank - 1);
  auto aType = cast<MemRefType>(buf.a.getType());
  sizeK = memref::DimOp::create(b, loc, buf.a, aType.getRank() - 1);
  aSmem = launch.getWorkgroupAttributions()[0];
  bSmem = launch.getWorkgroupAttributions()[1];

  Value steps = arith::CeilDivUIOp::create(b, loc, sizeK, idx(kTileK));
  auto prologue = scf::IfOp::create(b, loc, lt(idx(0), steps), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(prologue.thenBlock());
    stage(idx(0), idx(0));
  }
  SmallVector<Value> init(32, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)));
  auto loop = scf::ForOp::create(b, loc, idx(0), steps, idx(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value step = loop.getInductionVar();
    SmallVector<Value> acc(loop.getRegionIterArgs());
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    gpu::BarrierOp::create(b, loc);
    Value next = add(step, 1);
    auto prefetch = scf::IfOp::create(b, loc, lt(next, steps), false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(prefetch.thenBlock());
      stage(next, rem(next, 2));
    }
    compute(rem(step, 2), acc);
    scf::YieldOp::create(b, loc, acc);
  }
  storeResults(SmallVector<Value>(loop.getResults()));
}

} // namespace

std::string nvidia::whyNotTensorCoreMatmul(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return "not on tensors";
  FailureOr<MatmulShape> shape = nvidia::matmulShapeOf(op);
  if (failed(shape))
    return "not a contraction C[b?, m, n] += A[b?, m, k]·B[b?, k|n, n|k]";
  Type a = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  Type bt = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  Type c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  if (a != bt || !(a.isF16() || a.isBF16()))
    return "A and B are not both f16 or both bf16";
  if (!(c.isF32() || c.isF16() || c.isBF16()))
    return "C is not f32, f16 or bf16";
  auto aType = cast<RankedTensorType>(op.getDpsInputOperand(0)->get().getType());
  auto bType = cast<RankedTensorType>(op.getDpsInputOperand(1)->get().getType());
  int64_t k = aType.getShape().back();
  if (ShapedType::isDynamic(k) || k % 8 != 0)
    return "K is not a static multiple of 8";
  if (!shape->bTransposed) {
    int64_t n = bType.getShape().back();
    if (ShapedType::isDynamic(n) || n % 8 != 0)
      return "N (innermost in B) is not a static multiple of 8";
  }
  return "";
}


LogicalResult nvidia::replaceWithTensorCoreMatmul(RewriterBase &rewriter,
                                                  linalg::LinalgOp op) {
  if (!whyNotTensorCoreMatmul(op).empty())
    return failure();
  MatmulShape shape = *nvidia::matmulShapeOf(op);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value initTensor = op.getDpsInitOperand(0)->get();
  bool zeroInit = nvidia::isZeroFill(initTensor);
  MatmulBuffers buf;
  buf.a = nvidia::readOnlyBuffer(rewriter, loc, op.getDpsInputOperand(0)->get());
  buf.b = nvidia::readOnlyBuffer(rewriter, loc, op.getDpsInputOperand(1)->get());
  if (!zeroInit)
    buf.init = nvidia::readOnlyBuffer(rewriter, loc, initTensor);
  auto cTensor = cast<RankedTensorType>(initTensor.getType());
  buf.c = nvidia::allocLike(rewriter, loc, initTensor);

  Type element = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  int64_t rank = cTensor.getRank();
  auto dim = [&](int64_t i) -> Value {
    return tensor::DimOp::create(rewriter, loc, initTensor, i);
  };
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto ceil = [&](Value x, int64_t d) -> Value {
    return arith::MaxUIOp::create(
        rewriter, loc, arith::CeilDivUIOp::create(rewriter, loc, x, idx(d)), idx(1));
  };
  Value batches = rank == 3 ? arith::MaxUIOp::create(rewriter, loc, dim(0), idx(1)).getResult()
                            : idx(1);
  auto space = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto tile = MemRefType::get({2, 64, kTileK}, element, MemRefLayoutAttrInterface{},
                              space);
  // Empty extents launch one block per empty dim, which stores nothing.
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, ceil(dim(rank - 2), kTileM), ceil(dim(rank - 1), kTileN),
      batches, idx(kThreads), idx(1), idx(1), nullptr, nullptr, {},
      TypeRange{tile, tile});
  {
    OpBuilder::InsertionGuard inner(rewriter);
    rewriter.setInsertionPointToStart(&launch.getBody().front());
    MatmulKernel(rewriter, loc, shape, element, buf, zeroInit, launch).build();
    gpu::TerminatorOp::create(rewriter, loc);
  }
  Value result = bufferization::ToTensorOp::create(
      rewriter, loc, cTensor, buf.c, /*restrict=*/true, /*writable=*/true);
  rewriter.replaceOp(op, result);
  return success();
}
