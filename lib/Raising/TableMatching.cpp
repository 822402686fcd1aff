//===- TableMatching.cpp - cos/sin tables and positions -------------------===//

#include "rope/Raising/TableMatching.h"
#include "rope/Analysis/ConstantEvaluation.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include <cmath>

using namespace mlir;

namespace mlir::rope::raising {
using namespace mlir::rope::analysis;

//===----------------------------------------------------------------------===//
// Tables of positions times frequencies
//===----------------------------------------------------------------------===//

namespace {

/// `t` through views, float casts and additions of zero (a matmul
/// accumulates into a zero-filled init). A product with one is not peeled:
/// at a single head element, the frequency itself may be 1.
Term peelTrivial(Term t) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    t = peelViews(t);
    std::optional<Computation> c = classify(t);
    if (c && c->kind == Kind::FloatCast) {
      t = c->operands[0];
      continue;
    }
    if (!c || c->kind != Kind::Add)
      return t;
    std::optional<Term> rest;
    for (auto [operand, other] : bothOrders(*c)) {
      if (evaluate(other) == 0.0) {
        rest = operand;
        break;
      }
    }
    if (!rest)
      return t;
    t = *rest;
  }
  return t;
}

/// The integer tensors that `t` reads, along the chain of views and
/// widenings (outermost first), of a type `rope.rotate` accepts.
SmallVector<Term> matchIntegerPositions(Term t) {
  SmallVector<Term> positions;
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    auto type = dyn_cast<RankedTensorType>(t.value.getType());
    if (type && type.getElementType().isSignlessInteger() &&
        llvm::is_contained({16u, 32u, 64u}, bitWidth(type)))
      positions.push_back(t);
    if (std::optional<Term> next = stepView(t)) {
      t = *next;
      continue;
    }
    std::optional<Computation> widen = classify(t);
    if (!widen || widen->kind != Kind::IntExtend)
      break;
    t = widen->operands[0];
  }
  return positions;
}

/// The integer positions that `t` converts to float (see
/// matchIntegerPositions).
SmallVector<Term> matchPositions(Term t) {
  std::optional<Computation> c = classify(peelTrivial(t));
  if (!c || c->kind != Kind::IntToFloat)
    return {};
  return matchIntegerPositions(c->operands[0]);
}

/// An integer index `coefficient · variable + offset`, the variable read
/// from a tensor (no variable: a constant).
struct LinearIndex {
  std::optional<Term> variable;
  int64_t coefficient = 0;
  int64_t offset = 0;
};

/// `t` as a linear function of one integer tensor, through views, integer
/// casts (a narrowing cast of an index is exact wherever the gather it feeds
/// is in bounds), additions, products with constants and sums over a
/// constant number of elements: how torch-mlir's tosa export linearises the
/// index of a gather from a flattened [L·W] cache,
/// `reduce_sum(concat(0, p, column) · strides)`.
std::optional<LinearIndex> matchLinearIndex(Term t, unsigned depth = 0) {
  if (depth > kMaxViewSteps)
    return std::nullopt;
  if (std::optional<double> value = evaluate(t))
    return LinearIndex{std::nullopt, 0, static_cast<int64_t>(*value)};
  t = peelViews(t);
  auto add = [](LinearIndex a, LinearIndex b) -> std::optional<LinearIndex> {
    if (a.variable && b.variable && *a.variable != *b.variable)
      return std::nullopt;
    return LinearIndex{a.variable ? a.variable : b.variable,
                       a.coefficient + b.coefficient, a.offset + b.offset};
  };
  if (auto sum = t.value.getDefiningOp<tosa::ReduceSumOp>()) {
    auto inputType = cast<RankedTensorType>(sum.getInput().getType());
    int64_t extent = inputType.getDimSize(sum.getAxis());
    if (ShapedType::isDynamic(extent) || extent > 16)
      return std::nullopt;
    LinearIndex total;
    for (int64_t k = 0; k < extent; ++k) {
      SmallVector<AffineExpr> indices(t.map.getResults());
      indices[sum.getAxis()] = getAffineConstantExpr(k, t.map.getContext());
      std::optional<LinearIndex> element =
          matchLinearIndex(makeTerm(sum.getInput(),
                                    AffineMap::get(t.map.getNumDims(), 0,
                                                   indices, t.map.getContext()),
                                    t),
                           depth + 1);
      if (!element || !(element = add(total, *element)))
        return std::nullopt;
      total = *element;
    }
    return total;
  }
  auto type = dyn_cast<RankedTensorType>(t.value.getType());
  if (auto cast = t.value.getDefiningOp<tosa::CastOp>();
      cast && type && type.getElementType().isSignlessInteger() &&
      getElementTypeOrSelf(cast.getInput().getType()).isSignlessInteger())
    return matchLinearIndex(makeTerm(cast.getInput(), t.map, t), depth + 1);
  std::optional<Computation> c = classify(t);
  if (c && c->kind == Kind::IntExtend)
    return matchLinearIndex(c->operands[0], depth + 1);
  if (c && c->kind == Kind::Add) {
    std::optional<LinearIndex> a = matchLinearIndex(c->operands[0], depth + 1);
    std::optional<LinearIndex> b = matchLinearIndex(c->operands[1], depth + 1);
    if (!a || !b)
      return std::nullopt;
    return add(*a, *b);
  }
  if (c && c->kind == Kind::Mul) {
    for (auto [operand, factor] : bothOrders(*c)) {
      std::optional<double> constant = evaluate(factor);
      std::optional<LinearIndex> rest;
      if (!constant || !(rest = matchLinearIndex(operand, depth + 1)))
        continue;
      auto k = static_cast<int64_t>(*constant);
      return LinearIndex{rest->variable, rest->coefficient * k,
                         rest->offset * k};
    }
    return std::nullopt;
  }
  if (!type || !type.getElementType().isSignlessInteger())
    return std::nullopt;
  return LinearIndex{t, 1, 0};
}

/// `t` as an element of a constant cache [L, W] read at a row given by
/// integer positions and a constant column: `tensor.extract` in a linalg
/// body (torch-mlir's indexing) or `tosa.gather`, of the cache's rows or
/// of its flattened elements.
std::optional<std::pair<SmallVector<Term>, GatheredColumn>>
matchGather(Term t) {
  ElementsAttr cache;
  Term row;
  AffineExpr column;
  int64_t rowLength = 0;
  if (auto extract = t.value.getDefiningOp<tensor::ExtractOp>()) {
    if (extract.getIndices().size() != 2 ||
        !matchPattern(extract.getTensor(), m_Constant(&cache)))
      return std::nullopt;
    row = makeTerm(extract.getIndices()[0], t.map, t);
    std::optional<double> col =
        evaluate(makeTerm(extract.getIndices()[1], t.map, t));
    if (!col)
      return std::nullopt;
    column =
        getAffineConstantExpr(static_cast<int64_t>(*col), t.map.getContext());
  } else if (auto gather = t.value.getDefiningOp<tosa::GatherOp>()) {
    // output[n, w, c] = values[n, indices[n, w], c], with one batch of
    // values.
    if (!matchPattern(gather.getValues(), m_Constant(&cache)) ||
        cache.getShapedType().getDimSize(0) != 1)
      return std::nullopt;
    row = makeTerm(gather.getIndices(), t.map.getMajorSubMap(2), t);
    column = t.map.getResult(2);
    std::optional<LinearIndex> index;
    if (cache.getShapedType().getDimSize(2) == 1 &&
        (index = matchLinearIndex(row)) && index->variable &&
        index->coefficient >= 2) {
      // A flattened cache [1, L·W, 1]: the index is p · W + column.
      if (index->offset < 0 || index->offset >= index->coefficient ||
          cache.getShapedType().getDimSize(1) % index->coefficient != 0)
        return std::nullopt;
      row = *index->variable;
      column = getAffineConstantExpr(index->offset, t.map.getContext());
      rowLength = index->coefficient;
    }
  } else {
    return std::nullopt;
  }
  auto constantColumn = dyn_cast<AffineConstantExpr>(column);
  SmallVector<Term> positions = matchIntegerPositions(row);
  if (!constantColumn || positions.empty())
    return std::nullopt;
  return std::make_pair(
      std::move(positions),
      GatheredColumn{cache, constantColumn.getValue(), rowLength});
}

/// One element of a cos or sin table: `scale · trig(p · frequency)`, or
/// `scale` times a column of a cache gathered by position.
struct TableElement {
  SmallVector<Term> positions;
  std::optional<double> frequency;
  std::optional<GatheredColumn> column;
  double scale;
};

/// `t`, one element of each head, as `trig` (Cos or Sin) of positions times
/// a constant frequency, or as a gathered cache column.
std::optional<TableElement> matchTableElement(Term t, Kind trig) {
  double scale = 1.0;
  // Outside the trig: views, float casts and constant factors.
  for (unsigned step = 0;; ++step) {
    if (step == kMaxViewSteps)
      return std::nullopt;
    t = peelViews(t);
    if (auto gathered = matchGather(t))
      return TableElement{std::move(gathered->first), std::nullopt,
                          gathered->second, scale};
    std::optional<Computation> c = classify(t);
    if (!c)
      return std::nullopt;
    if (c->kind == trig) {
      t = c->operands[0];
      break;
    }
    if (c->kind == Kind::FloatCast) {
      t = c->operands[0];
      continue;
    }
    if (c->kind != Kind::Mul)
      return std::nullopt;
    std::optional<Term> rest;
    for (auto [operand, factor] : bothOrders(*c)) {
      if (std::optional<double> value = evaluate(factor)) {
        scale *= *value;
        rest = operand;
        break;
      }
    }
    if (!rest)
      return std::nullopt;
    t = *rest;
  }
  // The angle: positions times a frequency.
  std::optional<Computation> product = classify(peelTrivial(t));
  if (!product || product->kind != Kind::Mul)
    return std::nullopt;
  for (auto [p, f] : bothOrders(*product)) {
    SmallVector<Term> positions = matchPositions(p);
    if (positions.empty())
      continue;
    std::optional<double> frequency = evaluate(f);
    if (!frequency || !std::isfinite(*frequency) || *frequency <= 0.0)
      continue;
    return TableElement{std::move(positions), *frequency, std::nullopt, scale};
  }
  return std::nullopt;
}

/// Element (row, column) of the cache that `c` reads, as f64.
double cacheAt(const GatheredColumn &c, int64_t row) {
  auto it = c.cache.value_begin<APFloat>();
  if (c.rowLength)
    return toDouble(*std::next(it, row * c.rowLength + c.column));
  SmallVector<uint64_t> index(c.cache.getShapedType().getRank(), 0);
  index[index.size() - 2] = row;
  index.back() = c.column;
  return toDouble(*std::next(it, c.cache.getFlattenedIndex(index)));
}

/// Rows and row length of the cache that `c` reads.
std::pair<int64_t, int64_t> cacheShape(const GatheredColumn &c) {
  ArrayRef<int64_t> shape = c.cache.getShapedType().getShape();
  if (c.rowLength)
    return {c.cache.getNumElements() / c.rowLength, c.rowLength};
  return {shape.drop_back().back(), shape.back()};
}

} // namespace

std::optional<Table> matchTable(Term t, Kind trig, int64_t headDim) {
  std::optional<Table> table;
  for (int64_t j = 0; j < headDim; ++j) {
    std::optional<TableElement> element =
        matchTableElement(atHeadIndex(t, j), trig);
    if (!element)
      return std::nullopt;
    if (!table) {
      table = Table{std::move(element->positions), {}, {}, element->scale};
    } else if (element->positions.back() != table->positions.back() ||
               element->scale != table->scale) {
      return std::nullopt;
    }
    if (element->frequency)
      table->frequencies.push_back(*element->frequency);
    else
      table->columns.push_back(*element->column);
  }
  // All computed or all gathered.
  if (!table->frequencies.empty() && !table->columns.empty())
    return std::nullopt;
  return table;
}

LogicalResult resolveGathered(Table &cos, Table &sin) {
  if (cos.columns.empty() && sin.columns.empty())
    return success();
  if (cos.columns.size() != sin.columns.size() || !cos.frequencies.empty() ||
      !sin.frequencies.empty())
    return failure();
  std::optional<double> factor;
  SmallVector<double> frequencies;
  for (auto [c, s] : llvm::zip_equal(cos.columns, sin.columns)) {
    for (ElementsAttr cache : {c.cache, s.cache}) {
      ShapedType type = cache.getShapedType();
      if (!type.hasStaticShape() || type.getRank() < 2 ||
          !isa<FloatType>(type.getElementType()) ||
          !cache.try_value_begin<APFloat>())
        return failure();
    }
    auto [rows, cosWidth] = cacheShape(c);
    auto [sinRows, sinWidth] = cacheShape(s);
    if (rows < 2 || sinRows != rows || c.column < 0 || c.column >= cosWidth ||
        s.column < 0 || s.column >= sinWidth)
      return failure();
    double m = cacheAt(c, 0);
    double f = std::atan2(cacheAt(s, 1) / m, cacheAt(c, 1) / m);
    if (!std::isfinite(m) || m <= 0.0 || !std::isfinite(f) || f <= 0.0 ||
        (factor && *factor != m))
      return failure();
    for (int64_t p = 0; p < rows; ++p) {
      double phase = static_cast<double>(p) * f;
      double tolerance = 0x1p-21 * m * (1.0 + phase);
      if (std::abs(cacheAt(c, p) - m * std::cos(phase)) > tolerance ||
          std::abs(cacheAt(s, p) - m * std::sin(phase)) > tolerance)
        return failure();
    }
    factor = m;
    frequencies.push_back(f);
  }
  for (Table *table : {&cos, &sin}) {
    table->columns.clear();
    table->frequencies = frequencies;
    table->scale *= *factor;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Positions
//===----------------------------------------------------------------------===//

std::optional<PositionsOperand> analyzePositions(Term positions,
                                                 RankedTensorType type) {
  auto posType = cast<RankedTensorType>(positions.value.getType());
  int64_t rank = type.getRank();
  // Dims of the iteration space that the positions vary along, in order,
  // and the dims of the positions that hold them.
  SmallVector<int64_t> rootDims;
  SmallVector<int64_t> keptDims;
  for (auto [dim, index] : llvm::enumerate(positions.map.getResults())) {
    int64_t extent = posType.getDimSize(dim);
    if (extent == 1)
      continue; // Read at 0 (canonical form).
    auto rootDim = dyn_cast<AffineDimExpr>(index);
    if (!rootDim)
      return std::nullopt;
    int64_t d = rootDim.getPosition();
    if (!ShapedType::isDynamic(extent) &&
        !ShapedType::isDynamic(type.getDimSize(d)) &&
        extent != type.getDimSize(d))
      return std::nullopt;
    rootDims.push_back(d);
    keptDims.push_back(dim);
  }
  int64_t lastSeq = rank - 2;
  auto isNotHead = [&](int64_t d) { return d != rank - 1; };
  if (rootDims.size() == 2 && rootDims[0] == 0 && rootDims[1] != 0 &&
      isNotHead(rootDims[1]))
    return PositionsOperand{positions.value, keptDims, false, rootDims[1]};
  // Only the batch varies (decode: one token per sequence): [B, 1] along a
  // unit sequence dim.
  if (rootDims.size() == 1 && rootDims[0] == 0 && lastSeq != 0 &&
      type.getDimSize(lastSeq) == 1)
    return PositionsOperand{positions.value, keptDims, true, lastSeq};
  if (rootDims.size() == 1 && isNotHead(rootDims[0]))
    return PositionsOperand{positions.value, keptDims, false, rootDims[0]};
  // One position for everything: any unit dim serves as the sequence.
  if (rootDims.empty() && type.getDimSize(lastSeq) == 1)
    return PositionsOperand{positions.value, keptDims, false, lastSeq};
  return std::nullopt;
}

/// `source` with only its dims `kept` (ascending), the others being unit
/// dims: each is folded into the next kept dim, trailing ones into the last;
/// with none kept, a single [1]. `source` itself when nothing is dropped.
static Value keepDims(PatternRewriter &rewriter, Location loc, Value source,
                      ArrayRef<int64_t> kept) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  ReassociationIndices group;
  for (int64_t dim = 0; dim < sourceType.getRank(); ++dim) {
    group.push_back(dim);
    if (llvm::is_contained(kept, dim)) {
      groups.push_back(std::move(group));
      shape.push_back(sourceType.getDimSize(dim));
      group.clear();
    }
  }
  if (groups.empty()) {
    groups.push_back(std::move(group));
    shape.push_back(1);
  } else {
    llvm::append_range(groups.back(), group);
  }
  if (static_cast<int64_t>(shape.size()) == sourceType.getRank())
    return source;
  return tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, sourceType.getElementType()),
      source, groups);
}

Value materializePositions(PatternRewriter &rewriter, Location loc,
                           const PositionsOperand &operand) {
  // Nothing to build when the source already has that shape (e.g. [B, 1]
  // for decode).
  auto sourceType = cast<RankedTensorType>(operand.source.getType());
  SmallVector<int64_t> target;
  for (int64_t dim : operand.keptDims)
    target.push_back(sourceType.getDimSize(dim));
  if (target.empty())
    target.push_back(1);
  if (operand.appendUnit)
    target.push_back(1);
  if (sourceType.getShape() == ArrayRef<int64_t>(target))
    return operand.source;
  Value positions = keepDims(rewriter, loc, operand.source, operand.keptDims);
  if (!operand.appendUnit)
    return positions;
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(target, sourceType.getElementType()),
      positions, ArrayRef<ReassociationIndices>{{0, 1}});
}

//===----------------------------------------------------------------------===//
// Element tables
//===----------------------------------------------------------------------===//

/// Whether `t` reads a float tensor element for element along the head of
/// an iteration space of `type`: its last dim at the head index (a table of
/// one coefficient per element), each other dim either a static 1 or a
/// leading dim of the space, in order and with a compatible extent. Such a
/// tensor is a cos or sin table of rope.rotate_with_tables whatever computed
/// it (a function argument, a weight, a slice or gather of a cache).
static bool isElementTableRead(Term t, RankedTensorType type) {
  auto tableType = dyn_cast<RankedTensorType>(t.value.getType());
  unsigned n = type.getRank();
  if (!tableType ||
      !isa<Float32Type, Float16Type, BFloat16Type>(tableType.getElementType()) ||
      t.map.getNumDims() != n ||
      tableType.getShape().back() != type.getShape().back() ||
      t.map.getResults().back() != getAffineDimExpr(n - 1, t.map.getContext()))
    return false;
  int64_t previous = -1;
  for (auto [dim, index] : llvm::enumerate(t.map.getResults().drop_back())) {
    int64_t extent = tableType.getDimSize(dim);
    if (extent == 1)
      continue; // Read at 0 (canonical form).
    auto loop = dyn_cast<AffineDimExpr>(index);
    if (!loop || static_cast<int64_t>(loop.getPosition()) <= previous ||
        loop.getPosition() >= n - 1)
      return false;
    int64_t expected = type.getDimSize(loop.getPosition());
    if (!ShapedType::isDynamic(extent) && !ShapedType::isDynamic(expected) &&
        extent != expected)
      return false;
    previous = loop.getPosition();
  }
  return true;
}

std::optional<Term> findElementTable(Term t, RankedTensorType type) {
  std::optional<Term> table;
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    if (isElementTableRead(t, type))
      table = t;
    std::optional<Term> next = stepView(t);
    if (!next)
      break;
    t = *next;
  }
  return table;
}

ElementTableLayout getElementTableLayout(Term t, unsigned rank) {
  auto tableType = cast<RankedTensorType>(t.value.getType());
  ElementTableLayout layout;
  layout.shape.assign(rank, 1);
  for (auto [dim, index] : llvm::enumerate(t.map.getResults())) {
    bool head = dim + 1 == t.map.getNumResults();
    if (!head && tableType.getDimSize(dim) == 1)
      continue;
    unsigned loop = head ? rank - 1 : cast<AffineDimExpr>(index).getPosition();
    layout.kept.push_back(dim);
    layout.follows.push_back(loop);
    layout.shape[loop] = tableType.getDimSize(dim);
  }
  return layout;
}

Value materializeElementTable(PatternRewriter &rewriter, Location loc, Term t,
                              RankedTensorType type) {
  auto tableType = cast<RankedTensorType>(t.value.getType());
  ElementTableLayout layout = getElementTableLayout(t, type.getRank());
  if (tableType.getShape() == ArrayRef<int64_t>(layout.shape))
    return t.value;
  Value table = keepDims(rewriter, loc, t.value, layout.kept);
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices group;
  for (int64_t loop = 0; loop < type.getRank(); ++loop) {
    group.push_back(loop);
    if (llvm::is_contained(layout.follows, loop)) {
      groups.push_back(std::move(group));
      group.clear();
    }
  }
  return tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get(layout.shape, tableType.getElementType()), table,
      groups);
}

} // namespace mlir::rope::raising
