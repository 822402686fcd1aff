//===- RopeDialect.cpp - rope dialect -------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::rope;

#include "rope/Dialect/Rope/IR/RopeOpsDialect.cpp.inc"

void RopeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "rope/Dialect/Rope/IR/RopeOps.cpp.inc"
      >();
  registerAttributes();
}
