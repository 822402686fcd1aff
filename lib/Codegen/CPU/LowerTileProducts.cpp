//===- LowerTileProducts.cpp - packed products as matrix-engine loops -----===//
//
// The product --rope-pack-tile-products marked, on memrefs, as loops of its
// engine's ops: on AMX, 32 × 32 blocks of four accumulator tiles, each block
// fetching the lines the next one reads; with AVX-512 BF16, the same blocks
// as register blocks of 8 rows of vdpbf16ps; in column panels and K slices
// sized for L2 either way.
//
//===----------------------------------------------------------------------===//

#include "TileProducts.h"
#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPELOWERTILEPRODUCTS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::tiles;

/// Blocks of a column panel (256 columns) and K steps of a slice (up to
/// 2048): the slice of B a panel reads, up to 1 MiB of bf16, stays in L2
/// while every row panel of A streams past it, and the accumulators are
/// loaded and stored once per slice (C, f32, is larger than L2: its tiles
/// come from L3). On a 2-core Sapphire Rapids VM, 4096³ bf16 took 106 ms
/// with slices of 16 steps, 90 with 32 and 78 with 64 (128: 102, the slice
/// of B no longer in L2); panels of 4 or 16 blocks, and row blocks of 4-32
/// panels around the slices, were slower.
static constexpr int64_t kPanelBlocks = 8;
static constexpr int64_t kSliceSteps = 64;

/// The dot products' rows of C in registers at a time (8 rows × 32
/// columns: 16 accumulators of the 32 AVX-512 registers, B's two and a
/// broadcast pair beside them), and their K slice: 32 steps (1024), whose
/// slice of B for a column panel (512 KiB of bf16) fits Zen 4's 1 MiB L2.
static constexpr int64_t kDotRows = 8;
static constexpr int64_t kDotSliceSteps = 32;

/// The K steps of a slice: the largest divisor of `kSteps` up to `most`,
/// so that every slice is whole (and, on tiles, its steps unroll).
static int64_t sliceStepsFor(int64_t kSteps, int64_t most) {
  for (int64_t steps = most; steps > 1; --steps)
    if (kSteps % steps == 0)
      return steps;
  return 1;
}

/// `memref` with its dims from `first` on merged into one (B's [.., 32, 2]
/// as one 64-element row of a tile; A's [.., K / 32, 16, 2] and C's
/// [.., N / 32, 32] as the rows they are, whose stride the tiles read).
static Value mergeDimsFrom(OpBuilder &b, Location loc, Value memref,
                           int64_t first) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < first; ++i)
    groups.push_back({i});
  ReassociationIndices last;
  for (int64_t i = first; i < type.getRank(); ++i)
    last.push_back(i);
  groups.push_back(last);
  return memref::CollapseShapeOp::create(b, loc, memref, groups);
}

/// `memref` with dims `first` and `first + 1` merged into one.
static Value mergeDimsAt(OpBuilder &b, Location loc, Value memref,
                         int64_t first) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (i == first + 1)
      groups.back().push_back(i);
    else
      groups.push_back({i});
  }
  return memref::CollapseShapeOp::create(b, loc, memref, groups);
}

namespace {
/// What the loops of one product read and write.
struct PackedOperands {
  Value a; // [b..., row panels, 32, K]
  Value b; // [b..., column panels, K / 32, 16, 64]; K / 2 rows for dots
  Value c; // [b..., row panels, 32, N], f32
  Value columnPanels;
  Type elementType;
  unsigned batchRank;
  int64_t kSteps; // K / 32, static
};

/// A cache line to fetch: a memref and the indices of its first element.
using Line = std::pair<Value, SmallVector<Value>>;

/// The loops around the blocks of one product, whichever engine computes
/// them: column panels of kPanelBlocks blocks by K slices of `sliceSteps`,
/// every row panel in each, then the panel's blocks; `buildBlock` computes
/// block (i, j) of C over one slice.
class BlockLoopBuilder {
public:
  BlockLoopBuilder(OpBuilder &b, Location loc, const PackedOperands &operands,
                   int64_t sliceSteps)
      : b(b), loc(loc), ops(operands), sliceSteps(sliceSteps) {}
  virtual ~BlockLoopBuilder() = default;

  void build(ValueRange batch) {
    Value zero = constant(0), one = constant(1);
    Value rowPanels = dim(ops.c, ops.batchRank);
    Value columnPanels = ops.columnPanels;
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

protected:
  virtual void buildBlock(ValueRange batch, Value i, Value j, Value slice) = 0;

  Value constant(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value dim(Value memref, int64_t i) {
    return memref::DimOp::create(b, loc, memref, i);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value minOf(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  void forLoop(Value lb, Value ub, Value step,
               llvm::function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }
  SmallVector<Value> at(ValueRange batch, std::initializer_list<Value> rest) {
    SmallVector<Value> indices(batch);
    indices.append(rest);
    return indices;
  }

  OpBuilder &b;
  Location loc;
  const PackedOperands &ops;
  int64_t sliceSteps;
};

/// Blocks on AMX tiles.
class TileLoopBuilder : public BlockLoopBuilder {
public:
  TileLoopBuilder(OpBuilder &b, Location loc, const PackedOperands &operands)
      : BlockLoopBuilder(b, loc, operands,
                         sliceStepsFor(operands.kSteps, kSliceSteps)) {
    MLIRContext *ctx = b.getContext();
    accType = amx::TileType::get({kTileRows, kTileRows}, Float32Type::get(ctx));
    inType = amx::TileType::get({kTileRows, kBlock}, operands.elementType);
  }

private:
  Value loadInput(Value memref, ArrayRef<Value> indices) {
    return amx::TileLoadOp::create(b, loc, inType, memref, indices);
  }

  /// The cache lines the blocks after (i, j) read first, fetched while
  /// (i, j) computes: the next block's accumulators (C is larger than L2:
  /// its tiles come from L3, once per slice), and an eighth of the next row
  /// panel's rows of A for this slice (one eighth per block of a column
  /// panel), which the panel's first block would otherwise wait for.
  /// A prefetch past the end of a buffer (after the last block) cannot
  /// fault.
  SmallVector<Line> nextBlockLines(ValueRange batch, Value i, Value j,
                                   Value slice) {
    SmallVector<Line> lines;
    Value nextColumn = mul(add(j, constant(1)), constant(kBlock));
    for (int64_t r = 0; r < kBlock; ++r)
      for (int64_t s = 0; s < kBlock; s += kTileRows)
        lines.push_back(
            {ops.c, at(batch, {i, constant(r), add(nextColumn, constant(s))})});
    constexpr int64_t kRowsPerBlock = kBlock / kPanelBlocks;
    Value nextPanel = add(i, constant(1));
    Value firstRow =
        mul(arith::RemUIOp::create(b, loc, j, constant(kPanelBlocks)),
            constant(kRowsPerBlock));
    for (int64_t r = 0; r < kRowsPerBlock; ++r)
      for (int64_t step = 0; step < sliceSteps; ++step)
        lines.push_back(
            {ops.a,
             at(batch, {nextPanel, add(firstRow, constant(r)),
                        mul(add(slice, constant(step)), constant(kBlock))})});
    return lines;
  }

  /// Block (i, j) of C over the K steps of the slice from `slice`: its
  /// four accumulators loaded, the steps (with the next block's prefetches
  /// spread over them), stored.
  void buildBlock(ValueRange batch, Value i, Value j, Value slice) override {
    Value zero = constant(0), half = constant(kTileRows);
    Value bHalf = constant(kBlock); // B's second tile: 16 columns × 2 on
    Value column = mul(j, constant(kBlock));
    Value columns[] = {column, add(column, half)};
    SmallVector<Value> acc;
    for (Value r : {zero, half})
      for (Value s : columns)
        acc.push_back(amx::TileLoadOp::create(b, loc, accType, ops.c,
                                              at(batch, {i, r, s})));
    SmallVector<Line> prefetches = nextBlockLines(batch, i, j, slice);
    size_t perStep = llvm::divideCeil(prefetches.size(), sliceSteps);
    // The slice's steps unrolled: tile values never cross a block
    // boundary (the LLVM conversion of branches does not know their type),
    // and the accumulators stay in tile registers throughout.
    for (int64_t step = 0; step < sliceSteps; ++step) {
      for (size_t p = step * perStep,
                  e = std::min(prefetches.size(), (step + 1) * perStep);
           p < e; ++p)
        memref::PrefetchOp::create(b, loc, prefetches[p].first,
                                   prefetches[p].second, /*isWrite=*/false,
                                   /*localityHint=*/3, /*isDataCache=*/true);
      Value k = add(slice, constant(step));
      Value kColumn = mul(k, constant(kBlock));
      Value a0 = loadInput(ops.a, at(batch, {i, zero, kColumn}));
      Value a1 = loadInput(ops.a, at(batch, {i, half, kColumn}));
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
      for (Value s : columns)
        amx::TileStoreOp::create(b, loc, ops.c, at(batch, {i, r, s}), acc[t++]);
  }

  amx::TileType accType, inType;
};

/// Blocks of AVX-512 BF16 dot products (vdpbf16ps), on the tiles' layout:
/// a row of B's panel for one k pair is two registers of 16 columns × the
/// pair, and a pair of one row of A, broadcast to every lane, multiplies
/// both. A block's 32 rows are computed kDotRows at a time, their
/// accumulators in registers across the slice.
class DotLoopBuilder : public BlockLoopBuilder {
public:
  DotLoopBuilder(OpBuilder &b, Location loc, const PackedOperands &operands)
      : BlockLoopBuilder(b, loc, operands,
                         sliceStepsFor(operands.kSteps, kDotSliceSteps)) {
    MLIRContext *ctx = b.getContext();
    accType = VectorType::get({kLanes}, Float32Type::get(ctx));
    pairsType = VectorType::get({2 * kLanes}, operands.elementType);
  }

private:
  static constexpr int64_t kLanes = 16; // f32 lanes of a 512-bit register

  /// The pair of row `row` of A at k pair `pair`, in every lane: its 32
  /// bits loaded and broadcast (one vpbroadcastd from memory).
  Value broadcastPair(ValueRange batch, Value i, Value row, Value pair) {
    Value two = constant(2);
    auto pairType = VectorType::get({2}, ops.elementType);
    Value bits = vector::LoadOp::create(b, loc, pairType, ops.a,
                                        at(batch, {i, row, mul(pair, two)}));
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), bits);
    Value scalar = vector::ExtractOp::create(b, loc, word, 0);
    Value lanes = vector::BroadcastOp::create(
        b, loc, VectorType::get({kLanes}, b.getI32Type()), scalar);
    return vector::BitCastOp::create(b, loc, pairsType, lanes);
  }

  void buildBlock(ValueRange batch, Value i, Value j, Value slice) override {
    Value column = mul(j, constant(kBlock));
    Value columns[] = {column, add(column, constant(kLanes))};
    // B's k pairs of the slice, as rows of the [.., K / 2, 64] panel.
    Value pairsPerStep = constant(kBlock / 2);
    Value firstPair = mul(slice, pairsPerStep);
    Value endPair = add(firstPair, constant(sliceSteps * (kBlock / 2)));
    forLoop(
        constant(0), constant(kBlock), constant(kDotRows), [&](Value firstRow) {
          SmallVector<Value> rows, acc;
          rows.push_back(firstRow);
          for (int64_t r = 1; r < kDotRows; ++r)
            rows.push_back(add(firstRow, constant(r)));
          for (Value row : rows)
            for (Value s : columns)
              acc.push_back(vector::LoadOp::create(b, loc, accType, ops.c,
                                                   at(batch, {i, row, s})));
          auto pairs =
              scf::ForOp::create(b, loc, firstPair, endPair, constant(1), acc);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(pairs.getBody());
            Value pair = pairs.getInductionVar();
            Value zero = constant(0), half = constant(kBlock);
            Value b0 = vector::LoadOp::create(b, loc, pairsType, ops.b,
                                              at(batch, {j, pair, zero}));
            Value b1 = vector::LoadOp::create(b, loc, pairsType, ops.b,
                                              at(batch, {j, pair, half}));
            ValueRange sums = pairs.getRegionIterArgs();
            SmallVector<Value> next;
            for (auto [r, row] : llvm::enumerate(rows)) {
              Value x = broadcastPair(batch, i, row, pair);
              next.push_back(x86vector::DotBF16Op::create(b, loc, accType,
                                                          sums[2 * r], x, b0));
              next.push_back(x86vector::DotBF16Op::create(
                  b, loc, accType, sums[2 * r + 1], x, b1));
            }
            scf::YieldOp::create(b, loc, next);
          }
          unsigned t = 0;
          for (Value row : rows)
            for (Value s : columns)
              vector::StoreOp::create(b, loc, pairs.getResult(t++), ops.c,
                                      at(batch, {i, row, s}));
        });
  }

  VectorType accType, pairsType;
};
} // namespace

/// `op` (a marked product on memrefs) as loops of its engine's
/// instructions.
static LogicalResult lowerTileProduct(RewriterBase &rewriter,
                                      linalg::GenericOp op) {
  Location loc = op.getLoc();
  auto engine = op->getAttrOfType<StringAttr>(kTileProduct);
  bool onTiles = engine && engine.getValue() == kTileEngine;
  bool onDots = engine && engine.getValue() == kDotEngine;
  if (!onTiles && !onDots)
    return op.emitOpError("is marked ")
           << kTileProduct << " without a known engine (\"" << kTileEngine
           << "\" or \"" << kDotEngine << "\")";
  auto notPackedForm = [&] {
    return op.emitOpError("is marked ")
           << kTileProduct << " but is not its packed form on memrefs";
  };
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return notPackedForm();
  auto aType = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto bType = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  auto cType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!aType || !bType || !cType || cType.getRank() < 4 ||
      aType.getRank() != cType.getRank() + 1 ||
      bType.getRank() != cType.getRank() + 1)
    return notPackedForm();
  unsigned batchRank = cType.getRank() - 4;
  int64_t kSteps = aType.getDimSize(batchRank + 2);
  if (ShapedType::isDynamic(kSteps))
    return op.emitOpError("is marked ")
           << kTileProduct << " but its K extent is not static";
  if (onDots && !aType.getElementType().isBF16())
    return op.emitOpError("is marked ") << kTileProduct << " = \"" << kDotEngine
                                        << "\" but its inputs are not bf16";

  rewriter.setInsertionPoint(op);
  PackedOperands operands;
  operands.batchRank = batchRank;
  operands.kSteps = kSteps;
  operands.elementType = aType.getElementType();
  operands.columnPanels =
      memref::DimOp::create(rewriter, loc, op.getDpsInits()[0], batchRank + 2);
  operands.a =
      mergeDimsFrom(rewriter, loc, op.getDpsInputs()[0], batchRank + 2);
  operands.b =
      mergeDimsFrom(rewriter, loc, op.getDpsInputs()[1], batchRank + 3);
  if (onDots) // [.., K / 32, 16, 64] as the panel's rows of k pairs
    operands.b = mergeDimsAt(rewriter, loc, operands.b, batchRank + 1);
  operands.c = mergeDimsFrom(rewriter, loc, op.getDpsInits()[0], batchRank + 2);

  // Batch entries one after another (the forall around the product gives
  // each core its own already).
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> extents;
  for (unsigned level = 0; level < batchRank; ++level)
    extents.push_back(memref::DimOp::create(rewriter, loc, operands.c, level));
  scf::buildLoopNest(
      rewriter, loc, SmallVector<Value>(batchRank, zero), extents,
      SmallVector<Value>(batchRank, one),
      [&](OpBuilder &nested, Location nestedLoc, ValueRange batch) {
        if (onTiles)
          TileLoopBuilder(nested, nestedLoc, operands).build(batch);
        else
          DotLoopBuilder(nested, nestedLoc, operands).build(batch);
      });
  rewriter.eraseOp(op);
  return success();
}

/// libRopeRuntime.so's checks that the host has an engine (and, for the
/// tiles, that Linux grants their state: rope/Runtime/CpuEngines.h); they
/// do not return where not.
static constexpr llvm::StringLiteral kRequireTiles = "ropeRequireCpuTiles";
static constexpr llvm::StringLiteral kRequireDotProducts =
    "ropeRequireCpuDotProducts";

/// A check of the runtime, declared once, as an LLVM function: a C
/// function, which the C-interface wrappers that func.func declarations get
/// must not wrap.
static LLVM::LLVMFuncOp getOrDeclareCheck(RewriterBase &rewriter,
                                          ModuleOp module, StringRef name,
                                          TypeRange arguments) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(rewriter.getContext()),
      SmallVector<Type>(arguments));
  return LLVM::LLVMFuncOp::create(rewriter, module.getLoc(), name, type);
}

namespace {
/// What the products of one function need of the host.
struct EnginesUsed {
  SmallVector<linalg::GenericOp> products;
  bool tiles = false, fp16 = false, dotProducts = false;
};

struct RopeLowerTileProductsPass
    : public rope::impl::RopeLowerTileProductsBase<RopeLowerTileProductsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::MapVector<func::FuncOp, EnginesUsed> byFunction;
    module.walk([&](linalg::GenericOp op) {
      auto function = op->getParentOfType<func::FuncOp>();
      if (!op->hasAttr(kTileProduct) || !function)
        return;
      EnginesUsed &used = byFunction[function];
      used.products.push_back(op);
      auto engine = op->getAttrOfType<StringAttr>(kTileProduct);
      bool dots = engine && engine.getValue() == kDotEngine;
      used.dotProducts |= dots;
      used.tiles |= !dots;
      used.fp16 |= !dots && op.getNumDpsInputs() > 0 &&
                   getElementTypeOrSelf(op.getDpsInputs()[0].getType()).isF16();
    });
    IRRewriter rewriter(&getContext());
    for (auto &[function, used] : byFunction) {
      for (linalg::GenericOp op : used.products)
        if (failed(lowerTileProduct(rewriter, op)))
          return signalPassFailure();
      // The checks, first thing on the calling thread (the products run
      // inside the cores' parallel loops, where they could not report).
      Location loc = function.getLoc();
      rewriter.setInsertionPointToStart(&function.getBody().front());
      if (used.dotProducts)
        LLVM::CallOp::create(
            rewriter, loc,
            getOrDeclareCheck(rewriter, module, kRequireDotProducts, {}),
            ValueRange{});
      if (used.tiles) {
        Value needsFp16 = arith::ConstantIntOp::create(
            rewriter, loc, rewriter.getI8Type(), used.fp16 ? 1 : 0);
        LLVM::CallOp::create(rewriter, loc,
                             getOrDeclareCheck(rewriter, module, kRequireTiles,
                                               {rewriter.getI8Type()}),
                             ValueRange{needsFp16});
      }
    }
  }
};
} // namespace
