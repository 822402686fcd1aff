//===- Tiling.cpp - tiling a linalg.generic in one call -------------------===//

#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"
#include <limits>

using namespace mlir;

bool rope::hasEmptyLoop(linalg::LinalgOp op) {
  return llvm::is_contained(op.getStaticLoopRanges(), 0);
}

int64_t rope::staticIterations(linalg::LinalgOp op) {
  uint64_t product = 1;
  for (int64_t r : op.getStaticLoopRanges())
    if (!ShapedType::isDynamic(r))
      product = llvm::SaturatingMultiply(product, static_cast<uint64_t>(r));
  return static_cast<int64_t>(
      std::min<uint64_t>(product, std::numeric_limits<int64_t>::max()));
}

FailureOr<scf::SCFTilingResult> rope::tileWith(
    RewriterBase &rewriter, linalg::GenericOp op, ArrayRef<int64_t> sizes,
    scf::SCFTilingOptions::LoopType loopType, ArrayRef<int64_t> interchange) {
  if (hasEmptyLoop(op))
    return failure();
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
