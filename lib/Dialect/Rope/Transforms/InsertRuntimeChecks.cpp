//===- InsertRuntimeChecks.cpp - dynamic shape relations checked per call -===//

#include "rope/Dialect/Rope/Transforms/Passes.h"

#include "rope/Dialect/Rope/IR/ExtentRelations.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEINSERTRUNTIMECHECKS
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Each rope op writes its own checks (RuntimeVerifiableOpInterface); this
/// pass only places them before the op and names the op in the message.
struct RopeInsertRuntimeChecksPass
    : public rope::impl::RopeInsertRuntimeChecksBase<
          RopeInsertRuntimeChecksPass> {
  void runOnOperation() override {
    auto *dialect = getContext().getLoadedDialect<rope::RopeDialect>();
    OpBuilder builder(&getContext());
    getOperation()->walk([&](RuntimeVerifiableOpInterface op) {
      if (op->getDialect() != dialect)
        return;
      builder.setInsertionPoint(op);
      op.generateRuntimeVerification(builder, op->getLoc(),
                                     rope::formatRuntimeDiagnostic);
    });
  }
};
} // namespace
