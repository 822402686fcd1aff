//===- SetKernelMinBlocksPerSM.cpp - nvvm.minctasm on kernels -------------===//
//
// --rope-set-kernel-min-blocks-per-sm: every GPU kernel states how many of
// its blocks must fit on an SM, so ptxas's register allocation has a budget
// it does not invent (see the pass description).
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPESETKERNELMINBLOCKSPERSM
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

struct RopeSetKernelMinBlocksPerSMPass
    : public rope::impl::RopeSetKernelMinBlocksPerSMBase<
          RopeSetKernelMinBlocksPerSMPass> {
  using RopeSetKernelMinBlocksPerSMBase::RopeSetKernelMinBlocksPerSMBase;

  void runOnOperation() override {
    if (minBlocks < 1 || minBlocks > 64) {
      getOperation()->emitError()
          << "rope-set-kernel-min-blocks-per-sm: min-blocks must be in [1, "
             "64], got "
          << static_cast<int64_t>(minBlocks);
      return signalPassFailure();
    }
    StringRef name = NVVM::NVVMDialect::getMinctasmAttrName();
    Builder b(&getContext());
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      if (func.isKernel() && !func->hasAttr(name))
        func->setAttr(name, b.getI32IntegerAttr(minBlocks));
    });
  }
};

} // namespace
