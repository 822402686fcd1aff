//===- RaiseRotary.cpp - raise frontend RoPE to rope.rotate ---------------===//
//
// Frontends spell a rotary embedding as `x·cos + rot(x)·sin`, `rot` moving the
// partner of each rotation pair into place and negating one member, with the
// tables cos/sin of `positions ⊗ inv_freq`. The spellings differ (arith on
// tensors; linalg named ops or generics with broadcasting maps and fused
// bodies; tosa with implicit broadcasting), but every op involved either moves
// elements around (slices, concatenations, reshapes, broadcasts) or computes
// element i of its result from elements of its operands at the same i.
//
// So the matchers do not walk ops; they walk `Term`s (Utils/Terms.h): a value
// read through an affine map from the iteration space of the candidate
// rotation (the shape of its result). Index-only ops turn a term into a term
// of their operand (`peelViews`); what remains is a computation whose
// operands are again terms (`classify`, Utils/OpClassification.h). With the
// last (head) dim fixed to a constant j, a term names "element j of every
// head": that is how the pairing is checked here (element j of rot(x) must
// be ±x at j's partner) and how the tables are taken apart (element j of cos
// must be cos(p · f_j), Utils/TableMatching.h), whatever concatenations,
// tiles or interleavings put the elements in place. A term that depends on
// nothing but j is evaluated at compile time (Utils/ConstantEvaluation.h),
// which is how the frequencies f_j are recovered; the spec follows from them
// (IR/SpecRecovery.h). A spelling is supported once, in
// `stepView`/`classify`, and every shape pattern gets it.
//
// This file holds what is particular to rotations: the pair layouts, the
// patterns that read a sum as a rotation and rewrite it, and the pass.
//
//===----------------------------------------------------------------------===//

#include "rope/Analysis/ConstantEvaluation.h"
#include "rope/Analysis/OpClassification.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Raising/Passes.h"
#include "rope/Raising/SpecRecovery.h"
#include "rope/Raising/TableMatching.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::analysis;
using namespace mlir::rope::raising;

namespace {

/// The largest head the matchers look at, element by element; real heads
/// have at most a few hundred elements.
constexpr int64_t kMaxHeadDim = 4096;

//===----------------------------------------------------------------------===//
// Rotations
//===----------------------------------------------------------------------===//

/// A pair layout: which head element partners which, and how frequencies
/// are laid out along the head.
class PairLayout {
public:
  virtual ~PairLayout() = default;
  virtual RotaryLayout getKind() const = 0;
  /// The element paired with `j` in a head of `headDim`.
  virtual int64_t partner(int64_t j, int64_t headDim) const = 0;
  /// Whether `j` is the first member `a` of its pair (a' = a·cos − b·sin).
  virtual bool isFirst(int64_t j, int64_t headDim) const = 0;
  /// The frequency of the pair of element `j`.
  virtual int64_t pairOf(int64_t j, int64_t headDim) const = 0;
};

/// Llama/NeoX: pairs (i, i + h).
class HalfLayout final : public PairLayout {
public:
  RotaryLayout getKind() const override { return RotaryLayout::half; }
  int64_t partner(int64_t j, int64_t headDim) const override {
    return isFirst(j, headDim) ? j + headDim / 2 : j - headDim / 2;
  }
  bool isFirst(int64_t j, int64_t headDim) const override {
    return j < headDim / 2;
  }
  int64_t pairOf(int64_t j, int64_t headDim) const override {
    return j % (headDim / 2);
  }
};

/// GPT-J/RoFormer: pairs (2i, 2i + 1).
class InterleavedLayout final : public PairLayout {
public:
  RotaryLayout getKind() const override { return RotaryLayout::interleaved; }
  int64_t partner(int64_t j, int64_t) const override { return j ^ 1; }
  bool isFirst(int64_t j, int64_t) const override { return j % 2 == 0; }
  int64_t pairOf(int64_t j, int64_t) const override { return j / 2; }
};

/// `t` through views and negations (also products with −1), and whether
/// an odd number of them negated it.
std::pair<Term, bool> peelSign(Term t) {
  bool negated = false;
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    t = peelViews(t);
    std::optional<Computation> c = classify(t);
    if (c && c->kind == Kind::Neg) {
      negated = !negated;
      t = c->operands[0];
      continue;
    }
    if (!c || c->kind != Kind::Mul)
      break;
    std::optional<Term> rest;
    for (auto [operand, factor] : bothOrders(*c)) {
      if (evaluate(factor) == -1.0) {
        rest = operand;
        break;
      }
    }
    if (!rest)
      break;
    negated = !negated;
    t = *rest;
  }
  return {t, negated};
}

/// Whether `rotated` is `±rot(x)` for `layout`, element by element of the
/// head: rotated[j] = −x[partner(j)] for a first member, +x[partner(j)] for
/// a second (forward), or the opposite signs (inverse). `negated` flips the
/// expectation (the term is subtracted). Returns whether it is the inverse.
std::optional<bool> matchPartner(Term rotated, Term x, const PairLayout &layout,
                                 int64_t headDim, bool negated) {
  std::optional<bool> inverse;
  for (int64_t j = 0; j < headDim; ++j) {
    auto [element, elementNegated] = peelSign(atHeadIndex(rotated, j));
    auto [source, sourceNegated] =
        peelSign(atHeadIndex(x, layout.partner(j, headDim)));
    if (element != source)
      return std::nullopt;
    bool minus = elementNegated ^ sourceNegated ^ negated;
    bool elementInverse = minus != layout.isFirst(j, headDim);
    if (inverse && *inverse != elementInverse)
      return std::nullopt;
    inverse = elementInverse;
  }
  return inverse;
}

/// The tensor of `type` that `t` reads at the iteration point itself, found
/// along its views (e.g. the function argument behind a linalg block
/// argument).
Value findIdentityRead(Term t, RankedTensorType type) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    if (isIdentityRead(t, type))
      return t.value;
    std::optional<Term> next = stepView(t);
    if (!next)
      return {};
    t = *next;
  }
  return {};
}

/// The two operands of the product `t` reads, if it is one.
std::optional<Computation> matchProduct(Term t) {
  std::optional<Computation> c = classify(peelViews(t));
  if (!c || c->kind != Kind::Mul)
    return std::nullopt;
  return c;
}

/// `x·cos ± rot(x)·sin` on a head laid out as the derived pattern says,
/// raised to rope.rotate. Registered once per root op that frontends use for
/// the final addition.
class RaiseRotation : public RewritePattern {
public:
  RaiseRotation(StringRef rootName, MLIRContext *ctx)
      : RewritePattern(rootName, /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const final {
    if (op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "expected one result");
    Value root = op->getResult(0);
    auto type = dyn_cast<RankedTensorType>(root.getType());
    if (!type || type.getRank() < 2 ||
        !isa<Float32Type, Float16Type, BFloat16Type>(type.getElementType()))
      return rewriter.notifyMatchFailure(op, "not a rank >= 2 float tensor");
    int64_t headDim = type.getShape().back();
    if (ShapedType::isDynamic(headDim) || headDim % 2 != 0 ||
        headDim > kMaxHeadDim)
      return rewriter.notifyMatchFailure(op, "head dim not static and even");

    std::optional<Computation> sum = classify(peelViews(identityTerm(root)));
    if (!sum || (sum->kind != Kind::Add && sum->kind != Kind::Sub))
      return rewriter.notifyMatchFailure(op, "not a sum");
    bool subtract = sum->kind == Kind::Sub;
    // Either summand may be x·cos; a difference is x·cos − rot(x)·sin.
    SmallVector<std::pair<Term, Term>, 2> summands = bothOrders(*sum);
    if (subtract)
      summands.pop_back();
    const PairLayout &pairs = getLayout();
    // Every reading of the sum as x·cos + rot(x)·sin. One sum may have
    // several (x·sin + rh·cos with rh = rot(x) is also rh·cos − rot(rh)·sin);
    // a reading with a spec is preferred to any with opaque tables.
    struct Reading {
      Value input;
      Term cos, sin;
      bool inverse;
    };
    SmallVector<Reading> readings;
    for (auto [direct, rotated] : summands) {
      std::optional<Computation> directProduct = matchProduct(direct);
      std::optional<Computation> rotatedProduct = matchProduct(rotated);
      if (!directProduct || !rotatedProduct)
        continue;
      for (auto [x, cos] : bothOrders(*directProduct)) {
        Value input = findIdentityRead(x, type);
        if (!input)
          continue;
        for (auto [rot, sin] : bothOrders(*rotatedProduct)) {
          if (std::optional<bool> inverse =
                  matchPartner(rot, x, pairs, headDim, subtract))
            readings.push_back({input, cos, sin, *inverse});
        }
      }
    }
    for (const Reading &r : readings)
      if (succeeded(raiseWithSpec(rewriter, op, r.input, r.cos, r.sin, type,
                                  r.inverse)))
        return success();
    for (const Reading &r : readings)
      if (succeeded(raiseWithTables(rewriter, op, r.input, r.cos, r.sin, type,
                                    r.inverse)))
        return success();
    return rewriter.notifyMatchFailure(op, "not a rotation of this layout");
  }

protected:
  virtual const PairLayout &getLayout() const = 0;

private:
  /// The rotation as rope.rotate, when the tables are computed (or gathered
  /// from constant caches) so that their spec and positions can be
  /// recovered.
  LogicalResult raiseWithSpec(PatternRewriter &rewriter, Operation *op,
                              Value input, Term cos, Term sin,
                              RankedTensorType type, bool inverse) const {
    int64_t headDim = type.getShape().back();
    std::optional<Table> cosTable = matchTable(cos, Kind::Cos, headDim);
    std::optional<Table> sinTable = matchTable(sin, Kind::Sin, headDim);
    if (!cosTable || !sinTable ||
        failed(resolveGathered(*cosTable, *sinTable)) || *cosTable != *sinTable)
      return failure();
    FailureOr<RotarySpecAttr> spec =
        specFor(op->getContext(), *cosTable, headDim, inverse);
    if (failed(spec))
      return failure();
    // The innermost positions tensor that reads as [S] or [B, S] (e.g. the
    // function argument rather than its sign extension).
    std::optional<PositionsOperand> positions;
    for (const Term &candidate : llvm::reverse(cosTable->positions))
      if ((positions = analyzePositions(candidate, type)))
        break;
    if (!positions)
      return failure();
    // The default seq_dim (−2) where it applies, for readable IR.
    int64_t seqDim =
        positions->seqDim == type.getRank() - 2 ? -2 : positions->seqDim;
    rewriter.replaceOpWithNewOp<RotateOp>(
        op, input, materializePositions(rewriter, op->getLoc(), *positions),
        *spec, seqDim);
    return success();
  }

  /// The rotation as rope.rotate_with_tables, whatever produced cos and
  /// sin, when each is read element for element along the head.
  /// rope.rotate_with_tables applies x·cos + rot(x)·sin element for element,
  /// so the tables need not be a rotation. The inverse direction (rot(x)
  /// with the opposite signs) is not raised: the op would need −sin.
  LogicalResult raiseWithTables(PatternRewriter &rewriter, Operation *op,
                                Value input, Term cos, Term sin,
                                RankedTensorType type, bool inverse) const {
    if (inverse)
      return failure();
    std::optional<Term> cosRead = findElementTable(cos, type);
    std::optional<Term> sinRead = findElementTable(sin, type);
    if (!cosRead || !sinRead)
      return failure();
    Location loc = op->getLoc();
    // Build nothing unless the two tables end up of one type.
    if (getElementTableLayout(*cosRead, type.getRank()).shape !=
            getElementTableLayout(*sinRead, type.getRank()).shape ||
        getElementTypeOrSelf(cosRead->value) !=
            getElementTypeOrSelf(sinRead->value))
      return failure();
    Value cosTable = materializeElementTable(rewriter, loc, *cosRead, type);
    Value sinTable = materializeElementTable(rewriter, loc, *sinRead, type);
    rewriter.replaceOpWithNewOp<RotateWithTablesOp>(op, input, cosTable,
                                                    sinTable,
                                                    getLayout().getKind());
    return success();
  }

  /// The spec of the table, whose frequencies must be constant across the
  /// members of each pair.
  FailureOr<RotarySpecAttr> specFor(MLIRContext *ctx, const Table &table,
                                    int64_t headDim, bool inverse) const {
    const PairLayout &pairs = getLayout();
    if (!std::isfinite(table.scale) || table.scale <= 0.0)
      return failure();
    SmallVector<double> invFreq(headDim / 2, 0.0);
    for (int64_t j = 0; j < headDim; ++j) {
      double &f = invFreq[pairs.pairOf(j, headDim)];
      if (pairs.isFirst(j, headDim))
        f = table.frequencies[j];
      else if (f != table.frequencies[j])
        return failure();
    }
    return recoverRotarySpec(ctx, invFreq, pairs.getKind(), inverse,
                             table.scale);
  }
};

/// x·cos + cat(−x2, x1)·sin (Llama/NeoX `rotate_half`) with
/// cos = cos(cat(f, f)).
class RaiseHalfRotation final : public RaiseRotation {
public:
  using RaiseRotation::RaiseRotation;

private:
  const PairLayout &getLayout() const override { return layout; }
  HalfLayout layout;
};

/// x·cos + interleave(−x_odd, x_even)·sin (GPT-J `rotate_every_two`) with
/// cos = repeat_interleave(cos(f), 2).
class RaiseInterleavedRotation final : public RaiseRotation {
public:
  using RaiseRotation::RaiseRotation;

private:
  const PairLayout &getLayout() const override { return layout; }
  InterleavedLayout layout;
};

/// Whether `op` (a concatenation or insertion) joins a rotation, directly or
/// through up to `depth` nested insertions.
bool joinsRotation(Operation *op, unsigned depth) {
  return llvm::any_of(op->getOperands(), [&](Value v) {
    Operation *def = v.getDefiningOp();
    return isa_and_nonnull<RotateOp, RotateWithTablesOp>(def) ||
           (depth > 0 && isa_and_nonnull<tensor::InsertSliceOp>(def) &&
            joinsRotation(def, depth - 1));
  });
}

/// The rotation (rope.rotate or rope.rotate_with_tables) whose elements
/// `root` reads somewhere along its head of `headDim`, with `offset` set to
/// where its head starts in `root`'s; null if there is none.
Operation *findRotationInHead(Term root, int64_t headDim, int64_t &offset) {
  for (int64_t j = 0; j < headDim; ++j) {
    Term element = peelViews(atHeadIndex(root, j));
    Operation *candidate = element.value.getDefiningOp();
    if (!isa_and_nonnull<RotateOp, RotateWithTablesOp>(candidate))
      continue;
    auto last = dyn_cast<AffineConstantExpr>(element.map.getResults().back());
    if (!last)
      continue;
    offset = j - last.getValue();
    return candidate;
  }
  return nullptr;
}

/// The tensor of `type` that `rotationInput` is a view of (the full tensor
/// the rotated elements were taken from); null if there is none.
Value findFullInput(Value rotationInput, Type type) {
  for (Term t = identityTerm(rotationInput);;) {
    if (t.value.getType() == type)
      return t.value;
    std::optional<Term> next = stepView(t);
    if (!next)
      return Value();
    t = *next;
  }
}

/// Checks element by element that `op` joins `input`'s elements and, in
/// head dims [offset, offset + rotatedDim), those of `rotation` of the
/// input's elements at the same place.
LogicalResult matchPartialElements(PatternRewriter &rewriter, Operation *op,
                                   Operation *rotation, Value input,
                                   int64_t offset, int64_t rotatedDim,
                                   int64_t headDim) {
  Term root = identityTerm(op->getResult(0));
  Term inputTerm = identityTerm(input);
  Term rotatedTerm = identityTerm(rotation->getResult(0));
  Term rotationInputTerm = identityTerm(rotation->getOperand(0));
  for (int64_t j = 0; j < headDim; ++j) {
    Term element = peelViews(atHeadIndex(root, j));
    Term source = peelViews(atHeadIndex(inputTerm, j));
    bool rotated = j >= offset && j < offset + rotatedDim;
    if (!rotated) {
      if (element != source)
        return rewriter.notifyMatchFailure(op, "not a pass-through element");
      continue;
    }
    if (element != atHeadIndex(rotatedTerm, j - offset) ||
        peelViews(atHeadIndex(rotationInputTerm, j - offset)) != source)
      return rewriter.notifyMatchFailure(op, "not the rotated element");
  }
  return success();
}

/// Replaces `op` by `rotation` (of a `rotatedDim` slice) applied to all of
/// `input`, turning only the dims from `offset` on that it turned.
void replaceWithPartialRotation(PatternRewriter &rewriter, Operation *op,
                                Operation *rotation, Value input,
                                int64_t offset, int64_t rotatedDim) {
  if (auto withTables = dyn_cast<RotateWithTablesOp>(rotation)) {
    // The tables follow the rotation's leading dims, which are the
    // input's: they stay as they are.
    rewriter.replaceOpWithNewOp<RotateWithTablesOp>(
        op, input, withTables.getCos(), withTables.getSin(),
        withTables.getLayout(), withTables.getRotaryDims(),
        offset + withTables.getRotaryOffset(), withTables.getSeqDim());
    return;
  }
  auto rotate = cast<RotateOp>(rotation);
  RotarySpecAttr spec = rotate.getSpec();
  auto partial = RotarySpecAttr::get(
      op->getContext(), spec.getBase(), spec.getRotaryDims(rotatedDim),
      offset + spec.getOffset(), spec.getLayout(), spec.getScaling(),
      spec.getAttentionFactor(), spec.getInverse());
  rewriter.replaceOpWithNewOp<RotateOp>(op, input, rotate.getPositions(),
                                        partial, rotate.getSeqDim());
}

/// cat(rotate(x[.., o : o + r]), pass-through elements of x) -> one
/// rotation of x with `dims = r, offset = o` (partial rotary); the rotation
/// is a rope.rotate or a rope.rotate_with_tables.
class RaisePartialRotation final : public RewritePattern {
public:
  RaisePartialRotation(StringRef rootName, MLIRContext *ctx)
      : RewritePattern(rootName, /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "expected one result");
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || type.getRank() < 2 ||
        ShapedType::isDynamic(type.getShape().back()) ||
        type.getShape().back() > kMaxHeadDim)
      return rewriter.notifyMatchFailure(op, "head dim not static");
    // Frontends join the rotated part directly (or insert it into an empty
    // tensor that the pass-through part is then inserted into); this keeps
    // the element-wise scan below off the many joins that are not rotations.
    if (!joinsRotation(op, /*depth=*/2))
      return rewriter.notifyMatchFailure(op, "no rotation operand");
    int64_t headDim = type.getShape().back();

    // The rotation and where its elements land in the head.
    int64_t offset = 0;
    Operation *rotation =
        findRotationInHead(identityTerm(op->getResult(0)), headDim, offset);
    if (!rotation)
      return rewriter.notifyMatchFailure(op, "no rotation inside");
    Value rotationInput = rotation->getOperand(0);
    auto rotatedType = cast<RankedTensorType>(rotationInput.getType());
    int64_t rotatedDim = rotatedType.getShape().back();
    if (rotatedType.getRank() != type.getRank() || offset < 0 ||
        offset + rotatedDim > headDim || rotatedDim == headDim)
      return rewriter.notifyMatchFailure(op, "rotation does not fit the head");

    Value input = findFullInput(rotationInput, type);
    if (!input)
      return rewriter.notifyMatchFailure(op, "rotated slice of what?");
    if (failed(matchPartialElements(rewriter, op, rotation, input, offset,
                                    rotatedDim, headDim)))
      return failure();
    replaceWithPartialRotation(rewriter, op, rotation, input, offset,
                               rotatedDim);
    return success();
  }
};

} // namespace

namespace {

/// A size taken of a raised rotation is the size of its input (a rotation
/// keeps the shape). At a dynamic length, torch-mlir takes the sizes of the
/// tensors it computes; a rotation raised in a partial one's place would
/// otherwise be kept alive by them after it was folded away.
struct DimOfRotation : public OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::DimOp dim,
                                PatternRewriter &rewriter) const override {
    Operation *def = dim.getSource().getDefiningOp();
    Value input = def ? getRotationInput(def) : Value();
    if (!input)
      return rewriter.notifyMatchFailure(dim, "not a size of a rotation");
    rewriter.modifyOpInPlace(dim,
                             [&] { dim.getSourceMutable().assign(input); });
    return success();
  }
};

} // namespace

void mlir::rope::populateRaiseRotaryPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  // The ops frontends end a rotation with: the final addition (or
  // subtraction, for the inverse), a reshape of it (elementwise fusion moves
  // reshapes past the arithmetic, e.g. the [.., h, 2] -> [.., D] of an
  // interleaved rotation), and the concatenation of a partial one.
  for (StringRef root :
       {arith::AddFOp::getOperationName(), arith::SubFOp::getOperationName(),
        linalg::GenericOp::getOperationName(),
        linalg::AddOp::getOperationName(), linalg::SubOp::getOperationName(),
        linalg::ElementwiseOp::getOperationName(),
        linalg::MapOp::getOperationName(), tosa::AddOp::getOperationName(),
        tosa::SubOp::getOperationName(),
        tensor::CollapseShapeOp::getOperationName(),
        tensor::ExpandShapeOp::getOperationName(),
        tosa::ReshapeOp::getOperationName()}) {
    patterns.add<RaiseHalfRotation>(root, ctx);
    patterns.add<RaiseInterleavedRotation>(root, ctx);
  }
  for (StringRef root : {tensor::ConcatOp::getOperationName(),
                         tensor::InsertSliceOp::getOperationName(),
                         tosa::ConcatOp::getOperationName()})
    patterns.add<RaisePartialRotation>(root, ctx);
  patterns.add<DimOfRotation>(ctx);
}
