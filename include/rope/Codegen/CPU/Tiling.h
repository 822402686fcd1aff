//===- Tiling.h - tiling a linalg.generic in one call ------------*- C++
//-*-===//
//
// The CPU codegen passes tile generics into loops of a given kind and go on
// with the single tile: one call around upstream scf::tileUsingSCF.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_TILING_H
#define ROPE_CODEGEN_CPU_TILING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"

namespace mlir::rope {

/// Tiles `op` with `sizes` (0: not tiled) into loops of `loopType`, in
/// `interchange` order (the default: the op's), and replaces it with the
/// loop nest. Fails, leaving `op` as it was, unless tiling gives one tile.
FailureOr<scf::SCFTilingResult>
tileWith(RewriterBase &rewriter, linalg::GenericOp op, ArrayRef<int64_t> sizes,
         scf::SCFTilingOptions::LoopType loopType,
         ArrayRef<int64_t> interchange = {});

/// True when a loop of `op` has a static extent of 0: its body never runs
/// and its results are its inits. The codegen strategies leave such ops to
/// the plain loop lowering (upstream's tile size computation crashes on an
/// empty loop), and tileWith fails on them.
bool hasEmptyLoop(linalg::LinalgOp op);

/// The product of the static loop extents of `op` (dynamic ones count as
/// 1), saturated at INT64_MAX: a linalg op may name static extents whose
/// product overflows int64_t.
int64_t staticIterations(linalg::LinalgOp op);

/// The single tile of a tiling result.
linalg::GenericOp tileOf(const scf::SCFTilingResult &tiled);

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_TILING_H
