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

#include "emulation/EmulatedKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::rope::emulation;

namespace {

/// One access: the memref, its indices, the extents of the block of
/// elements it touches in the memref's innermost dims (none: one element;
/// an n-D vector.load touches an n-D block), and whether it writes.
struct Access {
  Value memref;
  ValueRange indices;
  SmallVector<int64_t> shape;
  bool isWrite = false;
  /// When set, the access touches only this many (index) of the elements
  /// of its (1-D) shape, and none when it is zero: the source of a cp.async
  /// with srcElements reads no further, so only that part must be inside.
  Value count = {};
};

/// The block of elements a vector.load/store of `vector` touches in
/// `memref`: the vector's shape, or one element of a memref of vectors.
SmallVector<int64_t> vectorBlock(VectorType vector, Value memref) {
  if (isa<VectorType>(cast<MemRefType>(memref.getType()).getElementType()))
    return {};
  return llvm::to_vector(vector.getShape());
}

/// The accesses `op` makes (none for ops that touch no memref).
SmallVector<Access> accessesOf(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return {{load.getMemRef(), load.getIndices(), {}, false}};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return {{store.getMemRef(), store.getIndices(), {}, true}};
  // An atomic read-modify-write counts as a read for the race checker:
  // atomics of several threads on one address are no race, and an atomic
  // on memory no thread wrote reads garbage. (An atomic and another
  // thread's plain read of the same bytes are not reported.)
  if (auto rmw = dyn_cast<memref::AtomicRMWOp>(op))
    return {{rmw.getMemref(), rmw.getIndices(), {}, false}};
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return {{load.getBase(), load.getIndices(),
             vectorBlock(load.getVectorType(), load.getBase()), false}};
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return {{store.getBase(), store.getIndices(),
             vectorBlock(store.getVectorType(), store.getBase()), true}};
  if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(op))
    return {{ld.getSrcMemref(), ld.getIndices(), {8}, false}};
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
    // The shared write is reported by the runtime when the wait lands it.
    int64_t n = copy.getDstElements().getZExtValue();
    return {{copy.getSrc(),
             copy.getSrcIndices(),
             {n},
             false,
             copy.getSrcElements()},
            {copy.getDst(), copy.getDstIndices(), {n}, true}};
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
/// indices are huge unsigned ones), or the block it touches from there
/// ends past the dim.
void checkBounds(OpBuilder &b, Location loc, const Access &access,
                 RuntimeCalls &rt) {
  auto type = cast<MemRefType>(access.memref.getType());
  int64_t space = addressSpaceOf(type);
  size_t firstBlockDim = access.indices.size() - access.shape.size();
  for (auto [dim, index] : llvm::enumerate(access.indices)) {
    Value extent = extentOf(b, loc, access.memref, dim);
    Value outside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                          index, extent);
    // Only the block's own dims extend past the index (a cp.async count
    // is along the innermost one).
    bool inBlock = dim >= firstBlockDim;
    int64_t size = inBlock ? access.shape[dim - firstBlockDim] : 1;
    if (inBlock && (size > 1 || access.count)) {
      Value count = access.count ? access.count
                                 : arith::ConstantIndexOp::create(b, loc, size);
      // index + count > extent: the block's last element is outside
      // (count >= 1 here).
      Value end = arith::AddIOp::create(b, loc, index, count);
      outside = arith::OrIOp::create(
          b, loc, outside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, end,
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

/// The condition under which `access` of `op` touches memory at all, or
/// null when it always does. ldmatrix: PTX takes row addresses only from
/// lanes below 8 * numTiles; the other lanes' indices are ignored, so they
/// must not be reported. A cp.async source with srcElements zero is not
/// read.
Value accessCondition(OpBuilder &b, Location loc, Operation *op,
                      const Access &access, RuntimeCalls &rt) {
  if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(op)) {
    if (ld.getNumTiles() == 4)
      return {};
    Value lane = rt.call(b, loc, "ropeGpuEmuLaneId", {}, b.getI64Type());
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, lane,
        RuntimeCalls::i64(b, loc, 8 * int64_t(ld.getNumTiles())));
  }
  if (access.count)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, access.count,
                                 arith::ConstantIndexOp::create(b, loc, 0));
  return {};
}

/// Tells the runtime which bytes of workgroup memory `access` touches: one
/// report per row of its innermost dim (an n-D block is not contiguous).
void reportSharedAccess(OpBuilder &b, Location loc, const Access &access,
                        RuntimeCalls &rt) {
  auto type = cast<MemRefType>(access.memref.getType());
  int64_t rowLength = access.shape.empty() ? 1 : access.shape.back();
  int64_t bytes =
      rowLength * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  ArrayRef<int64_t> outer = access.shape.empty()
                                ? ArrayRef<int64_t>()
                                : ArrayRef<int64_t>(access.shape).drop_back();
  size_t firstOuterDim = access.indices.size() - access.shape.size();
  for (int64_t row = 0, rows = ShapedType::getNumElements(outer); row < rows;
       ++row) {
    // The row's indices: the access's, plus the row's position in `outer`.
    SmallVector<Value> indices(access.indices);
    SmallVector<int64_t> position = delinearize(row, computeStrides(outer));
    for (auto [i, offset] : llvm::enumerate(position))
      if (offset != 0)
        indices[firstOuterDim + i] = arith::AddIOp::create(
            b, loc, indices[firstOuterDim + i],
            arith::ConstantIndexOp::create(b, loc, offset));
    Value address = elementAddress(b, loc, access.memref, indices);
    rt.call(b, loc, "ropeGpuEmuSharedAccess",
            {address, RuntimeCalls::i64(b, loc, bytes),
             RuntimeCalls::i32(b, loc, access.isWrite ? 1 : 0)});
  }
}

/// Whether `op` may read or write through one of its memref operands in a
/// way accessesOf does not describe (memref.copy, vector transfers, calls
/// of functions taking memrefs): such an access would escape the bounds and
/// race checks.
bool hasUncheckedAccess(Operation *op) {
  if (!accessesOf(op).empty() ||
      llvm::none_of(op->getOperandTypes(), llvm::IsaPred<MemRefType>))
    return false;
  if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return false; // Its nested ops are looked at themselves.
  // TMA boxes: the runtime checks them against workgroup memory, and
  // nvgpu's verifier gives the buffer the box's shape.
  if (isa<nvgpu::TmaAsyncLoadOp, nvgpu::TmaAsyncStoreOp>(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  return effects.hasEffect<MemoryEffects::Read>() ||
         effects.hasEffect<MemoryEffects::Write>();
}

} // namespace

LogicalResult
mlir::rope::emulation::instrumentMemoryAccesses(LLVM::LLVMFuncOp kernel,
                                                RuntimeCalls &rt) {
  SmallVector<Operation *> ops;
  WalkResult walk = kernel.walk([&](Operation *op) {
    if (hasUncheckedAccess(op)) {
      op->emitOpError("accesses memory in a way the GPU emulator cannot "
                      "check (memref.load/store, vector.load/store, "
                      "memref.atomic_rmw, nvgpu.ldmatrix and "
                      "nvgpu.device_async_copy can be checked)");
      return WalkResult::interrupt();
    }
    if (!accessesOf(op).empty())
      ops.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  OpBuilder b(kernel.getContext());
  for (Operation *op : ops) {
    Location loc = op->getLoc();
    bool asyncCopy = isa<nvgpu::DeviceAsyncCopyOp>(op);
    for (const Access &access : accessesOf(op)) {
      b.setInsertionPoint(op);
      if (Value condition = accessCondition(b, loc, op, access, rt)) {
        auto accessed = scf::IfOp::create(b, loc, condition);
        b.setInsertionPointToStart(accessed.thenBlock());
      }
      checkBounds(b, loc, access, rt);
      auto type = cast<MemRefType>(access.memref.getType());
      // ldmatrix and cp.async report their shared bytes from the runtime.
      if (isWorkgroupMemory(type) && !asyncCopy &&
          !isa<nvgpu::LdMatrixOp>(op))
        reportSharedAccess(b, loc, access, rt);
    }
  }
  return success();
}
