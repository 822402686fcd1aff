//===- RopeTestPasses.h - test-only passes and pipelines --------*- C++ -*-===//
//
// What rope-opt and the test build of the C API register on top of the
// production passes (registerAllRopePasses).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TEST_LIB_ROPETESTPASSES_H
#define ROPE_TEST_LIB_ROPETESTPASSES_H

namespace mlir::rope::test {

/// --rope-test-analysis (Analysis/TestAnalysis.cpp).
void registerTestAnalysisPass();
/// --rope-test-spec-recovery (Raising/TestSpecRecovery.cpp).
void registerTestSpecRecoveryPass();
/// --rope-test-gpu-mapping-on-cpu (Pipelines/TestGPUMappingOnCPU.cpp).
void registerTestGPUMappingOnCPUPipeline();

/// Every test-only pass and pipeline.
inline void registerRopeTestPasses() {
  registerTestAnalysisPass();
  registerTestSpecRecoveryPass();
  registerTestGPUMappingOnCPUPipeline();
}

} // namespace mlir::rope::test

#endif // ROPE_TEST_LIB_ROPETESTPASSES_H
