//===- DotProductContractions.cpp - one-row products along W's rows -------===//
//
// A decode step's linear layer, out[0, n] += a[0, k] · w[n, k], as dot
// products over the rows of W as stored, split over the cores: each element
// of W is used once, so it is neither packed nor converted ahead.
//
//===----------------------------------------------------------------------===//

#include "ContractionStrategies.h"
#include "rope/Codegen/CPU/Tiling.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::contractions;

/// `op` (matchDotProduct's form) as dot products over the rows of W as
/// stored: no copy of W, which a one-row product reads exactly once (packing
/// it, as the register blocks want, would read and write it twice more).
/// It is a lane sum whose columns are W's rows, read from W itself rather
/// than through the transpose a frontend writes (rewriteAsLaneSums: blocks
/// of 16 rows of W, each row's lanes in a register of its own across the
/// whole K sweep, then added up by the butterfly). The rows of W are first
/// split over the cores (an scf.forall of kRowChunks chunks), each chunk
/// summing its own lanes: no serial pass over them follows.
LogicalResult contractions::rewriteAsDotProducts(RewriterBase &rewriter,
                                                 linalg::GenericOp op,
                                                 const DotProductForm &form,
                                                 int64_t rows) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  using utils::IteratorType;
  linalg::GenericOp product = buildCanonicalContraction(
      rewriter, loc, ValueRange{form.a, form.w}, op.getDpsInits()[0],
      {AffineMap::get(3, 0, {m, k}, ctx), AffineMap::get(3, 0, {n, k}, ctx),
       AffineMap::get(3, 0, {m, n}, ctx)},
      {IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction});
  rewriter.replaceOp(op, product.getResult(0));
  // Chunks of whole register blocks of the host's rows (a lane sum's blocks
  // are as wide as their chunk allows: 16 rows of W, else 8, 4, ...).
  linalg::GenericOp chunk = product;
  if (form.n % (kRowChunks * rows) == 0) {
    FailureOr<scf::SCFTilingResult> chunks =
        tileWith(rewriter, product, {0, form.n / kRowChunks, 0},
                 scf::SCFTilingOptions::LoopType::ForallOp);
    if (failed(chunks))
      return failure();
    chunk = tileOf(*chunks);
  }
  std::optional<LaneSumForm> laneSum = matchLaneSum(chunk, rows);
  if (!laneSum)
    return failure();
  return rewriteAsLaneSums(rewriter, chunk, *laneSum, rows);
}
