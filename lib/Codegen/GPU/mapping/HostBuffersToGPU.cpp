//===- HostBuffersToGPU.cpp - buffers of host functions in GPU memory -----===//
//
// After bufferization a lowered function allocates its temporaries and its
// result with memref.alloc, i.e. in host memory, which kernels cannot touch.
// The functions that --rope-lower-to-nvvm produces take and return device
// buffers (like a CUDA library), so every allocation moves to the GPU and the
// function frees what it does not hand back.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEHOSTBUFFERSTOGPU
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// The buffer that `buffer` views (through subviews, reshapes, casts): an
/// allocation, a global or an argument.
Value rootBuffer(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewLikeOpInterface>())
    buffer = view.getViewSource();
  return buffer;
}

/// A synchronous gpu.alloc of `type` (device memory, not host-shared).
Value createDeviceBuffer(OpBuilder &b, Location loc, MemRefType type,
                         ValueRange dynamicSizes = {}) {
  return gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                              /*asyncDependencies=*/ValueRange{}, dynamicSizes,
                              /*symbolOperands=*/ValueRange{},
                              /*hostShared=*/false)
      .getMemref();
}

/// Rewrites every memref.copy into a linalg.copy, which becomes a kernel: a
/// host-side copy cannot read device memory.
void convertCopiesToLinalg(func::FuncOp func) {
  SmallVector<memref::CopyOp> copies;
  func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), ValueRange{copy.getSource()},
                           ValueRange{copy.getTarget()});
    copy.erase();
  }
}

/// Collects the allocations of `func` into `allocations`, failing on one that
/// cannot be placed in device memory.
LogicalResult
collectAllocations(func::FuncOp func,
                   SmallVectorImpl<memref::AllocOp> &allocations) {
  WalkResult walk = func.walk([&](memref::AllocOp alloc) {
    if (alloc->getBlock() != &func.getBody().front()) {
      alloc.emitOpError("in host control flow cannot be placed in GPU "
                        "memory by rope-host-buffers-to-gpu");
      return WalkResult::interrupt();
    }
    if (!alloc.getSymbolOperands().empty()) {
      alloc.emitOpError("with layout symbols is not supported by "
                        "rope-host-buffers-to-gpu");
      return WalkResult::interrupt();
    }
    allocations.push_back(alloc);
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Replaces the host `load` by a load of a staging copy of its element in
/// host memory; returns the 0-d device buffer the element was gathered into,
/// or null when the load reads a 0-d buffer directly.
Value stageHostLoad(memref::LoadOp load) {
  OpBuilder b(load);
  Location loc = load.getLoc();
  MemRefType sourceType = load.getMemRefType();
  auto scalarType = MemRefType::get({}, sourceType.getElementType());
  Value element = load.getMemRef();
  Value gathered;
  if (sourceType != scalarType) {
    // Only identity-layout buffers can be copied by gpu.memcpy: gather
    // the element into a 0-d device buffer first, in a one-iteration
    // parallel loop that becomes a one-thread kernel.
    element = createDeviceBuffer(b, loc, scalarType);
    gathered = element;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto gather = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
    OpBuilder gb = OpBuilder::atBlockTerminator(gather.getBody());
    Value value =
        memref::LoadOp::create(gb, loc, load.getMemRef(), load.getIndices());
    memref::StoreOp::create(gb, loc, value, element, ValueRange{});
  }
  auto staging = memref::AllocaOp::create(b, loc, scalarType);
  gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{}, staging,
                        element);
  auto hostLoad = memref::LoadOp::create(b, loc, staging, ValueRange{});
  load.replaceAllUsesWith(hostLoad.getResult());
  load.erase();
  return gathered;
}

/// Stages every host read of a buffer in `func`; returns the device buffers
/// made for the staging.
SmallVector<Value> stageHostLoads(func::FuncOp func) {
  // Host reads of buffers (a tensor.extract of a computed scalar, e.g. the
  // largest position that dynamic NTK scales by) go through a staging copy
  // of the one element into host memory. gpu-async-region later makes the
  // copy wait for the kernels that wrote the buffer.
  SmallVector<memref::LoadOp> hostLoads;
  func.walk([&](memref::LoadOp load) {
    // Loads inside host loops or branches are left for
    // rope-parallel-loops-to-gpu, which moves such serial code into a
    // kernel as a whole.
    if (load->getBlock() == &func.getBody().front())
      hostLoads.push_back(load);
    return WalkResult::advance();
  });
  SmallVector<Value> stagingBuffers;
  for (memref::LoadOp load : hostLoads)
    if (Value gathered = stageHostLoad(load))
      stagingBuffers.push_back(gathered);
  return stagingBuffers;
}

/// Gives every used memref.get_global of `func` a device copy, made at the
/// start of each call, and collects those copies into `constantCopies`.
LogicalResult copyConstantsToDevice(func::FuncOp func,
                                    SmallVectorImpl<Value> &constantCopies) {
  // Constants (frequency tables) live in host globals; kernels read a
  // device copy of them.
  SmallVector<memref::GetGlobalOp> globals;
  func.walk([&](memref::GetGlobalOp global) { globals.push_back(global); });
  for (memref::GetGlobalOp global : globals) {
    if (global->use_empty())
      continue;
    if (global->getBlock() != &func.getBody().front()) {
      global.emitOpError("in host control flow cannot be copied to GPU "
                         "memory by rope-host-buffers-to-gpu");
      return failure();
    }
    OpBuilder b(global->getBlock(), std::next(global->getIterator()));
    Value device = createDeviceBuffer(b, global.getLoc(), global.getType());
    global.getResult().replaceAllUsesWith(device);
    gpu::MemcpyOp::create(b, global.getLoc(), /*asyncToken=*/Type(),
                          ValueRange{}, device, global.getResult());
    constantCopies.push_back(device);
  }
  return success();
}

/// Replaces each host allocation by a device one, and adds to `toFree` those
/// that neither reach the caller nor are deallocated explicitly.
void moveAllocationsToDevice(ArrayRef<memref::AllocOp> allocations,
                             const llvm::SmallPtrSetImpl<Value> &returned,
                             SmallVectorImpl<Value> &toFree) {
  for (memref::AllocOp alloc : allocations) {
    OpBuilder b(alloc);
    Value device = createDeviceBuffer(b, alloc.getLoc(), alloc.getType(),
                                      alloc.getDynamicSizes());
    bool needsFree = !returned.contains(alloc.getResult());
    // Explicit deallocations (from hand-written input) move to the GPU too.
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        OpBuilder db(dealloc);
        gpu::DeallocOp::create(db, dealloc.getLoc(), /*asyncToken=*/Type(),
                               ValueRange{}, device);
        dealloc.erase();
        needsFree = false;
      }
    alloc.replaceAllUsesWith(device);
    alloc.erase();
    if (needsFree)
      toFree.push_back(device);
  }
}

struct RopeHostBuffersToGPUPass
    : public rope::impl::RopeHostBuffersToGPUBase<RopeHostBuffersToGPUPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;

    convertCopiesToLinalg(func);

    SmallVector<memref::AllocOp> allocations;
    if (failed(collectAllocations(func, allocations)))
      return signalPassFailure();

    SmallVector<Value> stagingBuffers = stageHostLoads(func);

    SmallVector<Value> constantCopies;
    if (failed(copyConstantsToDevice(func, constantCopies)))
      return signalPassFailure();

    // Buffers handed to the caller (allocations, or the device copy of a
    // constant result) are the caller's to free.
    llvm::SmallPtrSet<Value, 8> returned;
    SmallVector<func::ReturnOp> returns;
    func.walk([&](func::ReturnOp ret) {
      returns.push_back(ret);
      for (Value result : ret.getOperands())
        if (isa<BaseMemRefType>(result.getType()))
          returned.insert(rootBuffer(result));
    });

    // What the function allocates on the device and does not hand back is
    // freed before each return.
    SmallVector<Value> toFree;
    for (Value copy : llvm::concat<Value>(constantCopies, stagingBuffers))
      if (!returned.contains(copy))
        toFree.push_back(copy);
    moveAllocationsToDevice(allocations, returned, toFree);

    for (func::ReturnOp ret : returns) {
      OpBuilder rb(ret);
      for (Value buffer : toFree)
        gpu::DeallocOp::create(rb, ret.getLoc(), /*asyncToken=*/Type(),
                               ValueRange{}, buffer);
    }
  }
};

} // namespace
