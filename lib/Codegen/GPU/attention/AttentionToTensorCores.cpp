//===- AttentionToTensorCores.cpp - attention on tensor cores -------------===//
//
// --rope-attention-to-tensor-cores: the driver. The op's own conversion
// makes rope.attention online; TensorCoreAttention builds the kernel.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/Passes.h"
#include "rope/Codegen/GPU/TensorCoreAttention.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEATTENTIONTOTENSORCORES
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

struct RopeAttentionToTensorCoresPass
    : public rope::impl::RopeAttentionToTensorCoresBase<
          RopeAttentionToTensorCoresPass> {
  using RopeAttentionToTensorCoresBase::RopeAttentionToTensorCoresBase;

  void runOnOperation() override {
    if (targetBlocks < 0) {
      getOperation()->emitError()
          << "rope-attention-to-tensor-cores: target-blocks must not be "
             "negative, got "
          << static_cast<int64_t>(targetBlocks);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> attentions;
    getOperation()->walk([&](AttentionOp op) {
      if (nvidia::whyNotTensorCoreAttention(op).empty())
        attentions.push_back(op);
    });
    for (AttentionOp op : attentions) {
      // Without explicit positions the kernel knows them: its loop bounds
      // skip what causal and window rules hide.
      nvidia::TensorCoreAttentionOptions options;
      options.affinePositions = !op.getQueryPositions();
      options.targetBlocks = targetBlocks;
      rewriter.setInsertionPoint(op);
      FailureOr<OnlineAttentionOp> online = convertToOnlineAttention(rewriter, op);
      if (failed(online) ||
          failed(nvidia::replaceWithTensorCoreAttention(rewriter, *online, options)))
        return signalPassFailure();
    }
    SmallVector<OnlineAttentionOp> onlines;
    getOperation()->walk([&](OnlineAttentionOp op) {
      if (nvidia::whyNotTensorCoreAttention(op).empty())
        onlines.push_back(op);
    });
    nvidia::TensorCoreAttentionOptions options;
    options.targetBlocks = targetBlocks;
    for (OnlineAttentionOp op : onlines)
      if (failed(nvidia::replaceWithTensorCoreAttention(rewriter, op, options)))
        return signalPassFailure();
  }
};

} // namespace
