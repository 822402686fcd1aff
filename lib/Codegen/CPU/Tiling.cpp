//===- Tiling.cpp - tiling a linalg.generic in one call -------------------===//

#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

FailureOr<scf::SCFTilingResult> rope::tileWith(
    RewriterBase &rewriter, linalg::GenericOp op, ArrayRef<int64_t> sizes,
    scf::SCFTilingOptions::LoopType loopType, ArrayRef<int64_t> interchange) {
  scf::SCFTilingOptions options;
  options.setLoopType(loopType)
      .setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes))
      .setInterchange(interchange);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled) || tiled->tiledOps.size() != 1)
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

linalg::GenericOp rope::tileOf(const scf::SCFTilingResult &tiled) {
  return cast<linalg::GenericOp>(tiled.tiledOps.front());
}
