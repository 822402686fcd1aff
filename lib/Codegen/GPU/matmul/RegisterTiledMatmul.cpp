//===- RegisterTiledMatmul.cpp - f32 contractions in register tiles -------===//
//
// --rope-matmul-to-register-tiles: f32 contractions (the shapes the
// tensor-core matmul takes, MatmulShape.h) as a SIMT kernel on CUDA cores. A
// block of 256 threads computes a 64×64 tile of C; thread (ty, tx) of the
// 16×16 grid holds a 4×4 register tile, rows ty + 16·i and columns tx + 16·j
// (so a warp's threads read neighbouring columns of B and share rows of A,
// both conflict-free in shared memory). K advances in steps of 16: the
// block copies A's [64][16] and B's [16][64] tiles (B transposed on the way
// when stored [N, K]) into shared memory, then each thread runs 16 steps of
// 4 + 4 shared loads and 16 FMAs.
//
//===----------------------------------------------------------------------===//

#include "common/KernelOperands.h"
#include "matmul/MatmulShape.h"
#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEMATMULTOREGISTERTILES
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using nvidia::MatmulShape;

namespace {

constexpr int64_t kTile = 64, kStep = 16, kThreads = 256, kPerThread = 4;

class RegisterTiledKernel {
public:
  RegisterTiledKernel(OpBuilder &b, Location loc, const MatmulShape &shape,
                      Value a, Value bBuf, Value init, Value c, gpu::LaunchOp launch)
      : b(b), loc(loc), shape(shape), a(a), bBuf(bBuf), init(init), c(c),
        launch(launch) {}
  void build();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return add(x, idx(y)); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, idx(y)); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  SmallVector<Value> at(bool hasBatch, Value row, Value col) {
    SmallVector<Value> v;
    if (hasBatch)
      v.push_back(batch);
    v.append({row, col});
    return v;
  }
  /// `buffer`[row, col] (and batch) if inside, else 0.
  Value loadOrZero(Value buffer, bool hasBatch, Value row, Value col,
                   Value rows, Value cols);
  void stage(Value k0);
  void storeResults(ArrayRef<Value> acc);

  OpBuilder &b;
  Location loc;
  const MatmulShape &shape;
  Value a, bBuf, init, c;
  gpu::LaunchOp launch;
  Value batch, tid, tx, ty, m0, n0, sizeM, sizeN, sizeK, aSmem, bSmem;
};

Value RegisterTiledKernel::loadOrZero(Value buffer, bool hasBatch, Value row,
                                      Value col, Value rows, Value cols) {
  auto branch = scf::IfOp::create(b, loc, b.getF32Type(),
                                  both(lt(row, rows), lt(col, cols)), true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(branch.thenBlock());
  scf::YieldOp::create(b, loc, ValueRange{memref::LoadOp::create(
                                   b, loc, buffer, at(hasBatch, row, col))});
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(
      b, loc, ValueRange{arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0))});
  return branch.getResult(0);
}

/// A[m0.., k0..] into aSmem[64][16] and B into bSmem[16][64] (k-major), 4
/// elements of each per thread, zero outside the operands.
void RegisterTiledKernel::stage(Value k0) {
  for (int64_t i = 0; i < kTile * kStep / kThreads; ++i) {
    Value e = add(tid, i * kThreads);
    Value r = arith::DivUIOp::create(b, loc, e, idx(kStep));
    Value k = arith::RemUIOp::create(b, loc, e, idx(kStep));
    Value x = loadOrZero(a, shape.aHasBatch, add(m0, r), add(k0, k), sizeM, sizeK);
    memref::StoreOp::create(b, loc, x, aSmem, ValueRange{r, k});
    // B [n][k]: the same walk (k fastest, coalesced), stored transposed;
    // B [k][n]: n fastest.
    if (shape.bTransposed) {
      Value y = loadOrZero(bBuf, shape.bHasBatch, add(n0, r), add(k0, k), sizeN, sizeK);
      memref::StoreOp::create(b, loc, y, bSmem, ValueRange{k, r});
    } else {
      Value kr = arith::DivUIOp::create(b, loc, e, idx(kTile));
      Value n = arith::RemUIOp::create(b, loc, e, idx(kTile));
      Value y = loadOrZero(bBuf, shape.bHasBatch, add(k0, kr), add(n0, n), sizeK, sizeN);
      memref::StoreOp::create(b, loc, y, bSmem, ValueRange{kr, n});
    }
  }
}

void RegisterTiledKernel::storeResults(ArrayRef<Value> acc) {
  Type cType = cast<MemRefType>(c.getType()).getElementType();
  for (int64_t i = 0; i < kPerThread; ++i)
    for (int64_t j = 0; j < kPerThread; ++j) {
      Value row = add(add(m0, ty), 16 * i), col = add(add(n0, tx), 16 * j);
      auto inside = scf::IfOp::create(b, loc, both(lt(row, sizeM), lt(col, sizeN)), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(inside.thenBlock());
      Value v = acc[kPerThread * i + j];
      SmallVector<Value> where = at(static_cast<bool>(shape.batch), row, col);
      if (init) {
        Value x = memref::LoadOp::create(b, loc, init, where);
        v = arith::AddFOp::create(b, loc, v, x);
      }
      if (!cType.isF32())
        v = arith::TruncFOp::create(b, loc, cType, v);
      memref::StoreOp::create(b, loc, v, c, where);
    }
}

void RegisterTiledKernel::build() {
  gpu::KernelDim3 ids = launch.getBlockIds();
  batch = ids.z;
  m0 = mul(ids.x, kTile);
  n0 = mul(ids.y, kTile);
  tid = launch.getThreadIds().x;
  tx = arith::RemUIOp::create(b, loc, tid, idx(16));
  ty = arith::DivUIOp::create(b, loc, tid, idx(16));
  int64_t rank = cast<MemRefType>(c.getType()).getRank();
  sizeM = memref::DimOp::create(b, loc, c, rank - 2);
  sizeN = memref::DimOp::create(b, loc, c, rank - 1);
  sizeK = memref::DimOp::create(b, loc, a, cast<MemRefType>(a.getType()).getRank() - 1);
  aSmem = launch.getWorkgroupAttributions()[0];
  bSmem = launch.getWorkgroupAttributions()[1];
  Value steps = arith::CeilDivUIOp::create(b, loc, sizeK, idx(kStep));
  SmallVector<Value> zeros(kPerThread * kPerThread,
                           arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)));
  auto loop = scf::ForOp::create(b, loc, idx(0), steps, idx(1), zeros);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> acc(loop.getRegionIterArgs());
    stage(mul(loop.getInductionVar(), kStep));
    gpu::BarrierOp::create(b, loc);
    for (int64_t k = 0; k < kStep; ++k) {
      SmallVector<Value> x, y;
      for (int64_t i = 0; i < kPerThread; ++i) {
        x.push_back(memref::LoadOp::create(b, loc, aSmem,
                                           ValueRange{add(ty, 16 * i), idx(k)}));
        y.push_back(memref::LoadOp::create(b, loc, bSmem,
                                           ValueRange{idx(k), add(tx, 16 * i)}));
      }
      for (int64_t i = 0; i < kPerThread; ++i)
        for (int64_t j = 0; j < kPerThread; ++j) {
          Value &v = acc[kPerThread * i + j];
          v = math::FmaOp::create(b, loc, x[i], y[j], v);
        }
    }
    // The next step overwrites the tiles.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }
  storeResults(SmallVector<Value>(loop.getResults()));
}

/// f32 A and B (C any float type) of a shape MatmulShape takes.
bool takes(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || failed(nvidia::matmulShapeOf(op)))
    return false;
  Type a = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  Type bt = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  Type c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  return a.isF32() && bt.isF32() && (c.isF32() || c.isF16() || c.isBF16());
}

void replace(RewriterBase &rewriter, linalg::LinalgOp op) {
  MatmulShape shape = *nvidia::matmulShapeOf(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value initTensor = op.getDpsInitOperand(0)->get();
  Value a = nvidia::readOnlyBuffer(rewriter, loc, op.getDpsInputOperand(0)->get());
  Value bBuf = nvidia::readOnlyBuffer(rewriter, loc, op.getDpsInputOperand(1)->get());
  Value init;
  if (!nvidia::isZeroFill(initTensor))
    init = nvidia::readOnlyBuffer(rewriter, loc, initTensor);
  auto cTensor = cast<RankedTensorType>(initTensor.getType());
  auto dim = [&](int64_t i) -> Value {
    return tensor::DimOp::create(rewriter, loc, initTensor, i);
  };
  Value c = nvidia::allocLike(rewriter, loc, initTensor);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto tiles = [&](Value x) -> Value {
    return arith::MaxUIOp::create(
        rewriter, loc, arith::CeilDivUIOp::create(rewriter, loc, x, idx(kTile)), idx(1));
  };
  int64_t rank = cTensor.getRank();
  Value batches = rank == 3
                      ? arith::MaxUIOp::create(rewriter, loc, dim(0), idx(1)).getResult()
                      : idx(1);
  auto space = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto aTile = MemRefType::get({kTile, kStep}, rewriter.getF32Type(),
                               MemRefLayoutAttrInterface{}, space);
  auto bTile = MemRefType::get({kStep, kTile}, rewriter.getF32Type(),
                               MemRefLayoutAttrInterface{}, space);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, tiles(dim(rank - 2)), tiles(dim(rank - 1)), batches,
      idx(kThreads), idx(1), idx(1), nullptr, nullptr, {}, TypeRange{aTile, bTile});
  {
    OpBuilder::InsertionGuard g(rewriter);
    rewriter.setInsertionPointToStart(&launch.getBody().front());
    RegisterTiledKernel(rewriter, loc, shape, a, bBuf, init, c, launch).build();
    gpu::TerminatorOp::create(rewriter, loc);
  }
  rewriter.replaceOp(op, bufferization::ToTensorOp::create(rewriter, loc, cTensor, c,
                                                           true, true).getResult());
}

struct RopeMatmulToRegisterTilesPass
    : public rope::impl::RopeMatmulToRegisterTilesBase<RopeMatmulToRegisterTilesPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (takes(op))
        matmuls.push_back(op);
    });
    for (linalg::LinalgOp op : matmuls)
      replace(rewriter, op);
  }
};

} // namespace
