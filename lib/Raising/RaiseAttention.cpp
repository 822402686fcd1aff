//===- RaiseAttention.cpp - a frontend's attention to rope.attention ------===//
//
// Part of --rope-raise: scaled dot-product attention as frontends export it
// (a batched Q·Kᵀ product, a scale, a mask, a softmax spelled out as
// max–subtract–exp–sum–divide, a product with V, GQA through HF's
// `repeat_kv`) becomes one rope.attention, so the rest of the rope pipeline
// (the fold of the rotation into Q·Kᵀ, online-softmax tiles, causal tile
// skipping) applies to it.
//
// The matcher reads elements, not ops (Terms.h): the attention output at a
// point of the space (n, i, j, e, d) — n the collapsed batch·head index the
// frontend's batched products run over, i a query, j a key, e a value dim,
// d a head dim — is followed back through the P·V product, the softmax, the
// logits and the Q·Kᵀ product, and each operand must read Q, K, V and the
// mask at the indices attention semantics say. However a frontend arranged
// the transposes, reshapes and broadcasts in between, they are only maps
// on the way. Reductions are the one thing a term cannot step through, so
// the two kinds attention has (the contractions, the row max and row sum)
// are taken apart here, with the reduced loop bound to j or d. What the
// mask amounts to is AttentionMaskRules.cpp's to say, and where Q, K and V
// are read AttentionOperands.cpp's.
//
//===----------------------------------------------------------------------===//

#include "AttentionMaskRules.h"
#include "AttentionOperands.h"

#include "rope/Analysis/ConstantEvaluation.h"
#include "rope/Analysis/OpClassification.h"
#include "rope/Analysis/Sizes.h"
#include "rope/Analysis/Terms.h"
#include "rope/Dialect/Rope/IR/ExtentRelations.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Raising/Passes.h"
#include "rope/Raising/RaiseReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::analysis;
using namespace mlir::rope::raising;

namespace {

Term termAt(Value value, ArrayRef<AffineExpr> indices) {
  return makeTerm(value, AffineMap::get(kNumDims, 0, indices,
                                        value.getContext()));
}

/// A result of a linalg op with one reduction loop, read at a term: the op,
/// the result, and the op's loops at that read.
struct ReductionRead {
  linalg::LinalgOp op;
  OpResult result;
  SmallVector<AffineExpr> loops;
};

/// A reduction over one element (attention over one key) as `t` reads it:
/// the value its body yields, which peelViews steps into as into any op
/// whose loops the read fixes (intoBody). Back out to the op, at the loops
/// of the read (a body's terms are indexed by its op's loops), its one
/// reduction loop bound to `reduction`.
std::optional<ReductionRead> readUnitReduction(Term t, AffineExpr reduction) {
  Block *block = t.value.getParentBlock();
  auto op = block ? dyn_cast_if_present<linalg::LinalgOp>(block->getParentOp())
                  : linalg::LinalgOp();
  if (!op || op.getBlock() != block || !op.hasPureTensorSemantics() ||
      op.getNumReductionLoops() != 1 ||
      t.map.getNumResults() != op.getNumLoops())
    return std::nullopt;
  auto yielded = block->getTerminator()->getOperands();
  auto it = llvm::find(yielded, t.value);
  if (it == yielded.end())
    return std::nullopt;
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (op.getStaticLoopRanges()[reductions.front()] != 1)
    return std::nullopt;
  SmallVector<AffineExpr> loops(t.map.getResults());
  loops[reductions.front()] = reduction;
  return ReductionRead{op, op->getResult(std::distance(yielded.begin(), it)),
                       std::move(loops)};
}

/// The linalg op whose result `t` reads, with the loops that read fixes and
/// its single reduction loop bound to `reduction`. Loops of extent 1 that the
/// result does not index read 0.
std::optional<ReductionRead> readReduction(Term t, AffineExpr reduction) {
  if (!isa<ShapedType>(t.value.getType()))
    return readUnitReduction(t, reduction);
  auto result = dyn_cast<OpResult>(t.value);
  auto op = result ? dyn_cast<linalg::LinalgOp>(result.getOwner())
                   : linalg::LinalgOp();
  if (!op || !op.hasPureTensorSemantics())
    return std::nullopt;
  AffineMap resultMap = op.getIndexingMapMatchingResult(result);
  SmallVector<AffineExpr> loops(op.getNumLoops());
  for (auto [pos, expr] : llvm::enumerate(resultMap.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      loops[dim.getPosition()] = t.map.getResult(pos);
      continue;
    }
    // A kept reduced dim ([.., 1]) reads 0.
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return std::nullopt;
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool reduced = false;
  for (auto [loop, range, iterator] :
       llvm::zip_equal(loops, ranges, iterators)) {
    if (iterator == utils::IteratorType::reduction) {
      if (reduced || loop)
        return std::nullopt;
      loop = reduction;
      reduced = true;
      continue;
    }
    if (loop)
      continue;
    if (range != 1)
      return std::nullopt;
    loop = getAffineConstantExpr(0, op.getContext());
  }
  if (!reduced)
    return std::nullopt;
  return ReductionRead{op, result, std::move(loops)};
}

/// The term of the operand of `op` that block argument `arg` stands for,
/// read at `loops`.
Term operandAt(linalg::LinalgOp op, BlockArgument arg,
               ArrayRef<AffineExpr> loops) {
  OpOperand *operand = op.getMatchingOpOperand(arg);
  AffineMap loopsMap =
      AffineMap::get(kNumDims, 0, loops, op.getContext());
  return makeTerm(operand->get(),
                  op.getMatchingIndexingMap(operand).compose(loopsMap));
}

/// Whether the init `t` of a reduction holds `expected` everywhere (for a
/// max, also any value at or below the most negative finite f32).
bool initHolds(Term t, double expected) {
  std::optional<double> value = evaluate(t);
  if (!value)
    return false;
  if (std::isinf(expected) && expected < 0)
    return *value <= -std::numeric_limits<float>::max();
  return *value == expected;
}

/// A contraction `Σ_r a·b` that `t` reads (a linalg op with one reduction
/// loop whose body adds the product of two inputs to the zero-initialised
/// output), with the reduced loop bound to `reduction`: the terms of a and b.
std::optional<std::pair<Term, Term>> throughContraction(Term t,
                                                        AffineExpr reduction) {
  // tosa.matmul: out[n, r, c] = Σ_k a[n, r, k] · b[n, k, c].
  if (auto matmul = t.value.getDefiningOp<tosa::MatMulOp>()) {
    if (!isZeroConstant(matmul.getAZp()) || !isZeroConstant(matmul.getBZp()))
      return std::nullopt;
    AffineExpr n = t.map.getResult(0), row = t.map.getResult(1),
               column = t.map.getResult(2);
    return std::pair{termAt(matmul.getA(), {n, row, reduction}),
                     termAt(matmul.getB(), {n, reduction, column})};
  }
  std::optional<ReductionRead> read = readReduction(t, reduction);
  if (!read || !getMultiplyAccumulateLoop(read->op))
    return std::nullopt;
  Block *body = read->op.getBlock();
  auto at = [&](unsigned arg) {
    return operandAt(read->op, body->getArgument(arg), read->loops);
  };
  if (!initHolds(at(2), 0.0))
    return std::nullopt;
  return std::pair{at(0), at(1)};
}

enum class Reduction { Sum, Max, All };

/// A row reduction `t` reads (a linalg op with one reduction loop whose body
/// for this result combines one input element with the running value), with
/// the reduced loop bound to `reduction`: the term reduced. Other results
/// (torch's max also yields the argmax) do not matter.
std::optional<Term> throughReduction(Term t, Reduction kind,
                                     AffineExpr reduction) {
  // tosa.reduce_sum / reduce_max keep the reduced dim as a unit dim.
  Operation *def = t.value.getDefiningOp();
  if (isa_and_nonnull<tosa::ReduceSumOp, tosa::ReduceMaxOp>(def)) {
    if (isa<tosa::ReduceSumOp>(def) != (kind == Reduction::Sum) ||
        isa<tosa::ReduceMaxOp>(def) != (kind == Reduction::Max))
      return std::nullopt;
    uint32_t axis = isa<tosa::ReduceSumOp>(def)
                        ? cast<tosa::ReduceSumOp>(def).getAxis()
                        : cast<tosa::ReduceMaxOp>(def).getAxis();
    unsigned reduced = cast<AffineDimExpr>(reduction).getPosition();
    SmallVector<AffineExpr> indices(t.map.getResults());
    if (axis >= indices.size() ||
        llvm::any_of(indices,
                     [&](AffineExpr e) { return e.isFunctionOfDim(reduced); }))
      return std::nullopt;
    indices[axis] = reduction;
    return termAt(def->getOperand(0), indices);
  }
  std::optional<ReductionRead> read = readReduction(t, reduction);
  if (!read || read->op.getNumDpsInputs() != 1)
    return std::nullopt;
  linalg::LinalgOp op = read->op;
  OpResult result = read->result;
  ArrayRef<AffineExpr> loops = read->loops;
  Block *body = op.getBlock();
  Value yielded =
      body->getTerminator()->getOperand(result.getResultNumber());
  Operation *combine = yielded.getDefiningOp();
  bool matches = combine && combine->getNumOperands() == 2;
  switch (kind) {
  case Reduction::Sum:
    matches &= isa<arith::AddFOp>(combine);
    break;
  case Reduction::Max:
    matches &= isa<arith::MaximumFOp, arith::MaxNumFOp>(combine);
    break;
  case Reduction::All:
    matches &= isa<arith::AndIOp>(combine);
    break;
  }
  if (!matches)
    return std::nullopt;
  Value running = body->getArgument(op.getNumDpsInputs() +
                                    result.getResultNumber());
  Value input = body->getArgument(0);
  Value a = combine->getOperand(0), b = combine->getOperand(1);
  if (!((a == running && b == input) || (a == input && b == running)))
    return std::nullopt;
  Term init = operandAt(op, cast<BlockArgument>(running), loops);
  if (kind == Reduction::All) {
    std::optional<double> value = evaluate(init);
    if (!value || *value == 0.0) // true (an i1 reads as −1 or 1)
      return std::nullopt;
  } else if (!initHolds(init, kind == Reduction::Sum
                                  ? 0.0
                                  : -std::numeric_limits<double>::infinity())) {
    return std::nullopt;
  }
  return operandAt(op, cast<BlockArgument>(input), loops);
}

/// `t` with products and quotients by constants peeled (through views and
/// float casts), the constants multiplied into `factor`. The term returned
/// is the one after the last peeled computation, its views kept: a caller
/// may want a view on the way (a transpose that is Q's own layout).
/// `t` through views and float casts: a bf16 or f16 model computes the
/// scores, the softmax and the products in f32 between roundings to its
/// type, which attention does within its own f32 math.
Term peelFloatCasts(Term t) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    t = peelViews(t);
    std::optional<Computation> c = classify(t);
    if (!c || c->kind != Kind::FloatCast)
      return t;
    t = c->operands[0];
  }
  return t;
}

Term peelScale(Term t, double &factor) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    std::optional<Computation> c = classify(peelViews(t));
    if (!c)
      return t;
    if (c->kind == Kind::FloatCast) {
      t = c->operands[0];
      continue;
    }
    std::optional<Term> rest;
    if (c->kind == Kind::Mul) {
      for (auto [operand, other] : bothOrders(*c)) {
        if (std::optional<double> f = evaluate(other)) {
          factor *= *f;
          rest = operand;
          break;
        }
      }
    } else if (c->kind == Kind::Div) {
      if (std::optional<double> f = evaluate(c->operands[1])) {
        factor /= *f;
        rest = c->operands[0];
      }
    }
    if (!rest)
      return t;
    t = *rest;
  }
  return t;
}

/// The tanh that `t` reads, if it is one (a scalar in a linalg body or an
/// elementwise op on tensors).
std::optional<Term> throughTanh(Term t) {
  auto tanh = t.value.getDefiningOp<math::TanhOp>();
  if (!tanh)
    return std::nullopt;
  return makeTerm(tanh.getOperand(), t.map);
}

/// Sums `t` is made of, addends in order.
void collectAddends(Term t, SmallVectorImpl<Term> &addends, unsigned depth = 0) {
  t = peelViews(t);
  std::optional<Computation> c = classify(t);
  if (c && c->kind == Kind::Add && depth < 8) {
    collectAddends(c->operands[0], addends, depth + 1);
    collectAddends(c->operands[1], addends, depth + 1);
    return;
  }
  addends.push_back(t);
}

/// Q·Kᵀ, with the scale and soft-cap around it: `cap·tanh(scale·q·k / cap)`
/// or `scale·q·k`; the scale may sit on either side of the product or on its
/// operands (SDPA scales Q and Kᵀ by √scale each).
struct Scores {
  Term query, key;
  double scale = 1.0;
  std::optional<double> softcap;
};

std::optional<Scores> matchScores(Term t, MLIRContext *ctx) {
  Scores scores;
  double factor = 1.0;
  t = peelScale(t, factor);
  if (std::optional<Term> inside = throughTanh(peelViews(t))) {
    // cap·tanh(x/cap): the outer factor is the cap, the inner one scale/cap.
    double outer = factor;
    factor = 1.0;
    t = peelScale(*inside, factor);
    if (!(outer > 0) || !std::isfinite(outer))
      return std::nullopt;
    scores.softcap = outer;
    factor *= outer;
  }
  std::optional<std::pair<Term, Term>> operands =
      throughContraction(peelViews(t), dimExpr(ctx, kD));
  if (!operands)
    return std::nullopt;
  scores.query = peelScale(operands->first, factor);
  scores.key = peelScale(operands->second, factor);
  if (!(factor > 0) || !std::isfinite(factor))
    return std::nullopt;
  scores.scale = factor;
  return scores;
}

/// `x` where `t` is `x − max_j x`, however many times over: a softmax does
/// not change when its logits are shifted by their row max (gpt-oss
/// subtracts it before calling a softmax that subtracts it again).
Term peelRowMaxShifts(Term t, AffineExpr j) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    std::optional<Computation> difference = classify(t);
    if (!difference || difference->kind != Kind::Sub)
      break;
    Term shifted = peelViews(difference->operands[0]);
    std::optional<Term> maxed =
        throughReduction(peelViews(difference->operands[1]), Reduction::Max, j);
    if (!maxed || peelViews(*maxed) != shifted)
      break;
    t = shifted;
  }
  return t;
}

/// softmax over j of the logits `t` reads, spelled out: e / Σ_j e with
/// e = exp(x − max_j x) (or exp(x)). The logits' term.
std::optional<Term> matchSoftmax(Term t, MLIRContext *ctx) {
  AffineExpr j = dimExpr(ctx, kJ);
  t = peelViews(t);
  // linalg.softmax along the dim that the keys index.
  if (auto softmax = t.value.getDefiningOp<linalg::SoftmaxOp>()) {
    if (t.map.getResult(softmax.getDimension()) != j)
      return std::nullopt;
    return peelRowMaxShifts(peelViews(makeTerm(softmax.getInput(), t.map)), j);
  }
  std::optional<Computation> quotient = classify(t);
  if (!quotient)
    return std::nullopt;
  Term numerator, denominator;
  if (quotient->kind == Kind::Div) {
    numerator = quotient->operands[0];
    denominator = quotient->operands[1];
  } else if (quotient->kind == Kind::Mul) {
    // e · (1 / Σ e).
    bool found = false;
    for (auto [operand, other] : bothOrders(*quotient)) {
      std::optional<Computation> reciprocal = classify(peelViews(other));
      if (reciprocal && reciprocal->kind == Kind::Reciprocal) {
        numerator = operand;
        denominator = reciprocal->operands[0];
        found = true;
        break;
      }
    }
    if (!found)
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  numerator = peelViews(numerator);
  std::optional<Term> summed =
      throughReduction(peelViews(denominator), Reduction::Sum, j);
  if (!summed || peelViews(*summed) != numerator)
    return std::nullopt;
  std::optional<Computation> exp = classify(numerator);
  if (!exp || exp->kind != Kind::Exp)
    return std::nullopt;
  return peelRowMaxShifts(peelViews(exp->operands[0]), j);
}

/// The probabilities `t` reads through a slice that keeps all but the last
/// column of a softmax's rows along `j` (an extract_slice at offsets that
/// are zero however they are computed, and unit strides: read at the same
/// indices), or nothing. gpt-oss drops the sink's column so.
std::optional<Term> throughLeadingSlice(Term t, AffineExpr j) {
  // (peelViews reads through a slice at static offsets itself.)
  t = peelViews(t);
  auto slice = t.value.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSourceType().getRank() != slice.getType().getRank() ||
      !llvm::all_of(slice.getStaticStrides(),
                    [](int64_t stride) { return stride == 1; }))
    return std::nullopt;
  for (OpFoldResult offset : slice.getMixedOffsets()) {
    std::optional<int64_t> constant = getConstantIntValue(offset);
    if (!constant)
      if (auto v = dyn_cast<Value>(offset))
        if (analysis::Size size = analysis::sizeOfValue(v); size.isConstant())
          constant = size.constant;
    if (constant != 0)
      return std::nullopt;
  }
  // One column fewer along j, the same along every other dim.
  for (auto [axis, index] : llvm::enumerate(t.map.getResults())) {
    analysis::Size kept = analysis::sizeOfDim(slice.getResult(), axis);
    analysis::Size all = analysis::sizeOfDim(slice.getSource(), axis);
    if (index == j)
      ++(kept.isConstant() ? kept.constant : kept.offset);
    if (kept != all)
      return std::nullopt;
  }
  return makeTerm(slice.getSource(), t.map, t);
}

/// Logits `t` as the keys' logits and a sink: the concatenation, along the
/// keys' dim, of the logits of the keys and one column of sink logits
/// (gpt-oss's `cat([scores, sinks], -1)`). The keys' logits and the sink,
/// both read at the same (n, i).
std::optional<std::pair<Term, Term>> splitSinkColumn(Term t, AffineExpr j) {
  t = peelViews(t);
  auto concat = t.value.getDefiningOp<tensor::ConcatOp>();
  if (!concat || concat.getInputs().size() != 2)
    return std::nullopt;
  int64_t axis = concat.getDim();
  Value keys = concat.getInputs()[0], sink = concat.getInputs()[1];
  if (t.map.getResult(axis) != j ||
      cast<RankedTensorType>(sink.getType()).getDimSize(axis) != 1)
    return std::nullopt;
  AffineMap atSink = t.map.replace(j, getAffineConstantExpr(0, j.getContext()),
                                   t.map.getNumDims(), 0);
  return std::pair{makeTerm(keys, t.map, t), makeTerm(sink, atSink, t)};
}

/// SDPA's guard for rows whose keys are all hidden: `select(all_j(x ==
/// −inf), 0, p)`. Attention gives those rows zeros too, so the guard is the
/// probabilities `p` when `x` is the logits; returns `p` and `x`.
std::optional<std::pair<Term, Term>> throughHiddenRowGuard(Term t,
                                                           MLIRContext *ctx) {
  t = peelViews(t);
  auto select = t.value.getDefiningOp<arith::SelectOp>();
  if (!select)
    return std::nullopt;
  Term zeros = makeTerm(select.getTrueValue(), t.map);
  if (evaluate(zeros) != 0.0)
    return std::nullopt;
  std::optional<Term> compared = throughReduction(
      peelViews(makeTerm(select.getCondition(), t.map)), Reduction::All,
      dimExpr(ctx, kJ));
  if (!compared)
    return std::nullopt;
  Term test = peelViews(*compared);
  auto cmp = test.value.getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OEQ)
    return std::nullopt;
  std::optional<double> bound = evaluate(makeTerm(cmp.getRhs(), test.map));
  if (!bound || !std::isinf(*bound) || *bound > 0)
    return std::nullopt;
  double unused = 1.0;
  Term logits = peelScale(makeTerm(cmp.getLhs(), test.map), unused);
  if (unused != 1.0)
    return std::nullopt;
  return std::pair{makeTerm(select.getFalseValue(), t.map), logits};
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

/// Indices (b, h) of the batch and head that the collapsed index n of
/// [B, H] designates, as a collapse of [B, H] into one dim reads them: a
/// unit dim reads 0, the outer dim needs no `mod`.
std::pair<AffineExpr, AffineExpr> splitBatchHead(AffineExpr n, int64_t batch,
                                                 int64_t heads) {
  AffineExpr zero = getAffineConstantExpr(0, n.getContext());
  if (heads == 1)
    return {batch == 1 ? zero : n, zero};
  if (batch == 1)
    return {zero, n};
  return {n.floorDiv(heads), n % heads};
}

/// A boolean mask negated (true where `mask` is false): what attention's i1
/// mask wants of a frontend's mask that hides where true.
Value buildNegatedMask(OpBuilder &b, Location loc, Value mask) {
  auto type = cast<RankedTensorType>(mask.getType());
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, mask),
                                       type.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                   b.getContext());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{mask}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, parallel,
             [](OpBuilder &nb, Location nl, ValueRange args) {
               Value one = arith::ConstantIntOp::create(nb, nl, 1, 1);
               linalg::YieldOp::create(
                   nb, nl,
                   ValueRange{arith::XOrIOp::create(nb, nl, args[0], one)});
             })
      .getResult(0);
}

/// A frontend's attention as matched back from its P·V product: the read of
/// V, Q·Kᵀ with its scale, and the mask (additive, or by select) if any.
struct AttentionChain {
  Term value;
  Scores scores;
  /// Masks added to the scores (HF's causal mask plus a padding bias, an
  /// ALiBi-style bias plus a causal mask); their hidden keys add up.
  SmallVector<Term, 2> additiveMasks;
  std::optional<SelectMask> selectMask;
  /// The sink logit that joins each row's softmax, its probability then
  /// dropped (gpt-oss), read at (n, i).
  std::optional<Term> sink;
};

/// Matches the attention chain of the P·V `product` that `root` reads at
/// (n, i, e): the product, the softmax over the keys (behind a hidden-row
/// guard or not) and the logits it normalizes.
LogicalResult matchAttentionChain(PatternRewriter &rewriter, Operation *root,
                                  Term product, AttentionChain &chain) {
  MLIRContext *ctx = root->getContext();
  // out[n, i, e] = Σ_j p[n, i, j] · v[n, j, e].
  std::optional<std::pair<Term, Term>> pv =
      throughContraction(peelFloatCasts(product), dimExpr(ctx, kJ));
  if (!pv)
    return rewriter.notifyMatchFailure(root, "not a product with V");
  chain.value = pv->second;
  Term probabilities = peelFloatCasts(pv->first);
  // The leading columns of a softmax over more logits than keys: the keys'
  // own, the rest (a sink's) dropped.
  std::optional<Term> kept =
      throughLeadingSlice(probabilities, dimExpr(ctx, kJ));
  if (kept)
    probabilities = peelFloatCasts(*kept);
  std::optional<std::pair<Term, Term>> guard =
      throughHiddenRowGuard(probabilities, ctx);
  if (guard)
    probabilities = guard->first;
  std::optional<Term> logits = matchSoftmax(probabilities, ctx);
  if (!logits)
    return rewriter.notifyMatchFailure(root, "no softmax over the keys");
  logits = peelFloatCasts(*logits);
  // A sink's column among them: the products read the keys' columns only
  // (V's length is K's, as rope.attention requires and checks).
  if (std::optional<std::pair<Term, Term>> split =
          splitSinkColumn(*logits, dimExpr(ctx, kJ))) {
    logits = peelFloatCasts(split->first);
    chain.sink = split->second;
  }
  if (guard && peelFloatCasts(guard->second) != *logits)
    return rewriter.notifyMatchFailure(
        root, "the hidden-row guard tests other values than the logits");

  // Logits: the scores plus additive masks, or the scores hidden where a
  // boolean mask says (torch.where, masked_fill).
  chain.selectMask = matchSelectMask(*logits);
  SmallVector<Term> addends;
  collectAddends(chain.selectMask ? chain.selectMask->logits : *logits,
                 addends);
  std::optional<Scores> scores;
  SmallVector<Term> masks;
  for (Term addend : addends) {
    if (!scores)
      if ((scores = matchScores(addend, ctx)))
        continue;
    masks.push_back(addend);
  }
  if (!scores || (chain.selectMask && !masks.empty()))
    return rewriter.notifyMatchFailure(root, "logits are not Q·Kᵀ + mask");
  chain.scores = *scores;
  chain.additiveMasks = std::move(masks);
  return success();
}

/// Creates the rope.attention of `outType` over Q, K and V laid out as
/// [B, H, S, D], with the mask `rule` (its operand negated first when it
/// hides where true) and the scale and soft-cap of `scores`.
/// The mask operand of `rule` gathered to [B, Hq, Sq, Sk] through its
/// operandGather map, n = b·Hq + h (the frontend's own repeat of a mask over
/// the kv heads, made once for the attention), sized by the attention's
/// `query` and `key` ([B, H, S, D]).
static Value buildGatheredMask(PatternRewriter &rewriter, Location loc,
                               const MaskRule &rule, Value query, Value key) {
  MLIRContext *ctx = rewriter.getContext();
  auto queryType = cast<RankedTensorType>(query.getType());
  int64_t heads = queryType.getDimSize(1);
  SmallVector<AffineExpr> loops(kNumDims, getAffineConstantExpr(0, ctx));
  AffineExpr b = getAffineDimExpr(0, ctx), h = getAffineDimExpr(1, ctx);
  loops[kN] = b * heads + h;
  loops[kI] = getAffineDimExpr(2, ctx);
  loops[kJ] = getAffineDimExpr(3, ctx);
  AffineMap read = simplifyAffineMap(
      rule.operandGather.replaceDimsAndSymbols(loops, {}, 4, 0));
  SmallVector<Extent> extents = {Extent::of(query, 0), Extent::of(query, 1),
                                 Extent::of(query, 2), Extent::of(key, 2)};
  SmallVector<int64_t> shape;
  SmallVector<Value> sizes;
  for (const Extent &extent : extents) {
    shape.push_back(extent.getStatic());
    if (ShapedType::isDynamic(shape.back()))
      sizes.push_back(extent.materialize(rewriter, loc));
  }
  auto source = cast<RankedTensorType>(rule.operand.getType());
  auto type = RankedTensorType::get(shape, source.getElementType());
  Value init = tensor::EmptyOp::create(rewriter, loc, type, sizes);
  SmallVector<AffineMap> maps = {read, rewriter.getMultiDimIdentityMap(4)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             rewriter, loc, type, rule.operand, init, maps, iterators,
             [](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc, args[0]);
             })
      .getResult(0);
}

/// Whether an operand of element type `type` can be taken into an attention
/// computing in `elementType`: the same type, or a narrower float type the
/// frontend widens exactly (PyTorch's SDPA upcasts bf16 operands to f32).
static bool fitsElementType(Type type, Type elementType) {
  return type == elementType ||
         (isa<FloatType>(type) && isa<FloatType>(elementType) &&
          type.getIntOrFloatBitWidth() < elementType.getIntOrFloatBitWidth());
}

/// Whether the sink logits `sink` (read at (n, i)) are one per query head:
/// read at indices of n alone that agree with their reads at head `h` of
/// batch 0, `h` of `heads` the head n designates, in a float type that
/// fits `elementType` (fitsElementType).
static bool isPerHeadSink(Term sink, AffineExpr h, int64_t nExtent,
                          Type elementType) {
  sink = peelViews(sink);
  auto type = dyn_cast<RankedTensorType>(sink.value.getType());
  if (!type || !isa<FloatType>(type.getElementType()) ||
      !fitsElementType(type.getElementType(), elementType))
    return false;
  AffineExpr n = dimExpr(sink.value.getContext(), kN);
  return llvm::all_of(sink.map.getResults(), [&](AffineExpr index) {
    for (unsigned dim = 0; dim < kNumDims; ++dim)
      if (dim != kN && index.isFunctionOfDim(dim))
        return false;
    return sameIndex(index, index.replace(n, h), nExtent);
  });
}

/// The sinks operand ([heads] of `elementType`) of the per-head sink
/// logits `sink` (isPerHeadSink): the tensor itself where it is one, else
/// gathered from it at each head of batch 0.
static Value buildSinks(PatternRewriter &rewriter, Location loc, Term sink,
                        int64_t heads, Type elementType) {
  MLIRContext *ctx = rewriter.getContext();
  sink = peelViews(sink);
  auto source = cast<RankedTensorType>(sink.value.getType());
  SmallVector<AffineExpr> atHead(kNumDims, getAffineConstantExpr(0, ctx));
  atHead[kN] = getAffineDimExpr(0, ctx);
  AffineMap read =
      simplifyAffineMap(sink.map.replaceDimsAndSymbols(atHead, {}, 1, 0));
  auto type = RankedTensorType::get({heads}, elementType);
  if (read.isIdentity() && source.getShape() == type.getShape()) {
    if (source == type)
      return sink.value;
    return arith::ExtFOp::create(rewriter, loc, type, sink.value);
  }
  Value init = tensor::EmptyOp::create(rewriter, loc, type, ValueRange{});
  SmallVector<AffineMap> maps = {read, rewriter.getMultiDimIdentityMap(1)};
  return linalg::GenericOp::create(
             rewriter, loc, type, sink.value, init, maps,
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value v = args[0];
               if (v.getType() != elementType)
                 v = arith::ExtFOp::create(b, loc, elementType, v);
               linalg::YieldOp::create(b, loc, v);
             })
      .getResult(0);
}

AttentionOp buildAttention(PatternRewriter &rewriter, Location loc,
                           RankedTensorType outType, const OperandRead &query,
                           const OperandRead &key, const OperandRead &value,
                           MaskRule rule, const Scores &scores, Value sinks) {
  // An operand of a narrower float type, widened (exactly) to the output's.
  auto read = [&](const OperandRead &operand) -> Value {
    Value v = operand.materialize(rewriter, loc);
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getElementType() == outType.getElementType())
      return v;
    return arith::ExtFOp::create(rewriter, loc,
                                 type.clone(outType.getElementType()), v);
  };
  AttentionFields fields;
  fields.query = read(query);
  fields.key = read(key);
  fields.value = read(value);
  if (rule.operandGather)
    rule.operand =
        buildGatheredMask(rewriter, loc, rule, fields.query, fields.key);
  if (rule.operandHidesWhenTrue)
    rule.operand = buildNegatedMask(rewriter, loc, rule.operand);
  fields.mask = rule.operand;
  fields.sinks = sinks;
  fields.scale = rewriter.getF64FloatAttr(scores.scale);
  if (rule.causal)
    fields.causal = rewriter.getUnitAttr();
  if (rule.window)
    fields.window = rewriter.getI64IntegerAttr(*rule.window);
  if (scores.softcap)
    fields.softcap = rewriter.getF64FloatAttr(*scores.softcap);
  return AttentionOp::create(rewriter, loc, outType, fields);
}

/// Whether `size` is a dynamic dim of a function's argument as it is given.
static bool isArgumentLength(const analysis::Size &size) {
  auto argument = dyn_cast_if_present<BlockArgument>(size.tensor);
  return argument && !size.scalar && size.offset == 0 &&
         isa<FunctionOpInterface>(argument.getOwner()->getParentOp()) &&
         argument.getOwner()->isEntryBlock();
}

/// Asserts before `attention` that its query and key lengths are equal: the
/// frontend's mask was read as a rule over equal lengths.
static void assertEqualLengths(PatternRewriter &rewriter,
                               AttentionOp attention) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(attention);
  Location loc = attention.getLoc();
  Value sq = Extent::of(attention.getQuery(), 2).materialize(rewriter, loc);
  Value sk = Extent::of(attention.getKey(), 2).materialize(rewriter, loc);
  Value equal =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, sq, sk);
  AssertOp::create(
      rewriter, loc, equal,
      formatRuntimeLocation(loc) +
          ": error: rope-raise: the attention's mask was read as a rule over "
          "equal query and key lengths, got {0} queries and {1} keys",
      ValueRange{sq, sk});
}

/// Raises the attention whose output `product` reads at (n, i, e) (the
/// P·V product of a frontend, n the collapsed batch·head index of `batch`
/// batches of `heads` heads, a constant when there is one of each) to one
/// rope.attention of type `outType` ([B, H, Sq, Dv]). The root is replaced
/// by `replacement` of the attention's result.
LogicalResult raiseAttention(PatternRewriter &rewriter, Operation *root,
                             Term product, int64_t batch, int64_t heads,
                             RankedTensorType outType, RaiseReport *report,
                             function_ref<Value(Value)> replacement) {
  MLIRContext *ctx = root->getContext();
  int64_t sq = outType.getDimSize(2);
  AffineExpr n = dimExpr(ctx, kN), i = dimExpr(ctx, kI), j = dimExpr(ctx, kJ),
             d = dimExpr(ctx, kD);
  auto [b, h] = splitBatchHead(n, batch, heads);

  AttentionChain chain;
  if (failed(matchAttentionChain(rewriter, root, product, chain)))
    return failure();
  // From here on the computation is attention: a refusal is a near miss.
  auto miss = [&](const Twine &reason) -> LogicalResult {
    if (report)
      report->nearMiss(root, "attention", reason);
    return rewriter.notifyMatchFailure(root, reason);
  };

  // Q, K and V, with the kv heads that their reads reveal (GQA).
  int64_t nExtent = batchHeadExtent(batch, heads);
  OperandRead query =
      findOperand(chain.scores.query, {b, h, i, d}, nExtent, /*options=*/{});
  if (!query)
    return miss("Q is not read as [B, H, S, D]");
  Type elementType = outType.getElementType();
  auto typeOf = [](const OperandRead &read) {
    return read.getSourceType().getElementType();
  };
  auto [key, value] =
      findKeyValue(chain.scores.key, chain.value, batch, b, h, heads);
  if (!key)
    return miss("K and V are not read as [B, Hkv, S, D] by query head");
  // Q, K and V of the output's type or of one it widens exactly
  // (fitsElementType): attention then takes them widened.
  auto fits = [&](Type type) { return fitsElementType(type, elementType); };
  if (!fits(typeOf(query)) || !fits(typeOf(key)) || !fits(typeOf(value)) ||
      query.getDimSize(0) != batch ||
      query.getDimSize(1) != heads || query.getDimSize(2) != sq ||
      value.getDimSize(3) != outType.getDimSize(3))
    return miss("the element types or shapes of Q, K, V and the output do "
                "not agree");
  int64_t sk = key.getDimSize(2);
  // At a dynamic length a mask is evaluated as a rule over Sq = Sk
  // (self-attention of one sequence): a rule found must have its lengths
  // shown equal by the sizes. A mask kept as an operand, or none (a decode
  // step over a cache), holds at any lengths.
  bool lengthsUnknown =
      (ShapedType::isDynamic(sq) || ShapedType::isDynamic(sk)) &&
      query.getSize(2) != key.getSize(2);
  // And Q's length is the output's rows (the root's dim before the head
  // dim), which the types alone cannot say at a dynamic length; nor, at a
  // dynamic batch, that Q is of the output's batch. K and V are read at
  // Q's batch index; that they have Q's batch, as rope.attention requires,
  // its run-time check says (a decode step's cache is an argument of its
  // own dynamic batch, which no size in the program relates to Q's).
  Value out = root->getResult(0);
  if (ShapedType::isDynamic(sq)) {
    int64_t rows = cast<RankedTensorType>(out.getType()).getRank() - 2;
    if (query.getSize(2) != analysis::sizeOfDim(out, rows))
      return miss("the query length is dynamic and not known to be the "
                  "output's");
  }
  if (ShapedType::isDynamic(batch) &&
      query.getSize(0) != analysis::sizeOfDim(out, 0))
    return miss("the batch is dynamic and not known to be Q's");

  MaskRule rule;
  if (failed(matchMaskRule(chain.additiveMasks, chain.selectMask, {b, h, i, j},
                           nExtent, sq, sk, rule, miss)))
    return failure();
  // A causal or window rule found at dynamic lengths holds where they are
  // equal. Where each is the dynamic length of an argument of its own (the
  // parts of a graph split around an op take Q's and K's rows as separate
  // arguments, which nothing in the program relates), the attention checks
  // it at run time. Any other length (a slice of the rows, a decode step's
  // static query) may differ from the other by design.
  bool checkLengths = lengthsUnknown && (rule.causal || rule.window);
  if (checkLengths &&
      !(isArgumentLength(query.getSize(2)) && isArgumentLength(key.getSize(2))))
    return miss("the query and key lengths are dynamic and not known to be "
                "equal, under a causal or window mask");

  // Sinks take one logit per query head. K and V are of one length: a
  // sink's column kept (V one longer than K) or a key's column dropped (a
  // slice of the probabilities reads as a view of them) is something else.
  // (Dynamic lengths are checked at run time, by rope.attention's extent
  // relations.)
  if (chain.sink && !isPerHeadSink(*chain.sink, h, nExtent, elementType))
    return miss("the sink logits are not one per query head");
  if (!ShapedType::isDynamic(sk) &&
      !ShapedType::isDynamic(value.getDimSize(2)) && sk != value.getDimSize(2))
    return miss("K and V are of different lengths");

  Value sinks = chain.sink ? buildSinks(rewriter, root->getLoc(), *chain.sink,
                                        heads, elementType)
                           : Value();
  AttentionOp attention =
      buildAttention(rewriter, root->getLoc(), outType, query, key, value, rule,
                     chain.scores, sinks);
  if (checkLengths)
    assertEqualLengths(rewriter, attention);
  rewriter.replaceOp(root, replacement(attention.getResult()));
  return success();
}

/// Whether `source` -> `result` splits the leading dim of a batched product
/// [B·H, S, D] into [B, H, S, D] (H and D static; S may be dynamic, and so
/// may B: Dynamo's dynamic batch, both B·H and B dynamic).
bool splitsBatchHead(RankedTensorType source, RankedTensorType result) {
  if (source.getRank() != 3 || result.getRank() != 4 ||
      source.isDynamicDim(2) || result.isDynamicDim(1) ||
      source.getShape().drop_front() != result.getShape().drop_front(2) ||
      source.isDynamicDim(0) != result.isDynamicDim(0))
    return false;
  return source.isDynamicDim(0) ||
         source.getDimSize(0) == result.getDimSize(0) * result.getDimSize(1);
}

/// The [B·H, Sq, Dv] -> [B, H, Sq, Dv] reshape of a batched P·V product
/// (the frontend's attention output before its transpose back), whose
/// whole chain is attention: becomes rope.attention. Linalg frontends
/// reshape with tensor.expand_shape, tosa ones with tosa.reshape.
template <typename ReshapeOp>
struct RaiseBatchedAttention : public OpRewritePattern<ReshapeOp> {
  RaiseBatchedAttention(MLIRContext *ctx, RaiseReport *report)
      : OpRewritePattern<ReshapeOp>(ctx), report(report) {}
  RaiseReport *report;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    Value source = reshape->getOperand(0);
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto outType = cast<RankedTensorType>(reshape.getType());
    MLIRContext *ctx = reshape->getContext();
    // (A term of the source: one index per dim, so only once it is 3-D.)
    auto product = [&] {
      return termAt(source,
                    {dimExpr(ctx, kN), dimExpr(ctx, kI), dimExpr(ctx, kE)});
    };
    if (!splitsBatchHead(sourceType, outType)) {
      // The same split at a dynamic head count or head dim (heads inferred
      // from sizes that crossed a graph break: JetMoE under dynamic=True)
      // is attention this raise cannot take; a near miss when it is one.
      AttentionChain chain;
      if (report && sourceType.getRank() == 3 && outType.getRank() == 4 &&
          (outType.isDynamicDim(1) || outType.isDynamicDim(3)) &&
          succeeded(matchAttentionChain(rewriter, reshape, product(), chain)))
        report->nearMiss(reshape, "attention",
                         "the head count or the head dim is dynamic");
      return rewriter.notifyMatchFailure(reshape,
                                         "not [B·H, S, D] -> [B, H, S, D]");
    }
    return raiseAttention(rewriter, reshape, product(), outType.getDimSize(0),
                          outType.getDimSize(1), outType, report,
                          [](Value attention) { return attention; });
  }
};

/// An unbatched P·V product ([Sq, Sk] × [Sk, Dv], a linalg.matmul or a
/// generic), attention of one head: becomes rope.attention over
/// [1, 1, S, D] views of its operands.
struct RaiseUnbatchedAttention
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  RaiseUnbatchedAttention(MLIRContext *ctx, RaiseReport *report)
      : OpInterfaceRewritePattern(ctx), report(report) {}
  RaiseReport *report;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1 || !getMultiplyAccumulateLoop(op))
      return rewriter.notifyMatchFailure(op, "not a product");
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    if (resultType.getRank() != 2 || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a [Sq, Dv] product");
    MLIRContext *ctx = op->getContext();
    Term product =
        termAt(op->getResult(0), {dimExpr(ctx, kI), dimExpr(ctx, kE)});
    auto outType = RankedTensorType::get(
        {1, 1, resultType.getDimSize(0), resultType.getDimSize(1)},
        resultType.getElementType());
    Location loc = op.getLoc();
    return raiseAttention(
        rewriter, op, product, /*batch=*/1, /*heads=*/1, outType, report,
        [&](Value attention) -> Value {
          return tensor::CollapseShapeOp::create(
              rewriter, loc, resultType, attention,
              SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});
        });
  }
};

} // namespace

void mlir::rope::populateRaiseAttentionPatterns(RewritePatternSet &patterns,
                                                RaiseReport *report) {
  patterns.add<RaiseBatchedAttention<tensor::ExpandShapeOp>,
               RaiseBatchedAttention<tosa::ReshapeOp>, RaiseUnbatchedAttention>(
      patterns.getContext(), report);
}
