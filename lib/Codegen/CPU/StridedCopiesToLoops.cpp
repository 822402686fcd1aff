//===- StridedCopiesToLoops.cpp - strided memref.copy as vectorizable loops ===//
//
// The LLVM conversion lowers a memref.copy to memcpy only where both sides
// are contiguous; every other copy calls the runtime's memrefCopy, one
// element per call. A linalg.copy on the same buffers becomes a loop nest
// instead, its innermost loop vectorized by LLVM.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPESTRIDEDCOPIESTOLOOPS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

/// Whether the LLVM conversion copies a buffer of `type` with one memcpy (the
/// condition of its memref.copy lowering).
static bool copiedByMemcpy(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    (memref.hasStaticShape() && memref.getNumElements() > 0 &&
                     memref::isStaticShapeAndContiguousRowMajor(memref)));
}

namespace {
struct RopeStridedCopiesToLoopsPass
    : public rope::impl::RopeStridedCopiesToLoopsBase<
          RopeStridedCopiesToLoopsPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      // Unranked buffers have no loop nest; they keep the runtime call.
      if (isa<MemRefType>(copy.getSource().getType()) &&
          isa<MemRefType>(copy.getTarget().getType()) &&
          !(copiedByMemcpy(copy.getSource().getType()) &&
            copiedByMemcpy(copy.getTarget().getType())))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    }
  }
};
} // namespace
