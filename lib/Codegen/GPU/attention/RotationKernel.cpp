//===- RotationKernel.cpp - rope.rotate as 16-byte vector kernels ---------===//
//
// --rope-rotation-to-vector-kernel: each rope.rotate on tensors (outside
// attention, which rotates in its own kernel) becomes its cos/sin table
// (rope.table, a small kernel of its own) and one kernel over the input's
// rows (every dim but the head dim) in which a thread rotates one unit: with
// the half layout the 8-element chunks c and c + r/16 of a row (8 pairs),
// interleaved one chunk (4 pairs), loaded and stored as 16-byte vectors
// (f16/bf16; f32 chunks are two), the coefficients loaded as vectors from
// the table row of the element's position. Dims outside the rotated range
// are copied chunk by chunk by a second kernel. Every element is read once
// and written once.
//
//===----------------------------------------------------------------------===//

#include "common/KernelOperands.h"
#include "rope/Codegen/GPU/Passes.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEROTATIONTOVECTORKERNEL
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

constexpr int64_t kChunk = 8, kBlock = 256;

/// Whether the kernel takes `op`: a static head dim in whole chunks, the
/// rotated range on whole chunks (the half layout's halves too).
bool takes(RotateOp op) {
  int64_t d = op.getHeadDim();
  if (ShapedType::isDynamic(d) || d % kChunk != 0)
    return false;
  RotaryRange dims = op.getRotaryRange();
  if (dims.offset % kChunk != 0)
    return false;
  return dims.layout == RotaryLayout::half ? (dims.dims / 2) % kChunk == 0
                                           : dims.dims % kChunk == 0;
}

class RotationKernels {
public:
  RotationKernels(RewriterBase &b, RotateOp op)
      : b(b), op(op), loc(op.getLoc()), dims(op.getRotaryRange()) {}
  Value build();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, idx(y)); }
  Value add(Value x, int64_t y) { return arith::AddIOp::create(b, loc, x, idx(y)); }

  /// A 1-D launch of one thread per unit (of `unitsPerRow` per row), its
  /// body given (row indices, unit within the row) for live threads.
  void launch(int64_t unitsPerRow,
              function_ref<void(ArrayRef<Value>, Value)> body);
  SmallVector<Value> rowIndices(Value row);
  Value loadChunk(ArrayRef<Value> at, Value chunk);
  void storeChunk(ArrayRef<Value> at, Value chunk, Value x);
  Value coefficients(Value table, ArrayRef<Value> at, Value col, int64_t n);
  void rotateHalf(ArrayRef<Value> at, Value unit);
  void rotateInterleaved(ArrayRef<Value> at, Value unit);

  RewriterBase &b;
  RotateOp op;
  Location loc;
  RotaryRange dims;
  Value input, output, cos, sin, rows;
  SmallVector<Value> leading; // extents of the dims before the head dim
};

SmallVector<Value> RotationKernels::rowIndices(Value row) {
  SmallVector<Value> at(leading.size());
  for (int64_t i = leading.size() - 1; i >= 0; --i) {
    at[i] = arith::RemUIOp::create(b, loc, row, leading[i]);
    row = arith::DivUIOp::create(b, loc, row, leading[i]);
  }
  return at;
}

void RotationKernels::launch(int64_t unitsPerRow,
                             function_ref<void(ArrayRef<Value>, Value)> body) {
  Value units = mul(rows, unitsPerRow);
  Value blocks = arith::MaxUIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, units, idx(kBlock)), idx(1));
  auto launch = gpu::LaunchOp::create(b, loc, blocks, idx(1), idx(1),
                                      idx(kBlock), idx(1), idx(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value unit = arith::AddIOp::create(
      b, loc, mul(launch.getBlockIds().x, kBlock), launch.getThreadIds().x);
  auto live = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, unit, units),
      false);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(live.thenBlock());
  Value row = arith::DivUIOp::create(b, loc, unit, idx(unitsPerRow));
  body(rowIndices(row), arith::RemUIOp::create(b, loc, unit, idx(unitsPerRow)));
}

Value RotationKernels::loadChunk(ArrayRef<Value> at, Value chunk) {
  SmallVector<Value> indices(at);
  indices.push_back(mul(chunk, kChunk));
  Type element = op.getInput().getType().getElementType();
  Value x = vector::LoadOp::create(b, loc, VectorType::get({kChunk}, element),
                                   input, indices, false, llvm::MaybeAlign(16));
  auto wide = VectorType::get({kChunk}, b.getF32Type());
  return element.isF32() ? x : arith::ExtFOp::create(b, loc, wide, x).getResult();
}

void RotationKernels::storeChunk(ArrayRef<Value> at, Value chunk, Value x) {
  SmallVector<Value> indices(at);
  indices.push_back(mul(chunk, kChunk));
  Type element = op.getInput().getType().getElementType();
  if (!element.isF32())
    x = arith::TruncFOp::create(b, loc, VectorType::get({kChunk}, element), x);
  vector::StoreOp::create(b, loc, x, output, indices, false, llvm::MaybeAlign(16));
}

/// `n` coefficients from column `col` of the table row of the element's
/// position: the table is positions' shape × [r/2], positions [S] (at the
/// sequence dim) or [B, S] (dim 0 too).
Value RotationKernels::coefficients(Value table, ArrayRef<Value> at, Value col,
                                    int64_t n) {
  SmallVector<Value> indices;
  if (cast<MemRefType>(table.getType()).getRank() == 3)
    indices.push_back(at[0]);
  indices.append({at[op.getNormalizedSeqDim()], col});
  return vector::LoadOp::create(b, loc, VectorType::get({n}, b.getF32Type()),
                                table, indices, false, llvm::MaybeAlign(16));
}

/// Chunks c = offset/8 + u and c + r/16: 8 pairs (x_i, x_{i + r/2}).
void RotationKernels::rotateHalf(ArrayRef<Value> at, Value unit) {
  Value c0 = add(unit, dims.offset / kChunk);
  Value c1 = add(c0, dims.dims / 2 / kChunk);
  Value col = mul(unit, kChunk);
  auto [r0, r1] = lowering::buildPairRotation(
      b, loc, loadChunk(at, c0), loadChunk(at, c1),
      coefficients(cos, at, col, kChunk), coefficients(sin, at, col, kChunk));
  storeChunk(at, c0, r0);
  storeChunk(at, c1, r1);
}

/// One chunk of 4 pairs (x_{2i}, x_{2i+1}), split, rotated, merged.
void RotationKernels::rotateInterleaved(ArrayRef<Value> at, Value unit) {
  Value chunk = add(unit, dims.offset / kChunk);
  Value x = loadChunk(at, chunk);
  Value even = vector::ShuffleOp::create(b, loc, x, x, ArrayRef<int64_t>{0, 2, 4, 6});
  Value odd = vector::ShuffleOp::create(b, loc, x, x, ArrayRef<int64_t>{1, 3, 5, 7});
  Value col = mul(unit, kChunk / 2);
  auto [r0, r1] = lowering::buildPairRotation(
      b, loc, even, odd, coefficients(cos, at, col, kChunk / 2),
      coefficients(sin, at, col, kChunk / 2));
  storeChunk(at, chunk,
             vector::ShuffleOp::create(b, loc, r0, r1,
                                       ArrayRef<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
}

Value RotationKernels::build() {
  RankedTensorType type = op.getInput().getType();
  auto table = TableOp::create(b, loc, op.getPositions(), op.getSpec(),
                               op.getHeadDim());
  input = nvidia::readOnlyBuffer(b, loc, op.getInput());
  cos = nvidia::readOnlyBuffer(b, loc, table.getCos());
  sin = nvidia::readOnlyBuffer(b, loc, table.getSin());
  rows = idx(1);
  for (int64_t i = 0; i + 1 < type.getRank(); ++i) {
    leading.push_back(tensor::DimOp::create(b, loc, op.getInput(), i));
    rows = arith::MulIOp::create(b, loc, rows, leading.back());
  }
  output = nvidia::allocLike(b, loc, op.getInput());
  bool half = dims.layout == RotaryLayout::half;
  launch(half ? dims.dims / 2 / kChunk : dims.dims / kChunk,
         [&](ArrayRef<Value> at, Value unit) {
           half ? rotateHalf(at, unit) : rotateInterleaved(at, unit);
         });
  int64_t plain = (op.getHeadDim() - dims.dims) / kChunk;
  if (plain > 0)
    launch(plain, [&](ArrayRef<Value> at, Value unit) {
      Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, unit,
                                          idx(dims.offset / kChunk));
      Value chunk = arith::SelectOp::create(b, loc, below, unit,
                                            add(unit, dims.dims / kChunk));
      storeChunk(at, chunk, loadChunk(at, chunk));
    });
  return bufferization::ToTensorOp::create(b, loc, type, output, true, true);
}

struct RopeRotationToVectorKernelPass
    : public rope::impl::RopeRotationToVectorKernelBase<
          RopeRotationToVectorKernelPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<RotateOp> rotations;
    getOperation()->walk([&](RotateOp op) {
      if (takes(op))
        rotations.push_back(op);
    });
    for (RotateOp op : rotations) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, RotationKernels(rewriter, op).build());
    }
  }
};

} // namespace
