//===- Pipelines.cpp - named rope pass pipelines --------------------------===//

#include "rope/Pipelines/Pipelines.h"
#include "rope/Codegen/GPU/Passes.h"
#include "rope/Conversion/Passes.h"
#include "rope/Dialect/Rope/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::rope;

namespace {
/// Marks the tensor arguments of public functions read-only for
/// bufferization. One-shot bufferization otherwise treats them as writable
/// and may update a caller's input in place (a partial rotation writes its
/// rotated dims into the input); callers of compiled code expect their
/// arguments to survive the call.
struct ReadOnlyPublicArgumentsPass
    : public PassWrapper<ReadOnlyPublicArgumentsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReadOnlyPublicArgumentsPass)
  StringRef getArgument() const final { return "rope-readonly-public-arguments"; }
  StringRef getDescription() const final {
    return "Mark tensor arguments of public functions non-writable for bufferization";
  }
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    getOperation().walk([&](func::FuncOp func) {
      if (func.isPrivate() || func.isExternal())
        return;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<TensorType>(type))
          func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                          readOnly);
    });
  }
};

/// Inlines memref.alloca_scope regions. convert-scf-to-openmp wraps each
/// parallel body in one to bound its stack allocations; our bodies allocate
/// on the heap (deallocated by the ownership pipeline), and a scope around
/// loops cannot survive their lowering to multi-block control flow.
struct InlineAllocaScopesPass
    : public PassWrapper<InlineAllocaScopesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InlineAllocaScopesPass)
  StringRef getArgument() const final { return "rope-inline-alloca-scopes"; }
  StringRef getDescription() const final {
    return "Inline memref.alloca_scope regions (heap-only bodies)";
  }
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp op) { scopes.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block *body = &scope.getBodyRegion().front();
      auto ret = cast<memref::AllocaScopeReturnOp>(body->getTerminator());
      SmallVector<Value> results(ret.getResults());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(body, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};

/// Replaces f32 sin, cos and exp with MLIR's polynomial approximations. They
/// vectorise (libm calls do not), which matters for cos/sin tables of long
/// KV caches and for softmax; the tables are range-reduced to [-π, π] in f64
/// first, where the approximations are accurate to a few ulps (the numerical
/// tests' tolerances hold with them).
struct ApproximateMathPass
    : public PassWrapper<ApproximateMathPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateMathPass)
  StringRef getArgument() const final { return "rope-approximate-math"; }
  StringRef getDescription() const final {
    return "Polynomial approximations of f32 sin, cos and exp";
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return name == "sin" || name == "cos" || name == "exp";
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// Splits large elementwise linalg ops that are not already inside a loop
/// (standalone rotations, cos/sin tables, dtype conversions) into an
/// scf.forall over their outermost non-unit dim, so that they run on all
/// cores like the attention tiles. Memory-bound ops need every core to reach
/// the machine's bandwidth.
struct ParallelizeElementwisePass
    : public PassWrapper<ParallelizeElementwisePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ParallelizeElementwisePass)
  StringRef getArgument() const final { return "rope-parallelize-elementwise"; }
  StringRef getDescription() const final {
    return "Tile large top-level elementwise linalg ops into scf.forall";
  }
  /// Chunks per op: a few per core keeps the load balanced.
  static constexpr int64_t kChunks = 8;
  /// Below this many elements a parallel region costs more than it saves.
  static constexpr int64_t kMinElements = 1 << 15;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->getParentOfType<LoopLikeOpInterface>() ||
          op.getNumReductionLoops() != 0)
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t elements = 1;
      bool dynamic = false;
      for (int64_t r : ranges) {
        if (ShapedType::isDynamic(r))
          dynamic = true;
        else
          elements *= r;
      }
      if (dynamic || elements >= kMinElements)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      auto dim = llvm::find_if(ranges, [](int64_t r) { return r != 1; });
      if (dim == ranges.end())
        continue;
      SmallVector<OpFoldResult> numThreads(ranges.size(), rewriter.getIndexAttr(0));
      numThreads[dim - ranges.begin()] = rewriter.getIndexAttr(kChunks);
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
          .setNumThreads(numThreads);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue; // Stays sequential; correct either way.
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};
} // namespace

namespace {
/// Reorders the loops of linalg.generic ops so that every reduction dim comes
/// after every parallel dim. On the GPU each parallel iteration is a thread
/// and the loops below the first reduction run inside it: P·V
/// ([b, h, q, k(reduction), d]) would otherwise give one thread per query
/// row, looping over the whole head dim.
struct ReductionsInnermostPass
    : public PassWrapper<ReductionsInnermostPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReductionsInnermostPass)
  StringRef getArgument() const final { return "rope-reductions-innermost"; }
  StringRef getDescription() const final {
    return "Interchange linalg.generic loops so reduction dims are innermost";
  }
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      SmallVector<unsigned> order;
      for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
        if (kind == utils::IteratorType::parallel)
          order.push_back(i);
      for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
        if (kind != utils::IteratorType::parallel)
          order.push_back(i);
      if (llvm::is_sorted(order))
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
        continue; // Still correct, only slower.
    }
  }
};

/// Rejects an NVIDIA target that LLVM 22's NVPTX backend would not compile
/// for: an unknown chip is only warned about (and the PTX is then wrong for
/// the GPU), and a PTX ISA too old for the chip aborts the process inside
/// the backend ("LLVM ERROR: PTX version ... does not support target").
struct CheckNVVMTargetPass
    : public PassWrapper<CheckNVVMTargetPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckNVVMTargetPass)
  CheckNVVMTargetPass(std::string chip, std::string features,
                      std::string format)
      : chip(std::move(chip)), features(std::move(features)),
        format(std::move(format)) {}
  StringRef getArgument() const final { return "rope-check-nvvm-target"; }
  StringRef getDescription() const final {
    return "Check the chip, PTX features and binary format of "
           "--rope-lower-to-nvvm";
  }

  /// The oldest PTX ISA (×10) that LLVM 22 emits for each chip it knows,
  /// read off `llc -mcpu=<chip> -mattr=+ptx<N>` for every N.
  static std::optional<int> minimumPTX(StringRef chip) {
    static const std::pair<const char *, int> table[] = {
        {"sm_20", 32},   {"sm_21", 32},   {"sm_30", 32},   {"sm_32", 40},
        {"sm_35", 32},   {"sm_37", 41},   {"sm_50", 40},   {"sm_52", 41},
        {"sm_53", 42},   {"sm_60", 50},   {"sm_61", 50},   {"sm_62", 50},
        {"sm_70", 60},   {"sm_72", 61},   {"sm_75", 63},   {"sm_80", 70},
        {"sm_86", 71},   {"sm_87", 74},   {"sm_88", 90},   {"sm_89", 78},
        {"sm_90", 78},   {"sm_90a", 80},  {"sm_100", 86},  {"sm_100a", 86},
        {"sm_100f", 88}, {"sm_101", 86},  {"sm_101a", 86}, {"sm_101f", 88},
        {"sm_103", 88},  {"sm_103a", 88}, {"sm_103f", 88}, {"sm_110", 90},
        {"sm_110a", 90}, {"sm_110f", 90}, {"sm_120", 87},  {"sm_120a", 87},
        {"sm_120f", 88}, {"sm_121", 88},  {"sm_121a", 88}, {"sm_121f", 88}};
    for (auto [name, ptx] : table)
      if (chip == name)
        return ptx;
    return std::nullopt;
  }

  void runOnOperation() override {
    auto fail = [&](const Twine &message) {
      getOperation().emitError("--rope-lower-to-nvvm: ") << message;
      signalPassFailure();
    };
    std::optional<int> needed = minimumPTX(chip);
    if (!needed)
      return fail("unknown chip '" + chip +
                  "' (LLVM 22 knows sm_20 ... sm_121f, e.g. sm_80, sm_90)");
    int ptx = 0;
    SmallVector<StringRef> list;
    StringRef(features).split(list, ',', -1, /*KeepEmpty=*/false);
    for (StringRef feature : list) {
      int version;
      StringRef number = feature;
      if (!number.consume_front("+ptx") || number.getAsInteger(10, version) ||
          version < 32 || version > 90)
        return fail("unsupported feature '" + feature +
                    "' (expected +ptxNN, PTX ISA 3.2 to 9.0)");
      ptx = std::max(ptx, version);
    }
    if (ptx < *needed)
      return fail("chip " + chip + " needs PTX ISA " + Twine(*needed / 10) +
                  "." + Twine(*needed % 10) + " or newer: add features=+ptx" +
                  Twine(*needed));
    // The spellings gpu-module-to-binary accepts.
    if (!llvm::is_contained({"fatbin", "fatbinary", "bin", "binary", "isa",
                             "assembly", "llvm", "offloading"},
                            StringRef(format)))
      return fail("unknown format '" + format +
                  "' (fatbin, bin, isa or llvm)");
  }

  std::string chip, features, format;
};

/// Rewrites in-bounds, contiguous vector transfers (the rows of streamed
/// attention) into plain vector loads and stores. The NVVM conversion knows
/// vector.load/store but not transfers, which it would leave unconverted.
struct LowerVectorTransfersPass
    : public PassWrapper<LowerVectorTransfersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerVectorTransfersPass)
  StringRef getArgument() const final { return "rope-lower-vector-transfers"; }
  StringRef getDescription() const final {
    return "Vector transfers to vector.load/store";
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// rope on tensors to linalg on tensors, with the elementwise chains (table
/// building into rotation, softmax steps) fused before anything is
/// materialised. Shared by the CPU and GPU pipelines.
void addRopeToLinalgPasses(OpPassManager &pm) {
  pm.addPass(rope::createConvertRopeToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLinalgElementwiseOpFusionPass());
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
  pm.addPass(std::make_unique<ReadOnlyPublicArgumentsPass>());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

/// Host loops on memrefs (scf, cf, arith, math, memref, OpenMP) to the LLVM
/// dialect.
void addHostLoopsToLLVMPasses(OpPassManager &pm, bool cWrappers,
                              bool approximateMath, bool openMP) {
  // Vector ops (the streamed attention rows) to loads, stores and LLVM
  // vectors; nothing happens where there are none.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  if (cWrappers)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  if (approximateMath)
    pm.addPass(std::make_unique<ApproximateMathPass>());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (openMP)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

/// rope on tensors to host functions on device buffers whose computations
/// are gpu.launch kernels: one per linalg op (parallel dims on a grid of
/// threads, reduction dims a loop in each thread), and one for each
/// streamed attention (a thread per query row), or, without streaming, one
/// per attention step over whole tensors (scores, softmax, P·V).
void addGPUMappingPasses(OpPassManager &pm, const LowerToNVVMOptions &options) {
  if (options.foldRotation)
    pm.addPass(createRopeFoldRotationIntoQK());
  if (options.streamAttention)
    pm.addPass(createRopeDecomposeAttentionRows());
  addRopeToLinalgPasses(pm);

  // Every buffer a function allocates lives on the GPU and is freed there
  // (no ownership-based deallocation: the host code is straight-line).
  addBufferizationPasses(pm, /*allowReturnAllocsFromLoops=*/false);
  pm.addPass(createCanonicalizerPass());
  // Streamed attention rows are an scf.forall; mapped like any other loop.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addNestedPass<func::FuncOp>(rope::createRopeHostBuffersToGPU());

  pm.addPass(std::make_unique<ReductionsInnermostPass>());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(rope::createRopeParallelLoopsToGPU(
      rope::RopeParallelLoopsToGPUOptions{options.blockSize}));
  pm.addPass(std::make_unique<LowerVectorTransfersPass>());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
}
} // namespace

void mlir::rope::buildLowerToCPUPipeline(OpPassManager &pm,
                                         const LowerToCPUOptions &options) {
  // rope level: rotations move into attention, attention into tiled loops.
  if (options.foldRotation)
    pm.addPass(createRopeFoldRotationIntoQK());
  if (options.decomposeAttention)
    pm.addPass(createRopeDecomposeAttention(
        RopeDecomposeAttentionOptions{options.queryTile, options.keyTile}));

  addRopeToLinalgPasses(pm);
  if (options.parallel)
    pm.addPass(std::make_unique<ParallelizeElementwisePass>());

  // The online-softmax state (running max, sum, accumulator) is rebuilt each
  // key tile; let loops carry those fresh buffers.
  addBufferizationPasses(pm, /*allowReturnAllocsFromLoops=*/true);
  bufferization::buildBufferDeallocationPipeline(pm);
  // Deallocation clones buffers it cannot prove unaliased (e.g. a result that
  // is an argument updated in place); clones become alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Loops and LLVM. scf.forall (independent attention tiles) runs on all
  // cores through OpenMP, or as a plain loop nest.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  if (options.parallel) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(std::make_unique<InlineAllocaScopesPass>());
  }
  addHostLoopsToLLVMPasses(pm, options.cWrappers, options.approximateMath,
                           options.parallel);
}

void mlir::rope::buildLowerToNVVMPipeline(OpPassManager &pm,
                                          const LowerToNVVMOptions &options) {
  pm.addPass(std::make_unique<CheckNVVMTargetPass>(
      options.chip, options.features, options.format));
  addGPUMappingPasses(pm, options);
  pm.addPass(createGpuKernelOutliningPass());
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

void mlir::rope::buildTestGPUMappingOnCPUPipeline(
    OpPassManager &pm, const LowerToNVVMOptions &options) {
  addGPUMappingPasses(pm, options);
  pm.addNestedPass<func::FuncOp>(rope::createRopeEmulateGPUOnHost());
  addHostLoopsToLLVMPasses(pm, options.cWrappers, /*approximateMath=*/false,
                           /*openMP=*/false);
}

void mlir::rope::registerRopePipelines() {
  PassPipelineRegistration<LowerToNVVMOptions>(
      "rope-lower-to-nvvm",
      "Lower rope on tensors to NVIDIA kernels in a gpu.binary (NVVM, PTX, "
      "cubin through ptxas) plus host code that calls the mgpu* runtime "
      "(libRopeCudaRuntime.so)",
      buildLowerToNVVMPipeline);
  PassPipelineRegistration<LowerToNVVMOptions>(
      "rope-test-gpu-mapping-on-cpu",
      "Testing aid: the --rope-lower-to-nvvm pipeline up to its kernels, which "
      "then run as host loops (--rope-emulate-gpu-on-host), lowered for the "
      "CPU; checks the GPU mapping numerically without a GPU",
      buildTestGPUMappingOnCPUPipeline);
  PassPipelineRegistration<LowerToCPUOptions>(
      "rope-lower-to-cpu",
      "Lower rope (and upstream dialects on tensors) to the LLVM dialect for "
      "the CPU, ready for mlir-runner or mlir-translate --mlir-to-llvmir",
      buildLowerToCPUPipeline);
}
