//===- WorkgroupBuffersToDynamicSharedMemory.cpp --------------------------===//
//
// --rope-workgroup-buffers-to-dynamic-shared-memory: a launch whose
// workgroup attributions exceed the static shared-memory limit gets them as
// views of one dynamic shared-memory buffer, sized at launch.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEWORKGROUPBUFFERSTODYNAMICSHAREDMEMORY
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// Buffers start at multiples of 16 bytes, the widest access (cp.async,
/// ld.shared.v4) the kernels make.
constexpr int64_t kAlignment = 16;

/// The byte offset of each workgroup buffer in one dynamic buffer, and the
/// total; failure if a buffer has no static size or identity layout.
FailureOr<std::pair<SmallVector<int64_t>, int64_t>>
layoutOf(gpu::LaunchOp launch) {
  SmallVector<int64_t> offsets;
  int64_t total = 0;
  for (BlockArgument buffer : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !type.getElementType().isIntOrFloat())
      return failure();
    total = llvm::alignTo(total, kAlignment);
    offsets.push_back(total);
    total += type.getNumElements() *
             llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }
  return std::make_pair(offsets, total);
}

LogicalResult moveToDynamicSharedMemory(gpu::LaunchOp launch,
                                        int64_t staticLimit) {
  if (launch.getDynamicSharedMemorySize() ||
      launch.getNumWorkgroupAttributions() == 0)
    return success();
  auto layout = layoutOf(launch);
  if (failed(layout))
    return launch.emitOpError("has a workgroup buffer without a static shape, "
                              "identity layout and scalar elements; it cannot "
                              "move into dynamic shared memory");
  auto [offsets, total] = *layout;
  if (total <= staticLimit)
    return success();

  Location loc = launch.getLoc();
  OpBuilder b(launch);
  Value bytes = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(total));
  launch.getDynamicSharedMemorySizeMutable().assign(bytes);

  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto rawType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                 MemRefLayoutAttrInterface{}, space);
  Value raw = gpu::DynamicSharedMemoryOp::create(b, loc, rawType);
  SmallVector<BlockArgument> buffers(launch.getWorkgroupAttributions());
  for (auto [buffer, offset] : llvm::zip_equal(buffers, offsets)) {
    Value at = arith::ConstantIndexOp::create(b, loc, offset);
    Value view = memref::ViewOp::create(b, loc, buffer.getType(), raw, at,
                                        ValueRange{});
    buffer.replaceAllUsesWith(view);
  }
  // The attributions are the block arguments after the launch's ids and
  // sizes; erase them last to first.
  for (BlockArgument buffer : llvm::reverse(buffers))
    body.eraseArgument(buffer.getArgNumber());
  launch->removeAttr(gpu::LaunchOp::getNumWorkgroupAttributionsAttrName());
  return success();
}

struct RopeWorkgroupBuffersToDynamicSharedMemoryPass
    : public rope::impl::RopeWorkgroupBuffersToDynamicSharedMemoryBase<
          RopeWorkgroupBuffersToDynamicSharedMemoryPass> {
  using RopeWorkgroupBuffersToDynamicSharedMemoryBase::
      RopeWorkgroupBuffersToDynamicSharedMemoryBase;

  void runOnOperation() override {
    if (staticLimit < 0) {
      getOperation()->emitError()
          << "rope-workgroup-buffers-to-dynamic-shared-memory: static-limit "
             "must not be negative, got "
          << static_cast<int64_t>(staticLimit);
      return signalPassFailure();
    }
    WalkResult result = getOperation()->walk([&](gpu::LaunchOp launch) {
      return failed(moveToDynamicSharedMemory(launch, staticLimit))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
