//===- TestAnalysis.cpp - what lib/Analysis says, as remarks --------------===//
//
// --rope-test-analysis: lib/Analysis has no pass of its own (raising and
// fusion read frontend IR through it), so this testing aid states what its
// entry points say of the ops a lit test tags, one remark per analysis
// (`test.constant`, `test.symbolic`, `test.sizes`, `test.classify`, or
// `test.analyze` for all four). Elements are read as the matchers read
// them: a tensor at its own index space, a scalar of a linalg body at the
// op's loops. Where a static space is small, values are listed point by
// point, so that a test checks what a formula or a constant means rather
// than how it is spelled (formulas have no printed form of their own).
//
//===----------------------------------------------------------------------===//

#include "RopeTestPasses.h"

#include "rope/Analysis/ConstantEvaluation.h"
#include "rope/Analysis/OpClassification.h"
#include "rope/Analysis/Sizes.h"
#include "rope/Analysis/SymbolicEvaluation.h"
#include "rope/Analysis/Terms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>

namespace mlir::rope::test {
#define GEN_PASS_DECL_ROPETESTANALYSIS
#define GEN_PASS_DEF_ROPETESTANALYSIS
#include "TestPasses.h.inc"
} // namespace mlir::rope::test

using namespace mlir;
using namespace mlir::rope::analysis;

namespace {

/// Spaces with more points than this are not listed point by point (a
/// remark per test case should fit on a line).
constexpr int64_t kMaxListedPoints = 64;

/// The tags, each naming the analysis it asks for.
constexpr StringLiteral kConstant = "test.constant";
constexpr StringLiteral kSymbolic = "test.symbolic";
constexpr StringLiteral kSizes = "test.sizes";
constexpr StringLiteral kClassify = "test.classify";
constexpr StringLiteral kAll = "test.analyze";

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// `value` as its operand name, numbered within its function as the
/// printer numbers it, so that a test names it as the output does.
std::string nameOf(Value value) {
  std::string name;
  llvm::raw_string_ostream os(name);
  value.printAsOperand(os, OpPrintingFlags().useLocalScope());
  return name;
}

/// A value an analysis computed in f64, as the element type `type` holds
/// it: integers (indices, truth values) as integers, floats with the fewest
/// digits that read back as the same number of their own precision (so an
/// f32 0.1 prints as 0.1, not as the f64 it widens to).
std::string formatNumber(double value, Type type) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  if (value == std::trunc(value) && std::abs(value) < 0x1p53)
    return std::to_string(static_cast<int64_t>(value));
  const llvm::fltSemantics *semantics = &APFloat::IEEEdouble();
  if (auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type)))
    semantics = &floatType.getFloatSemantics();
  APFloat number(value);
  bool losesInfo;
  number.convert(*semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  std::string text;
  for (int digits = 1; digits <= 17; ++digits) {
    text.clear();
    llvm::raw_string_ostream os(text);
    os << llvm::format("%.*g", digits, value);
    APFloat parsed(*semantics);
    llvm::Expected<APFloat::opStatus> status =
        parsed.convertFromString(text, APFloat::rmNearestTiesToEven);
    if (!status) {
      llvm::consumeError(status.takeError());
      continue;
    }
    if (parsed.bitwiseIsEqual(number))
      break;
  }
  return text;
}

void printTerm(raw_ostream &os, const Term &t) {
  os << nameOf(t.value);
  if (t.map.getNumResults() == 0)
    return;
  os << "[";
  llvm::interleaveComma(t.map.getResults(), os,
                        [&](AffineExpr e) { e.print(os); });
  os << "]";
}

void printSize(raw_ostream &os, const Size &size) {
  if (size.isConstant()) {
    os << size.constant;
    return;
  }
  if (size.tensor)
    os << "dim " << size.dim << " of " << nameOf(size.tensor);
  else if (size.scalar)
    os << nameOf(size.scalar);
  else
    os << "?";
  if (size.offset > 0)
    os << " + " << size.offset;
  else if (size.offset < 0)
    os << " - " << -size.offset;
}

StringRef kindName(Kind kind) {
  switch (kind) {
  case Kind::Add:
    return "add";
  case Kind::Sub:
    return "sub";
  case Kind::Mul:
    return "mul";
  case Kind::Div:
    return "div";
  case Kind::Neg:
    return "neg";
  case Kind::Cos:
    return "cos";
  case Kind::Sin:
    return "sin";
  case Kind::Exp:
    return "exp";
  case Kind::Pow:
    return "pow";
  case Kind::Reciprocal:
    return "reciprocal";
  case Kind::IntToFloat:
    return "int-to-float";
  case Kind::IntExtend:
    return "int-extend";
  case Kind::FloatCast:
    return "float-cast";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Iteration spaces
//===----------------------------------------------------------------------===//

/// The linalg op whose body holds `value`, if any: its loops index the
/// value, and a `linalg.index` behind it reads one of them.
linalg::LinalgOp enclosingLinalgOp(Value value) {
  Operation *parent = value.getParentRegion()->getParentOp();
  if (!parent)
    return {};
  if (auto op = dyn_cast<linalg::LinalgOp>(parent))
    return op;
  return parent->getParentOfType<linalg::LinalgOp>();
}

/// `value` read at the iteration point, as the matchers read it; none for
/// a value that no term describes (an unranked tensor, a memref, a vector).
std::optional<Term> termAtThePoint(Value value) {
  Type type = value.getType();
  if (isa<RankedTensorType>(type))
    return identityTerm(value);
  if (!isa<IntegerType, IndexType, FloatType>(type))
    return std::nullopt;
  MLIRContext *ctx = value.getContext();
  linalg::LinalgOp op = enclosingLinalgOp(value);
  if (!op)
    return makeTerm(value, AffineMap::get(0, 0, {}, ctx));
  Term t =
      makeTerm(value, AffineMap::getMultiDimIdentityMap(op.getNumLoops(), ctx));
  t.extents = op.getStaticLoopRanges();
  return t;
}

/// The points of the iteration space of `space`, row-major, when it has at
/// least one dim, all static, and at most kMaxListedPoints points.
std::optional<SmallVector<SmallVector<int64_t>>>
listedPoints(const Term &space) {
  ArrayRef<int64_t> extents = space.extents;
  if (extents.empty() || extents.size() != space.map.getNumDims())
    return std::nullopt;
  int64_t count = 1;
  for (int64_t extent : extents) {
    if (ShapedType::isDynamic(extent) || extent < 1)
      return std::nullopt;
    count *= extent;
    if (count > kMaxListedPoints)
      return std::nullopt;
  }
  SmallVector<SmallVector<int64_t>> points;
  for (int64_t flat = 0; flat < count; ++flat) {
    SmallVector<int64_t> point(extents.size());
    int64_t rest = flat;
    for (int64_t d = static_cast<int64_t>(extents.size()) - 1; d >= 0; --d) {
      point[d] = rest % extents[d];
      rest /= extents[d];
    }
    points.push_back(std::move(point));
  }
  return points;
}

/// `space` read at the one point `point`.
Term termAt(const Term &space, ArrayRef<int64_t> point) {
  MLIRContext *ctx = space.map.getContext();
  SmallVector<AffineExpr> constants;
  for (int64_t coordinate : point)
    constants.push_back(getAffineConstantExpr(coordinate, ctx));
  AffineMap map =
      space.map.replaceDimsAndSymbols(constants, {}, point.size(), 0);
  return makeTerm(space.value, map, space);
}

/// `text(i)` for each listed point, nested by dims as a tensor prints.
void printPointwise(raw_ostream &os, ArrayRef<int64_t> extents, size_t count,
                    function_ref<std::string(size_t)> text) {
  size_t next = 0;
  std::function<void(size_t)> printDim = [&](size_t dim) {
    os << "[";
    for (int64_t i = 0; i < extents[dim]; ++i) {
      if (i)
        os << ", ";
      if (dim + 1 == extents.size())
        os << text(next++);
      else
        printDim(dim + 1);
    }
    os << "]";
  };
  printDim(0);
  assert(next == count && "one text per point");
  (void)count;
}

//===----------------------------------------------------------------------===//
// The analyses
//===----------------------------------------------------------------------===//

void reportConstant(raw_ostream &os, std::optional<Term> t) {
  os << "constant: ";
  if (!t) {
    os << "none";
    return;
  }
  Type type = t->value.getType();
  if (std::optional<double> value = evaluate(*t)) {
    os << formatNumber(*value, type);
    return;
  }
  std::optional<SmallVector<SmallVector<int64_t>>> points = listedPoints(*t);
  if (!points) {
    os << "none";
    return;
  }
  SmallVector<std::optional<double>> values;
  for (ArrayRef<int64_t> point : *points)
    values.push_back(evaluate(termAt(*t, point)));
  if (llvm::none_of(values, [](auto v) { return v.has_value(); })) {
    os << "none";
    return;
  }
  os << "elements ";
  printPointwise(os, t->extents, values.size(), [&](size_t i) {
    return values[i] ? formatNumber(*values[i], type) : std::string("?");
  });
}

/// The integer `e` takes at `point`, 0 where it is not a constant there
/// (it has no symbols, so it always is).
int64_t valueAt(AffineExpr e, ArrayRef<int64_t> point) {
  MLIRContext *ctx = e.getContext();
  SmallVector<AffineExpr> constants;
  for (int64_t coordinate : point)
    constants.push_back(getAffineConstantExpr(coordinate, ctx));
  auto folded = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
      e.replaceDimsAndSymbols(constants, {}), point.size(), 0));
  return folded ? folded.getValue() : 0;
}

std::string formatPiece(const Piece &piece, Type type) {
  if (!piece.affine)
    return formatNumber(piece.constant, type);
  std::string text;
  llvm::raw_string_ostream os(text);
  piece.affine->print(os);
  return text;
}

void reportSymbolic(raw_ostream &os, std::optional<Term> t) {
  os << "symbolic: ";
  SmallVector<Term> opaque;
  std::optional<SmallVector<Piece>> pieces;
  if (t)
    pieces = evaluateSymbolically(*t, &opaque);
  if (!pieces) {
    os << "none";
    return;
  }
  Type type = t->value.getType();
  os << pieces->size() << (pieces->size() == 1 ? " piece" : " pieces")
     << ", values [";
  llvm::interleaveComma(
      *pieces, os, [&](const Piece &piece) { os << formatPiece(piece, type); });
  os << "]";
  if (!opaque.empty()) {
    // The value at a point depends on the data: say what it reads.
    os << ", opaque reads [";
    llvm::interleaveComma(opaque, os,
                          [&](const Term &read) { printTerm(os, read); });
    os << "]";
    return;
  }
  std::optional<SmallVector<SmallVector<int64_t>>> points = listedPoints(*t);
  if (!points)
    return;
  os << ", at points ";
  printPointwise(os, t->extents, points->size(), [&](size_t i) {
    ArrayRef<int64_t> point = (*points)[i];
    auto at = [&](AffineExpr e) { return valueAt(e, point); };
    for (const Piece &piece : *pieces) {
      if (!piece.when.holds(at))
        continue;
      return piece.affine ? std::to_string(at(*piece.affine))
                          : formatNumber(piece.constant, type);
    }
    return std::string("?");
  });
}

void reportSizes(raw_ostream &os, Value value) {
  Type type = value.getType();
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    os << "sizes: [";
    llvm::interleaveComma(
        llvm::seq<int64_t>(0, tensor.getRank()), os,
        [&](int64_t d) { printSize(os, sizeOfDim(value, d)); });
    os << "]";
    return;
  }
  if (isa<IntegerType, IndexType>(type)) {
    os << "size: ";
    printSize(os, sizeOfValue(value));
    return;
  }
  os << "sizes: none";
}

/// The computation or the views that define the element `t` reads.
void printClassification(raw_ostream &os, std::optional<Term> t) {
  if (!t) {
    os << "none";
    return;
  }
  if (std::optional<Computation> c = classify(*t)) {
    os << kindName(c->kind) << "(";
    llvm::interleaveComma(c->operands, os,
                          [&](const Term &operand) { printTerm(os, operand); });
    os << ")";
    return;
  }
  std::optional<Term> next = stepView(*t);
  if (!next) {
    os << "none";
    return;
  }
  os << "view of ";
  printTerm(os, *next);
  Term end = peelViews(*next);
  if (end != *next) {
    os << ", reads ";
    printTerm(os, end);
  }
}

void reportClassification(raw_ostream &os, Value value, std::optional<Term> t) {
  os << "classify: ";
  printClassification(os, t);
  if (auto op = value.getDefiningOp<linalg::LinalgOp>())
    if (std::optional<unsigned> loop = getMultiplyAccumulateLoop(op))
      os << ", multiply-accumulate over loop " << *loop;
}

struct RopeTestAnalysisPass
    : public rope::test::impl::RopeTestAnalysisBase<RopeTestAnalysisPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](Operation *op) { report(op); });
  }

  /// The remarks `op`'s tags ask for, in a fixed order.
  void report(Operation *op) {
    bool all = op->hasAttr(kAll);
    bool constant = all || op->hasAttr(kConstant);
    bool symbolic = all || op->hasAttr(kSymbolic);
    bool sizes = all || op->hasAttr(kSizes);
    bool classification = all || op->hasAttr(kClassify);
    if (!constant && !symbolic && !sizes && !classification)
      return;
    if (op->getNumResults() == 0) {
      op->emitRemark() << "nothing to analyze: no results";
      return;
    }
    for (OpResult result : op->getResults()) {
      std::optional<Term> t = termAtThePoint(result);
      auto remark = [&](function_ref<void(raw_ostream &)> print) {
        std::string text;
        llvm::raw_string_ostream os(text);
        if (op->getNumResults() > 1)
          os << "result #" << result.getResultNumber() << ": ";
        print(os);
        op->emitRemark() << text;
      };
      if (constant)
        remark([&](raw_ostream &os) { reportConstant(os, t); });
      if (symbolic)
        remark([&](raw_ostream &os) { reportSymbolic(os, t); });
      if (sizes)
        remark([&](raw_ostream &os) { reportSizes(os, result); });
      if (classification)
        remark([&](raw_ostream &os) { reportClassification(os, result, t); });
    }
  }
};

} // namespace

void mlir::rope::test::registerTestAnalysisPass() {
  registerPass([] { return createRopeTestAnalysis(); });
}
