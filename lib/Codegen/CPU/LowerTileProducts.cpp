//===- LowerTileProducts.cpp - packed products as AMX tile loops ----------===//
//
// The product --rope-pack-tile-products marked, on memrefs, as loops of amx
// ops: 32 × 32 blocks of four accumulator tiles, in column panels and K
// slices sized for L2.
//
//===----------------------------------------------------------------------===//

#include "TileProducts.h"
#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPELOWERTILEPRODUCTS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::tiles;

/// Blocks of a column panel (256 columns) and K steps of a slice (512): the
/// slice of B a panel reads, 256 KiB of bf16, stays in L2 while every row
/// panel of A streams past it.
static constexpr int64_t kPanelBlocks = 8;
static constexpr int64_t kSliceSteps = 16;

/// The K steps of a slice: the largest divisor of `kSteps` up to
/// kSliceSteps, so that every slice is whole and its steps unroll.
static int64_t sliceStepsFor(int64_t kSteps) {
  for (int64_t steps = kSliceSteps; steps > 1; --steps)
    if (kSteps % steps == 0)
      return steps;
  return 1;
}

/// `memref` with its last two dims merged (a packed operand's [.., 16, 2]
/// pairs, or [.., 32, 2], as one row of a tile).
static Value mergeLastTwoDims(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0, e = type.getRank() - 2; i < e; ++i)
    groups.push_back({i});
  groups.push_back({type.getRank() - 2, type.getRank() - 1});
  return memref::CollapseShapeOp::create(b, loc, memref, groups);
}

namespace {
/// What the loops of one product read and write.
struct PackedOperands {
  Value a; // [b..., row panels, K / 32, 32, 32]
  Value b; // [b..., column panels, K / 32, 16, 64]
  Value c; // [b..., row panels, column panels, 32, 32], f32
  Type elementType;
  unsigned batchRank;
  int64_t kSteps; // K / 32, static
};

/// Builds the loops of one product.
class TileLoopBuilder {
public:
  TileLoopBuilder(OpBuilder &b, Location loc, const PackedOperands &operands)
      : b(b), loc(loc), ops(operands),
        sliceSteps(sliceStepsFor(operands.kSteps)) {
    MLIRContext *ctx = b.getContext();
    accType = amx::TileType::get({kTileRows, kTileRows}, Float32Type::get(ctx));
    inType = amx::TileType::get({kTileRows, kBlock}, operands.elementType);
  }

  void build(ValueRange batch) {
    Value zero = constant(0), one = constant(1);
    Value rowPanels = dim(ops.c, ops.batchRank);
    Value columnPanels = dim(ops.c, ops.batchRank + 1);
    Value kSteps = constant(ops.kSteps);
    forLoop(zero, columnPanels, constant(kPanelBlocks), [&](Value panel) {
      Value panelEnd = minOf(add(panel, constant(kPanelBlocks)), columnPanels);
      forLoop(zero, kSteps, constant(sliceSteps), [&](Value slice) {
        forLoop(zero, rowPanels, one, [&](Value i) {
          forLoop(panel, panelEnd, one,
                  [&](Value j) { buildBlock(batch, i, j, slice); });
        });
      });
    });
  }

private:
  Value constant(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value dim(Value memref, int64_t i) {
    return memref::DimOp::create(b, loc, memref, i);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value minOf(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  void forLoop(Value lb, Value ub, Value step,
               llvm::function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }
  Value loadInput(Value memref, ArrayRef<Value> indices) {
    return amx::TileLoadOp::create(b, loc, inType, memref, indices);
  }
  SmallVector<Value> at(ValueRange batch, std::initializer_list<Value> rest) {
    SmallVector<Value> indices(batch);
    indices.append(rest);
    return indices;
  }

  /// Block (i, j) of C over the K steps of the slice from `slice`: its
  /// four accumulators loaded, the steps, stored.
  void buildBlock(ValueRange batch, Value i, Value j, Value slice) {
    Value zero = constant(0), half = constant(kTileRows);
    Value bHalf = constant(kBlock); // B's second tile: 16 columns × 2 on
    SmallVector<Value> acc;
    for (Value r : {zero, half})
      for (Value s : {zero, half})
        acc.push_back(amx::TileLoadOp::create(b, loc, accType, ops.c,
                                              at(batch, {i, j, r, s})));
    // The slice's steps unrolled: tile values never cross a block
    // boundary (the LLVM conversion of branches does not know their type),
    // and the accumulators stay in tile registers throughout.
    for (int64_t step = 0; step < sliceSteps; ++step) {
      Value k = add(slice, constant(step));
      Value a0 = loadInput(ops.a, at(batch, {i, k, zero, zero}));
      Value a1 = loadInput(ops.a, at(batch, {i, k, half, zero}));
      Value b0 = loadInput(ops.b, at(batch, {j, k, zero, zero}));
      Value b1 = loadInput(ops.b, at(batch, {j, k, zero, bHalf}));
      int t = 0;
      for (Value x : {a0, a1})
        for (Value y : {b0, b1}) {
          acc[t] = amx::TileMulFOp::create(b, loc, accType, x, y, acc[t]);
          ++t;
        }
    }
    int t = 0;
    for (Value r : {zero, half})
      for (Value s : {zero, half})
        amx::TileStoreOp::create(b, loc, ops.c, at(batch, {i, j, r, s}),
                                 acc[t++]);
  }

  OpBuilder &b;
  Location loc;
  const PackedOperands &ops;
  int64_t sliceSteps;
  amx::TileType accType, inType;
};
} // namespace

/// `op` (a marked product on memrefs) as tile loops.
static LogicalResult lowerTileProduct(RewriterBase &rewriter,
                                      linalg::GenericOp op) {
  Location loc = op.getLoc();
  auto cType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!cType || cType.getRank() < 4)
    return op.emitOpError("is marked ")
           << kTileProduct << " but is not its packed form on memrefs";
  rewriter.setInsertionPoint(op);
  PackedOperands operands;
  operands.batchRank = cType.getRank() - 4;
  operands.a = mergeLastTwoDims(rewriter, loc, op.getDpsInputs()[0]);
  operands.b = mergeLastTwoDims(rewriter, loc, op.getDpsInputs()[1]);
  operands.c = op.getDpsInits()[0];
  operands.elementType = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  operands.kSteps =
      cast<MemRefType>(operands.a.getType()).getDimSize(operands.batchRank + 1);
  if (ShapedType::isDynamic(operands.kSteps))
    return op.emitOpError("is marked ")
           << kTileProduct << " but its K extent is not static";

  // Batch entries one after another (the forall around the product gives
  // each core its own already).
  SmallVector<Value> batch;
  std::function<void(unsigned)> nest = [&](unsigned level) {
    if (level == operands.batchRank) {
      TileLoopBuilder(rewriter, loc, operands).build(batch);
      return;
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value extent = memref::DimOp::create(rewriter, loc, operands.c, level);
    auto loop = scf::ForOp::create(rewriter, loc, zero, extent, one);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    batch.push_back(loop.getInductionVar());
    nest(level + 1);
    batch.pop_back();
  };
  nest(0);
  rewriter.eraseOp(op);
  return success();
}

namespace {
struct RopeLowerTileProductsPass
    : public rope::impl::RopeLowerTileProductsBase<RopeLowerTileProductsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> products;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kTileProduct))
        products.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : products)
      if (failed(lowerTileProduct(rewriter, op)))
        return signalPassFailure();
  }
};
} // namespace
