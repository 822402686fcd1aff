//===- InlineAllocaScopes.cpp - memref.alloca_scope bodies inlined --------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEINLINEALLOCASCOPES
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Inlines memref.alloca_scope regions. convert-scf-to-openmp wraps each
/// parallel body in one to bound its stack allocations; our bodies allocate
/// on the heap (deallocated by the ownership pipeline), and a scope around
/// loops cannot survive their lowering to multi-block control flow.
struct RopeInlineAllocaScopesPass
    : public rope::impl::RopeInlineAllocaScopesBase<RopeInlineAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp op) { scopes.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block *body = &scope.getBodyRegion().front();
      auto ret = cast<memref::AllocaScopeReturnOp>(body->getTerminator());
      SmallVector<Value> results(ret.getResults());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(body, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};
} // namespace
