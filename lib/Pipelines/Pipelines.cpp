//===- Pipelines.cpp - named rope pass pipelines --------------------------===//

#include "rope/Pipelines/Pipelines.h"
#include "rope/Conversion/Passes.h"
#include "rope/Dialect/Rope/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::rope;

void mlir::rope::buildLowerToCPUPipeline(OpPassManager &pm,
                                         const LowerToCPUOptions &options) {
  // rope level: rotations move into attention, attention into tiled loops.
  if (options.foldRotation)
    pm.addPass(createRopeFoldRotationIntoQK());
  if (options.decomposeAttention)
    pm.addPass(createRopeDecomposeAttention(
        RopeDecomposeAttentionOptions{options.queryTile, options.keyTile}));

  // Tensors: rope ops to linalg, then fuse the elementwise chains (table
  // building into rotation, softmax steps) before anything is materialised.
  pm.addPass(rope::createConvertRopeToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());

  // Buffers: whole-module bufferization with plain (identity-layout) memrefs
  // at function boundaries so callers pass ordinary descriptors.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // The online-softmax state (running max, sum, accumulator) is rebuilt each
  // key tile; let loops carry those fresh buffers.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);

  // Loops and LLVM.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  if (options.cWrappers)
    pm.addPass(LLVM::createLLVMRequestCWrappersPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::rope::registerRopePipelines() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "rope-lower-to-cpu",
      "Lower rope (and upstream dialects on tensors) to the LLVM dialect for "
      "the CPU, ready for mlir-runner or mlir-translate --mlir-to-llvmir",
      buildLowerToCPUPipeline);
}
