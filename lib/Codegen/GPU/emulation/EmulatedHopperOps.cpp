//===- EmulatedHopperOps.cpp - sm_90a ops of an emulated kernel -----------===//
//
// The Hopper ops of a kernel become calls of the emulator's runtime
// (include/rope/Runtime/GpuEmulator.h), which gives them PTX's semantics
// and checks them:
//   nvgpu.mbarrier.create              the group's 8-byte mbarriers in the
//                                      block's workgroup memory (the offset
//                                      the launch's plan gave it);
//   nvgpu.mbarrier.init / arrive / arrive.expect_tx / try_wait.parity;
//   nvgpu.tma.async.load / store       on the host tensor map the launch
//                                      captured (EmulateGPUOnHost.cpp builds
//                                      it from nvgpu.tma.create.descriptor);
//   nvvm.cp.async.bulk.commit.group / wait_group (.read);
//   nvvm.wgmma.fence / mma_async / commit / wait (A and B through matrix
//   descriptors), nvvm.elect.sync, nvvm.setmaxregister, nvvm.fence.proxy;
//   nvvm.barrier with an id and a thread count, and nvvm.barrier.arrive
//   (named barriers between warpgroups).
// nvgpu's warpgroup ops (which tile a matrix into many wgmma) are not
// emulated: kernels spell their wgmma as nvvm.wgmma.mma_async.
//
//===----------------------------------------------------------------------===//

#include "emulation/EmulatedKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::rope::emulation;

namespace {

Type ptrType(OpBuilder &b) {
  return LLVM::LLVMPointerType::get(b.getContext());
}

/// The host value behind a value of an nvgpu type that the pass replaced
/// (mbarrier groups, tensor maps): the pointer it is a cast of.
Value pointerOf(OpBuilder &b, Location loc, Value value) {
  return UnrealizedConversionCastOp::create(b, loc, ptrType(b), value)
      .getResult(0);
}

/// The address of mbarrier `index` of the group `group`.
Value mbarrierAddress(OpBuilder &b, Location loc, Value group, Value index) {
  Value base = pointerOf(b, loc, group);
  Value byteOffset = arith::MulIOp::create(
      b, loc, RuntimeCalls::toI64(b, loc, index), RuntimeCalls::i64(b, loc, 8));
  return LLVM::GEPOp::create(b, loc, ptrType(b), b.getI8Type(), base,
                             ValueRange{byteOffset});
}

/// Runs what `body` builds only where `predicate` (i1, may be null) holds.
template <typename Body>
void predicated(OpBuilder &b, Location loc, Value predicate, Body body) {
  if (!predicate) {
    body();
    return;
  }
  OpBuilder::InsertionGuard guard(b);
  auto branch = scf::IfOp::create(b, loc, predicate);
  b.setInsertionPointToStart(branch.thenBlock());
  body();
}

/// The buffer `op`'s kernel keeps at its entry for `bytes` bytes.
Value kernelBuffer(Operation *op, int64_t bytes) {
  return entryBuffer(op->getParentOfType<LLVM::LLVMFuncOp>(), bytes);
}

/// The coordinates of a TMA op as an i32 array on the thread's stack.
Value coordinateArray(OpBuilder &b, Operation *op, ValueRange coordinates) {
  Location loc = op->getLoc();
  auto i32 = b.getI32Type();
  Value array = kernelBuffer(op, 4 * static_cast<int64_t>(coordinates.size()));
  for (auto [i, coordinate] : llvm::enumerate(coordinates)) {
    Value value = arith::IndexCastOp::create(b, loc, i32, coordinate);
    Value slot = LLVM::GEPOp::create(b, loc, ptrType(b), i32, array,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    LLVM::StoreOp::create(b, loc, value, slot);
  }
  return array;
}

/// The start of a TMA op's workgroup buffer (nvgpu's verifier makes it the
/// box's shape, and the runtime checks the box against the block's memory).
Value bufferStart(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<Value> zeros(type.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  return elementAddress(b, loc, memref, zeros);
}

/// nvvm.wgmma.mma_async: the accumulator struct goes to the runtime
/// through a buffer of the thread's stack and comes back as the result.
LogicalResult rewriteWgmma(OpBuilder &b, NVVM::WgmmaMmaAsyncOp op,
                           RuntimeCalls &rt) {
  Location loc = op.getLoc();
  NVVM::MMAShapeAttr shape = op.getShape();
  NVVM::WGMMATypes typeA = op.getTypeA(), typeB = op.getTypeB();
  bool sixteenBit = typeA == typeB && (typeA == NVVM::WGMMATypes::f16 ||
                                       typeA == NVVM::WGMMATypes::bf16);
  auto accumulators = dyn_cast<LLVM::LLVMStructType>(op.getInouts().getType());
  if (!sixteenBit || op.getTypeD() != NVVM::WGMMATypes::f32 ||
      shape.getM() != 64 || shape.getK() != 16 || !accumulators ||
      !llvm::all_of(accumulators.getBody(), [](Type t) { return t.isF32(); }) ||
      static_cast<int64_t>(accumulators.getBody().size()) != shape.getN() / 2)
    return op.emitOpError("of this shape and type cannot be emulated "
                          "(m64nNk16 with f16 or bf16 inputs and f32 "
                          "accumulators can)");
  int64_t count = shape.getN() / 2;
  Value buffer = kernelBuffer(op, 4 * count);
  for (int64_t i = 0; i < count; ++i) {
    Value element = LLVM::ExtractValueOp::create(b, loc, op.getInouts(),
                                                 ArrayRef<int64_t>{i});
    Value slot = LLVM::GEPOp::create(b, loc, ptrType(b), b.getF32Type(), buffer,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    LLVM::StoreOp::create(b, loc, element, slot);
  }
  // PTX's layouts: A row (K-major) or col (M-major), B col (K-major) or
  // row (N-major).
  int32_t transposeA = op.getLayoutA() == NVVM::MMALayout::col;
  int32_t transposeB = op.getLayoutB() == NVVM::MMALayout::row;
  auto scale = [](NVVM::WGMMAScaleIn s) {
    return s == NVVM::WGMMAScaleIn::neg ? -1 : 1;
  };
  Value null = LLVM::ZeroOp::create(b, loc, ptrType(b));
  rt.call(
      b, loc, "ropeGpuEmuWgmma",
      {RuntimeCalls::i32(b, loc, typeA == NVVM::WGMMATypes::f16 ? 0 : 1),
       RuntimeCalls::i32(b, loc, shape.getN()), null, op.getDescriptorA(),
       op.getDescriptorB(), RuntimeCalls::i32(b, loc, transposeA),
       RuntimeCalls::i32(b, loc, transposeB),
       RuntimeCalls::i32(b, loc, op.getScaleD() == NVVM::WGMMAScaleOut::one),
       RuntimeCalls::i32(b, loc, scale(op.getScaleA())),
       RuntimeCalls::i32(b, loc, scale(op.getScaleB())), buffer, buffer});
  Value result = LLVM::PoisonOp::create(b, loc, accumulators);
  for (int64_t i = 0; i < count; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptrType(b), b.getF32Type(), buffer,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value element = LLVM::LoadOp::create(b, loc, b.getF32Type(), slot);
    result = LLVM::InsertValueOp::create(b, loc, result, element,
                                         ArrayRef<int64_t>{i});
  }
  op.getResult().replaceAllUsesWith(result);
  return success();
}

} // namespace

FailureOr<bool> mlir::rope::emulation::rewriteHopperOp(OpBuilder &b,
                                                       Operation *op,
                                                       RuntimeCalls &rt) {
  Location loc = op->getLoc();
  auto i32 = [&](int64_t v) { return RuntimeCalls::i32(b, loc, v); };
  if (auto create = dyn_cast<nvgpu::MBarrierCreateOp>(op)) {
    auto offset = op->getAttrOfType<IntegerAttr>(kMbarrierOffsetAttr);
    if (!offset)
      return op->emitOpError("has no workgroup memory assigned (only "
                             "mbarrier groups in workgroup memory created "
                             "inside a gpu.launch can be emulated)");
    Value base =
        rt.call(b, loc, "ropeGpuEmuShared",
                {RuntimeCalls::i64(b, loc, offset.getInt())}, ptrType(b));
    create.getBarriers().replaceAllUsesWith(
        UnrealizedConversionCastOp::create(b, loc, create.getType(), base)
            .getResult(0));
    return true;
  }
  if (auto init = dyn_cast<nvgpu::MBarrierInitOp>(op)) {
    predicated(b, loc, init.getPredicate(), [&] {
      Value count =
          arith::IndexCastOp::create(b, loc, b.getI32Type(), init.getCount());
      rt.call(b, loc, "ropeGpuEmuMbarrierInit",
              {mbarrierAddress(b, loc, init.getBarriers(), init.getMbarId()),
               count});
    });
    return true;
  }
  if (auto arrive = dyn_cast<nvgpu::MBarrierArriveOp>(op)) {
    if (!arrive.getToken().use_empty())
      return op->emitOpError("whose token is used cannot be emulated (wait "
                             "with nvgpu.mbarrier.try_wait.parity)");
    rt.call(b, loc, "ropeGpuEmuMbarrierArrive",
            {mbarrierAddress(b, loc, arrive.getBarriers(), arrive.getMbarId()),
             i32(1)},
            b.getI64Type());
    return true;
  }
  if (auto expect = dyn_cast<nvgpu::MBarrierArriveExpectTxOp>(op)) {
    predicated(b, loc, expect.getPredicate(), [&] {
      rt.call(
          b, loc, "ropeGpuEmuMbarrierArriveExpectTx",
          {mbarrierAddress(b, loc, expect.getBarriers(), expect.getMbarId()),
           expect.getTxcount()},
          b.getI64Type());
    });
    return true;
  }
  if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op)) {
    Value parity =
        arith::ExtUIOp::create(b, loc, b.getI32Type(), wait.getPhaseParity());
    rt.call(
        b, loc, "ropeGpuEmuMbarrierTryWaitParity",
        {mbarrierAddress(b, loc, wait.getBarriers(), wait.getMbarId()), parity},
        b.getI32Type());
    return true;
  }
  if (auto load = dyn_cast<nvgpu::TmaAsyncLoadOp>(op)) {
    if (load.getMulticastMask())
      return op->emitOpError("with a multicast mask cannot be emulated "
                             "(clusters are not)");
    predicated(b, loc, load.getPredicate(), [&] {
      rt.call(b, loc, "ropeGpuEmuTmaLoad",
              {bufferStart(b, loc, load.getDst()),
               pointerOf(b, loc, load.getTensorMapDescriptor()),
               coordinateArray(b, op, load.getCoordinates()),
               mbarrierAddress(b, loc, load.getBarriers(), load.getMbarId())});
    });
    return true;
  }
  if (auto store = dyn_cast<nvgpu::TmaAsyncStoreOp>(op)) {
    predicated(b, loc, store.getPredicate(), [&] {
      rt.call(b, loc, "ropeGpuEmuTmaStore",
              {pointerOf(b, loc, store.getTensorMapDescriptor()),
               coordinateArray(b, op, store.getCoordinates()),
               bufferStart(b, loc, store.getSrc())});
    });
    return true;
  }
  if (isa<NVVM::CpAsyncBulkCommitGroupOp>(op)) {
    rt.call(b, loc, "ropeGpuEmuBulkCommit", {});
    return true;
  }
  if (auto wait = dyn_cast<NVVM::CpAsyncBulkWaitGroupOp>(op)) {
    // Stores write global memory at their issue: waiting for their reads
    // is waiting for all of them.
    rt.call(b, loc, "ropeGpuEmuBulkWaitRead", {i32(wait.getGroup())});
    return true;
  }
  if (isa<NVVM::WgmmaFenceAlignedOp>(op)) {
    rt.call(b, loc, "ropeGpuEmuWgmmaFence", {});
    return true;
  }
  if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
    rt.call(b, loc, "ropeGpuEmuWgmmaCommit", {});
    return true;
  }
  if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
    rt.call(b, loc, "ropeGpuEmuWgmmaWait",
            {i32(static_cast<int64_t>(wait.getGroup()))});
    return true;
  }
  if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
    if (failed(rewriteWgmma(b, mma, rt)))
      return failure();
    return true;
  }
  if (auto barrier = dyn_cast<NVVM::BarrierOp>(op)) {
    if (barrier.getReductionOp() || barrier->getNumResults() != 0)
      return op->emitOpError("with a reduction cannot be emulated");
    Value id = barrier.getBarrierId(), count = barrier.getNumberOfThreads();
    if (!id && !count) {
      rt.call(b, loc, "ropeGpuEmuBarrier", {});
      return true;
    }
    if (!count)
      return op->emitOpError("naming a barrier without a thread count cannot "
                             "be emulated (the whole block's is gpu.barrier)");
    rt.call(b, loc, "ropeGpuEmuNamedBarrierSync", {id ? id : i32(0), count});
    return true;
  }
  if (auto arrive = dyn_cast<NVVM::BarrierArriveOp>(op)) {
    Value id = arrive.getBarrierId();
    rt.call(b, loc, "ropeGpuEmuNamedBarrierArrive",
            {id ? id : i32(0), arrive.getNumberOfThreads()});
    return true;
  }
  if (auto elect = dyn_cast<NVVM::ElectSyncOp>(op)) {
    Value mask = elect.getMembermask()
                     ? elect.getMembermask()
                     : RuntimeCalls::i32(b, loc, int32_t(0xffffffffu));
    Value elected =
        rt.call(b, loc, "ropeGpuEmuElectSync", {mask}, b.getI32Type());
    elect.getPred().replaceAllUsesWith(
        arith::TruncIOp::create(b, loc, b.getI1Type(), elected).getResult());
    return true;
  }
  if (auto setmax = dyn_cast<NVVM::SetMaxRegisterOp>(op)) {
    bool increase = setmax.getAction() == NVVM::SetMaxRegisterAction::increase;
    rt.call(b, loc, "ropeGpuEmuSetMaxNReg",
            {i32(setmax.getRegCount()), i32(increase)});
    return true;
  }
  if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op)) {
    if (fence.getKind() != NVVM::ProxyKind::async_shared &&
        fence.getKind() != NVVM::ProxyKind::async)
      return false;
    rt.call(b, loc, "ropeGpuEmuFenceProxyAsync", {});
    return true;
  }
  return false;
}
