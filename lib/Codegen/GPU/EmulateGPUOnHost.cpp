//===- EmulateGPUOnHost.cpp - run simple kernels as host loops ------------===//
//
// A testing aid for machines without a GPU: everything the GPU pipeline
// decides about mapping (linearised grids, bounds checks, staging copies,
// device copies of constants, who frees what) stays in the IR, and only the
// launch itself becomes a loop nest. CI runs the GPU test files this way.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEEMULATEGPUONHOST
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

LogicalResult emulateLaunch(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() || launch.hasClusterSize() ||
      launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitOpError(
        "with shared/private memory, clusters or async tokens cannot be "
        "emulated on the host");
  WalkResult barrier = launch.getBody().walk([](Operation *op) {
    return isa<gpu::BarrierOp>(op) ? WalkResult::interrupt()
                                   : WalkResult::advance();
  });
  if (barrier.wasInterrupted())
    return launch.emitOpError("with barriers cannot be emulated on the host "
                              "(threads would run one after another)");
  Block &body = launch.getBody().front();
  if (!llvm::hasSingleElement(launch.getBody()) ||
      !isa<gpu::TerminatorOp>(body.getTerminator()))
    return launch.emitOpError(
        "with more than one block cannot be emulated on the host");

  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Value> upper = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
  auto loop = scf::ParallelOp::create(b, loc, SmallVector<Value>(6, zero),
                                      upper, SmallVector<Value>(6, one));

  IRMapping mapping;
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridSize = launch.getGridSize();
  gpu::KernelDim3 blockSize = launch.getBlockSize();
  SmallVector<Value> ivs = loop.getInductionVars();
  Value ids[] = {blockIds.x, blockIds.y, blockIds.z,
                 threadIds.x, threadIds.y, threadIds.z};
  for (auto [id, iv] : llvm::zip_equal(ids, ivs))
    mapping.map(id, iv);
  for (auto [arg, value] :
       llvm::zip_equal(SmallVector<Value>{gridSize.x, gridSize.y, gridSize.z,
                                          blockSize.x, blockSize.y, blockSize.z},
                       upper))
    mapping.map(arg, value);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  // A thread's local memory (memref.alloca) would be the host's stack, grown
  // by every emulated thread. The threads run one after another, so one
  // buffer before the loop serves them all.
  loop.getBody()->walk([&](memref::AllocaOp alloca) {
    if (alloca.getType().hasStaticShape())
      alloca->moveBefore(loop);
  });
  launch.erase();
  return success();
}

struct RopeEmulateGPUOnHostPass
    : public rope::impl::RopeEmulateGPUOnHostBase<RopeEmulateGPUOnHostPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
        ops.push_back(op);
      return isa<gpu::LaunchOp>(op) ? WalkResult::skip() : WalkResult::advance();
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        if (failed(emulateLaunch(launch)))
          return signalPassFailure();
      } else if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        auto host = memref::AllocOp::create(b, alloc.getLoc(), alloc.getType(),
                                            alloc.getDynamicSizes());
        alloc.getMemref().replaceAllUsesWith(host.getResult());
        alloc.erase();
      } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
        memref::DeallocOp::create(b, dealloc.getLoc(), dealloc.getMemref());
        dealloc.erase();
      } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        memref::CopyOp::create(b, copy.getLoc(), copy.getSrc(), copy.getDst());
        copy.erase();
      }
    }
  }
};

} // namespace
