//===- EmulateGPUOnHost.cpp - run gpu.launch kernels on the CPU -----------===//
//
// --rope-emulate-gpu-on-host: every gpu.launch becomes a call of the GPU
// emulator (libRopeGpuEmulator.so), which runs the kernel's body once per
// GPU thread, each thread a fiber of its block: barriers wait for the whole
// block, workgroup memory is one buffer per block, warp operations act on
// the 32 lanes of a warp together, and checkers catch races, uninitialised
// shared reads, out-of-bounds accesses and divergent barriers (docs/gpu.md).
// The body moves into an llvm.func taking one pointer, to the values it
// captures (stored at the launch site as their LLVM types, through casts
// that the LLVM conversion reconciles). GPU memory ops become host ones.
//
//===----------------------------------------------------------------------===//

#include "emulation/EmulatedKernel.h"

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEEMULATEGPUONHOST
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope::emulation;

namespace {

/// Workgroup buffers start at multiples of this many bytes.
constexpr int64_t kSharedAlignment = 16;

/// What a launch needs besides its body: the values it captures, their
/// LLVM types (the layout of the environment), and where each workgroup
/// buffer starts.
struct LaunchPlan {
  SmallVector<Value> captures;
  SmallVector<Type> captureTypes;
  SmallVector<int64_t> sharedOffsets;
  int64_t sharedBytes = 0;
};

/// The launches this pass cannot run, with the reason.
LogicalResult checkLaunch(gpu::LaunchOp launch) {
  if (launch.hasClusterSize() || launch.getAsyncToken() ||
      !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize())
    return launch.emitOpError("with clusters, async tokens or dynamic shared "
                              "memory cannot be emulated on the host");
  for (BlockArgument buffer : launch.getWorkgroupAttributions())
    if (!cast<MemRefType>(buffer.getType()).hasStaticShape())
      return launch.emitOpError("workgroup buffers must have static shapes "
                                "to be emulated");
  for (BlockArgument buffer : launch.getPrivateAttributions())
    if (!cast<MemRefType>(buffer.getType()).hasStaticShape())
      return launch.emitOpError("private buffers must have static shapes "
                                "to be emulated");
  return success();
}

/// Constants the body uses are cloned into it rather than captured.
void sinkConstants(gpu::LaunchOp launch) {
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(launch.getBody(), above);
  OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
  for (Value value : above) {
    Operation *def = value.getDefiningOp();
    if (!def || !matchPattern(def, m_Constant()))
      continue;
    Operation *copy = b.clone(*def);
    replaceAllUsesInRegionWith(value, copy->getResult(0), launch.getBody());
  }
}

/// Sizes in bytes of a static memref's data.
int64_t byteSize(MemRefType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

FailureOr<LaunchPlan> planLaunch(gpu::LaunchOp launch,
                                 const LLVMTypeConverter &converter) {
  LaunchPlan plan;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(launch.getBody(), above);
  for (Value value : above) {
    Type type = converter.convertType(value.getType());
    if (!type)
      return launch.emitOpError("captures a value of type ")
             << value.getType() << " that the emulator cannot pass";
    plan.captures.push_back(value);
    plan.captureTypes.push_back(type);
  }
  for (BlockArgument buffer : launch.getWorkgroupAttributions()) {
    plan.sharedBytes = llvm::alignTo(plan.sharedBytes, kSharedAlignment);
    plan.sharedOffsets.push_back(plan.sharedBytes);
    plan.sharedBytes += byteSize(cast<MemRefType>(buffer.getType()));
  }
  // Each mbarrier group of the kernel: 8 bytes per mbarrier after the
  // buffers (the rewrite of nvgpu.mbarrier.create reads the offset).
  WalkResult groups = launch.getBody().walk([&](nvgpu::MBarrierCreateOp op) {
    nvgpu::MBarrierGroupType type = op.getBarriers().getType();
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
    if (!space || space.getValue() != gpu::AddressSpace::Workgroup) {
      op.emitOpError("of mbarriers outside workgroup memory cannot be "
                     "emulated");
      return WalkResult::interrupt();
    }
    plan.sharedBytes = llvm::alignTo(plan.sharedBytes, 8);
    op->setAttr(kMbarrierOffsetAttr,
                IntegerAttr::get(IntegerType::get(op.getContext(), 64),
                                 plan.sharedBytes));
    plan.sharedBytes += 8 * static_cast<int64_t>(type.getNumBarriers());
    return WalkResult::advance();
  });
  if (groups.wasInterrupted())
    return failure();
  return plan;
}

/// nvgpu.tma.create.descriptor on the host: a 128-byte tensor map on the
/// stack (the launch that uses it is synchronous), filled by
/// ropeGpuEmuTensorMapEncodeTiled from the memref's metadata. TMA counts
/// dims innermost first: the memref's sizes, strides and the op's box
/// (given outermost first) are reversed, as the CUDA runtime wrappers do.
/// The result becomes a cast of the map's pointer, which the launch
/// captures as a pointer.
LogicalResult emulateTensorMap(nvgpu::TmaCreateDescriptorOp op,
                               RuntimeCalls &rt) {
  nvgpu::TensorMapDescriptorType type = op.getTensorMap().getType();
  MemRefType box = type.getTensor();
  if (type.getInterleave() != nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE)
    return op.emitOpError("with an interleaved layout cannot be emulated");
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  int64_t rank = box.getRank();
  int64_t elementBytes = llvm::divideCeil(box.getElementTypeBitWidth(), 8);
  SmallVector<int64_t> dynamic(rank, ShapedType::kDynamic);
  auto ranked = MemRefType::get(
      dynamic, box.getElementType(),
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dynamic));
  Value tensor = memref::CastOp::create(b, loc, ranked, op.getTensor());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, tensor);
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // TMA's dimension 0 is contiguous: a tensor whose innermost stride is not
  // 1 is refused at run time, as the driver's encoding cannot express it.
  Value innerContiguous =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                            metadata.getStrides()[rank - 1], index(1));
  cf::AssertOp::create(
      b, loc, innerContiguous,
      "nvgpu.tma.create.descriptor: the tensor's innermost dimension must be "
      "contiguous (stride 1), as a tensor map's dimension 0 is");
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tensor);
  Value start = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, metadata.getOffset(), index(elementBytes)));
  Value address =
      LLVM::IntToPtrOp::create(b, loc, ptr, RuntimeCalls::toI64(b, loc, start));
  // The arrays and the map live in the function's entry block: a
  // descriptor made in a loop must not grow the stack per iteration.
  Block &entry =
      op->getParentOfType<FunctionOpInterface>().getFunctionBody().front();
  auto array = [&](Type element, int64_t count, int64_t alignment = 0) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&entry);
    return LLVM::AllocaOp::create(b, loc, ptr,
                                  LLVM::LLVMArrayType::get(element, count),
                                  RuntimeCalls::i64(b, loc, 1), alignment)
        .getResult();
  };
  auto put = [&](Value array, Type element, int64_t i, Value value) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, element, array,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    LLVM::StoreOp::create(b, loc, value, slot);
  };
  auto i32 = b.getI32Type(), i64 = b.getI64Type();
  Value dims = array(i64, rank),
        strides = array(i64, std::max<int64_t>(rank - 1, 1));
  Value boxDims = array(i32, rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = rank - 1 - d; // TMA dim d is the memref's dim `dim`
    put(dims, i64, d, RuntimeCalls::toI64(b, loc, metadata.getSizes()[dim]));
    put(boxDims, i32, d,
        arith::IndexCastOp::create(b, loc, i32, op.getBoxDimensions()[dim]));
    if (d > 0)
      put(strides, i64, d - 1,
          RuntimeCalls::toI64(b, loc,
                              arith::MulIOp::create(b, loc,
                                                    metadata.getStrides()[dim],
                                                    index(elementBytes))));
  }
  Value map = array(i64, 16, /*alignment=*/64);
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  rt.call(
      b, loc, "ropeGpuEmuTensorMapEncodeTiled",
      {map, RuntimeCalls::i32(b, loc, elementBytes),
       RuntimeCalls::i32(b, loc, rank), address, dims, strides, boxDims, null,
       RuntimeCalls::i32(b, loc, static_cast<int64_t>(type.getSwizzle())),
       RuntimeCalls::i32(b, loc,
                         type.getOob() == nvgpu::TensorMapOOBKind::OOB_NAN)});
  op.getTensorMap().replaceAllUsesWith(
      UnrealizedConversionCastOp::create(b, loc, type, map).getResult(0));
  op.erase();
  return success();
}

/// `type` in host memory (no GPU address space).
MemRefType hostType(MemRefType type) {
  if (!isa_and_nonnull<gpu::AddressSpaceAttr>(type.getMemorySpace()))
    return type;
  return MemRefType::get(type.getShape(), type.getElementType(),
                         type.getLayout());
}

/// A memref of `type` (static, identity layout) over the bytes at `pointer`.
Value memrefAt(OpBuilder &b, Location loc, Value pointer, MemRefType type,
               const LLVMTypeConverter &converter) {
  Type descriptorType = converter.convertType(type);
  Value desc = LLVM::PoisonOp::create(b, loc, descriptorType);
  desc = LLVM::InsertValueOp::create(b, loc, desc, pointer,
                                     ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, pointer,
                                     ArrayRef<int64_t>{1});
  auto i64 = b.getI64Type();
  auto constant = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  desc = LLVM::InsertValueOp::create(b, loc, desc, constant(0),
                                     ArrayRef<int64_t>{2});
  int64_t stride = 1;
  for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
    desc = LLVM::InsertValueOp::create(
        b, loc, desc, constant(type.getDimSize(dim)), ArrayRef<int64_t>{3, dim});
    desc = LLVM::InsertValueOp::create(b, loc, desc, constant(stride),
                                       ArrayRef<int64_t>{4, dim});
    // Wraps rather than overflowing for an absurd static shape (which no
    // buffer of could be allocated anyway).
    stride = static_cast<int64_t>(static_cast<uint64_t>(stride) *
                                  static_cast<uint64_t>(type.getDimSize(dim)));
  }
  return UnrealizedConversionCastOp::create(b, loc, type, desc).getResult(0);
}

/// The body's entry values: its captures read from the environment, the
/// ids and sizes from the runtime, its workgroup buffers in the block's
/// shared memory and its private buffers on the thread's own stack.
SmallVector<Value> bindEntry(OpBuilder &b, gpu::LaunchOp launch,
                             const LaunchPlan &plan, Value env,
                             IRMapping &mapping, RuntimeCalls &rt,
                             const LLVMTypeConverter &converter) {
  Location loc = launch.getLoc();
  MLIRContext *ctx = b.getContext();
  auto envType = LLVM::LLVMStructType::getLiteral(ctx, plan.captureTypes);
  for (auto [i, capture] : llvm::enumerate(plan.captures)) {
    Value field = LLVM::GEPOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx), envType, env,
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    Value loaded = LLVM::LoadOp::create(b, loc, plan.captureTypes[i], field);
    Value value = UnrealizedConversionCastOp::create(
                      b, loc, capture.getType(), loaded)
                      .getResult(0);
    mapping.map(capture, value);
  }
  SmallVector<Value> entry;
  auto query = [&](StringRef name, int32_t dim) {
    Value v = rt.call(b, loc, name, {RuntimeCalls::i32(b, loc, dim)},
                      b.getI64Type());
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v)
        .getResult();
  };
  for (StringRef name : {"ropeGpuEmuBlockId", "ropeGpuEmuThreadId",
                         "ropeGpuEmuGridDim", "ropeGpuEmuBlockDim"})
    for (int32_t dim = 0; dim < 3; ++dim)
      entry.push_back(query(name, dim));
  for (auto [buffer, offset] :
       llvm::zip_equal(launch.getWorkgroupAttributions(), plan.sharedOffsets)) {
    Value pointer = rt.call(b, loc, "ropeGpuEmuShared",
                            {RuntimeCalls::i64(b, loc, offset)},
                            LLVM::LLVMPointerType::get(ctx));
    // Host memory from the start (the body's values are stripped of their
    // GPU address spaces once instrumented).
    entry.push_back(memrefAt(b, loc, pointer,
                             hostType(cast<MemRefType>(buffer.getType())),
                             converter));
  }
  for (BlockArgument buffer : launch.getPrivateAttributions())
    entry.push_back(memref::AllocaOp::create(
        b, loc, hostType(cast<MemRefType>(buffer.getType()))));
  return entry;
}

/// The kernel as an llvm.func of the environment pointer: the entry block
/// binds the launch's block arguments, then branches into its body.
FailureOr<LLVM::LLVMFuncOp> outlineKernel(gpu::LaunchOp launch,
                                          StringRef name,
                                          const LaunchPlan &plan,
                                          RuntimeCalls &rt,
                                          const LLVMTypeConverter &converter) {
  MLIRContext *ctx = launch.getContext();
  auto module = launch->getParentOfType<ModuleOp>();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto kernel = LLVM::LLVMFuncOp::create(
      b, launch.getLoc(), name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}),
      LLVM::Linkage::Internal);
  Block *entry = kernel.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  SmallVector<Value> entryValues = bindEntry(
      b, launch, plan, entry->getArgument(0), mapping, rt, converter);
  launch.getBody().cloneInto(&kernel.getBody(), mapping);
  Block *body = entry->getNextNode();
  cf::BranchOp::create(b, launch.getLoc(), body, entryValues);
  for (Block &block : kernel.getBody())
    if (auto end = dyn_cast<gpu::TerminatorOp>(block.getTerminator())) {
      b.setInsertionPoint(end);
      LLVM::ReturnOp::create(b, end.getLoc(), ValueRange{});
      end.erase();
    }
  if (failed(instrumentMemoryAccesses(kernel, rt)) ||
      failed(rewriteGPUOps(kernel, rt)))
    return failure();
  stripGPUAddressSpaces(kernel);
  return kernel;
}

/// At the launch: the environment filled with the captures, then the
/// runtime's launch of the kernel over the grid.
void callLaunch(gpu::LaunchOp launch, LLVM::LLVMFuncOp kernel,
                StringRef kernelName, const LaunchPlan &plan,
                RuntimeCalls &rt) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto envType = LLVM::LLVMStructType::getLiteral(ctx, plan.captureTypes);
  Value env = LLVM::AllocaOp::create(b, loc, ptr, envType,
                                     RuntimeCalls::i64(b, loc, 1));
  for (auto [i, capture] : llvm::enumerate(plan.captures)) {
    Value converted = UnrealizedConversionCastOp::create(
                          b, loc, plan.captureTypes[i], capture)
                          .getResult(0);
    Value field = LLVM::GEPOp::create(
        b, loc, ptr, envType, env,
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    LLVM::StoreOp::create(b, loc, converted, field);
  }
  Value function = LLVM::AddressOfOp::create(b, loc, kernel);
  Value name = LLVM::createGlobalString(
      loc, b, (kernel.getName() + "_name").str(),
      (kernelName + Twine('\0')).str(), LLVM::Linkage::Private);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  rt.call(b, loc, "ropeGpuEmuLaunch",
          {function, env, name, grid.x, grid.y, grid.z, block.x, block.y,
           block.z, RuntimeCalls::i64(b, loc, plan.sharedBytes)});
  launch.erase();
}

/// The kernel's name in the emulator's reports: the launch's own when it
/// has one, else its function's with a counter.
std::string kernelName(gpu::LaunchOp launch, unsigned index) {
  if (std::optional<StringRef> name = launch.getFunction())
    return name->str();
  auto func = launch->getParentOfType<FunctionOpInterface>();
  return (func.getName() + "_kernel" + Twine(index)).str();
}

/// The runtime's functions are declared by the pass, with their own
/// signatures; a symbol of the module already using one of their names
/// would clash with them, so it is reported rather than reused.
LogicalResult checkRuntimeNamesFree(ModuleOp module) {
  for (Operation &op : module.getBody()->getOperations()) {
    auto symbol = dyn_cast<SymbolOpInterface>(op);
    if (symbol && symbol.getName().starts_with("ropeGpuEmu"))
      return op.emitOpError("is named '")
             << symbol.getName()
             << "', a name the GPU emulator's runtime reserves";
  }
  return success();
}

/// gpu.alloc / gpu.dealloc / gpu.memcpy / gpu.memset on host memory.
void replaceMemoryOp(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
    auto host = memref::AllocOp::create(b, loc, hostType(alloc.getType()),
                                        alloc.getDynamicSizes());
    alloc.getMemref().replaceAllUsesWith(host.getResult());
  } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
    memref::DeallocOp::create(b, loc, dealloc.getMemref());
  } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
    memref::CopyOp::create(b, loc, copy.getSrc(), copy.getDst());
  }
  op->erase();
}

struct RopeEmulateGPUOnHostPass
    : public rope::impl::RopeEmulateGPUOnHostBase<RopeEmulateGPUOnHostPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::LaunchOp> launches;
    SmallVector<Operation *> memoryOps;
    SmallVector<nvgpu::TmaCreateDescriptorOp> tensorMaps;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        launches.push_back(launch);
        return WalkResult::skip();
      }
      if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
        memoryOps.push_back(op);
      if (auto map = dyn_cast<nvgpu::TmaCreateDescriptorOp>(op))
        tensorMaps.push_back(map);
      return WalkResult::advance();
    });
    if (!launches.empty() && failed(checkRuntimeNamesFree(module)))
      return signalPassFailure();
    LLVMTypeConverter converter(&getContext());
    // A launch passes a host tensor map (emulateTensorMap) as its pointer.
    converter.addConversion([](nvgpu::TensorMapDescriptorType type) -> Type {
      return LLVM::LLVMPointerType::get(type.getContext());
    });
    RuntimeCalls rt(module);
    for (nvgpu::TmaCreateDescriptorOp map : tensorMaps)
      if (failed(emulateTensorMap(map, rt)))
        return signalPassFailure();
    for (auto [index, launch] : llvm::enumerate(launches)) {
      if (failed(checkLaunch(launch)))
        return signalPassFailure();
      sinkConstants(launch);
      FailureOr<LaunchPlan> plan = planLaunch(launch, converter);
      if (failed(plan))
        return signalPassFailure();
      std::string name = kernelName(launch, index);
      std::string symbol = ("__rope_gpu_emu_" + Twine(index) + "_" + name).str();
      FailureOr<LLVM::LLVMFuncOp> kernel =
          outlineKernel(launch, symbol, *plan, rt, converter);
      if (failed(kernel))
        return signalPassFailure();
      callLaunch(launch, *kernel, name, *plan, rt);
    }
    for (Operation *op : memoryOps)
      replaceMemoryOp(op);
  }
};

} // namespace
