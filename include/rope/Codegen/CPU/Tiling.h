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

/// The single tile of a tiling result.
linalg::GenericOp tileOf(const scf::SCFTilingResult &tiled);

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_TILING_H
