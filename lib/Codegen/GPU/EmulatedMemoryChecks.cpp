//===- EmulatedMemoryChecks.cpp - checked memory of emulated kernels ------===//
//
// A GPU kernel that reads past its buffer reads someone else's data, and one
// that races on shared memory gives a different answer on each run; on the
// host both would pass unnoticed. So, in a kernel the emulator runs, every
// access first checks its indices against its memref (a failure ends the
// launch with the kernel, thread, dim and index), and every access of
// workgroup memory is reported to the runtime, whose shadow memory finds
// races between barriers and reads of bytes no thread wrote.
//
//===----------------------------------------------------------------------===//

#include "EmulatedKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::rope::emulation;

namespace {

/// One access: the memref, its indices, how many consecutive elements of
/// the innermost dim it touches, and whether it writes.
struct Access {
  Value memref;
  ValueRange indices;
  int64_t width = 1;
  bool isWrite = false;
};

/// The accesses `op` makes (none for ops that touch no memref).
SmallVector<Access> accessesOf(Operation *op) {
  auto vectorWidth = [](Type type) {
    auto vector = dyn_cast<VectorType>(type);
    return vector ? vector.getNumElements() : 1;
  };
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return {{load.getMemRef(), load.getIndices(), 1, false}};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return {{store.getMemRef(), store.getIndices(), 1, true}};
  if (auto rmw = dyn_cast<memref::AtomicRMWOp>(op))
    return {{rmw.getMemref(), rmw.getIndices(), 1, true}};
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return {{load.getBase(), load.getIndices(),
             vectorWidth(load.getVectorType()), false}};
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return {{store.getBase(), store.getIndices(),
             vectorWidth(store.getVectorType()), true}};
  if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(op))
    return {{ld.getSrcMemref(), ld.getIndices(), 8, false}};
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
    // The shared write is reported by the runtime when the wait lands it.
    int64_t n = copy.getDstElements().getZExtValue();
    return {{copy.getSrc(), copy.getSrcIndices(), n, false},
            {copy.getDst(), copy.getDstIndices(), n, true}};
  }
  return {};
}

Value extentOf(OpBuilder &b, Location loc, Value memref, int64_t dim) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  return memref::DimOp::create(b, loc, memref, dim);
}

/// Ends the launch when an index of `access` is outside its dim (negative
/// indices are huge unsigned ones).
void checkBounds(OpBuilder &b, Location loc, const Access &access,
                 RuntimeCalls &rt) {
  auto type = cast<MemRefType>(access.memref.getType());
  int64_t space = addressSpaceOf(type);
  for (auto [dim, index] : llvm::enumerate(access.indices)) {
    Value extent = extentOf(b, loc, access.memref, dim);
    Value outside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                          index, extent);
    bool innermost = dim + 1 == access.indices.size();
    if (innermost && access.width > 1) {
      Value last = arith::AddIOp::create(
          b, loc, index,
          arith::ConstantIndexOp::create(b, loc, access.width - 1));
      outside = arith::OrIOp::create(
          b, loc, outside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, last,
                                extent));
    }
    auto report = scf::IfOp::create(b, loc, outside);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(report.thenBlock());
    rt.call(b, loc, "ropeGpuEmuOutOfBounds",
            {RuntimeCalls::i32(b, loc, space),
             RuntimeCalls::i64(b, loc, dim), index, extent});
  }
}

/// Tells the runtime which bytes of workgroup memory `access` touches.
void reportSharedAccess(OpBuilder &b, Location loc, const Access &access,
                        RuntimeCalls &rt) {
  auto type = cast<MemRefType>(access.memref.getType());
  int64_t bytes =
      access.width * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  Value address = elementAddress(b, loc, access.memref, access.indices);
  rt.call(b, loc, "ropeGpuEmuSharedAccess",
          {address, RuntimeCalls::i64(b, loc, bytes),
           RuntimeCalls::i32(b, loc, access.isWrite ? 1 : 0)});
}

} // namespace

void mlir::rope::emulation::instrumentMemoryAccesses(LLVM::LLVMFuncOp kernel,
                                                     RuntimeCalls &rt) {
  SmallVector<Operation *> ops;
  kernel.walk([&](Operation *op) {
    if (!accessesOf(op).empty())
      ops.push_back(op);
  });
  OpBuilder b(kernel.getContext());
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    bool asyncCopy = isa<nvgpu::DeviceAsyncCopyOp>(op);
    for (const Access &access : accessesOf(op)) {
      checkBounds(b, op->getLoc(), access, rt);
      auto type = cast<MemRefType>(access.memref.getType());
      // ldmatrix and cp.async report their shared bytes from the runtime.
      if (isWorkgroupMemory(type) && !asyncCopy &&
          !isa<nvgpu::LdMatrixOp>(op))
        reportSharedAccess(b, op->getLoc(), access, rt);
    }
  }
}
