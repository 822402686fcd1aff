//===- ParallelLoopsToGPU.cpp - scf.parallel onto a grid of threads -------===//
//
// Upstream's convert-parallel-loops-to-gpu needs a processor mapping on each
// loop dimension and maps one loop level to blocks and the next to threads;
// the loops that linalg ops lower to are single-level nests of any rank, and
// mapping those dimension by dimension would leave one thread per block.
// Linearising the whole iteration space and cutting it into fixed-size
// blocks instead keeps every lane busy whatever the rank and shape, and puts
// the innermost (contiguous) dimension on neighbouring lanes.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEPARALLELLOOPSTOGPU
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// Launches `loop` as a 1-D grid of `blockSize`-thread blocks; every thread
/// runs the iteration whose linear index is its global thread id.
LogicalResult mapLoopToGrid(scf::ParallelOp loop, int64_t blockSize) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError(
        "with reductions cannot be mapped to GPU threads by "
        "rope-parallel-loops-to-gpu");

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);

  // Trip count of each dimension, ceil((ub - lb) / step), and their product.
  SmallVector<Value> tripCounts;
  Value total = one;
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    // Folded as built, so static loops get a constant total.
    Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value trips = b.createOrFold<arith::CeilDivSIOp>(loc, span, step);
    trips = b.createOrFold<arith::MaxSIOp>(loc, trips, zero);
    tripCounts.push_back(trips);
    total = b.createOrFold<arith::MulIOp>(loc, total, trips);
  }
  // Small static loops (a one-element fill, a serial reduction) get a block
  // of just enough whole warps.
  if (std::optional<int64_t> staticTotal = getConstantIntValue(total))
    blockSize = std::min(blockSize, std::max<int64_t>(32, llvm::alignTo(*staticTotal, 32)));

  // A grid of zero blocks is an invalid launch: skip empty loops.
  Value nonEmpty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                         total, zero);
  auto ifNonEmpty = scf::IfOp::create(b, loc, nonEmpty, /*withElse=*/false);
  b.setInsertionPointToStart(ifNonEmpty.thenBlock());

  Value threads = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value blocks = arith::CeilDivSIOp::create(b, loc, total, threads);
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one,
                                      one);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());

  Value linear = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                        linear, total);
  auto ifInRange = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  b.setInsertionPointToStart(ifInRange.thenBlock());

  // Delinearise, last dimension fastest: iv_d = lb_d + (rest mod n_d) · step_d.
  IRMapping mapping;
  Value rest = linear;
  for (int64_t d = loop.getNumLoops() - 1; d >= 0; --d) {
    Value index = rest;
    if (d != 0) {
      index = arith::RemUIOp::create(b, loc, rest, tripCounts[d]);
      rest = arith::DivUIOp::create(b, loc, rest, tripCounts[d]);
    }
    Value scaled = arith::MulIOp::create(b, loc, index, loop.getStep()[d]);
    mapping.map(loop.getInductionVars()[d],
                arith::AddIOp::create(b, loc, loop.getLowerBound()[d], scaled));
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);

  loop.erase();
  return success();
}

/// Whether `op` is host code that touches buffers (and so must run on the
/// GPU) and can be moved into a kernel as it is: it has no results that the
/// host would need. linalg ops with no parallel dimension (the largest
/// position of a dynamic-NTK rotation, a 0-d fill) lower to such ops, and so
/// do hand-written host loops and branches over buffers.
bool isSerialDeviceWork(Operation *op) {
  if (op->getNumResults() != 0)
    return false;
  if (isa<memref::StoreOp, memref::CopyOp>(op))
    return true;
  if (!isa<scf::ForOp, scf::IfOp, scf::WhileOp>(op))
    return false;
  WalkResult access = op->walk([](Operation *nested) {
    return isa<memref::LoadOp, memref::StoreOp>(nested) ? WalkResult::interrupt()
                                                        : WalkResult::advance();
  });
  return access.wasInterrupted();
}

/// Wraps `op` in a one-iteration scf.parallel, which becomes a one-thread
/// kernel like any other loop. The loads and pure ops that compute its
/// operands and are used by nothing else go along (a 0-d copy is a load and
/// a store), so no host code is left reading GPU memory.
void wrapInSingleIterationLoop(Operation *op) {
  SmallVector<Operation *> producers;
  llvm::SmallPtrSet<Operation *, 8> moved = {op};
  SmallVector<Value> worklist(op->getOperands());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || moved.contains(def) || def->getBlock() != op->getBlock() ||
        def->getNumRegions() != 0 ||
        !(isa<memref::LoadOp>(def) || isPure(def)) ||
        !llvm::all_of(def->getUsers(),
                      [&](Operation *user) { return moved.contains(user); }))
      continue;
    moved.insert(def);
    producers.push_back(def);
    llvm::append_range(worklist, def->getOperands());
  }

  OpBuilder b(op);
  Location loc = op->getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{one},
                                      ValueRange{one});
  Operation *terminator = loop.getBody()->getTerminator();
  // Producers were found walking backwards; keep their original order.
  llvm::sort(producers, [](Operation *a, Operation *c) {
    return a->isBeforeInBlock(c);
  });
  for (Operation *producer : producers)
    producer->moveBefore(terminator);
  op->moveBefore(terminator);
}

struct RopeParallelLoopsToGPUPass
    : public rope::impl::RopeParallelLoopsToGPUBase<RopeParallelLoopsToGPUPass> {
  using RopeParallelLoopsToGPUBase::RopeParallelLoopsToGPUBase;

  void runOnOperation() override {
    if (blockSize <= 0 || blockSize > 1024 || blockSize % 32 != 0) {
      getOperation().emitError()
          << "rope-parallel-loops-to-gpu: block-size must be a multiple of 32 "
             "in [32, 1024], got "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<Operation *> serial;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, scf::ParallelOp>(op))
        return WalkResult::skip();
      if (isSerialDeviceWork(op)) {
        serial.push_back(op);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (Operation *op : serial)
      wrapInSingleIterationLoop(op);

    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        outermost.push_back(loop);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (scf::ParallelOp loop : outermost)
      if (failed(mapLoopToGrid(loop, blockSize)))
        return signalPassFailure();

    // Buffers are device memory: host code that still reads or writes them
    // would fault at run time, so say which op was left outside a kernel.
    WalkResult leftOnHost = getOperation().walk<WalkOrder::PreOrder>(
        [&](Operation *op) {
          if (isa<gpu::LaunchOp>(op))
            return WalkResult::skip();
          // Host stack memory (the staging copies of rope-host-buffers-to-gpu)
          // is the one kind of buffer host code may touch.
          if (auto load = dyn_cast<memref::LoadOp>(op))
            if (load.getMemRef().getDefiningOp<memref::AllocaOp>())
              return WalkResult::advance();
          if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp>(op)) {
            op->emitOpError("accesses GPU memory from host code: the "
                            "computation it belongs to was not lowered to a "
                            "parallel loop");
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
    if (leftOnHost.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
