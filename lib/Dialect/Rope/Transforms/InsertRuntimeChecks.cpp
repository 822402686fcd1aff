//===- InsertRuntimeChecks.cpp - dynamic shape relations checked per call -===//

#include "rope/Dialect/Rope/Transforms/Passes.h"

#include "rope/Dialect/Rope/IR/ExtentRelations.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEINSERTRUNTIMECHECKS
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Whether `op` is checked: a rope op, or a linalg op on tensors directly in
/// a function's body (what a frontend wrote: its loop extents come from its
/// operands, and a frontend that typed one operand wrong makes the loops run
/// past another; inside loops, the checks would run per iteration).
bool isChecked(Operation *op, Dialect *rope) {
  if (op->getDialect() == rope)
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureTensorSemantics() &&
         isa_and_nonnull<FunctionOpInterface>(op->getParentOp());
}

/// Each op writes its own checks (RuntimeVerifiableOpInterface: ours for
/// the rope ops, upstream's for linalg); this pass only chooses the ops,
/// places the checks before each and names the op in the message.
struct RopeInsertRuntimeChecksPass
    : public rope::impl::RopeInsertRuntimeChecksBase<
          RopeInsertRuntimeChecksPass> {
  void runOnOperation() override {
    auto *dialect = getContext().getLoadedDialect<rope::RopeDialect>();
    OpBuilder builder(&getContext());
    getOperation()->walk([&](RuntimeVerifiableOpInterface op) {
      if (!isChecked(op, dialect))
        return;
      builder.setInsertionPoint(op);
      op.generateRuntimeVerification(builder, op->getLoc(),
                                     rope::formatRuntimeDiagnostic);
    });
  }
};
} // namespace
