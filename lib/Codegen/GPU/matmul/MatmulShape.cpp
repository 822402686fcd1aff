//===- MatmulShape.cpp - the contractions the GPU kernels take ------------===//

#include "matmul/MatmulShape.h"

using namespace mlir;
using namespace mlir::rope::nvidia;

/// The operand's map as loop dims, or nullopt if not a projection.
static std::optional<SmallVector<unsigned>> dimsOf(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return std::nullopt;
    dims.push_back(d.getPosition());
  }
  return dims;
}

FailureOr<MatmulShape> mlir::rope::nvidia::matmulShapeOf(linalg::LinalgOp op) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return failure();
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1)
    return failure();
  MatmulShape s;
  s.m = dims->m[0];
  s.n = dims->n[0];
  s.k = dims->k[0];
  if (!dims->batch.empty())
    s.batch = dims->batch[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto a = dimsOf(maps[0]), bm = dimsOf(maps[1]), c = dimsOf(maps[2]);
  if (!a || !bm || !c)
    return failure();
  auto withBatch = [&](SmallVector<unsigned> tail, bool &has,
                       ArrayRef<unsigned> got) {
    has = s.batch && got.size() == 3;
    if (has)
      tail.insert(tail.begin(), *s.batch);
    return SmallVector<unsigned>(got) == tail;
  };
  bool cBatch = false;
  if (!withBatch({s.m, s.k}, s.aHasBatch, *a) ||
      !withBatch({s.m, s.n}, cBatch, *c) || (s.batch && !cBatch))
    return failure();
  bool bBatchNk = false, bBatchKn = false;
  if (withBatch({s.n, s.k}, bBatchNk, *bm)) {
    s.bTransposed = true;
    s.bHasBatch = bBatchNk;
  } else if (withBatch({s.k, s.n}, bBatchKn, *bm)) {
    s.bHasBatch = bBatchKn;
  } else {
    return failure();
  }
  return s;
}
