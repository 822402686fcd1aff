//===- StridedCopiesToLoops.cpp - strided memref.copy as vectorizable loops
//===//
//
// The LLVM conversion lowers a memref.copy to memcpy only where both sides
// are contiguous; every other copy calls the runtime's memrefCopy, one
// element per call. A linalg.copy on the same buffers becomes a loop nest
// instead, its innermost loop vectorized by LLVM, and one that is not known
// to be small is split across the cores along its outermost dim.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// Copies of fewer bytes than this (where the shape says) stay on one
/// core: starting the others would cost more than the copy.
static constexpr int64_t kMinParallelCopyBytes = 256 * 1024;

/// The dim that a copy into `type` is split along across the cores: the
/// outermost one other than the innermost (which stays the vectorized loop)
/// whose extent is not 1; none where the copy is known to be small.
static std::optional<unsigned> coreSplitDim(MemRefType type) {
  if (type.hasStaticShape() &&
      type.getNumElements() * type.getElementTypeBitWidth() / 8 <
          kMinParallelCopyBytes)
    return std::nullopt;
  for (unsigned d = 0; d + 1 < type.getRank(); ++d)
    if (type.getDimSize(d) != 1)
      return d;
  return std::nullopt;
}

/// `source` copied into `target` by a linalg.copy, split along `dim` by an
/// scf.forall whose iterations each copy one slice.
static void copyAcrossCores(RewriterBase &rewriter, Location loc, Value source,
                            Value target, unsigned dim) {
  auto targetType = cast<MemRefType>(target.getType());
  int64_t rank = targetType.getRank();
  OpFoldResult extent = memref::getMixedSize(rewriter, loc, target, dim);
  auto forall = scf::ForallOp::create(rewriter, loc, ArrayRef{extent},
                                      ValueRange{}, std::nullopt);
  rewriter.setInsertionPoint(forall.getBody()->getTerminator());
  Value iv = forall.getInductionVar(0);
  auto slice = [&](Value buffer) -> Value {
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes =
        memref::getMixedSizes(rewriter, loc, buffer);
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    offsets[dim] = iv;
    sizes[dim] = rewriter.getIndexAttr(1);
    return memref::SubViewOp::create(rewriter, loc, buffer, offsets, sizes,
                                     strides);
  };
  linalg::CopyOp::create(rewriter, loc, slice(source), slice(target));
  rewriter.setInsertionPointAfter(forall);
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
      if (std::optional<unsigned> dim =
              coreSplitDim(cast<MemRefType>(copy.getTarget().getType())))
        copyAcrossCores(rewriter, copy.getLoc(), copy.getSource(),
                        copy.getTarget(), *dim);
      else
        linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                               copy.getTarget());
      rewriter.eraseOp(copy);
    }
  }
};
} // namespace
