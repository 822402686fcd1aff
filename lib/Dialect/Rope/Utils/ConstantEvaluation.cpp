//===- ConstantEvaluation.cpp - constants and constant subgraphs ----------===//

#include "rope/Dialect/Rope/Utils/ConstantEvaluation.h"
#include "rope/Dialect/Rope/Utils/OpClassification.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include <cmath>

using namespace mlir;

namespace mlir::rope::raising {

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
  uint64_t flat = 0;
  if (!elements.isSplat()) {
    SmallVector<uint64_t> index;
    for (AffineExpr result : map.getResults()) {
      auto constant = dyn_cast<AffineConstantExpr>(result);
      if (!constant)
        return std::nullopt;
      index.push_back(constant.getValue());
    }
    if (!elements.isValidIndex(index))
      return std::nullopt;
    flat = elements.getFlattenedIndex(index);
  }
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

} // namespace mlir::rope::raising
