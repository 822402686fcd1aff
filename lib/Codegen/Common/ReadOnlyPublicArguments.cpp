//===- ReadOnlyPublicArguments.cpp - callers' tensors stay unwritten ------===//

#include "rope/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEREADONLYPUBLICARGUMENTS
#include "rope/Codegen/Common/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Marks the tensor arguments of public functions read-only for
/// bufferization. One-shot bufferization otherwise treats them as writable
/// and may update a caller's input in place (a partial rotation writes its
/// rotated dims into the input); callers of compiled code expect their
/// arguments to survive the call.
struct RopeReadOnlyPublicArgumentsPass
    : public rope::impl::RopeReadOnlyPublicArgumentsBase<
          RopeReadOnlyPublicArgumentsPass> {
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    getOperation().walk([&](func::FuncOp func) {
      if (func.isPrivate() || func.isExternal())
        return;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<TensorType>(type))
          func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                          readOnly);
    });
  }
};
} // namespace
