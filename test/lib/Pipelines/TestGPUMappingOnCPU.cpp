//===- TestGPUMappingOnCPU.cpp - the GPU mapping, run as host loops -------===//
//
// --rope-test-gpu-mapping-on-cpu: --rope-lower-to-nvvm up to its gpu.launch
// kernels, which then run in the GPU emulator (--rope-emulate-gpu: every
// thread a fiber, with its checkers) on host memory (chip, features, format
// and opt-level are ignored). The GPU test files run through it on machines
// without a GPU: the mapping onto grids of threads is checked numerically;
// NVVM code generation and the CUDA runtime are not. (The same as
// --rope-lower-to-nvvm=emulate=true, under the name the tests use.)
//
//===----------------------------------------------------------------------===//

#include "RopeTestPasses.h"

#include "rope/Codegen/GPU/Passes.h"
#include "rope/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

void buildTestGPUMappingOnCPUPipeline(OpPassManager &pm,
                                      const rope::LowerToNVVMOptions &options) {
  rope::buildGPUMappingPipeline(pm, options);
  rope::EmulateGPUOptions emulate;
  emulate.cWrappers = options.cWrappers;
  rope::buildEmulateGPUPipeline(pm, emulate);
}

} // namespace

void mlir::rope::test::registerTestGPUMappingOnCPUPipeline() {
  PassPipelineRegistration<LowerToNVVMOptions>(
      "rope-test-gpu-mapping-on-cpu",
      "Testing aid: the --rope-lower-to-nvvm pipeline up to its kernels, which "
      "then run in the GPU emulator (--rope-emulate-gpu); checks the GPU "
      "mapping numerically without a GPU",
      buildTestGPUMappingOnCPUPipeline);
}
