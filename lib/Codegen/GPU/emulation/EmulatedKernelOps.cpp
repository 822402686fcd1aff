//===- EmulatedKernelOps.cpp - GPU ops of an emulated kernel --------------===//
//
// Inside a kernel that the emulator runs as fibers, every GPU op becomes a
// call of the runtime (include/rope/Runtime/GpuEmulator.h): ids and sizes
// are the current fiber's, a barrier suspends it until its whole block
// arrives, and the warp-collective ops (shuffles, mma.sync, ldmatrix) hand
// each lane's registers to the runtime, which computes all 32 lanes at once
// with the PTX fragment layouts. cp.async copies are queued by the runtime
// and land at their wait.
//
//===----------------------------------------------------------------------===//

#include "emulation/EmulatedKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::rope::emulation;

//===----------------------------------------------------------------------===//
// Runtime calls and addresses
//===----------------------------------------------------------------------===//

Value RuntimeCalls::toI64(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
  return value;
}

Value RuntimeCalls::i32(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(value));
}

Value RuntimeCalls::i64(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                  b.getI64IntegerAttr(value));
}

Value RuntimeCalls::call(OpBuilder &b, Location loc, StringRef name,
                         ValueRange args, Type result) {
  SmallVector<Value> operands;
  for (Value arg : args)
    operands.push_back(toI64(b, loc, arg));
  SmallVector<Type> types(ValueRange(operands).getTypes());
  Type resultType = result ? result : LLVM::LLVMVoidType::get(b.getContext());
  FailureOr<LLVM::LLVMFuncOp> fn =
      LLVM::lookupOrCreateFn(b, module, name, types, resultType);
  // The pass checked that no symbol of the module takes a runtime name
  // (checkRuntimeNamesFree): every declaration is this pass's own, made with
  // the one signature all calls of that function use.
  assert(succeeded(fn) && "runtime function declared with another type");
  auto call = LLVM::CallOp::create(b, loc, *fn, operands);
  return result ? call.getResult() : Value();
}

int64_t mlir::rope::emulation::addressSpaceOf(MemRefType type) {
  if (auto gpuSpace =
          dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace())) {
    switch (gpuSpace.getValue()) {
    case gpu::AddressSpace::Global:
      return 1;
    case gpu::AddressSpace::Workgroup:
      return 3;
    case gpu::AddressSpace::Private:
      return 5;
    }
  }
  if (auto number = dyn_cast_or_null<IntegerAttr>(type.getMemorySpace()))
    return number.getInt();
  return 0;
}

bool mlir::rope::emulation::isWorkgroupMemory(MemRefType type) {
  return addressSpaceOf(type) == 3;
}

Value mlir::rope::emulation::elementAddress(OpBuilder &b, Location loc,
                                            Value memref, ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = metadata.getOffset();
  for (auto [index, stride] : llvm::zip_equal(indices, metadata.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  int64_t elementBytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  Value bytes = arith::MulIOp::create(
      b, loc, linear, arith::ConstantIndexOp::create(b, loc, elementBytes));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = RuntimeCalls::toI64(
      b, loc, arith::AddIOp::create(b, loc, base, bytes));
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                                  address);
}

Value mlir::rope::emulation::entryBuffer(LLVM::LLVMFuncOp kernel,
                                         int64_t bytes) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Location loc = kernel.getLoc();
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes);
  return LLVM::AllocaOp::create(b, loc,
                                LLVM::LLVMPointerType::get(b.getContext()),
                                type, RuntimeCalls::i64(b, loc, 1),
                                /*alignment=*/16);
}

namespace {

/// Stores `vector` (any shape) at `pointer` as its flat 1-D form.
void storeVector(OpBuilder &b, Location loc, Value vector, Value pointer) {
  auto type = cast<VectorType>(vector.getType());
  auto flat = VectorType::get({type.getNumElements()}, type.getElementType());
  Value value = vector::ShapeCastOp::create(b, loc, flat, vector);
  LLVM::StoreOp::create(b, loc, value, pointer);
}

/// Loads a vector of `type` stored flat at `pointer`.
Value loadVector(OpBuilder &b, Location loc, VectorType type, Value pointer) {
  auto flat = VectorType::get({type.getNumElements()}, type.getElementType());
  Value value = LLVM::LoadOp::create(b, loc, flat, pointer);
  return vector::ShapeCastOp::create(b, loc, type, value);
}

int32_t dimensionIndex(gpu::Dimension dim) {
  return static_cast<int32_t>(dim);
}

//===----------------------------------------------------------------------===//
// Rewrites of single ops
//===----------------------------------------------------------------------===//

Value rewriteIdQuery(OpBuilder &b, Operation *op, RuntimeCalls &rt) {
  Location loc = op->getLoc();
  auto query = [&](StringRef name, gpu::Dimension dim) {
    Value v = rt.call(b, loc, name,
                      {RuntimeCalls::i32(b, loc, dimensionIndex(dim))},
                      b.getI64Type());
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult();
  };
  if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
    return query("ropeGpuEmuThreadId", id.getDimension());
  if (auto id = dyn_cast<gpu::BlockIdOp>(op))
    return query("ropeGpuEmuBlockId", id.getDimension());
  if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
    return query("ropeGpuEmuBlockDim", dim.getDimension());
  if (auto dim = dyn_cast<gpu::GridDimOp>(op))
    return query("ropeGpuEmuGridDim", dim.getDimension());
  Value lane = rt.call(b, loc, "ropeGpuEmuLaneId", {}, b.getI64Type());
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), lane);
}

/// One 32-bit shuffle: the value and its validity.
std::pair<Value, Value> shuffle32(OpBuilder &b, Location loc, Value bits,
                                  gpu::ShuffleOp op, Value validBuffer,
                                  RuntimeCalls &rt) {
  Value mode =
      RuntimeCalls::i32(b, loc, static_cast<int32_t>(op.getMode()));
  Value value = rt.call(b, loc, "ropeGpuEmuShuffle",
                        {bits, op.getOffset(), op.getWidth(), mode, validBuffer},
                        b.getI32Type());
  Value valid = LLVM::LoadOp::create(b, loc, b.getI8Type(), validBuffer);
  Value zero = LLVM::ConstantOp::create(b, loc, b.getI8Type(), b.getI8IntegerAttr(0));
  Value isValid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, valid, zero);
  return {value, isValid};
}

LogicalResult rewriteShuffle(OpBuilder &b, gpu::ShuffleOp op, Value validBuffer,
                             RuntimeCalls &rt) {
  Location loc = op.getLoc();
  Type type = op.getValue().getType();
  unsigned width = type.getIntOrFloatBitWidth();
  if (width != 32 && width != 64)
    return op.emitOpError("of a ") << width << "-bit value cannot be emulated";
  Type intType = b.getIntegerType(width);
  Value bits = arith::BitcastOp::create(b, loc, intType, op.getValue());
  Value result, valid;
  if (width == 32) {
    std::tie(result, valid) = shuffle32(b, loc, bits, op, validBuffer, rt);
  } else {
    // Two collectives, low word then high word, as a 64-bit shuffle is.
    Value low = arith::TruncIOp::create(b, loc, b.getI32Type(), bits);
    Value shift = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32);
    Value high = arith::TruncIOp::create(
        b, loc, b.getI32Type(), arith::ShRUIOp::create(b, loc, bits, shift));
    auto [lowOut, lowValid] = shuffle32(b, loc, low, op, validBuffer, rt);
    auto [highOut, highValid] = shuffle32(b, loc, high, op, validBuffer, rt);
    Value lowWide = arith::ExtUIOp::create(b, loc, intType, lowOut);
    Value highWide = arith::ShLIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, intType, highOut), shift);
    result = arith::OrIOp::create(b, loc, lowWide, highWide);
    valid = arith::AndIOp::create(b, loc, lowValid, highValid);
  }
  Value value = arith::BitcastOp::create(b, loc, type, result);
  op.replaceAllUsesWith(ValueRange{value, valid});
  return success();
}

/// The runtime's code of an mma.sync shape and input type.
FailureOr<int32_t> mmaShapeCode(nvgpu::MmaSyncOp op) {
  std::array<int64_t, 3> shape = op.getMmaShapeAsArray();
  Type element = op.getMatrixA().getType().getElementType();
  if (shape == std::array<int64_t, 3>{16, 8, 16} && element.isF16())
    return 0;
  if (shape == std::array<int64_t, 3>{16, 8, 16} && element.isBF16())
    return 1;
  if (shape == std::array<int64_t, 3>{16, 8, 8} && element.isF32() &&
      op.getTf32Enabled())
    return 2;
  return op.emitOpError("of this shape and type cannot be emulated (m16n8k16 "
                        "f16/bf16 and m16n8k8 tf32 can, with f32 accumulators)");
}

/// The fragment buffers of a kernel's mma.sync ops (A, B, C and D, 16 bytes
/// each on the thread's stack). A thread runs one mma.sync at a time, so
/// every mma.sync of the kernel, nvgpu's or nvvm's, shares them.
struct MmaBuffers {
  Value a, b, c, d;

  static MmaBuffers create(LLVM::LLVMFuncOp kernel) {
    return {entryBuffer(kernel, 16), entryBuffer(kernel, 16),
            entryBuffer(kernel, 16), entryBuffer(kernel, 16)};
  }

  /// The runtime's mma.sync of shape `code` on the stored A, B and C; D
  /// lands in `d`.
  void call(OpBuilder &builder, Location loc, int32_t code,
            RuntimeCalls &rt) const {
    rt.call(builder, loc, "ropeGpuEmuMmaSync",
            {RuntimeCalls::i32(builder, loc, code), a, b, c, d});
  }
};

LogicalResult rewriteMma(OpBuilder &b, nvgpu::MmaSyncOp op,
                         const MmaBuffers &buffers, RuntimeCalls &rt) {
  FailureOr<int32_t> code = mmaShapeCode(op);
  if (failed(code))
    return failure();
  if (!op.getMatrixC().getType().getElementType().isF32())
    return op.emitOpError("with a non-f32 accumulator cannot be emulated");
  Location loc = op.getLoc();
  storeVector(b, loc, op.getMatrixA(), buffers.a);
  storeVector(b, loc, op.getMatrixB(), buffers.b);
  storeVector(b, loc, op.getMatrixC(), buffers.c);
  buffers.call(b, loc, *code, rt);
  op.replaceAllUsesWith(
      loadVector(b, loc, cast<VectorType>(op.getType()), buffers.d));
  return success();
}

/// The runtime's code of an nvvm.mma.sync: the same shapes as nvgpu's, with
/// A and B in the row.col layouts PTX requires of them. The input type is
/// the op's, else that of A's registers (vector<2xf16> is f16; i32
/// registers need the type, as bf16 and tf32 both pack into them).
FailureOr<int32_t> nvvmMmaShapeCode(NVVM::MmaOp op) {
  NVVM::MMAShapeAttr shape = op.getShape();
  std::optional<NVVM::MMATypes> type = op.getMultiplicandAPtxType();
  if (!type && !op.getOperandA().empty())
    if (auto pair = dyn_cast<VectorType>(op.getOperandA()[0].getType()))
      if (pair.getElementType().isF16())
        type = NVVM::MMATypes::f16;
  bool rowCol = op.getLayoutA() == NVVM::MMALayout::row &&
                op.getLayoutB() == NVVM::MMALayout::col;
  if (rowCol && type && shape.getM() == 16 && shape.getN() == 8) {
    if (shape.getK() == 16 && *type == NVVM::MMATypes::f16)
      return 0;
    if (shape.getK() == 16 && *type == NVVM::MMATypes::bf16)
      return 1;
    if (shape.getK() == 8 && *type == NVVM::MMATypes::tf32)
      return 2;
  }
  return op.emitOpError("of this shape, layout and type cannot be emulated "
                        "(row.col m16n8k16 f16/bf16 and m16n8k8 tf32 can, "
                        "with f32 accumulators)");
}

/// Stores 32-bit registers one after another at `buffer`.
void storeRegisters(OpBuilder &b, Location loc, ValueRange registers,
                    Value buffer) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  for (auto [i, reg] : llvm::enumerate(registers)) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), buffer,
                                     ArrayRef<LLVM::GEPArg>{int32_t(4 * i)});
    LLVM::StoreOp::create(b, loc, reg, slot);
  }
}

/// nvvm.mma.sync: its register lists to the runtime, the four f32 of D back
/// as the op's result struct.
LogicalResult rewriteNvvmMma(OpBuilder &b, NVVM::MmaOp op,
                             const MmaBuffers &buffers, RuntimeCalls &rt) {
  FailureOr<int32_t> code = nvvmMmaShapeCode(op);
  if (failed(code))
    return failure();
  auto result = cast<LLVM::LLVMStructType>(op.getType());
  auto isF32 = [](Type type) { return type.isF32(); };
  if (op.getOperandC().size() != 4 ||
      !llvm::all_of(op.getOperandC().getTypes(), isF32) ||
      result.getBody().size() != 4 || !llvm::all_of(result.getBody(), isF32))
    return op.emitOpError("without four f32 accumulators cannot be emulated");
  Location loc = op.getLoc();
  storeRegisters(b, loc, op.getOperandA(), buffers.a);
  storeRegisters(b, loc, op.getOperandB(), buffers.b);
  storeRegisters(b, loc, op.getOperandC(), buffers.c);
  buffers.call(b, loc, *code, rt);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value value = LLVM::PoisonOp::create(b, loc, result);
  for (int64_t i = 0; i < 4; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, b.getF32Type(), buffers.d,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value element = LLVM::LoadOp::create(b, loc, b.getF32Type(), slot);
    value = LLVM::InsertValueOp::create(b, loc, value, element,
                                        ArrayRef<int64_t>{i});
  }
  op.getRes().replaceAllUsesWith(value);
  return success();
}

/// `out`: the 16 bytes the registers land in, shared by the kernel's
/// ldmatrix ops.
LogicalResult rewriteLdmatrix(OpBuilder &b, nvgpu::LdMatrixOp op, Value out,
                              RuntimeCalls &rt) {
  auto type = cast<VectorType>(op.getType());
  if (type.getElementTypeBitWidth() != 16)
    return op.emitOpError("of non-16-bit elements cannot be emulated");
  Location loc = op.getLoc();
  Value row = elementAddress(b, loc, op.getSrcMemref(), op.getIndices());
  rt.call(b, loc, "ropeGpuEmuLdmatrix",
          {row, RuntimeCalls::i32(b, loc, op.getNumTiles()),
           RuntimeCalls::i32(b, loc, op.getTranspose() ? 1 : 0), out});
  op.replaceAllUsesWith(loadVector(b, loc, type, out));
  return success();
}

/// cp.async: the runtime reads the source now and lands the destination at
/// the wait. With srcElements, only that many elements are read and the rest
/// of the destination is zero-filled (the usual way to copy a tail).
LogicalResult rewriteAsyncCopy(OpBuilder &b, nvgpu::DeviceAsyncCopyOp op,
                               RuntimeCalls &rt) {
  Location loc = op.getLoc();
  auto dstType = cast<MemRefType>(op.getDst().getType());
  int64_t elementBytes = llvm::divideCeil(dstType.getElementTypeBitWidth(), 8);
  int64_t bytes = op.getDstElements().getZExtValue() * elementBytes;
  Value dst = elementAddress(b, loc, op.getDst(), op.getDstIndices());
  Value src = elementAddress(b, loc, op.getSrc(), op.getSrcIndices());
  if (Value srcElements = op.getSrcElements()) {
    Value srcBytes = arith::MulIOp::create(
        b, loc, srcElements,
        arith::ConstantIndexOp::create(b, loc, elementBytes));
    rt.call(b, loc, "ropeGpuEmuAsyncCopyPartial",
            {dst, src, RuntimeCalls::i64(b, loc, bytes), srcBytes});
    return success();
  }
  rt.call(b, loc, "ropeGpuEmuAsyncCopy",
          {dst, src, RuntimeCalls::i64(b, loc, bytes)});
  return success();
}

/// The cp.async tokens of `kernel`: op results and block arguments (a
/// pipelined loop carries the newest group's token to the next iteration's
/// wait as an iter_arg).
SmallVector<Value> asyncTokens(LLVM::LLVMFuncOp kernel) {
  SmallVector<Value> tokens;
  auto collect = [&](ValueRange values) {
    for (Value value : values)
      if (isa<nvgpu::DeviceAsyncTokenType>(value.getType()))
        tokens.push_back(value);
  };
  kernel.walk([&](Operation *op) {
    collect(op->getResults());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        collect(block.getArguments());
  });
  return tokens;
}

/// The runtime keeps each thread's cp.async groups itself, so the tokens
/// carry nothing: where they only go to groups and waits, directly or
/// through scf loops and ifs, each becomes an i32 zero, and the token ops
/// (already rewritten into runtime calls) go.
LogicalResult dropAsyncTokens(LLVM::LLVMFuncOp kernel,
                              ArrayRef<Operation *> tokenOps) {
  SmallVector<Value> tokens = asyncTokens(kernel);
  for (Value token : tokens)
    for (Operation *user : token.getUsers())
      if (!isa<nvgpu::DeviceAsyncCreateGroupOp, nvgpu::DeviceAsyncWaitOp,
               scf::ForOp, scf::IfOp, scf::WhileOp, scf::YieldOp,
               scf::ConditionOp>(user))
        return user->emitOpError("uses a cp.async token the emulator cannot "
                                 "follow (tokens must go to groups and waits, "
                                 "possibly through scf loops and ifs)");
  auto i32 = IntegerType::get(kernel.getContext(), 32);
  for (Value token : tokens)
    token.setType(i32);
  OpBuilder b(kernel.getContext());
  for (Operation *op : tokenOps) {
    if (op->getNumResults() == 0)
      continue;
    b.setInsertionPoint(op);
    op->getResult(0).replaceAllUsesWith(
        arith::ConstantIntOp::create(b, op->getLoc(), i32, 0).getResult());
  }
  for (Operation *op : tokenOps)
    op->erase();
  return success();
}

/// Rewrites the GPU ops of one kernel, with what they share: the buffer
/// that receives the shuffles' validity, the mma.sync and ldmatrix
/// register buffers, the barrier numbers, and the cp.async token ops, erased last.
struct KernelRewriter {
  KernelRewriter(LLVM::LLVMFuncOp kernel, RuntimeCalls &rt)
      : kernel(kernel), rt(rt) {}

  LLVM::LLVMFuncOp kernel;
  RuntimeCalls &rt;
  Value validBuffer;
  std::optional<MmaBuffers> mmaBuffers;
  Value ldmatrixBuffer;
  /// Each gpu.barrier op gets its own number, so that threads of a block
  /// waiting at different barriers (e.g. one in each branch of an if) are
  /// a divergent barrier rather than a release (ropeGpuEmuBarrierSite).
  int64_t nextBarrierSite = 0;
  SmallVector<Operation *> tokenOps;

  LogicalResult rewrite(OpBuilder &b, Operation *op);
  LogicalResult rewriteAsync(OpBuilder &b, Operation *op);
};

LogicalResult KernelRewriter::rewrite(OpBuilder &b, Operation *op) {
  b.setInsertionPoint(op);
  Location loc = op->getLoc();
  if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
          gpu::LaneIdOp>(op)) {
    op->getResult(0).replaceAllUsesWith(rewriteIdQuery(b, op, rt));
    return success();
  }
  if (isa<gpu::BarrierOp>(op)) {
    rt.call(b, loc, "ropeGpuEmuBarrierSite",
            {RuntimeCalls::i64(b, loc, nextBarrierSite++)});
    return success();
  }
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    if (!validBuffer)
      validBuffer = entryBuffer(kernel, 1);
    return rewriteShuffle(b, shuffle, validBuffer, rt);
  }
  if (isa<nvgpu::MmaSyncOp, NVVM::MmaOp>(op) && !mmaBuffers)
    mmaBuffers = MmaBuffers::create(kernel);
  if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op))
    return rewriteMma(b, mma, *mmaBuffers, rt);
  if (auto mma = dyn_cast<NVVM::MmaOp>(op))
    return rewriteNvvmMma(b, mma, *mmaBuffers, rt);
  if (auto load = dyn_cast<nvgpu::LdMatrixOp>(op)) {
    if (!ldmatrixBuffer)
      ldmatrixBuffer = entryBuffer(kernel, 16);
    return rewriteLdmatrix(b, load, ldmatrixBuffer, rt);
  }
  if (isa<nvgpu::DeviceAsyncCopyOp, nvgpu::DeviceAsyncCreateGroupOp,
          nvgpu::DeviceAsyncWaitOp, NVVM::CpAsyncCommitGroupOp,
          NVVM::CpAsyncWaitGroupOp>(op))
    return rewriteAsync(b, op);
  FailureOr<bool> hopper = rewriteHopperOp(b, op, rt);
  if (failed(hopper))
    return failure();
  if (*hopper)
    return success();
  return op->emitOpError("cannot be emulated on the host");
}

/// cp.async, commit and wait; their tokens go after all ops are rewritten
/// (dropAsyncTokens).
LogicalResult KernelRewriter::rewriteAsync(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  tokenOps.push_back(op);
  if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
    rt.call(b, loc, "ropeGpuEmuAsyncWait",
            {RuntimeCalls::i32(b, loc, wait.getNumGroups().value_or(0))});
    return success();
  }
  // The token-free NVVM forms (cp.async.wait_group N, commit_group).
  if (auto wait = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
    rt.call(b, loc, "ropeGpuEmuAsyncWait",
            {RuntimeCalls::i32(b, loc, wait.getN())});
    return success();
  }
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
    return rewriteAsyncCopy(b, copy, rt);
  rt.call(b, loc, "ropeGpuEmuAsyncCommit", {});
  return success();
}

} // namespace

LogicalResult mlir::rope::emulation::rewriteGPUOps(LLVM::LLVMFuncOp kernel,
                                                   RuntimeCalls &rt) {
  SmallVector<Operation *> gpuOps;
  kernel.walk([&](Operation *op) {
    if (isa<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect>(
            op->getDialect()))
      gpuOps.push_back(op);
  });
  OpBuilder b(kernel.getContext());
  KernelRewriter rewriter(kernel, rt);
  for (Operation *op : gpuOps)
    if (failed(rewriter.rewrite(b, op)))
      return failure();
  for (Operation *op : gpuOps)
    if (!llvm::is_contained(rewriter.tokenOps, op))
      op->erase();
  return dropAsyncTokens(kernel, rewriter.tokenOps);
}

void mlir::rope::emulation::stripGPUAddressSpaces(LLVM::LLVMFuncOp kernel) {
  auto strip = [](Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || !isa_and_nonnull<gpu::AddressSpaceAttr>(type.getMemorySpace()))
      return;
    value.setType(MemRefType::get(type.getShape(), type.getElementType(),
                                  type.getLayout()));
  };
  kernel.walk([&](Operation *op) {
    for (Value result : op->getResults())
      strip(result);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          strip(arg);
  });
  for (Block &block : kernel.getBody())
    for (BlockArgument arg : block.getArguments())
      strip(arg);
}
