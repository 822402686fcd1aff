//===- AttentionMaskRules.cpp - the mask of a raised attention ------------===//
//
// Part of --rope-raise's attention matcher (RaiseAttention.cpp): whether a
// frontend's mask hides keys as causal attention or a sliding window does.
// Each mask element is read in the attention space, symbolically
// (SymbolicEvaluation.h) where its form says which distances between query
// and key it hides, else element by element when it is a constant; a mask
// that is no such rule is kept as rope.attention's mask operand.
//
//===----------------------------------------------------------------------===//

#include "AttentionMaskRules.h"
#include "AttentionOperands.h"

#include "rope/Analysis/ConstantEvaluation.h"
#include "rope/Analysis/OpClassification.h"
#include "rope/Analysis/SymbolicEvaluation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::analysis;
using namespace mlir::rope::raising;

namespace {

/// Masks whose elements the symbolic form does not describe (constant
/// tensors: a `triu` folded to `dense`) are recognised as causal (or a
/// window) by evaluating every element, up to this many; a larger one is
/// kept as the mask operand (raised all the same, without the rule).
constexpr int64_t kMaxEvaluatedMaskElements = 1 << 16;
/// An additive mask value at or below this hides its key (frontends use
/// −inf or the most negative finite float).
constexpr double kHiddenLogit = -1e30;

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
  int64_t perHead = 0, elements = 0;
  if (ShapedType::isDynamic(n) || ShapedType::isDynamic(sq) ||
      ShapedType::isDynamic(sk) || llvm::MulOverflow(sq, sk, perHead) ||
      llvm::MulOverflow(n, perHead, elements) ||
      elements > kMaxEvaluatedMaskElements)
    return std::nullopt;
  // No rows or no keys: no element to read, so the rule of no points,
  // however many heads (a mutant's 2^63 - 1 heads of empty rows would
  // otherwise be stepped through one by one).
  if (elements == 0)
    return DistanceRule().rule();
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

/// A scalar that a linalg body yields, read at its loops, as the read of
/// the op's result it becomes (views of a computed mask lead into the body
/// that computes it); `t` itself otherwise.
Term asResultRead(Term t) {
  auto *def = t.value.getDefiningOp();
  auto op =
      def ? dyn_cast<linalg::LinalgOp>(def->getParentOp()) : linalg::LinalgOp();
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
/// trailing-aligned, rank 2 to 4 (a static 1 read at 0 broadcasts; indices
/// of the batch·head index compared at each of its `n` values, sameIndex).
Value maskOperand(Term mask, ArrayRef<AffineExpr> canonical, int64_t n) {
  return deepestTensorRead(asResultRead(mask), {}, [&](Term t) {
    auto type = cast<RankedTensorType>(t.value.getType());
    int64_t rank = type.getRank();
    if (rank < 2 || rank > 4)
      return false;
    for (int64_t k = 0; k < rank; ++k) {
      AffineExpr read = t.map.getResult(k);
      bool broadcast = type.getDimSize(k) == 1 && isa<AffineConstantExpr>(read);
      if (!broadcast && !sameIndex(read, canonical[4 - rank + k], n))
        return false;
    }
    return true;
  });
}

/// The deepest tensor the mask term reads at indices of the batch·head
/// index n (any function of it) and at i and j themselves, of any rank
/// from 2 (a repeat's [B, Hkv, G, Sq, Sk] too), and the map it is read
/// through (`gather`): a mask that maskOperand does not find as
/// [B, H, Sq, Sk] but that the raise can gather to it.
Value gatheredMaskOperand(Term mask, AffineMap &gather) {
  return deepestTensorRead(asResultRead(mask), {}, [&](Term t) {
    auto type = cast<RankedTensorType>(t.value.getType());
    int64_t rank = type.getRank();
    if (rank < 2)
      return false;
    for (int64_t k = 0; k < rank; ++k) {
      AffineExpr read = t.map.getResult(k);
      bool unit = type.getDimSize(k) == 1 && isa<AffineConstantExpr>(read);
      if (k == rank - 2 || k == rank - 1) {
        if (!unit && read != getAffineDimExpr(k == rank - 2 ? kI : kJ,
                                              read.getContext()))
          return false;
        continue;
      }
      for (unsigned d = 0; d < kNumDims; ++d)
        if (d != kN && read.isFunctionOfDim(d))
          return false;
    }
    gather = t.map;
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
    AffineExpr d =
        simplifyAffineExpr(e.replaceDimsAndSymbols(dims, {}), kNumDims, 1);
    if (!d.isPureAffine())
      return std::nullopt;
    for (unsigned k = 0; k < kNumDims; ++k)
      if (d.isFunctionOfDim(k))
        return std::nullopt;
    auto at = [&](int64_t delta) {
      return cast<AffineConstantExpr>(
                 simplifyAffineExpr(
                     d.replaceSymbols(getAffineConstantExpr(delta, ctx)), 0, 0))
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
distanceMaskRule(Term mask, int64_t n, int64_t sq, int64_t sk,
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
  std::optional<MaskRule> rule = hiddenIfFalse  ? ifTrue
                                 : hiddenIfTrue ? ifFalse
                                                : std::nullopt;
  if (!rule || (hiddenIfTrue && hiddenIfFalse))
    return std::nullopt;
  rule->operand = maskOperand(opaqueReads[id], canonical, n);
  if (!rule->operand || !cast<RankedTensorType>(rule->operand.getType())
                             .getElementType()
                             .isInteger(1))
    return std::nullopt;
  rule->operandHidesWhenTrue = hiddenIfTrue;
  return rule;
}

/// The rule that `mask` makes (`hides` says of an element's value whether
/// it hides its key): read symbolically, else element by element (a
/// constant), else symbolically with one boolean input as its operand.
std::optional<MaskRule>
findMaskRule(Term mask, int64_t n, int64_t sq, int64_t sk,
             ArrayRef<AffineExpr> canonical,
             function_ref<std::optional<bool>(double)> hides) {
  if (std::optional<MaskRule> rule =
          distanceMaskRule(mask, n, sq, sk, canonical, hides, false))
    return rule;
  if (std::optional<MaskRule> rule = evaluateMaskRule(mask, n, sq, sk, hides))
    return rule;
  return distanceMaskRule(mask, n, sq, sk, canonical, hides, true);
}

} // namespace

std::optional<SelectMask> raising::matchSelectMask(Term t) {
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

LogicalResult raising::matchMaskRule(
    ArrayRef<Term> additiveMasks, const std::optional<SelectMask> &selectMask,
    ArrayRef<AffineExpr> canonical, int64_t n, int64_t sq, int64_t sk,
    MaskRule &rule, function_ref<LogicalResult(const Twine &)> miss) {
  // Each additive mask on its own: a rule, a rule with a boolean operand,
  // or an operand added as it is. Their sum hides every key that one of
  // them hides (−inf, or the lowest finite value plus anything no larger
  // than the scores, stays hidden): the union of the rules, with at most
  // one operand among them.
  for (const Term &mask : additiveMasks) {
    Type maskType = mask.value.getType();
    auto additiveHides = [&](double value) {
      return ::additiveHides(value, maskType);
    };
    MaskRule part;
    if (std::optional<MaskRule> found =
            findMaskRule(mask, n, sq, sk, canonical, additiveHides)) {
      part = *found;
    } else {
      part.operand = maskOperand(mask, canonical, n);
      if (!part.operand)
        part.operand = gatheredMaskOperand(mask, part.operandGather);
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
      rule.operandGather = part.operandGather;
    }
  }
  if (selectMask) {
    bool hidesWhenTrue = selectMask->hidesWhenTrue;
    auto hides = [&](double c) -> std::optional<bool> {
      return (c != 0.0) == hidesWhenTrue;
    };
    Term condition = selectMask->condition;
    if (std::optional<MaskRule> found =
            findMaskRule(condition, n, sq, sk, canonical, hides)) {
      rule = *found;
    } else {
      // Attention's i1 mask says where a key may be attended: the
      // condition itself, or its negation when it says what to hide.
      rule.operand = maskOperand(condition, canonical, n);
      if (!rule.operand || !cast<RankedTensorType>(rule.operand.getType())
                                .getElementType()
                                .isInteger(1))
        return miss("the boolean mask is not read as [B, H, Sq, Sk] i1");
      rule.operandHidesWhenTrue = hidesWhenTrue;
    }
  }
  return success();
}
