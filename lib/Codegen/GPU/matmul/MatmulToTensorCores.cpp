//===- MatmulToTensorCores.cpp - matmuls on tensor cores ------------------===//
//
// --rope-matmul-to-tensor-cores: the driver; TensorCoreMatmul builds the
// kernel of each contraction it takes.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/Passes.h"
#include "rope/Codegen/GPU/TensorCoreMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEMATMULTOTENSORCORES
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

struct RopeMatmulToTensorCoresPass
    : public rope::impl::RopeMatmulToTensorCoresBase<RopeMatmulToTensorCoresPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (rope::nvidia::whyNotTensorCoreMatmul(op).empty())
        matmuls.push_back(op);
    });
    for (linalg::LinalgOp op : matmuls)
      if (failed(rope::nvidia::replaceWithTensorCoreMatmul(rewriter, op)))
        return signalPassFailure();
  }
};

} // namespace
