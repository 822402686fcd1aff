//===- PrivatizeThreadBuffers.cpp - temporaries of a GPU thread -----------===//
//
// Bufferization allocates the temporaries of a loop body with memref.alloc,
// i.e. on the heap, which a kernel has not got. Inside a parallel loop that
// becomes a grid of threads, such a buffer belongs to one iteration: one
// thread. It becomes that thread's stack (local) memory, allocated once at
// the start of the thread's body: buffers of one iteration of an inner
// sequential loop are dead by the next, so one copy serves them all.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/GPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEPRIVATIZETHREADBUFFERS
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// The outermost scf.parallel around `op`, or null.
scf::ParallelOp outermostParallel(Operation *op) {
  scf::ParallelOp outer;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (auto loop = dyn_cast<scf::ParallelOp>(p))
      outer = loop;
  return outer;
}

struct RopePrivatizeThreadBuffersPass
    : public rope::impl::RopePrivatizeThreadBuffersBase<
          RopePrivatizeThreadBuffersPass> {
  void runOnOperation() override {
    SmallVector<std::pair<memref::AllocOp, scf::ParallelOp>> allocations;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (!alloc.getType().hasStaticShape() || !alloc.getSymbolOperands().empty())
        return;
      if (scf::ParallelOp loop = outermostParallel(alloc))
        allocations.push_back({alloc, loop});
    });
    IRRewriter rewriter(&getContext());
    for (auto [alloc, loop] : allocations) {
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      rewriter.setInsertionPointToStart(loop.getBody());
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(
          alloc, alloc.getType(), ValueRange{}, alloc.getAlignmentAttr());
    }
  }
};

} // namespace
