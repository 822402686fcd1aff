//===- ExtentRelations.cpp - shape rules checked statically or at run time ===//

#include "rope/Dialect/Rope/IR/ExtentRelations.h"

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::rope;

int64_t Extent::getStatic() const {
  if (!value)
    return dim;
  return cast<RankedTensorType>(value.getType()).getDimSize(dim);
}

Value Extent::materialize(OpBuilder &b, Location loc) const {
  int64_t extent = getStatic();
  if (!ShapedType::isDynamic(extent))
    return arith::ConstantIndexOp::create(b, loc, extent);
  // Read through a producer that knows its result shapes, so that a check
  // adds no use to the producer's result (a rotation feeding attention must
  // keep attention as its only user for the fold into Q·Kᵀ).
  if (auto result = dyn_cast<OpResult>(value))
    if (auto producer =
            dyn_cast<ReifyRankedShapedTypeOpInterface>(result.getOwner())) {
      ReifiedRankedShapedTypeDims reified;
      if (succeeded(producer.reifyResultShapes(b, reified)))
        return getValueOrCreateConstantIndexOp(
            b, loc, reified[result.getResultNumber()][dim]);
    }
  return b.createOrFold<tensor::DimOp>(loc, value, dim);
}

/// `message` with `{0}` and `{1}` replaced by the two extents.
static std::string substitute(StringRef message, int64_t actual,
                              int64_t expected) {
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    if (message[i] == '{' && i + 2 < message.size() && message[i + 2] == '}' &&
        (message[i + 1] == '0' || message[i + 1] == '1')) {
      out += std::to_string(message[i + 1] == '0' ? actual : expected);
      i += 2;
      continue;
    }
    out += message[i];
  }
  return out;
}

LogicalResult
mlir::rope::verifyStaticExtentRelations(Operation *op,
                                        ArrayRef<ExtentRelation> relations) {
  for (const ExtentRelation &relation : relations) {
    int64_t actual = relation.actual.getStatic();
    int64_t expected = relation.expected.getStatic();
    if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(expected))
      continue;
    if (actual == expected || (relation.broadcast && actual == 1))
      continue;
    return op->emitOpError() << substitute(relation.message, actual, expected);
  }
  return success();
}

std::string mlir::rope::formatRuntimeLocation(Location loc) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
  else
    os << loc;
  return out;
}

std::string mlir::rope::formatRuntimeDiagnostic(Operation *op,
                                                StringRef message) {
  return (formatRuntimeLocation(op->getLoc()) + ": error: '" +
          op->getName().getStringRef() + "' op " + message)
      .str();
}

/// Asserts that `relation` holds when one of its extents is dynamic.
static void buildRelationCheck(
    Operation *op, const ExtentRelation &relation, OpBuilder &b, Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage) {
  int64_t staticActual = relation.actual.getStatic();
  int64_t staticExpected = relation.expected.getStatic();
  // Fully static relations are the verifier's; a static 1 always broadcasts.
  if (!ShapedType::isDynamic(staticActual) &&
      !ShapedType::isDynamic(staticExpected))
    return;
  if (relation.broadcast && staticActual == 1)
    return;
  // A dynamic extent never broadcasts (see ExtentRelation), so it must be
  // the expected one; say why when it is 1.
  std::string message = relation.message;
  if (relation.broadcast && ShapedType::isDynamic(staticActual))
    message += " (only a static 1 broadcasts; this dim is dynamic)";
  Value actual = relation.actual.materialize(b, loc);
  Value expected = relation.expected.materialize(b, loc);
  Value holds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, actual,
                                      expected);
  AssertOp::create(b, loc, holds, generateErrorMessage(op, message),
                   ValueRange{actual, expected});
}

/// Asserts that a result of dynamic shape `type` (dims reified in `sizes`)
/// takes at most 2^63 - 1 bytes, so that what allocates it does not wrap.
static void buildByteCountCheck(
    Operation *op, unsigned resultNumber, RankedTensorType type,
    ArrayRef<OpFoldResult> sizes, OpBuilder &b, Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage) {
  if (type.hasStaticShape())
    return;
  unsigned bitWidth = type.getElementType().getIntOrFloatBitWidth();
  uint64_t staticBytes = std::max<unsigned>(bitWidth / 8, 1);
  SmallVector<Value> dynamicSizes;
  std::string shape;
  for (OpFoldResult size : sizes) {
    if (!shape.empty())
      shape += ", ";
    if (auto attr = dyn_cast<Attribute>(size)) {
      int64_t extent = cast<IntegerAttr>(attr).getInt();
      shape += std::to_string(extent);
      // A static product that wraps is the verifier's business; saturate.
      staticBytes = extent == 0 ? 0
                                : (staticBytes > (uint64_t(INT64_MAX) / extent)
                                       ? uint64_t(INT64_MAX) + 1
                                       : staticBytes * extent);
      continue;
    }
    shape += "{" + std::to_string(dynamicSizes.size()) + "}";
    dynamicSizes.push_back(cast<Value>(size));
  }
  if (staticBytes == 0)
    return;
  Type i64 = b.getI64Type();
  Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
  Value product = arith::ConstantIntOp::create(b, loc, i64,
                                               static_cast<int64_t>(staticBytes));
  Value fits = arith::ConstantIntOp::create(
      b, loc, b.getI1Type(), staticBytes <= uint64_t(INT64_MAX) ? 1 : 0);
  Value empty = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  for (Value size : dynamicSizes) {
    Value extent = arith::IndexCastOp::create(b, loc, i64, size);
    empty = arith::OrIOp::create(
        b, loc, empty,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, extent, zero));
    // Unsigned 128-bit product: it fits when the high half is 0 and the low
    // half is non-negative as a signed number.
    auto wide = arith::MulUIExtendedOp::create(b, loc, product, extent);
    Value highZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           wide.getHigh(), zero);
    Value lowFits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          wide.getLow(), zero);
    fits = arith::AndIOp::create(b, loc, fits,
                                 arith::AndIOp::create(b, loc, highZero, lowFits));
    product = wide.getLow();
  }
  Value holds = arith::OrIOp::create(b, loc, fits, empty);
  std::string message = llvm::formatv(
      "expects result #{0} to take at most 2^63 - 1 bytes, got [{1}] "
      "elements of {2} bits",
      resultNumber, shape, bitWidth);
  AssertOp::create(b, loc, holds, generateErrorMessage(op, message),
                   dynamicSizes);
}

/// Whether a result of `type` with extents `sizes` is no larger than one of
/// `op`'s operands (each extent that operand's, elements no wider): the
/// caller's memory already holds that many bytes.
static bool sizedLikeAnOperand(Operation *op, RankedTensorType type,
                               ArrayRef<OpFoldResult> sizes) {
  for (Value operand : op->getOperands()) {
    auto operandType = dyn_cast<RankedTensorType>(operand.getType());
    if (!operandType || operandType.getRank() != type.getRank() ||
        operandType.getElementTypeBitWidth() < type.getElementTypeBitWidth())
      continue;
    bool same = true;
    for (auto [i, size] : llvm::enumerate(sizes)) {
      if (auto attr = dyn_cast<Attribute>(size)) {
        same &= operandType.getDimSize(i) == cast<IntegerAttr>(attr).getInt();
        continue;
      }
      auto dim = cast<Value>(size).getDefiningOp<tensor::DimOp>();
      std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
      same &= dim && dim.getSource() == operand && index == int64_t(i);
    }
    if (same)
      return true;
  }
  return false;
}

void mlir::rope::buildRuntimeChecks(
    Operation *op, ArrayRef<ExtentRelation> relations, OpBuilder &b,
    Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage) {
  for (const ExtentRelation &relation : relations)
    buildRelationCheck(op, relation, b, loc, generateErrorMessage);
  auto shaped = dyn_cast<ReifyRankedShapedTypeOpInterface>(op);
  ReifiedRankedShapedTypeDims reified;
  if (!shaped || failed(shaped.reifyResultShapes(b, reified)))
    return;
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (type && !sizedLikeAnOperand(op, type, reified[i]))
      buildByteCountCheck(op, i, type, reified[i], b, loc,
                          generateErrorMessage);
  }
}
