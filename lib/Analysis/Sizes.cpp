//===- Sizes.cpp - which tensor sizes a program knows to be equal ---------===//

#include "rope/Analysis/Sizes.h"
#include "rope/Analysis/OpClassification.h"
#include "rope/Analysis/Terms.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

namespace mlir::rope::analysis {

namespace {

/// The operand of an integer cast that keeps every size's value (index to
/// and from i64, or a widening): torch-mlir moves sizes between index and
/// i64. Null for other ops; a narrowing cast is not seen through (257 as
/// i8 is 1).
Value throughSizeCast(Operation *def) {
  if (!isa_and_nonnull<arith::IndexCastOp, arith::ExtSIOp>(def) ||
      (bitWidth(def->getResult(0).getType()) <
           bitWidth(def->getOperand(0).getType()) &&
       !def->getResult(0).getType().isIndex()))
    return {};
  return def->getOperand(0);
}

/// The least value `size` can hold: a constant's, or the offset of a dim
/// (dims are never negative); none for an integer this analysis cannot see
/// through.
std::optional<int64_t> lowerBound(const Size &size) {
  if (size.isConstant())
    return size.constant;
  if ((size.tensor && !size.scalar) || size.isDim)
    return size.offset;
  return std::nullopt;
}

/// The side a `select` guarding a size against a negative value takes:
/// `select(x < 0, a, b)` is b when x is a size (torch-mlir's `view` with an
/// inferred dim, or a slice's `end - 1` of a dim plus one), `select(x >= 0,
/// a, b)` is a.
std::optional<Value> decidedSide(arith::SelectOp select,
                                 SameShapeOperand sameShape) {
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || !matchPattern(cmp.getRhs(), m_Zero()))
    return std::nullopt;
  std::optional<int64_t> least =
      lowerBound(sizeOfValue(cmp.getLhs(), sameShape));
  if (!least || *least < 0)
    return std::nullopt;
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::slt:
    return select.getFalseValue();
  case arith::CmpIPredicate::sge:
    return select.getTrueValue();
  default:
    return std::nullopt;
  }
}

/// The size `minsi` or `maxsi` of sizes `a` and `b` holds where the sizes
/// decide it: the same size apart from their offsets, or a constant that
/// bounds the other from the side it is taken from (torch-mlir clamps a
/// slice's start and end to the dim they index: `min(dim + 1, 0)` is 0).
std::optional<Size> sizeOfMinOrMax(Size a, Size b, bool takesMax) {
  if (!a.isConstant() && !b.isConstant() && a.tensor == b.tensor &&
      a.dim == b.dim && a.scalar == b.scalar) {
    a.offset =
        takesMax ? std::max(a.offset, b.offset) : std::min(a.offset, b.offset);
    a.isDim = a.isDim || b.isDim;
    return a;
  }
  for (auto [constant, other] : {std::pair{a, b}, std::pair{b, a}}) {
    std::optional<int64_t> least = lowerBound(other);
    if (!constant.isConstant() || !least || *least < constant.constant)
      continue;
    return takesMax ? other : constant;
  }
  return std::nullopt;
}

/// `def` as an affine.apply of one operand, with `input` the expression
/// its map names that operand by (d0 or s0); null for other ops.
affine::AffineApplyOp applyOfOneOperand(Operation *def, AffineExpr &input) {
  auto apply = dyn_cast_or_null<affine::AffineApplyOp>(def);
  if (!apply || apply.getMapOperands().size() != 1)
    return {};
  AffineMap map = apply.getAffineMap();
  input = map.getNumDims() ? getAffineDimExpr(0, def->getContext())
                           : getAffineSymbolExpr(0, def->getContext());
  return apply;
}

/// For `x + c` (arith.addi or subi of a constant, on index or i64, where
/// sizes never wrap; or an affine.apply of one operand whose map is that
/// operand plus a constant): x, with `offset` increased by c. Null for
/// other ops.
Value throughAddedConstant(Operation *def, int64_t &offset) {
  if (isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def)) {
    Type type = def->getResult(0).getType();
    if (!type.isIndex() && !type.isInteger(64))
      return {};
    bool subtracts = isa<arith::SubIOp>(def);
    APInt c;
    if (matchPattern(def->getOperand(1), m_ConstantInt(&c))) {
      offset += subtracts ? -c.getSExtValue() : c.getSExtValue();
      return def->getOperand(0);
    }
    if (!subtracts && matchPattern(def->getOperand(0), m_ConstantInt(&c))) {
      offset += c.getSExtValue();
      return def->getOperand(1);
    }
    return {};
  }
  AffineExpr input;
  affine::AffineApplyOp apply = applyOfOneOperand(def, input);
  if (!apply)
    return {};
  AffineMap map = apply.getAffineMap();
  auto c = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
      map.getResult(0) - input, map.getNumDims(), map.getNumSymbols()));
  if (!c)
    return {};
  offset += c.getValue();
  return apply.getMapOperands().front();
}

/// The factor y of `value` = y·c (arith.muli by the constant c, either
/// side, or an affine.apply of one operand whose map is that operand times
/// c), through size casts; null otherwise.
Value factorOfProduct(Value value, int64_t c) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    Operation *def = value.getDefiningOp();
    if (Value operand = throughSizeCast(def)) {
      value = operand;
      continue;
    }
    if (isa_and_nonnull<arith::MulIOp>(def)) {
      APInt k;
      for (unsigned side : {0u, 1u})
        if (matchPattern(def->getOperand(side), m_ConstantInt(&k)) &&
            k.getSExtValue() == c)
          return def->getOperand(1 - side);
      return {};
    }
    AffineExpr input;
    affine::AffineApplyOp apply = applyOfOneOperand(def, input);
    if (!apply || apply.getAffineMap().getResult(0) != input * c)
      return {};
    return apply.getMapOperands().front();
  }
  return {};
}

/// For `(y·c) / c` (arith.divsi, divui, floordivsi or ceildivsi of a
/// product by the same constant c > 0: exact, sizes never wrap): y, as
/// torch-mlir spells a batch B back out of the B·H it collapsed. Null for
/// other ops.
Value throughExactQuotient(Operation *def) {
  if (!isa_and_nonnull<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp,
                       arith::CeilDivSIOp>(def))
    return {};
  Type type = def->getResult(0).getType();
  APInt c;
  if ((!type.isIndex() && !type.isInteger(64)) ||
      !matchPattern(def->getOperand(1), m_ConstantInt(&c)) ||
      !c.isStrictlyPositive())
    return {};
  return factorOfProduct(def->getOperand(0), c.getSExtValue());
}

/// `size` plus `delta`.
Size plus(Size size, int64_t delta) {
  if (size.isConstant())
    size.constant += delta;
  else
    size.offset += delta;
  return size;
}

/// Dim `dim` of `tensor` as the canonical form of a size not followed
/// further.
Size unfollowedDim(Value tensor, int64_t dim) {
  return Size{ShapedType::kDynamic, tensor, dim, {}};
}

/// Where one step back from a dynamic dim through the op that defines its
/// tensor leads: the size, where the step settles it (an op that states
/// the size, or one not followed further), else a dim of another tensor
/// that has the same size, to follow in turn (the walk is bounded by
/// kMaxViewSteps, so it is a loop rather than a recursion).
struct DimStep {
  std::optional<Size> size;
  Value tensor;
  int64_t dim = 0;

  static DimStep settled(Size size) { return {size, {}, 0}; }
  static DimStep follow(Value tensor, int64_t dim) {
    return {std::nullopt, tensor, dim};
  }
};

/// A collapse keeps a dynamic size only where its group is one dynamic dim
/// among unit dims; a group of several dynamic dims is their product, which
/// no canonical form holds.
DimStep stepBackThroughCollapse(tensor::CollapseShapeOp collapse, int64_t dim) {
  ReassociationIndices group = collapse.getReassociationIndices()[dim];
  ArrayRef<int64_t> source = collapse.getSrcType().getShape();
  auto dynamic =
      llvm::make_filter_range(group, [&](int64_t d) { return source[d] != 1; });
  if (llvm::range_size(dynamic) != 1)
    return DimStep::settled(unfollowedDim(collapse.getResult(), dim));
  return DimStep::follow(collapse.getSrc(), *dynamic.begin());
}

/// Along another dim every input has the result's size; along the
/// concatenated one, the sum: one dynamic input (a KV cache) plus static
/// ones (the new keys) is that input's size plus a constant.
DimStep stepBackThroughConcat(tensor::ConcatOp concat, int64_t dim,
                              SameShapeOperand sameShape) {
  if (static_cast<int64_t>(concat.getDim()) != dim)
    return DimStep::follow(concat.getInputs().front(), dim);
  Value dynamicInput;
  int64_t known = 0;
  for (Value input : concat.getInputs()) {
    auto inputType = cast<RankedTensorType>(input.getType());
    if (!inputType.isDynamicDim(dim)) {
      known += inputType.getDimSize(dim);
      continue;
    }
    if (dynamicInput)
      return DimStep::settled(unfollowedDim(concat.getResult(), dim));
    dynamicInput = input;
  }
  if (!dynamicInput)
    return DimStep::settled(Size{known, {}, 0, {}});
  return DimStep::settled(plus(sizeOfDim(dynamicInput, dim, sameShape), known));
}

/// One step back from dynamic dim `dim` of `tensor`. Ops that state the
/// size as an operand settle it as that operand's size; ops whose result
/// has an operand's shape lead to that operand.
DimStep stepBackFromDim(Value tensor, int64_t dim, SameShapeOperand sameShape) {
  DimStep unfollowed = DimStep::settled(unfollowedDim(tensor, dim));
  Operation *def = tensor.getDefiningOp();
  if (!def)
    return unfollowed;
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return DimStep::settled(sizeOfValue(empty.getDynamicSize(dim), sameShape));
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    if (auto v = dyn_cast<Value>(expand.getMixedOutputShape()[dim]))
      return DimStep::settled(sizeOfValue(v, sameShape));
    return unfollowed;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
    return stepBackThroughCollapse(collapse, dim);
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    // A rank-reducing slice numbers its dims apart from its sizes.
    if (slice.getSourceType().getRank() != slice.getType().getRank())
      return unfollowed;
    if (auto v = dyn_cast<Value>(slice.getMixedSizes()[dim]))
      return DimStep::settled(sizeOfValue(v, sameShape));
    return unfollowed;
  }
  if (auto cast = dyn_cast<tensor::CastOp>(def))
    return DimStep::follow(cast.getSource(), dim);
  if (auto concat = dyn_cast<tensor::ConcatOp>(def))
    return stepBackThroughConcat(concat, dim, sameShape);
  if (auto reshape = dyn_cast<tensor::ReshapeOp>(def)) {
    auto shape = reshape.getShape().getDefiningOp<tensor::FromElementsOp>();
    if (!shape)
      return unfollowed;
    return DimStep::settled(sizeOfValue(shape.getElements()[dim], sameShape));
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    return DimStep::follow(dps.getTiedOpOperand(cast<OpResult>(tensor))->get(),
                           dim);
  if (Value operand = sameShape ? sameShape(def) : Value())
    return DimStep::follow(operand, dim);
  return unfollowed;
}

} // namespace

Size sizeOfValue(Value value, SameShapeOperand sameShape) {
  // What the steps so far added to the size of `value`.
  int64_t offset = 0;
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    APInt constant;
    if (matchPattern(value, m_ConstantInt(&constant)))
      return Size{constant.getSExtValue() + offset, {}, 0, {}};
    Operation *def = value.getDefiningOp();
    if (Value operand = throughSizeCast(def)) {
      value = operand;
      continue;
    }
    if (Value operand = throughAddedConstant(def, offset)) {
      value = operand;
      continue;
    }
    if (Value operand = throughExactQuotient(def)) {
      value = operand;
      continue;
    }
    if (auto dim = dyn_cast_or_null<tensor::DimOp>(def)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        break;
      return plus(sizeOfDim(dim.getSource(), *index, sameShape), offset);
    }
    if (auto select = dyn_cast_or_null<arith::SelectOp>(def)) {
      if (std::optional<Value> side = decidedSide(select, sameShape)) {
        value = *side;
        continue;
      }
      Size a = sizeOfValue(select.getTrueValue(), sameShape);
      if (a == sizeOfValue(select.getFalseValue(), sameShape))
        return plus(a, offset);
    }
    if (isa_and_nonnull<arith::MinSIOp, arith::MaxSIOp>(def)) {
      if (std::optional<Size> bound =
              sizeOfMinOrMax(sizeOfValue(def->getOperand(0), sameShape),
                             sizeOfValue(def->getOperand(1), sameShape),
                             isa<arith::MaxSIOp>(def)))
        return plus(*bound, offset);
    }
    // x ± y where y is a size computed to a constant (a clamped start).
    if (isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def) &&
        (def->getResult(0).getType().isIndex() ||
         def->getResult(0).getType().isInteger(64))) {
      Size y = sizeOfValue(def->getOperand(1), sameShape);
      if (y.isConstant()) {
        offset += isa<arith::SubIOp>(def) ? -y.constant : y.constant;
        value = def->getOperand(0);
        continue;
      }
    }
    break;
  }
  return Size{ShapedType::kDynamic, {}, 0, value, offset};
}

Size sizeOfDim(Value tensor, int64_t dim, SameShapeOperand sameShape) {
  auto asDim = [](Size size) {
    size.isDim = true;
    return size;
  };
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    // An unranked tensor or a dim out of range (valid IR; undefined only
    // when run) has no size to follow.
    auto type = dyn_cast<RankedTensorType>(tensor.getType());
    if (!type || dim < 0 || dim >= type.getRank())
      return asDim(unfollowedDim(tensor, dim));
    if (!type.isDynamicDim(dim))
      return asDim(Size{type.getDimSize(dim), {}, 0, {}});
    DimStep next = stepBackFromDim(tensor, dim, sameShape);
    if (next.size)
      return asDim(*next.size);
    tensor = next.tensor;
    dim = next.dim;
  }
  return asDim(unfollowedDim(tensor, dim));
}

} // namespace mlir::rope::analysis
