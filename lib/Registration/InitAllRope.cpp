//===- InitAllRope.cpp - register everything rope provides ----------------===//

#include "rope/Registration/InitAllRope.h"
#include "rope/Codegen/CPU/Passes.h"
#include "rope/Codegen/Common/Passes.h"
#include "rope/Codegen/GPU/Passes.h"
#include "rope/Conversion/Passes.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Fusion/Passes.h"
#include "rope/Pipelines/Pipelines.h"
#include "rope/Raising/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::rope::registerAllRopeDialects(DialectRegistry &registry) {
  registry.insert<RopeDialect, arith::ArithDialect, linalg::LinalgDialect,
                  math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
  // The extents of every linalg op a frontend wrote are checked at run time
  // with the rope ops' (rope-insert-runtime-checks).
  linalg::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
}

void mlir::rope::registerAllRopePasses() {
  registerRopeCodegenCommonPasses();
  registerRopeCodegenCPUPasses();
  registerRopeCodegenGPUPasses();
  registerRopeConversionPasses();
  registerRopeTransformsPasses();
  registerRopeRaisingPasses();
  registerRopeFusionPasses();
  registerRopePipelines();
}
