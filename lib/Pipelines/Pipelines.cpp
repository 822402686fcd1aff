//===- Pipelines.cpp - named rope pass pipelines --------------------------===//

#include "rope/Pipelines/Pipelines.h"
#include "rope/Codegen/CPU/HostRegisterBlock.h"
#include "rope/Codegen/CPU/Passes.h"
#include "rope/Codegen/Common/Passes.h"
#include "rope/Codegen/GPU/Passes.h"
#include "rope/Conversion/Passes.h"
#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Fusion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::rope;

namespace {
/// rope on tensors to linalg on tensors, with the elementwise chains (table
/// building into rotation, softmax steps) fused before anything is
/// materialised. Shared by the CPU and GPU pipelines.
void addRopeToLinalgPasses(
    OpPassManager &pm,
    function_ref<void(OpPassManager &)> beforeFusion = nullptr) {
  pm.addPass(rope::createConvertRopeToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (beforeFusion)
    beforeFusion(pm);
  pm.addPass(rope::createRopeFuseElementwiseOps());
  pm.addPass(createCanonicalizerPass());
}

/// Whole-module one-shot bufferization with plain (identity-layout) memrefs
/// at function boundaries, so callers pass ordinary descriptors; arguments
/// stay read-only, and results computed into tensor.empty and then inserted
/// into a larger tensor (the halves of a rotation, an attention row) are
/// computed in place.
void addBufferizationPasses(OpPassManager &pm, bool allowReturnAllocsFromLoops) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.allowReturnAllocsFromLoops = allowReturnAllocsFromLoops;
  pm.addPass(rope::createRopeReadOnlyPublicArguments());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

} // namespace

/// What a frontend puts around the rope ops, to linalg: tosa (torch-mlir's
/// and TensorFlow's exports) through upstream's pipeline, without its
/// validation against the TOSA profiles (exports use types no profile has:
/// torch-mlir casts i64 positions), and elementwise arith and math on
/// tensors (also what canonicalization makes of positions, e.g. p − q when
/// two rotations compose), which bufferization does not take, and
/// aggregated linalg ops (linalg.softmax), which the loop lowering does not.
static void addFrontendToLinalgPasses(OpPassManager &pm) {
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions{},
                              TosaToLinalgNamedOptions{},
                              /*validationOptions=*/std::nullopt);
  pm.addPass(createTosaToTensorPass());
  pm.addPass(createTosaToArithPass());
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(rope::createRopeDecomposeAggregatedOps());
}

void mlir::rope::buildHostLoopsToLLVMPipeline(OpPassManager &pm, bool cWrappers,
                                              bool approximateMath, bool openMP,
                                              bool genericAllocations) {
  // Failed runtime checks call the rope runtime; nothing happens where
  // there are none.
  pm.addPass(rope::createRopeLowerRuntimeChecks());
  // Complex arithmetic (a frontend's rotation by complex multiplication, as
  // DeepSeek's `view_as_complex(x) * freqs_cis`) to arith on the real and
  // imaginary parts; complex values themselves become LLVM structs below.
  pm.addPass(createConvertComplexToStandardPass());
  // Vector ops (the streamed attention rows) to loads, stores and LLVM
  // vectors; nothing happens where there are none.
  // Fully unrolled: a 2-D transfer (a register block's accumulator) becomes
  // one 1-D transfer per row, not a loop through a stack buffer.
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  if (cWrappers)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  if (approximateMath)
    pm.addPass(rope::createRopeApproximateMath());
  // AMX tile ops and AVX-512 BF16 dot products (--rope-lower-tile-products)
  // to their intrinsics.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.amx = true;
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertComplexToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = genericAllocations;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (openMP)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // Vector lowerings start register blocks from ub.poison.
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

/// mma.sync m16n8k16 with bf16 operands needs sm_80 (Ampere) or later.
static bool hasTensorCoreMma(StringRef chip) {
  unsigned version = 0;
  return chip.consume_front("sm_") &&
         !chip.take_while(llvm::isDigit).getAsInteger(10, version) &&
         version >= 80;
}

void mlir::rope::buildGPUMappingPipeline(OpPassManager &pm,
                                         const LowerToNVVMOptions &options) {
  if (options.runtimeChecks)
    pm.addPass(createRopeInsertRuntimeChecks());
  if (options.foldRotation)
    pm.addPass(createRopeFoldRotationIntoQK());
  if (options.tensorCores && hasTensorCoreMma(options.chip))
    pm.addPass(rope::createRopeAttentionToTensorCores());
  if (options.streamAttention)
    pm.addPass(createRopeDecomposeAttentionRows());
  // Rotations outside attention: 16-byte vector kernels.
  pm.addPass(rope::createRopeRotationToVectorKernel());
  // Matmuls go to tensor cores before elementwise fusion, which would fold
  // a producer's transpose into their operand maps.
  addRopeToLinalgPasses(pm, [&](OpPassManager &nested) {
    if (options.tensorCores && hasTensorCoreMma(options.chip))
      nested.addPass(rope::createRopeMatmulToTensorCores());
    nested.addPass(rope::createRopeMatmulToRegisterTiles());
  });

  // Every buffer a function allocates lives on the GPU and is freed there
  // (no ownership-based deallocation: the host code is straight-line).
  addBufferizationPasses(pm, /*allowReturnAllocsFromLoops=*/false);
  pm.addPass(createCanonicalizerPass());
  // Attention rows are an scf.forall, mapped like any other loop; what a
  // row allocates is its thread's own.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addNestedPass<func::FuncOp>(rope::createRopePrivatizeThreadBuffers());
  pm.addNestedPass<func::FuncOp>(rope::createRopeHostBuffersToGPU());

  pm.addPass(rope::createRopeReductionsInnermost());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(rope::createRopeParallelLoopsToGPU(
      rope::RopeParallelLoopsToGPUOptions{options.blockSize}));
  pm.addPass(rope::createRopeLowerVectorTransfers());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::rope::buildLowerToCPUPipeline(OpPassManager &pm,
                                         const LowerToCPUOptions &options) {
  // Each rope op checks its dynamic extents where the caller wrote it, before
  // anything (the frontend stage decomposes aggregated ops such as
  // rope.online_attention) rewrites it.
  if (options.runtimeChecks)
    pm.addPass(createRopeInsertRuntimeChecks());
  addFrontendToLinalgPasses(pm);
  // rope level: rotations move into attention, attention into tiled loops.
  if (options.foldRotation)
    pm.addPass(createRopeFoldRotationIntoQK());
  // A query tile amortises its per-tile work (K's packing and rotation) over
  // its rows; the taller AVX-512 register block makes the FMAs cheap enough
  // that 128 rows pay, where with AVX2's 4-row block 128 and 64 are close
  // (and 64 wins for GQA): benchmarks/README.md has the measurements.
  int64_t registerRows =
      rope::resolveRegisterBlock(options.registerRows, options.registerColumns)
          .rows;
  int64_t queryTile = options.queryTile != 0 ? options.queryTile
                      : registerRows >= 8   ? 128
                                            : 64;
  if (options.decomposeAttention)
    pm.addPass(createRopeDecomposeAttention(RopeDecomposeAttentionOptions{
        queryTile, options.keyTile, options.splitKeys,
        options.rowsRotatingKeysInScores}));

  addRopeToLinalgPasses(pm);
  if (options.microkernels) {
    // bf16/f16 matmuls to the matrix engine first (AMX tiles, AVX-512 BF16
    // dot products), where the target has one; the rest (and the attention
    // tiles) to register blocks of FMAs.
    pm.addNestedPass<func::FuncOp>(rope::createRopePackTileProducts(
        rope::RopePackTileProductsOptions{options.cpuFeatures}));
    pm.addNestedPass<func::FuncOp>(rope::createRopeVectorizeContractions(
        rope::RopeVectorizeContractionsOptions{options.registerRows,
                                               options.registerColumns,
                                               options.reductionUnroll}));
    pm.addNestedPass<func::FuncOp>(rope::createRopeVectorizeRowReductions());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (options.parallel)
    pm.addPass(rope::createRopeParallelizeElementwise());

  // Results computed into the caller's buffers, where it passes them.
  if (options.destinationEntryPoints)
    pm.addPass(rope::createRopeDestinationEntryPoints());
  // The online-softmax state (running max, sum, accumulator) is rebuilt each
  // key tile; let loops carry those fresh buffers.
  addBufferizationPasses(pm, /*allowReturnAllocsFromLoops=*/true);
  bufferization::buildBufferDeallocationPipeline(pm);
  // Deallocation clones buffers it cannot prove unaliased (e.g. a result that
  // is an argument updated in place); clones become alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(rope::createRopeStridedCopiesToLoops());
  if (options.microkernels)
    pm.addPass(rope::createRopeLowerTileProducts());
  // The attention's key loop: its Q·Kᵀ and P·V blocks fetch the next V and
  // K tiles while they compute.
  if (options.microkernels && options.prefetchTiles)
    pm.addNestedPass<func::FuncOp>(rope::createRopePrefetchStreamedTiles());

  // Loops and LLVM. scf.forall (independent attention tiles) runs on all
  // cores through OpenMP, or as a plain loop nest.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  if (options.parallel) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(rope::createRopeInlineAllocaScopes());
  }
  rope::buildHostLoopsToLLVMPipeline(pm, options.cWrappers,
                                     options.approximateMath, options.parallel,
                                     options.cacheAllocations);
}

void mlir::rope::buildLowerToNVVMPipeline(OpPassManager &pm,
                                          const LowerToNVVMOptions &options) {
  if (options.emulate) {
    rope::buildGPUMappingPipeline(pm, options);
    EmulateGPUOptions emulation;
    emulation.cWrappers = options.cWrappers;
    return rope::buildEmulateGPUPipeline(pm, emulation);
  }
  pm.addPass(rope::createRopeCheckNVVMTarget(rope::RopeCheckNVVMTargetOptions{
      options.chip, options.features, options.format}));
  rope::buildGPUMappingPipeline(pm, options);
  // Constants (tile sizes, strides, table coefficients) go into the kernels
  // as immediates: outlining would otherwise pass each one as a parameter,
  // which costs a register wherever LLVM cannot see its value.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  // Shared tiles above the 48 KiB a kernel may declare statically (the f32
  // attention's) become dynamic shared memory, sized at launch.
  pm.addPass(rope::createRopeWorkgroupBuffersToDynamicSharedMemory());
  pm.addPass(createGpuKernelOutliningPass());
  // ptxas gets each kernel's minimum blocks per SM instead of spilling to
  // reach an occupancy of its own choosing.
  pm.addPass(rope::createRopeSetKernelMinBlocksPerSM());
  // The checks are host code, before the launches.
  pm.addPass(rope::createRopeLowerRuntimeChecks());
  // Allocations, copies and launches of a function are ordered on one stream.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  if (options.cWrappers)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());

  // NVVM, the binary (ptxas for cubin/fatbin), and the host side.
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::rope::buildEmulateGPUPipeline(OpPassManager &pm,
                                         const EmulateGPUOptions &options) {
  pm.addPass(rope::createRopeEmulateGPUOnHost());
  rope::buildHostLoopsToLLVMPipeline(pm, options.cWrappers,
                                     /*approximateMath=*/false,
                                     /*openMP=*/false);
}

void mlir::rope::registerRopePipelines() {
  PassPipelineRegistration<EmulateGPUOptions>(
      "rope-emulate-gpu",
      "Run GPU code on memrefs (gpu.launch kernels) on the CPU: the kernels "
      "through the GPU emulator with its race, bounds and divergence checks, "
      "the rest lowered to the LLVM dialect",
      buildEmulateGPUPipeline);
  PassPipelineRegistration<LowerToNVVMOptions>(
      "rope-lower-to-nvvm",
      "Lower rope on tensors to NVIDIA kernels in a gpu.binary (NVVM, PTX, "
      "cubin through ptxas) plus host code that calls the mgpu* runtime "
      "(libRopeCudaRuntime.so)",
      buildLowerToNVVMPipeline);
  PassPipelineRegistration<LowerToCPUOptions>(
      "rope-lower-to-cpu",
      "Lower rope (and upstream dialects on tensors) to the LLVM dialect for "
      "the CPU, ready for mlir-runner or mlir-translate --mlir-to-llvmir",
      buildLowerToCPUPipeline);
}
