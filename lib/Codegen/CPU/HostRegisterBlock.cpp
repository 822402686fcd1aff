//===- HostRegisterBlock.cpp - micro-kernel sizes for the host CPU --------===//

#include "rope/Codegen/CPU/HostRegisterBlock.h"

#include "rope/Codegen/CPU/CpuFeatures.h"

using namespace mlir::rope;

RegisterBlockShape mlir::rope::getHostRegisterBlock() {
  // The host's features are read once (CpuFeatures::host).
  return CpuFeatures::host().avx512f ? RegisterBlockShape{8, 32}
                                     : RegisterBlockShape{4, 16};
}

RegisterBlockShape mlir::rope::resolveRegisterBlock(int64_t rows,
                                                    int64_t columns) {
  RegisterBlockShape host = getHostRegisterBlock();
  return {rows ? rows : host.rows, columns ? columns : host.columns};
}
