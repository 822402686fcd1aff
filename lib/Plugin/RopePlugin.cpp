//===- RopePlugin.cpp - rope as an mlir-opt plugin ------------------------===//
//
// Usage:
//   mlir-opt --load-dialect-plugin=build/lib/libRopePlugin.so \
//            --load-pass-plugin=build/lib/libRopePlugin.so ...
//
//===----------------------------------------------------------------------===//

#include "rope/Registration/InitAllRope.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "RopeDialect", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::rope::registerAllRopeDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "RopePasses", LLVM_VERSION_STRING,
          []() { mlir::rope::registerAllRopePasses(); }};
}
