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
// are taken apart here, with the reduced loop bound to j or d.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Raising/Passes.h"
#include "rope/Raising/RaiseReport.h"
#include "rope/Analysis/ConstantEvaluation.h"
#include "rope/Analysis/SymbolicEvaluation.h"
#include "rope/Analysis/OpClassification.h"
#include "rope/Analysis/Sizes.h"
#include "rope/Analysis/Terms.h"

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

namespace {

/// The attention space: n (batch·head, as the batched products run over
/// them), i (query), j (key), e (value dim), d (head dim).
enum AttentionDim : unsigned { kN, kI, kJ, kE, kD, kNumDims };

/// Masks whose elements the symbolic form does not describe (constant
/// tensors: a `triu` folded to `dense`) are recognised as causal (or a
/// window) by evaluating every element, up to this many; a larger one is
/// kept as the mask operand (raised all the same, without the rule).
constexpr int64_t kMaxEvaluatedMaskElements = 1 << 16;
/// An additive mask value at or below this hides its key (frontends use
/// −inf or the most negative finite float).
constexpr double kHiddenLogit = -1e30;

AffineExpr dimExpr(MLIRContext *ctx, AttentionDim dim) {
  return getAffineDimExpr(dim, ctx);
}

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

/// The linalg op whose result `t` reads, with the loops that read fixes and
/// its single reduction loop bound to `reduction`. Loops of extent 1 that the
/// result does not index read 0.
std::optional<ReductionRead> readReduction(Term t, AffineExpr reduction) {
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

/// softmax over j of the logits `t` reads, spelled out: e / Σ_j e with
/// e = exp(x − max_j x) (or exp(x)). The logits' term.
std::optional<Term> matchSoftmax(Term t, MLIRContext *ctx) {
  AffineExpr j = dimExpr(ctx, kJ);
  t = peelViews(t);
  // linalg.softmax along the dim that the keys index.
  if (auto softmax = t.value.getDefiningOp<linalg::SoftmaxOp>()) {
    if (t.map.getResult(softmax.getDimension()) != j)
      return std::nullopt;
    return peelViews(makeTerm(softmax.getInput(), t.map));
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
  Term shifted = peelViews(exp->operands[0]);
  std::optional<Computation> difference = classify(shifted);
  if (!difference || difference->kind != Kind::Sub)
    return shifted;
  Term logits = peelViews(difference->operands[0]);
  std::optional<Term> maxed = throughReduction(
      peelViews(difference->operands[1]), Reduction::Max, j);
  if (!maxed || peelViews(*maxed) != logits)
    return std::nullopt;
  return logits;
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
// Masks
//===----------------------------------------------------------------------===//

/// What the additive mask of the logits amounts to.
struct MaskRule {
  bool causal = false;
  std::optional<int64_t> window;
  /// A mask that is neither nothing nor causal: the operand to keep, as a
  /// tensor broadcasting to [B, Hq, Sq, Sk].
  Value operand;
  /// The operand is a boolean that hides where true (to be negated into
  /// attention's "may attend" mask).
  bool operandHidesWhenTrue = false;
};

/// Whether a logit of `value` (of float type `type`) hides its key: −inf,
/// the most negative f32 values, or the most negative finite value of a
/// narrower type (f16's −65504, HF's finfo.min of an f16 model: any score
/// added to it rounds back to it).
bool hidesKey(double value, Type type) {
  if (value <= kHiddenLogit)
    return true;
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  if (!floatType)
    return false;
  APFloat lowest = APFloat::getLargest(floatType.getFloatSemantics(),
                                       /*Negative=*/true);
  return value <= toDouble(lowest);
}

/// An additive mask element of type `type` hides its key (hidesKey), adds
/// nothing at 0, and is a bias otherwise.
std::optional<bool> additiveHides(double value, Type type) {
  if (hidesKey(value, type))
    return true;
  if (value == 0.0)
    return false;
  return std::nullopt;
}

/// A mask applied by a select of the logits: `select(c, x, hidden)` (or
/// `select(c, hidden, x)`), with `hidden` −inf or the most negative floats.
struct SelectMask {
  Term condition;
  bool hidesWhenTrue;
  Term logits;
};

std::optional<SelectMask> matchSelectMask(Term t) {
  t = peelViews(t);
  // arith.select or tosa.select: (condition, if true, if false).
  Operation *select = t.value.getDefiningOp();
  if (!isa_and_nonnull<arith::SelectOp, tosa::SelectOp>(select))
    return std::nullopt;
  Term condition = makeTerm(select->getOperand(0), t.map);
  for (bool hidesWhenTrue : {false, true}) {
    Value hidden = select->getOperand(hidesWhenTrue ? 1 : 2);
    Value kept = select->getOperand(hidesWhenTrue ? 2 : 1);
    std::optional<double> value = evaluate(makeTerm(hidden, t.map));
    if (value && hidesKey(*value, hidden.getType()))
      return SelectMask{condition, hidesWhenTrue, makeTerm(kept, t.map)};
  }
  return std::nullopt;
}

/// The rule that hidden keys make, from whether each key at each distance
/// δ = i + (Sk − Sq) − j behind its query is hidden: nothing when none is;
/// causal when every key after its query is, with a window W when within
/// the causal part exactly the keys at distance >= W are; none otherwise.
struct DistanceRule {
  bool anyHidden = false, allHidden = true, causal = true;
  int64_t window = 0; // the widest visible distance + 1
  int64_t narrowestHidden = std::numeric_limits<int64_t>::max();

  void add(int64_t distance, bool hidden) {
    anyHidden |= hidden;
    allHidden &= hidden;
    if (distance < 0 && !hidden)
      causal = false;
    if (distance >= 0 && !hidden)
      window = std::max(window, distance + 1);
    if (distance >= 0 && hidden)
      narrowestHidden = std::min(narrowestHidden, distance);
  }

  std::optional<MaskRule> rule() const {
    MaskRule rule;
    if (!anyHidden)
      return rule;
    if (!causal)
      return std::nullopt;
    rule.causal = true;
    if (narrowestHidden != std::numeric_limits<int64_t>::max()) {
      if (narrowestHidden != window)
        return std::nullopt;
      rule.window = window;
    }
    return rule;
  }
};

/// The rule of the mask read at every point (n, i, j): nothing (all zero),
/// causal, or a causal window (keys at i + off − W < j ≤ i + off, off =
/// Sk − Sq, the rows right-aligned to the keys as attention's default
/// positions put them). `hides` says of an element's value whether it hides
/// its key (none: it does something else, e.g. a bias). None when the mask
/// cannot be evaluated or is none of those.
std::optional<MaskRule>
evaluateMaskRule(Term mask, int64_t n, int64_t sq, int64_t sk,
                 function_ref<std::optional<bool>(double)> hides) {
  if (ShapedType::isDynamic(sq) || ShapedType::isDynamic(sk) ||
      n * sq * sk > kMaxEvaluatedMaskElements)
    return std::nullopt;
  MLIRContext *ctx = mask.map.getContext();
  int64_t offset = sk - sq;
  DistanceRule distances;
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t i = 0; i < sq; ++i) {
      for (int64_t j = 0; j < sk; ++j) {
        SmallVector<AffineExpr> point(kNumDims, getAffineConstantExpr(0, ctx));
        point[kN] = getAffineConstantExpr(a, ctx);
        point[kI] = getAffineConstantExpr(i, ctx);
        point[kJ] = getAffineConstantExpr(j, ctx);
        AffineMap at = mask.map.compose(AffineMap::get(0, 0, point, ctx));
        std::optional<double> value = evaluate(makeTerm(mask.value, at));
        if (!value)
          return std::nullopt;
        std::optional<bool> hiddenOrNot = hides(*value);
        if (!hiddenOrNot)
          return std::nullopt; // a bias, not a visibility rule
        distances.add(i + offset - j, *hiddenOrNot);
      }
    }
  }
  return distances.rule();
}

/// The deepest tensor along the views `t` reads through (not into a linalg
/// body's computation) that `accepts` the term it is read by: a frontend's
/// Q, K, V or mask in the layout attention wants, however many transposes
/// and reshapes the export put between it and its use. The deepest, so that
/// a repeat of kv heads or a broadcast mask is read from before it. Views
/// are stepped through as `options` allow.
Value deepestTensorRead(Term t, analysis::ViewOptions options,
                        function_ref<bool(Term)> accepts) {
  Value found;
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    if (isa<RankedTensorType>(t.value.getType()) && accepts(t))
      found = t.value;
    // Not past a slice that keeps part of a dim: the tensor before it is
    // larger (more keys, more rows, other heads) than the one the program
    // attends over, and would be taken whole.
    Operation *def = t.value.getDefiningOp();
    if (isa_and_nonnull<tensor::ExtractSliceOp, tosa::SliceOp>(def)) {
      auto source = cast<RankedTensorType>(def->getOperand(0).getType());
      auto result = cast<RankedTensorType>(t.value.getType());
      if (source.getRank() != result.getRank() ||
          source.getShape() != result.getShape() ||
          !source.hasStaticShape())
        break;
    }
    std::optional<Term> next = stepView(t, options);
    if (!next)
      break;
    if (!isa<RankedTensorType>(next->value.getType())) {
      // Into a body: on only when it yields an operand element (a copy,
      // a broadcast, a transpose), or reads one with tensor.extract at
      // indices of its loops (torch-mlir's broadcasts at dynamic sizes).
      if (!(isa<BlockArgument>(next->value) ||
            next->value.getDefiningOp<tensor::ExtractOp>()) ||
          !(next = stepView(*next, options)))
        break;
    }
    t = *next;
  }
  return found;
}

/// A scalar that a linalg body yields, read at its loops, as the read of
/// the op's result it becomes (views of a computed mask lead into the body
/// that computes it); `t` itself otherwise.
Term asResultRead(Term t) {
  auto *def = t.value.getDefiningOp();
  auto op = def ? dyn_cast<linalg::LinalgOp>(def->getParentOp())
                : linalg::LinalgOp();
  if (!op || isa<RankedTensorType>(t.value.getType()) ||
      op->getNumResults() == 0)
    return t;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  for (auto [r, yielded] : llvm::enumerate(yield.getValues())) {
    if (yielded != t.value)
      continue;
    OpOperand *init = op.getDpsInitOperand(r);
    return makeTerm(op->getResult(r),
                    op.getMatchingIndexingMap(init).compose(t.map));
  }
  return t;
}

/// The mask as an operand: a tensor the term reads at (b, h, i, j)
/// trailing-aligned, rank 2 to 4 (a static 1 read at 0 broadcasts).
Value maskOperand(Term mask, ArrayRef<AffineExpr> canonical) {
  return deepestTensorRead(asResultRead(mask), {}, [&](Term t) {
    auto type = cast<RankedTensorType>(t.value.getType());
    int64_t rank = type.getRank();
    if (rank < 2 || rank > 4)
      return false;
    for (int64_t k = 0; k < rank; ++k) {
      AffineExpr read = t.map.getResult(k);
      bool broadcast =
          type.getDimSize(k) == 1 && isa<AffineConstantExpr>(read);
      if (read != canonical[4 - rank + k] && !broadcast)
        return false;
    }
    return true;
  });
}

/// The hidden distances of `hidden` (a formula over comparisons of the
/// attention space's indices, opaque atoms valued by `opaque`) as a rule:
/// with j = i + (Sk − Sq) − δ every comparison must be a·δ + b, and the
/// distances 1 − Sq .. Sk − 1 decide (DistanceRule). `allHidden` tells
/// whether every distance is hidden.
std::optional<MaskRule> ruleOfFormula(const Formula &hidden, int64_t sq,
                                      int64_t sk, MLIRContext *ctx,
                                      function_ref<bool(unsigned)> opaque,
                                      bool &allHidden) {
  bool dynamic = ShapedType::isDynamic(sq) || ShapedType::isDynamic(sk);
  int64_t offset = dynamic ? 0 : sk - sq;
  SmallVector<AffineExpr> dims;
  for (unsigned k = 0; k < kNumDims; ++k)
    dims.push_back(getAffineDimExpr(k, ctx));
  dims[kJ] = dims[kI] + offset - getAffineSymbolExpr(0, ctx);
  DenseMap<AffineExpr, std::pair<int64_t, int64_t>> linear;
  auto inDistance = [&](AffineExpr e) -> std::optional<AffineExpr> {
    AffineExpr d = simplifyAffineExpr(
        e.replaceDimsAndSymbols(dims, {}), kNumDims, 1);
    if (!d.isPureAffine())
      return std::nullopt;
    for (unsigned k = 0; k < kNumDims; ++k)
      if (d.isFunctionOfDim(k))
        return std::nullopt;
    auto at = [&](int64_t delta) {
      return cast<AffineConstantExpr>(
                 simplifyAffineExpr(d.replaceSymbols(getAffineConstantExpr(
                                        delta, ctx)),
                                    0, 0))
          .getValue();
    };
    linear[d] = {at(1) - at(0), at(0)};
    return d;
  };
  std::optional<Formula> byDistance = hidden.mapExprs(inDistance);
  if (!byDistance)
    return std::nullopt;
  // The distances a query and a key can be apart. At a dynamic length
  // (Sq = Sk, the caller checked), every length at once: each comparison
  // a·δ + b ≥ 0 keeps its truth beyond |δ| > |b|, so the distances up to
  // the largest |b| + 1 either way show every rule the mask can make.
  int64_t lowest, highest;
  if (dynamic) {
    // A window beyond 2^20 tokens is read as the operand it is instead.
    constexpr int64_t kMaxDistance = int64_t(1) << 20;
    int64_t bound = 1;
    for (const auto &entry : linear) {
      int64_t b = entry.second.second;
      if (b <= -kMaxDistance || b >= kMaxDistance)
        return std::nullopt;
      bound = std::max(bound, std::abs(b) + 1);
    }
    lowest = -bound;
    highest = bound;
  } else {
    lowest = 1 - sq;
    highest = sk - 1;
  }
  DistanceRule distances;
  for (int64_t delta = lowest; delta <= highest; ++delta)
    distances.add(delta, byDistance->holds(
                             [&](AffineExpr e) {
                               auto [a, b] = linear.lookup(e);
                               return a * delta + b;
                             },
                             opaque));
  allHidden = distances.allHidden;
  return distances.rule();
}

/// The rule of the mask from its symbolic form (SymbolicEvaluation.h), at
/// any size: when whether an element hides its key depends only on the
/// key's distance δ = i + (Sk − Sq) − j behind the query (not on the batch,
/// the head, or i and j otherwise), the hidden distances over their range
/// say causal, a window or nothing, in Sq + Sk steps. One boolean computed
/// from the program's inputs may take part (HF's padding mask, and-ed with
/// the causal one): when the keys it hides are hidden whatever the
/// distance, it is the rule's mask operand (`canonical`: how attention
/// reads it), negated where it says what to hide. Only `withOperand`: a
/// mask that is a rule on its own is tried first, then one evaluated
/// element by element (constants that the symbolic form does not read).
std::optional<MaskRule>
distanceMaskRule(Term mask, int64_t sq, int64_t sk,
                 ArrayRef<AffineExpr> canonical,
                 function_ref<std::optional<bool>(double)> hides,
                 bool withOperand) {
  SmallVector<Term> opaqueReads;
  std::optional<SmallVector<Piece>> pieces =
      evaluateSymbolically(mask, withOperand ? &opaqueReads : nullptr);
  if (!pieces)
    return std::nullopt;
  MLIRContext *ctx = mask.map.getContext();
  std::optional<Formula> hidden;
  for (const Piece &p : *pieces) {
    std::optional<bool> hiddenOrNot =
        p.affine ? std::nullopt : hides(p.constant);
    if (!hiddenOrNot)
      return std::nullopt; // a bias or an index, not a visibility rule
    if (*hiddenOrNot)
      hidden = hidden ? (*hidden || p.when) : p.when;
  }
  if (!hidden)
    return MaskRule();
  llvm::SmallSetVector<unsigned, 2> used;
  hidden->forEachOpaque([&](unsigned id) { used.insert(id); });
  bool allHidden = false;
  if (used.empty())
    return ruleOfFormula(*hidden, sq, sk, ctx, nullptr, allHidden);
  if (used.size() != 1)
    return std::nullopt;
  // The rule with the opaque boolean true, and with it false: one side must
  // hide every key, the other is the rule.
  unsigned id = used.front();
  bool hiddenIfTrue = false, hiddenIfFalse = false;
  std::optional<MaskRule> ifTrue = ruleOfFormula(
      *hidden, sq, sk, ctx, [](unsigned) { return true; }, hiddenIfTrue);
  std::optional<MaskRule> ifFalse = ruleOfFormula(
      *hidden, sq, sk, ctx, [](unsigned) { return false; }, hiddenIfFalse);
  std::optional<MaskRule> rule = hiddenIfFalse ? ifTrue
                                 : hiddenIfTrue ? ifFalse
                                                : std::nullopt;
  if (!rule || (hiddenIfTrue && hiddenIfFalse))
    return std::nullopt;
  rule->operand = maskOperand(opaqueReads[id], canonical);
  if (!rule->operand || !cast<RankedTensorType>(rule->operand.getType())
                             .getElementType()
                             .isInteger(1))
    return std::nullopt;
  rule->operandHidesWhenTrue = hiddenIfTrue;
  return rule;
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

/// The kv head that query head `h` reads with `hkv` kv heads of `heads`.
AffineExpr kvHeadOf(AffineExpr h, int64_t heads, int64_t hkv) {
  if (hkv == 1)
    return getAffineConstantExpr(0, h.getContext());
  if (hkv == heads)
    return h;
  return h.floorDiv(heads / hkv);
}

/// Where an attention operand comes from: `source`, of rank 2 to 4, read
/// at attention's [B, H, S, D] indices once its dims are permuted by
/// `permutation` (source dim permutation[p] is read at the p-th of the
/// trailing indices; the identity when it is laid out as attention wants);
/// the leading indices that a lower rank lacks are unit dims.
struct OperandRead {
  Value source;
  SmallVector<int64_t, 4> permutation;

  explicit operator bool() const { return static_cast<bool>(source); }
  RankedTensorType getSourceType() const {
    return cast<RankedTensorType>(source.getType());
  }
  int64_t getDimSize(int64_t p) const {
    int64_t missing = 4 - getSourceType().getRank();
    return p < missing ? 1
                       : getSourceType().getDimSize(permutation[p - missing]);
  }
  /// The size of attention dim `p` (B, H, S or D) of the operand.
  analysis::Size getSize(int64_t p) const {
    int64_t missing = 4 - getSourceType().getRank();
    if (p < missing)
      return analysis::Size{1, {}, 0, {}};
    return analysis::sizeOfDim(source, permutation[p - missing],
                               getRotationInput);
  }
  /// The operand itself as [B, H, S, D]: transposed into place and given
  /// its leading unit dims if need be.
  Value materialize(OpBuilder &b, Location loc) const {
    RankedTensorType type = getSourceType();
    int64_t rank = type.getRank();
    Value operand = source;
    if (!llvm::equal(permutation, llvm::seq<int64_t>(0, rank))) {
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, source);
      SmallVector<OpFoldResult> shape;
      for (int64_t p : permutation)
        shape.push_back(sizes[p]);
      Value init =
          tensor::EmptyOp::create(b, loc, shape, type.getElementType());
      operand = linalg::TransposeOp::create(b, loc, operand, init, permutation)
                    .getResult()[0];
    }
    if (rank == 4)
      return operand;
    // [S, D] -> [1, 1, S, D]; [H, S, D] -> [1, H, S, D].
    SmallVector<int64_t> shape;
    for (int64_t p = 0; p < 4; ++p)
      shape.push_back(getDimSize(p));
    SmallVector<ReassociationIndices> reassociation;
    reassociation.push_back(llvm::to_vector(llvm::seq<int64_t>(0, 5 - rank)));
    for (int64_t p = 5 - rank; p < 4; ++p)
      reassociation.push_back({p});
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), operand,
        reassociation);
  }
};

/// The tensor that `t` reads at `expected` ([B, H, S, D] indices): as it
/// is, else the deepest one it reads with its dims in another order (GPT-J
/// rotates K as [B, S, H, D] and transposes it straight into Kᵀ). A tensor
/// of lower rank stands for the trailing indices when the leading ones are
/// unit (a 2-D [S, D] of one head).
/// Whether index expressions `a` and `b` agree at every point: the same
/// expression, or functions of the batch·head index n alone that agree at
/// each of its `nExtent` values. A collapse of [B, H] followed by an expand
/// (GQA's repeat, with batch > 1) spells (b, h) as `n floordiv H`,
/// `(n mod H) floordiv G`, ... in forms the simplifier does not unify.
bool sameIndex(AffineExpr a, AffineExpr b, int64_t nExtent) {
  if (a == b)
    return true;
  for (unsigned k = 0; k < kNumDims; ++k)
    if (k != kN && (a.isFunctionOfDim(k) || b.isFunctionOfDim(k)))
      return false;
  MLIRContext *ctx = a.getContext();
  SmallVector<AffineExpr> dims;
  for (unsigned k = 0; k < kNumDims; ++k)
    dims.push_back(getAffineDimExpr(k, ctx));
  auto at = [&](AffineExpr e, int64_t n) -> std::optional<int64_t> {
    dims[kN] = getAffineConstantExpr(n, ctx);
    auto c = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(e.replaceDimsAndSymbols(dims, {}), kNumDims, 0));
    return c ? std::optional<int64_t>(c.getValue()) : std::nullopt;
  };
  for (int64_t n = 0; n < nExtent; ++n) {
    std::optional<int64_t> x = at(a, n), y = at(b, n);
    if (!x || !y || *x != *y)
      return false;
  }
  return true;
}

OperandRead findOperand(Term t, ArrayRef<AffineExpr> expected, int64_t nExtent,
                        analysis::ViewOptions options = {}) {
  MLIRContext *ctx = t.value.getContext();
  // The indices a read of `read`'s rank stands for, if the others are unit.
  auto trailing = [&](Term read) -> std::optional<ArrayRef<AffineExpr>> {
    auto type = cast<RankedTensorType>(read.value.getType());
    int64_t rank = type.getRank();
    if (rank < 2 || rank > 4 ||
        !llvm::all_of(expected.drop_back(rank),
                      [](AffineExpr e) { return isa<AffineConstantExpr>(e); }))
      return std::nullopt;
    return expected.take_back(rank);
  };
  Value exact = deepestTensorRead(t, options, [&](Term read) {
    std::optional<ArrayRef<AffineExpr>> indices = trailing(read);
    if (!indices)
      return false;
    Term want = makeTerm(read.value, AffineMap::get(kNumDims, 0, *indices, ctx));
    return llvm::all_of(llvm::zip_equal(want.map.getResults(),
                                        read.map.getResults()),
                        [&](auto pair) {
                          return sameIndex(std::get<0>(pair), std::get<1>(pair),
                                           nExtent);
                        });
  });
  if (exact) {
    int64_t rank = cast<RankedTensorType>(exact.getType()).getRank();
    return {exact, llvm::to_vector<4>(llvm::seq<int64_t>(0, rank))};
  }
  OperandRead found;
  deepestTensorRead(t, options, [&](Term read) {
    std::optional<ArrayRef<AffineExpr>> indices = trailing(read);
    if (!indices)
      return false;
    auto type = cast<RankedTensorType>(read.value.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t, 4> permutation;
    SmallVector<bool, 4> used(rank, false);
    for (AffineExpr want : *indices) {
      bool unit = isa<AffineConstantExpr>(want);
      int64_t match = -1;
      for (int64_t k = 0; k < rank && match < 0; ++k) {
        if (used[k])
          continue;
        if (unit ? type.getDimSize(k) == 1
                 : sameIndex(read.map.getResult(k), want, nExtent))
          match = k;
      }
      if (match < 0)
        return false;
      used[match] = true;
      permutation.push_back(match);
    }
    found = {read.value, permutation};
    return true;
  });
  return found;
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
  std::optional<std::pair<Term, Term>> guard =
      throughHiddenRowGuard(probabilities, ctx);
  if (guard)
    probabilities = guard->first;
  std::optional<Term> logits = matchSoftmax(probabilities, ctx);
  if (!logits)
    return rewriter.notifyMatchFailure(root, "no softmax over the keys");
  logits = peelFloatCasts(*logits);
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

/// K and V read by query head `h` of `heads` in batch `b`, with the fewest
/// kv heads they are read by: the GQA grouping itself, not a repeat of it.
/// Null reads when there is no such grouping.
std::pair<OperandRead, OperandRead> findKeyValue(Term keyTerm, Term valueTerm,
                                                 int64_t batch,
                                                 AffineExpr b, AffineExpr h,
                                                 int64_t heads) {
  MLIRContext *ctx = h.getContext();
  AffineExpr j = dimExpr(ctx, kJ), e = dimExpr(ctx, kE), d = dimExpr(ctx, kD);
  OperandRead key, value;
  // A repeat's broadcast guard on K's or V's own length reads as the
  // identity: the attention's keys and values must be one length, which a
  // broadcast of one of them would break (its run-time check says so).
  analysis::ViewOptions ownLengths;
  ownLengths.ownSizeGuardsAsIndex = true;
  for (int64_t hkv = 1; hkv <= heads && !key; ++hkv) {
    if (heads % hkv != 0)
      continue;
    AffineExpr kvHead = kvHeadOf(h, heads, hkv);
    key = findOperand(keyTerm, {b, kvHead, j, d}, batch * heads, ownLengths);
    value =
        findOperand(valueTerm, {b, kvHead, j, e}, batch * heads, ownLengths);
    if (!key || !value || key.getDimSize(1) != hkv ||
        value.getDimSize(1) != hkv)
      key = value = OperandRead();
  }
  return {key, value};
}

/// The rule that `mask` makes (`hides` says of an element's value whether
/// it hides its key): read symbolically, else element by element (a
/// constant), else symbolically with one boolean input as its operand.
std::optional<MaskRule>
findMaskRule(Term mask, int64_t n, int64_t sq, int64_t sk,
             ArrayRef<AffineExpr> canonical,
             function_ref<std::optional<bool>(double)> hides) {
  if (std::optional<MaskRule> rule =
          distanceMaskRule(mask, sq, sk, canonical, hides, false))
    return rule;
  if (std::optional<MaskRule> rule = evaluateMaskRule(mask, n, sq, sk, hides))
    return rule;
  return distanceMaskRule(mask, sq, sk, canonical, hides, true);
}

/// The rule of the chain's mask over `n` batch·heads of [Sq, Sk] logits,
/// read at `canonical` ([B, H, Sq, Sk] indices): a mask that only hides
/// keys as causal attention (or a window) does is that rule, so causal
/// tiles can be skipped; any other is an operand (negated before use when
/// the rule says it is a boolean that hides where true).
LogicalResult matchMaskRule(const AttentionChain &chain,
                            ArrayRef<AffineExpr> canonical, int64_t n,
                            int64_t sq, int64_t sk, MaskRule &rule,
                            function_ref<LogicalResult(const Twine &)> miss) {
  // Each additive mask on its own: a rule, a rule with a boolean operand,
  // or an operand added as it is. Their sum hides every key that one of
  // them hides (−inf, or the lowest finite value plus anything no larger
  // than the scores, stays hidden): the union of the rules, with at most
  // one operand among them.
  for (const Term &mask : chain.additiveMasks) {
    Type maskType = mask.value.getType();
    auto additiveHides = [&](double value) {
      return ::additiveHides(value, maskType);
    };
    MaskRule part;
    if (std::optional<MaskRule> found =
            findMaskRule(mask, n, sq, sk, canonical, additiveHides)) {
      part = *found;
    } else {
      part.operand = maskOperand(mask, canonical);
      if (!part.operand)
        return miss("the mask is not read as [B, H, Sq, Sk]");
    }
    if (part.operand && rule.operand)
      return miss("more than one of the added masks needs an operand");
    rule.causal |= part.causal;
    if (part.window)
      rule.window =
          rule.window ? std::min(*rule.window, *part.window) : *part.window;
    if (part.operand) {
      rule.operand = part.operand;
      rule.operandHidesWhenTrue = part.operandHidesWhenTrue;
    }
  }
  if (chain.selectMask) {
    bool hidesWhenTrue = chain.selectMask->hidesWhenTrue;
    auto hides = [&](double c) -> std::optional<bool> {
      return (c != 0.0) == hidesWhenTrue;
    };
    Term condition = chain.selectMask->condition;
    if (std::optional<MaskRule> found =
            findMaskRule(condition, n, sq, sk, canonical, hides)) {
      rule = *found;
    } else {
      // Attention's i1 mask says where a key may be attended: the
      // condition itself, or its negation when it says what to hide.
      rule.operand = maskOperand(condition, canonical);
      if (!rule.operand || !cast<RankedTensorType>(rule.operand.getType())
                                .getElementType()
                                .isInteger(1))
        return miss("the boolean mask is not read as [B, H, Sq, Sk] i1");
      rule.operandHidesWhenTrue = hidesWhenTrue;
    }
  }
  return success();
}

/// Creates the rope.attention of `outType` over Q, K and V laid out as
/// [B, H, S, D], with the mask `rule` (its operand negated first when it
/// hides where true) and the scale and soft-cap of `scores`.
AttentionOp buildAttention(PatternRewriter &rewriter, Location loc,
                           RankedTensorType outType, const OperandRead &query,
                           const OperandRead &key, const OperandRead &value,
                           MaskRule rule, const Scores &scores) {
  if (rule.operandHidesWhenTrue)
    rule.operand = buildNegatedMask(rewriter, loc, rule.operand);
  // An operand of a narrower float type, widened (exactly) to the output's.
  auto read = [&](const OperandRead &operand) -> Value {
    Value v = operand.materialize(rewriter, loc);
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getElementType() == outType.getElementType())
      return v;
    return arith::ExtFOp::create(rewriter, loc,
                                 type.clone(outType.getElementType()), v);
  };
  return AttentionOp::create(
      rewriter, loc, outType, read(query), read(key), read(value),
      rule.operand,
      /*query_positions=*/Value(), /*key_positions=*/Value(),
      /*sinks=*/Value(), /*alibi_slopes=*/Value(), /*relative_bias=*/Value(),
      /*query_cos=*/Value(), /*query_sin=*/Value(), /*key_cos=*/Value(),
      /*key_sin=*/Value(), rewriter.getF64FloatAttr(scores.scale),
      rule.causal ? rewriter.getUnitAttr() : UnitAttr(),
      /*rotary=*/RotarySpecAttr(), /*rotary_layout=*/RotaryLayoutAttr(),
      /*rotary_dims=*/IntegerAttr(), /*rotary_offset=*/IntegerAttr(),
      rule.window ? rewriter.getI64IntegerAttr(*rule.window) : IntegerAttr(),
      scores.softcap ? rewriter.getF64FloatAttr(*scores.softcap) : FloatAttr(),
      /*relative_buckets=*/RelativeBucketsAttr());
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
  OperandRead query = findOperand(chain.scores.query, {b, h, i, d}, batch * heads);
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
  // Q, K and V of the output's type or of a narrower float type that the
  // frontend widens exactly before computing in the output's (PyTorch's
  // SDPA upcasts bf16 operands to f32): attention then takes them widened.
  auto fits = [&](Type type) {
    return type == elementType ||
           (isa<FloatType>(type) && isa<FloatType>(elementType) &&
            type.getIntOrFloatBitWidth() < elementType.getIntOrFloatBitWidth());
  };
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
  // dim), which the types alone cannot say at a dynamic length.
  if (ShapedType::isDynamic(sq)) {
    Value out = root->getResult(0);
    int64_t rows = cast<RankedTensorType>(out.getType()).getRank() - 2;
    if (query.getSize(2) != analysis::sizeOfDim(out, rows))
      return miss("the query length is dynamic and not known to be the "
                  "output's");
  }

  MaskRule rule;
  if (failed(matchMaskRule(chain, {b, h, i, j}, batch * heads, sq, sk, rule,
                           miss)))
    return failure();
  if (lengthsUnknown && (rule.causal || rule.window))
    return miss("the query and key lengths are dynamic and not known to be "
                "equal, under a causal or window mask");

  AttentionOp attention = buildAttention(rewriter, root->getLoc(), outType,
                                         query, key, value, rule, chain.scores);
  rewriter.replaceOp(root, replacement(attention.getResult()));
  return success();
}

/// Whether `source` -> `result` splits the leading dim of a batched product
/// [B·H, S, D] into [B, H, S, D] (B, H and D static; S may be dynamic).
bool splitsBatchHead(RankedTensorType source, RankedTensorType result) {
  return source.getRank() == 3 && result.getRank() == 4 &&
         !source.isDynamicDim(0) && !source.isDynamicDim(2) &&
         !result.isDynamicDim(0) && !result.isDynamicDim(1) &&
         source.getDimSize(0) == result.getDimSize(0) * result.getDimSize(1) &&
         source.getShape().drop_front() == result.getShape().drop_front(2);
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
    if (!splitsBatchHead(sourceType, outType))
      return rewriter.notifyMatchFailure(reshape,
                                         "not [B·H, S, D] -> [B, H, S, D]");
    MLIRContext *ctx = reshape->getContext();
    Term product = termAt(source, {dimExpr(ctx, kN), dimExpr(ctx, kI),
                                   dimExpr(ctx, kE)});
    return raiseAttention(rewriter, reshape, product, outType.getDimSize(0),
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
