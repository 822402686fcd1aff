//===- HostRegisterBlock.cpp - micro-kernel sizes for the host CPU --------===//

#include "rope/Codegen/CPU/HostRegisterBlock.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir::rope;

RegisterBlockShape mlir::rope::getHostRegisterBlock() {
  // Read once: the features of the machine do not change under a process.
  static const RegisterBlockShape shape = [] {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    if (features.lookup("avx512f"))
      return RegisterBlockShape{8, 32};
    return RegisterBlockShape{4, 16};
  }();
  return shape;
}

RegisterBlockShape mlir::rope::resolveRegisterBlock(int64_t rows,
                                                    int64_t columns) {
  RegisterBlockShape host = getHostRegisterBlock();
  return {rows ? rows : host.rows, columns ? columns : host.columns};
}
