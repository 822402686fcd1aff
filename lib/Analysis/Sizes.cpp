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

/// Whether `value` is a size (a `tensor.dim`, however it is defined, or a
/// non-negative constant, through widening casts), so that a test of it
/// being negative is false.
bool isNonNegativeSize(Value value) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    APInt constant;
    if (matchPattern(value, m_ConstantInt(&constant)))
      return !constant.isNegative();
    Operation *def = value.getDefiningOp();
    if (isa_and_nonnull<tensor::DimOp>(def))
      return true;
    if (!(value = throughSizeCast(def)))
      return false;
  }
  return false;
}

/// The side a `select` guarding a size against a negative value takes:
/// `select(x < 0, a, b)` is b when x is a size (torch-mlir's `view` with an
/// inferred dim), `select(x >= 0, a, b)` is a.
std::optional<Value> decidedSide(arith::SelectOp select) {
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || !matchPattern(cmp.getRhs(), m_Zero()) ||
      !isNonNegativeSize(cmp.getLhs()))
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
  auto apply = dyn_cast_or_null<affine::AffineApplyOp>(def);
  if (!apply || apply.getMapOperands().size() != 1)
    return {};
  AffineMap map = apply.getAffineMap();
  AffineExpr input = map.getNumDims()
                         ? getAffineDimExpr(0, def->getContext())
                         : getAffineSymbolExpr(0, def->getContext());
  auto c = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
      map.getResult(0) - input, map.getNumDims(), map.getNumSymbols()));
  if (!c)
    return {};
  offset += c.getValue();
  return apply.getMapOperands().front();
}

/// `size` plus `delta`.
Size plus(Size size, int64_t delta) {
  if (size.isConstant())
    size.constant += delta;
  else
    size.offset += delta;
  return size;
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
    if (auto dim = dyn_cast_or_null<tensor::DimOp>(def)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        break;
      return plus(sizeOfDim(dim.getSource(), *index, sameShape), offset);
    }
    if (auto select = dyn_cast_or_null<arith::SelectOp>(def)) {
      if (std::optional<Value> side = decidedSide(select)) {
        value = *side;
        continue;
      }
      Size a = sizeOfValue(select.getTrueValue(), sameShape);
      if (a == sizeOfValue(select.getFalseValue(), sameShape))
        return plus(a, offset);
    }
    break;
  }
  return Size{ShapedType::kDynamic, {}, 0, value, offset};
}

Size sizeOfDim(Value tensor, int64_t dim, SameShapeOperand sameShape) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    // An unranked tensor or a dim out of range (valid IR; undefined only
    // when run) has no size to follow.
    auto type = dyn_cast<RankedTensorType>(tensor.getType());
    if (!type || dim < 0 || dim >= type.getRank())
      return Size{ShapedType::kDynamic, tensor, dim, {}};
    if (!type.isDynamicDim(dim))
      return Size{type.getDimSize(dim), {}, 0, {}};
    Operation *def = tensor.getDefiningOp();
    if (!def)
      break;
    if (auto empty = dyn_cast<tensor::EmptyOp>(def))
      return sizeOfValue(empty.getDynamicSize(dim), sameShape);
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
      OpFoldResult size = expand.getMixedOutputShape()[dim];
      if (auto v = dyn_cast<Value>(size))
        return sizeOfValue(v, sameShape);
      break;
    }
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
      // A group of one dynamic dim among unit dims.
      ReassociationIndices group = collapse.getReassociationIndices()[dim];
      ArrayRef<int64_t> source = collapse.getSrcType().getShape();
      auto dynamic = llvm::make_filter_range(
          group, [&](int64_t d) { return source[d] != 1; });
      if (llvm::range_size(dynamic) != 1)
        break;
      tensor = collapse.getSrc();
      dim = *dynamic.begin();
      continue;
    }
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      if (slice.getSourceType().getRank() != slice.getType().getRank())
        break;
      if (auto v = dyn_cast<Value>(slice.getMixedSizes()[dim]))
        return sizeOfValue(v, sameShape);
      break;
    }
    if (auto cast = dyn_cast<tensor::CastOp>(def)) {
      tensor = cast.getSource();
      continue;
    }
    if (auto concat = dyn_cast<tensor::ConcatOp>(def)) {
      // Along another dim every input has the result's size; along the
      // concatenated one, the sum: one dynamic input (a KV cache) plus
      // static ones (the new keys) is that input's size plus a constant.
      if (static_cast<int64_t>(concat.getDim()) != dim) {
        tensor = concat.getInputs().front();
        continue;
      }
      Value dynamicInput;
      int64_t known = 0;
      for (Value input : concat.getInputs()) {
        auto inputType = cast<RankedTensorType>(input.getType());
        if (!inputType.isDynamicDim(dim)) {
          known += inputType.getDimSize(dim);
          continue;
        }
        if (dynamicInput)
          return Size{ShapedType::kDynamic, tensor, dim, {}};
        dynamicInput = input;
      }
      if (!dynamicInput)
        return Size{known, {}, 0, {}};
      return plus(sizeOfDim(dynamicInput, dim, sameShape), known);
    }
    if (auto reshape = dyn_cast<tensor::ReshapeOp>(def)) {
      auto shape =
          reshape.getShape().getDefiningOp<tensor::FromElementsOp>();
      if (!shape)
        break;
      return sizeOfValue(shape.getElements()[dim], sameShape);
    }
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      tensor = dps.getTiedOpOperand(cast<OpResult>(tensor))->get();
      continue;
    }
    if (Value operand = sameShape ? sameShape(def) : Value()) {
      tensor = operand;
      continue;
    }
    break;
  }
  return Size{ShapedType::kDynamic, tensor, dim, {}};
}

} // namespace mlir::rope::analysis
