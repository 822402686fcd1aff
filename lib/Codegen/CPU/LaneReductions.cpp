//===- LaneReductions.cpp - reductions across vector lanes, 16 at once ----===//

#include "rope/Codegen/CPU/LaneReductions.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {
/// Combines `values` pairwise, a tree of depth log₂ n rather than a chain of
/// n dependent ops.
static Value combineAsTree(OpBuilder &b, Location loc,
                           vector::CombiningKind kind,
                           SmallVector<Value> values) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(
          vector::makeArithReduction(b, loc, kind, values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

/// One level of the butterfly: `lhs` and `rhs` each hold 16 / `width`
/// outputs in runs of `width` lanes; the result holds all of them, lhs's
/// then rhs's, in runs of `width` / 2 lanes, each run the combination of
/// the two halves it came from. Two shuffles and one combination.
static Value combineHalves(OpBuilder &b, Location loc,
                           vector::CombiningKind kind, Value lhs, Value rhs,
                           int64_t width) {
  int64_t lanes = rope::kReductionLanes, half = width / 2;
  SmallVector<int64_t> low, high;
  for (int64_t source : {int64_t(0), lanes})
    for (int64_t run = 0; run < lanes; run += width)
      for (int64_t l = 0; l < half; ++l) {
        low.push_back(source + run + l);
        high.push_back(source + run + half + l);
      }
  Value first = vector::ShuffleOp::create(b, loc, lhs, rhs, low);
  Value second = vector::ShuffleOp::create(b, loc, lhs, rhs, high);
  return vector::makeArithReduction(b, loc, kind, first, second);
}

/// See populateLaneReductionPatterns.
struct LaneReductionByButterfly
    : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    constexpr int64_t lanes = rope::kReductionLanes;
    VectorType type = op.getSourceVectorType();
    int64_t extent = type.getShape().back();
    if (type.isScalable() || extent % lanes != 0 ||
        type.getNumElements() != lanes * extent ||
        op.getReductionDims() !=
            ArrayRef<int64_t>{static_cast<int64_t>(type.getRank() - 1)})
      return failure();
    Location loc = op.getLoc();
    vector::CombiningKind kind = op.getKind();
    Type element = type.getElementType();
    Value flat = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({lanes, extent}, element),
        op.getSource());
    // Each output's slices of 16 lanes first, as whole vectors: one
    // register per output.
    SmallVector<Value> outputs;
    for (int64_t o = 0; o < lanes; ++o) {
      Value row = vector::ExtractOp::create(rewriter, loc, flat, o);
      SmallVector<Value> slices;
      for (int64_t offset = 0; offset < extent; offset += lanes)
        slices.push_back(
            extent == lanes
                ? row
                : vector::ExtractStridedSliceOp::create(
                      rewriter, loc, row, ArrayRef<int64_t>{offset},
                      ArrayRef<int64_t>{lanes}, ArrayRef<int64_t>{1}));
      outputs.push_back(combineAsTree(rewriter, loc, kind, std::move(slices)));
    }
    // Then the lanes: neighbouring registers pair up, each pair's runs
    // halved (16 lanes per output, then 8, 4, 2, 1), until output o is
    // lane o of one register.
    for (int64_t width = lanes; width > 1; width /= 2) {
      SmallVector<Value> next;
      for (size_t i = 0; i < outputs.size(); i += 2)
        next.push_back(combineHalves(rewriter, loc, kind, outputs[i],
                                     outputs[i + 1], width));
      outputs = std::move(next);
    }
    Value result = vector::makeArithReduction(
        rewriter, loc, kind, outputs.front(),
        vector::ShapeCastOp::create(
            rewriter, loc, VectorType::get({lanes}, element), op.getAcc()));
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, op.getDestType(),
                                                     result);
    return success();
  }
};
} // namespace

void mlir::rope::populateLaneReductionPatterns(RewritePatternSet &patterns,
                                               PatternBenefit benefit) {
  patterns.add<LaneReductionByButterfly>(patterns.getContext(), benefit);
}
