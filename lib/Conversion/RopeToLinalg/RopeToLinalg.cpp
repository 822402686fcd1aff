//===- RopeToLinalg.cpp - lower rope ops to linalg on tensors -------------===//
//
// Every rope op becomes linalg.generic ops on tensors (plus tensor slicing and
// reshapes). The lowering is staged: rope.rotate first becomes a rope.table
// plus the multiply-add that applies it, identical tables are then shared, and
// finally each remaining op is expanded. Semantics: the ops' descriptions.
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/Passes.h"
#include "rope/Conversion/RopeToLinalg/RopeToLinalg.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"
#include "rope/Dialect/Rope/IR/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include <cmath>
#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_CONVERTROPETOLINALG
#include "rope/Conversion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::lowering;

namespace {

/// φ(x) = elu(x) + 1, in f32.
Value buildEluPlusOne(OpBuilder &b, Location loc, Value x) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  unsigned n = type.getRank();
  Value init = emptyTensor(b, loc, tensor::getMixedSizes(b, loc, x), b.getF32Type());
  AffineMap id = AffineMap::getMultiDimIdentityMap(n, ctx);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{x}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, SmallVector<IteratorType>(n, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = toF32(nb, nl, args[0]);
               Value positive = arith::CmpFOp::create(
                   nb, nl, arith::CmpFPredicate::OGT, v, f32Const(nb, nl, 0.0));
               Value y = arith::SelectOp::create(
                   nb, nl, positive,
                   arith::AddFOp::create(nb, nl, v, f32Const(nb, nl, 1.0)),
                   math::ExpOp::create(nb, nl, v));
               linalg::YieldOp::create(nb, nl, ValueRange{y});
             })
      .getResult(0);
}

/// The features linear attention multiplies: φ(q) and φ(k), and the same
/// rotated by the op's rotary spec (the plain ones without a spec).
struct LinearAttentionFeatures {
  Value phiQ, phiK, rq, rk;
};

/// φ(q) and φ(k) of `op`, and their rotations over its `seq` positions.
LinearAttentionFeatures buildLinearFeatures(OpBuilder &b, Location loc,
                                            LinearAttentionOp op,
                                            OpFoldResult seq) {
  Value q = op.getQuery(), k = op.getKey();
  int64_t d = cast<RankedTensorType>(q.getType()).getDimSize(3);
  Type f32 = b.getF32Type();
  Value phiQ = buildEluPlusOne(b, loc, q), phiK = buildEluPlusOne(b, loc, k);
  Value rq = phiQ, rk = phiK;
  if (auto spec = op.getRotary()) {
    Value pos = op.getPositions();
    if (!pos)
      pos = buildIota(b, loc, seq,
                      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
    Value invFreq = buildInverseFrequencies(
        b, loc, *spec, d, [&]() { return buildMaxPosition(b, loc, pos); });
    CosSin table = buildTable(b, loc, pos, invFreq, *spec);
    RotaryRange dims = spec->getRange(d);
    rq = buildRotation(b, loc, phiQ, table, dims, 2, f32);
    rk = buildRotation(b, loc, phiK, table, dims, 2, f32);
  }
  return {phiQ, phiK, rq, rk};
}

/// The numerator and denominator of non-causal linear attention of `v`
/// ([B, H, S, Dv] `outSizes`, head dim `d`), in the linear-cost form that
/// sums k_n v_nᵀ over the keys once.
std::pair<Value, Value>
buildNonCausalLinearSums(OpBuilder &b, Location loc,
                         const LinearAttentionFeatures &features, Value v,
                         ArrayRef<OpFoldResult> outSizes, int64_t d) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  OpFoldResult batch = outSizes[0], heads = outSizes[1], dv = outSizes[3];
  SmallVector<OpFoldResult> rowSizes(outSizes.take_front(3));
  Value phiQ = features.phiQ, phiK = features.phiK;
  // kv[b,h,d,e] = Σ_n rk[b,h,n,d] v[b,h,n,e]; num = rq · kv.
  Value kvInit = filledTensor(b, loc, {batch, heads, b.getIndexAttr(d), dv},
                              f32, b.getF32FloatAttr(0));
  Value kv = buildMultiplyAccumulate(b, loc, features.rk, v, kvInit,
                                     {dimsMap(ctx, 5, {0, 1, 4, 2}),
                                      dimsMap(ctx, 5, {0, 1, 4, 3}),
                                      dimsMap(ctx, 5, {0, 1, 2, 3})},
                                     {kPar, kPar, kPar, kPar, kRed});
  Value numInit = filledTensor(b, loc, outSizes, f32, b.getF32FloatAttr(0));
  Value num = buildMultiplyAccumulate(b, loc, features.rq, kv, numInit,
                                      {dimsMap(ctx, 5, {0, 1, 2, 4}),
                                       dimsMap(ctx, 5, {0, 1, 4, 3}),
                                       dimsMap(ctx, 5, {0, 1, 2, 3})},
                                      {kPar, kPar, kPar, kPar, kRed});
  // ksum[b,h,d] = Σ_n φk; den = φq · ksum.
  Value ksumInit = filledTensor(b, loc, {batch, heads, b.getIndexAttr(d)}, f32,
                                b.getF32FloatAttr(0));
  Value ksum =
      linalg::GenericOp::create(
          b, loc, ksumInit.getType(), ValueRange{phiK}, ValueRange{ksumInit},
          ArrayRef<AffineMap>{dimsMap(ctx, 4, {0, 1, 3, 2}),
                              dimsMap(ctx, 4, {0, 1, 2})},
          ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
          })
          .getResult(0);
  Value denInit = filledTensor(b, loc, rowSizes, f32, b.getF32FloatAttr(0));
  Value den = buildMultiplyAccumulate(b, loc, phiQ, ksum, denInit,
                                      {dimsMap(ctx, 4, {0, 1, 2, 3}),
                                       dimsMap(ctx, 4, {0, 1, 3}),
                                       dimsMap(ctx, 4, {0, 1, 2})},
                                      {kPar, kPar, kPar, kRed});
  return {num, den};
}

/// The body of a causal sum over the keys n <= m, of the products with
/// the values when `withValue`, else of the weights themselves.
auto buildCausalSumBody(bool withValue) {
  return [withValue](OpBuilder &nb, Location nl, ValueRange args) {
    Value m = linalg::IndexOp::create(nb, nl, 2);
    Value n = linalg::IndexOp::create(nb, nl, withValue ? 4 : 3);
    Value visible =
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule, n, m);
    Value term = withValue ? arith::MulFOp::create(nb, nl, args[0],
                                                   toF32(nb, nl, args[1]))
                                 .getResult()
                           : args[0];
    Value acc = args[withValue ? 2 : 1];
    Value sum = arith::AddFOp::create(nb, nl, acc, term);
    linalg::YieldOp::create(
        nb, nl, ValueRange{arith::SelectOp::create(nb, nl, visible, sum, acc)});
  };
}

/// The numerator and denominator of causal linear attention of `v`
/// ([B, H, S, Dv] `outSizes`), in the masked quadratic form.
std::pair<Value, Value>
buildCausalLinearSums(OpBuilder &b, Location loc,
                      const LinearAttentionFeatures &features, Value v,
                      ArrayRef<OpFoldResult> outSizes) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  OpFoldResult batch = outSizes[0], heads = outSizes[1], seq = outSizes[2];
  SmallVector<OpFoldResult> rowSizes(outSizes.take_front(3));
  // a[b,h,m,n] = rq_m · rk_n and w[b,h,m,n] = φq_m · φk_n, then sums over
  // n <= m only.
  SmallVector<OpFoldResult> sqSizes = {batch, heads, seq, seq};
  auto scoreMaps = SmallVector<AffineMap>{dimsMap(ctx, 5, {0, 1, 2, 4}),
                                          dimsMap(ctx, 5, {0, 1, 3, 4}),
                                          dimsMap(ctx, 5, {0, 1, 2, 3})};
  SmallVector<IteratorType> scoreIters = {kPar, kPar, kPar, kPar, kRed};
  Value a = buildMultiplyAccumulate(
      b, loc, features.rq, features.rk,
      filledTensor(b, loc, sqSizes, f32, b.getF32FloatAttr(0)), scoreMaps,
      scoreIters);
  Value w = buildMultiplyAccumulate(
      b, loc, features.phiQ, features.phiK,
      filledTensor(b, loc, sqSizes, f32, b.getF32FloatAttr(0)), scoreMaps,
      scoreIters);
  Value numInit = filledTensor(b, loc, outSizes, f32, b.getF32FloatAttr(0));
  Value num =
      linalg::GenericOp::create(
          b, loc, numInit.getType(), ValueRange{a, v}, ValueRange{numInit},
          ArrayRef<AffineMap>{dimsMap(ctx, 5, {0, 1, 2, 4}),
                              dimsMap(ctx, 5, {0, 1, 4, 3}),
                              dimsMap(ctx, 5, {0, 1, 2, 3})},
          ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
          buildCausalSumBody(true))
          .getResult(0);
  Value denInit = filledTensor(b, loc, rowSizes, f32, b.getF32FloatAttr(0));
  Value den = linalg::GenericOp::create(
                  b, loc, denInit.getType(), ValueRange{w}, ValueRange{denInit},
                  ArrayRef<AffineMap>{dimsMap(ctx, 4, {0, 1, 2, 3}),
                                      dimsMap(ctx, 4, {0, 1, 2})},
                  ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
                  buildCausalSumBody(false))
                  .getResult(0);
  return {num, den};
}

/// RoFormer eq. 19. Non-causal uses the linear-cost form (Σ_n k_n v_nᵀ once);
/// causal uses the masked quadratic form.
Value buildLinearAttention(OpBuilder &b, Location loc, LinearAttentionOp op) {
  MLIRContext *ctx = b.getContext();
  Value q = op.getQuery(), v = op.getValue();
  auto qType = cast<RankedTensorType>(q.getType());
  Type elt = qType.getElementType();
  int64_t d = qType.getDimSize(3);
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, q);
  SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(b, loc, v);
  OpFoldResult batch = qSizes[0], heads = qSizes[1], seq = qSizes[2],
               dv = vSizes[3];

  LinearAttentionFeatures features = buildLinearFeatures(b, loc, op, seq);
  SmallVector<OpFoldResult> outSizes = {batch, heads, seq, dv};
  auto [num, den] =
      op.getCausal()
          ? buildCausalLinearSums(b, loc, features, v, outSizes)
          : buildNonCausalLinearSums(b, loc, features, v, outSizes, d);

  Value outInit = emptyTensor(b, loc, outSizes, elt);
  return linalg::GenericOp::create(
             b, loc, outInit.getType(), ValueRange{num, den},
             ValueRange{outInit},
             ArrayRef<AffineMap>{dimsMap(ctx, 4, {0, 1, 2, 3}),
                                 dimsMap(ctx, 4, {0, 1, 2}),
                                 dimsMap(ctx, 4, {0, 1, 2, 3})},
             SmallVector<IteratorType>(4, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value o = arith::DivFOp::create(nb, nl, args[0], args[1]);
               linalg::YieldOp::create(nb, nl,
                                       ValueRange{fromF32(nb, nl, o, elt)});
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Replaces `op` with `values`, casting each to the op's result type where the
/// lowering knows more (or less) static shape than the op declared; the two
/// are compatible, as the verifiers guarantee.
void replaceWithCasts(PatternRewriter &rewriter, Operation *op,
                      ValueRange values) {
  SmallVector<Value> results;
  for (auto [value, type] : llvm::zip_equal(values, op->getResultTypes()))
    results.push_back(value.getType() == type
                          ? value
                          : tensor::CastOp::create(rewriter, op->getLoc(), type,
                                                   value)
                                .getResult());
  rewriter.replaceOp(op, results);
}

/// rope.rotate -> rope.table + the multiply-add that applies it. Keeping the
/// table an op of its own lets rotations that share a spec and positions
/// share it.
struct RotateToTable : public OpRewritePattern<RotateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RotateOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto table = TableOp::create(rewriter, loc, op.getPositions(), op.getSpec(),
                                 op.getHeadDim());
    Value result = buildRotation(rewriter, loc, op.getInput(),
                                 {table.getCos(), table.getSin()},
                                 op.getRotaryRange(), op.getNormalizedSeqDim(),
                                 op.getInput().getType().getElementType());
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

/// rope.rotate_with_tables -> the multiply-add of rope.rotate, reading the
/// given tables.
struct LowerRotateWithTables : public OpRewritePattern<RotateWithTablesOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RotateWithTablesOp op,
                                PatternRewriter &rewriter) const override {
    Value result = buildRotation(rewriter, op.getLoc(), op.getInput(),
                                 {op.getCos(), op.getSin()},
                                 op.getRotaryRange(), op.getNormalizedSeqDim(),
                                 op.getInput().getType().getElementType());
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

struct LowerTable : public OpRewritePattern<TableOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TableOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // A table inside a loop is a tile's (a decode's key tile): its
    // positions are usually one run, which angle addition serves cheaper.
    bool inLoop = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
    if (inLoop && tableTakesRunCheck(op.getPositions(), op.getSpec())) {
      CosSin table = buildTableOfRun(rewriter, loc, op.getPositions(),
                                     op.getSpec(), op.getHeadDim());
      replaceWithCasts(rewriter, op, {table.cos, table.sin});
      return success();
    }
    Value invFreq = buildInverseFrequencies(
        rewriter, loc, op.getSpec(), op.getHeadDim(),
        [&]() { return buildMaxPosition(rewriter, loc, op.getPositions()); });
    CosSin table =
        buildTable(rewriter, loc, op.getPositions(), invFreq, op.getSpec());
    replaceWithCasts(rewriter, op, {table.cos, table.sin});
    return success();
  }
};

/// Attention is its online form over all keys at once, decomposed: the
/// reference lowering, materialising the S×S scores (--rope-decompose-attention
/// gives the tiled form).
struct LowerAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    FailureOr<OnlineAttentionOp> online = convertToOnlineAttention(rewriter, op);
    if (failed(online))
      return failure();
    return decomposeOnlineAttention(rewriter, *online);
  }
};

struct LowerOnlineAttention : public OpRewritePattern<OnlineAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OnlineAttentionOp op,
                                PatternRewriter &rewriter) const override {
    return decomposeOnlineAttention(rewriter, op);
  }
};

struct LowerLinearAttention : public OpRewritePattern<LinearAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearAttentionOp op,
                                PatternRewriter &rewriter) const override {
    replaceWithCasts(rewriter, op, buildLinearAttention(rewriter, op.getLoc(), op));
    return success();
  }
};

/// PE(p, 2i) = sin(p·w_i), PE(p, 2i+1) = cos(p·w_i), w_i = base^(-2i/D); the
/// per-lane frequency is a compile-time constant and the phase is reduced in
/// f64 like the rotary tables.
struct LowerSinusoidal : public OpRewritePattern<SinusoidalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SinusoidalOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getResult().getType();
    unsigned n = type.getRank();
    int64_t dim = type.getShape().back();
    double base = op.getBase().convertToDouble();
    SmallVector<double> laneFreq;
    for (int64_t lane = 0; lane < dim; ++lane)
      laneFreq.push_back(std::pow(base, -static_cast<double>(lane - lane % 2) /
                                            static_cast<double>(dim)));
    Value freqs = f64Tensor(rewriter, loc, laneFreq);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, op.getPositions());
    sizes.push_back(rewriter.getIndexAttr(dim));
    Value init = emptyTensor(rewriter, loc, sizes, type.getElementType());
    Type elt = type.getElementType();
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{op.getPositions(), freqs},
            ValueRange{init},
            ArrayRef<AffineMap>{dimsMap(ctx, n, range(0, n - 1)),
                                dimsMap(ctx, n, {n - 1}),
                                dimsMap(ctx, n, range(0, n))},
            SmallVector<IteratorType>(n, kPar),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value reduced = buildReducedPhase(nb, nl, args[0], args[1]);
              Value r32 = arith::TruncFOp::create(nb, nl, nb.getF32Type(), reduced);
              Value lane = arith::IndexCastOp::create(
                  nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, n - 1));
              Value odd = arith::TruncIOp::create(nb, nl, nb.getI1Type(), lane);
              Value v = arith::SelectOp::create(nb, nl, odd,
                                                math::CosOp::create(nb, nl, r32),
                                                math::SinOp::create(nb, nl, r32));
              linalg::YieldOp::create(nb, nl, ValueRange{fromF32(nb, nl, v, elt)});
            })
            .getResult(0);
    replaceWithCasts(rewriter, op, result);
    return success();
  }
};

/// Replaces each rope.table with an earlier identical one in the same block.
/// Tables are pure and cheap to compare; sharing them is what makes Q and K
/// read one cos/sin table.
void shareTables(Operation *root) {
  DenseMap<std::tuple<Block *, Value, Attribute, int64_t>, TableOp> seen;
  SmallVector<TableOp> duplicates;
  root->walk([&](TableOp op) {
    auto key = std::make_tuple(op->getBlock(), op.getPositions(),
                               Attribute(op.getSpec()), op.getHeadDim());
    auto [it, inserted] = seen.try_emplace(key, op);
    if (!inserted) {
      op.getCos().replaceAllUsesWith(it->second.getCos());
      op.getSin().replaceAllUsesWith(it->second.getSin());
      duplicates.push_back(op);
    }
  });
  for (TableOp op : duplicates)
    op.erase();
}

struct ConvertRopeToLinalgPass
    : public rope::impl::ConvertRopeToLinalgBase<ConvertRopeToLinalgPass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    MLIRContext *ctx = &getContext();
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);

    // Stage 1: rotations become tables plus their application.
    RewritePatternSet rotatePatterns(ctx);
    rotatePatterns.add<RotateToTable>(ctx);
    if (failed(applyPatternsGreedily(root, std::move(rotatePatterns), config)))
      return signalPassFailure();
    shareTables(root);

    // Stage 2: everything else.
    RewritePatternSet patterns(ctx);
    populateRopeToLinalgPatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns), config)))
      return signalPassFailure();

    // rope.assert is a runtime check on scalars; it stays until
    // --rope-lower-runtime-checks.
    WalkResult leftover = root->walk([](Operation *op) {
      if (isa<RopeDialect>(op->getDialect()) && !isa<AssertOp>(op)) {
        op->emitOpError("could not be lowered to linalg");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::rope::populateRopeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RotateToTable, LowerRotateWithTables, LowerTable, LowerAttention, LowerOnlineAttention,
               LowerLinearAttention, LowerSinusoidal>(patterns.getContext());
}
