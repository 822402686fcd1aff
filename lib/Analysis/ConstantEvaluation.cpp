//===- ConstantEvaluation.cpp - constants and constant subgraphs ----------===//

#include "rope/Analysis/ConstantEvaluation.h"
#include "rope/Analysis/OpClassification.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>

using namespace mlir;

namespace mlir::rope::analysis {

/// Bound on the depth of the subgraph behind an evaluated element; real
/// frequency computations are a few ops deep.
static constexpr unsigned kMaxEvaluationDepth = 32;

//===----------------------------------------------------------------------===//
// Reading constants
//===----------------------------------------------------------------------===//

double toDouble(APFloat value) {
  bool losesInfo;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

bool isZeroConstant(Value v) {
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  if (auto elements = dyn_cast<DenseElementsAttr>(attr)) {
    if (elements.getElementType().isIntOrIndex())
      return llvm::all_of(elements.getValues<APInt>(),
                          [](const APInt &x) { return x.isZero(); });
    return llvm::all_of(elements.getValues<APFloat>(),
                        [](const APFloat &x) { return x.isZero(); });
  }
  return false;
}

std::optional<SmallVector<int64_t>> constantIndices(Value v) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  return llvm::to_vector(
      llvm::map_range(attr.getValues<APInt>(),
                      [](const APInt &x) { return x.getSExtValue(); }));
}

std::optional<double> readConstant(Attribute attr, AffineMap map) {
  if (auto value = dyn_cast<FloatAttr>(attr))
    return value.getValueAsDouble();
  if (auto value = dyn_cast<IntegerAttr>(attr))
    return static_cast<double>(value.getValue().getSExtValue());
  auto elements = dyn_cast<ElementsAttr>(attr);
  if (!elements)
    return std::nullopt;
  auto at = [&](uint64_t flat) -> std::optional<double> {
    if (auto it = elements.try_value_begin<APFloat>())
      return toDouble(*std::next(*it, flat));
    if (auto it = elements.try_value_begin<APInt>())
      return static_cast<double>((*std::next(*it, flat)).getSExtValue());
    // Blobs, as torch-mlir exports a model's constants (`dense_resource`).
    auto fromBlob = [&](auto resource) -> std::optional<double> {
      auto values = resource.tryGetAsArrayRef();
      if (!values || flat >= values->size())
        return std::nullopt;
      return static_cast<double>((*values)[flat]);
    };
    if (auto f32 = dyn_cast<DenseF32ResourceElementsAttr>(attr))
      return fromBlob(f32);
    if (auto f64 = dyn_cast<DenseF64ResourceElementsAttr>(attr))
      return fromBlob(f64);
    return std::nullopt;
  };
  if (elements.isSplat())
    return at(0);
  // Indices that vary (not constant) must not change the value: a constant
  // that repeats one row along a dim (torch-mlir's tosa export spells an
  // `arange` column index as a [1, S, W, 1] constant) reads the same at
  // every index of that dim. Checked over up to kMaxVariedElements reads.
  constexpr int64_t kMaxVariedElements = 1 << 12;
  ArrayRef<int64_t> shape = elements.getShapedType().getShape();
  SmallVector<uint64_t> index;
  SmallVector<unsigned> varied;
  int64_t reads = 1;
  for (auto [dim, result] : llvm::enumerate(map.getResults())) {
    auto constant = dyn_cast<AffineConstantExpr>(result);
    index.push_back(constant ? constant.getValue() : 0);
    if (!constant) {
      varied.push_back(dim);
      reads *= shape[dim];
    }
  }
  if (!elements.isValidIndex(index) || reads > kMaxVariedElements)
    return std::nullopt;
  std::optional<double> value = at(elements.getFlattenedIndex(index));
  for (int64_t read = 1; value && read < reads; ++read) {
    int64_t rest = read;
    for (unsigned dim : llvm::reverse(varied)) {
      index[dim] = rest % shape[dim];
      rest /= shape[dim];
    }
    if (at(elements.getFlattenedIndex(index)) != value)
      return std::nullopt;
  }
  return value;
}

//===----------------------------------------------------------------------===//
// Compile-time evaluation
//===----------------------------------------------------------------------===//

/// `v` rounded to the float type `type` (the precision the program holds
/// it in); other types leave it alone.
static double roundTo(double v, Type type) {
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  if (!floatType)
    return v;
  APFloat value(v);
  bool losesInfo;
  value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

static std::optional<double> evaluateAtDepth(Term t, unsigned depth);

/// The value of a comparison, a logical or integer operation or a select
/// that defines `t` (the ops masks are built from: iota compares, `triu`,
/// `where`), with its operands evaluated `depth` below; a select evaluates
/// only the side it picks. None for other ops.
static std::optional<double> evaluateLogic(Operation *def, Term t,
                                           unsigned depth) {
  // Every rule below reads operand 0 (a call or tensor.empty has none).
  if (def->getNumOperands() == 0)
    return std::nullopt;
  auto operand = [&](unsigned i) {
    return evaluateAtDepth(makeTerm(def->getOperand(i), t.map, t), depth + 1);
  };
  if (isa<arith::SelectOp, tosa::SelectOp>(def)) {
    std::optional<double> condition = operand(0);
    if (!condition)
      return std::nullopt;
    return operand(*condition != 0 ? 1 : 2);
  }
  if (isa<arith::ExtUIOp>(def) && def->getOperand(0).getType().isInteger(1))
    return operand(0);
  // Integer narrowing (torch's tosa export narrows i64 indices to i32):
  // the value wrapped to the narrower width.
  Type from = getElementTypeOrSelf(def->getOperand(0).getType());
  Type to = getElementTypeOrSelf(def->getResult(0).getType());
  if (isa<arith::TruncIOp, tosa::CastOp>(def) && from.isSignlessInteger() &&
      to.isSignlessInteger() && bitWidth(to) > 1 &&
      bitWidth(to) < bitWidth(from)) {
    std::optional<double> a = operand(0);
    if (!a || std::abs(*a) > 0x1p62)
      return std::nullopt;
    APInt wide(64, static_cast<int64_t>(*a), /*isSigned=*/true);
    return static_cast<double>(wide.trunc(bitWidth(to)).getSExtValue());
  }
  if (isa<tosa::LogicalNotOp>(def)) {
    std::optional<double> a = operand(0);
    return a ? std::optional<double>(*a == 0) : std::nullopt;
  }
  if (!isa<arith::CmpIOp, arith::CmpFOp, arith::AndIOp, arith::OrIOp,
           arith::XOrIOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
           tosa::GreaterOp, tosa::GreaterEqualOp, tosa::EqualOp,
           tosa::LogicalAndOp, tosa::LogicalOrOp, tosa::LogicalXorOp>(def))
    return std::nullopt;
  std::optional<double> a = operand(0), b = operand(1);
  if (!a || !b)
    return std::nullopt;
  return llvm::TypeSwitch<Operation *, std::optional<double>>(def)
      .Case([&](arith::CmpIOp op) -> std::optional<double> {
        using P = arith::CmpIPredicate;
        switch (op.getPredicate()) {
        case P::eq: return *a == *b;
        case P::ne: return *a != *b;
        case P::slt: return *a < *b;
        case P::sle: return *a <= *b;
        case P::sgt: return *a > *b;
        case P::sge: return *a >= *b;
        default: return std::nullopt; // unsigned: not an index comparison
        }
      })
      .Case([&](arith::CmpFOp op) -> std::optional<double> {
        using P = arith::CmpFPredicate;
        switch (op.getPredicate()) {
        case P::OEQ: case P::UEQ: return *a == *b;
        case P::ONE: case P::UNE: return *a != *b;
        case P::OLT: case P::ULT: return *a < *b;
        case P::OLE: case P::ULE: return *a <= *b;
        case P::OGT: case P::UGT: return *a > *b;
        case P::OGE: case P::UGE: return *a >= *b;
        default: return std::nullopt;
        }
      })
      .Case([&](tosa::GreaterOp) { return double(*a > *b); })
      .Case([&](tosa::GreaterEqualOp) { return double(*a >= *b); })
      .Case([&](tosa::EqualOp) { return double(*a == *b); })
      .Case<arith::AndIOp, tosa::LogicalAndOp>(
          [&](auto) { return double((*a != 0) && (*b != 0)); })
      .Case<arith::OrIOp, tosa::LogicalOrOp>(
          [&](auto) { return double((*a != 0) || (*b != 0)); })
      .Case<arith::XOrIOp, tosa::LogicalXorOp>(
          [&](auto) { return double((*a != 0) != (*b != 0)); })
      .Case([&](arith::AddIOp) { return *a + *b; })
      .Case([&](arith::SubIOp) { return *a - *b; })
      .Case([&](arith::MulIOp) { return *a * *b; })
      .Default([](Operation *) { return std::nullopt; });
}

/// evaluate(t), `depth` operands below the term it was asked for.
static std::optional<double> evaluateAtDepth(Term t, unsigned depth) {
  if (depth > kMaxEvaluationDepth)
    return std::nullopt;
  t = peelViews(t);
  if (auto index = t.value.getDefiningOp<linalg::IndexOp>()) {
    auto loop = dyn_cast<AffineConstantExpr>(t.map.getResult(index.getDim()));
    if (!loop)
      return std::nullopt;
    return static_cast<double>(loop.getValue());
  }
  Attribute attr;
  if (matchPattern(t.value, m_Constant(&attr)))
    return readConstant(attr, t.map);
  if (Operation *def = t.value.getDefiningOp())
    if (std::optional<double> value = evaluateLogic(def, t, depth))
      return value;
  std::optional<Computation> c = classify(t);
  if (!c)
    return std::nullopt;
  SmallVector<double, 2> args;
  for (Term operand : c->operands) {
    std::optional<double> arg = evaluateAtDepth(operand, depth + 1);
    if (!arg)
      return std::nullopt;
    args.push_back(*arg);
  }
  double result = 0.0;
  switch (c->kind) {
  case Kind::Add:
    result = args[0] + args[1];
    break;
  case Kind::Sub:
    result = args[0] - args[1];
    break;
  case Kind::Mul:
    result = args[0] * args[1];
    break;
  case Kind::Div:
    result = args[0] / args[1];
    break;
  case Kind::Neg:
    result = -args[0];
    break;
  case Kind::Cos:
    result = std::cos(args[0]);
    break;
  case Kind::Sin:
    result = std::sin(args[0]);
    break;
  case Kind::Exp:
    result = std::exp(args[0]);
    break;
  case Kind::Pow:
    result = std::pow(args[0], args[1]);
    break;
  case Kind::Reciprocal:
    result = 1.0 / args[0];
    break;
  case Kind::IntToFloat:
  case Kind::IntExtend:
  case Kind::FloatCast:
    result = args[0];
    break;
  }
  return roundTo(result, t.value.getType());
}

std::optional<double> evaluate(Term t) { return evaluateAtDepth(t, 0); }

} // namespace mlir::rope::analysis
