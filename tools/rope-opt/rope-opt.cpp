//===- rope-opt.cpp - mlir-opt with the rope dialect ----------------------===//
//
// Every upstream dialect, extension and pass, plus rope's and, as upstream
// mlir-opt links its test passes, rope's test-only passes (test/lib).
//
//===----------------------------------------------------------------------===//

#include "RopeTestPasses.h"
#include "rope/Registration/InitAllRope.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::rope::registerAllRopePasses();
  mlir::rope::test::registerRopeTestPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::rope::registerAllRopeDialects(registry);
  // gpu-module-to-binary translates kernels to LLVM IR (NVVM, GPU, LLVM).
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "rope-opt: the rope dialect compiler driver\n", registry));
}
