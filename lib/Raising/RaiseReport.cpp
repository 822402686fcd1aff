//===- RaiseReport.cpp - why a near miss was not raised -------------------===//

#include "rope/Raising/RaiseReport.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::rope;

void RaiseReport::nearMiss(Operation *op, StringRef what, const Twine &reason) {
  misses[op] = (what + " not raised: " + reason).str();
}

void RaiseReport::emitRemarks() {
  for (auto &[op, message] : misses)
    op->emitRemark() << "rope-raise: " << message;
  misses.clear();
}

void RaiseReport::notifyOperationErased(Operation *op) { misses.erase(op); }

void RaiseReport::notifyOperationReplaced(Operation *op, ValueRange) {
  misses.erase(op);
}
