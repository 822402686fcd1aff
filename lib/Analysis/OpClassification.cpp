//===- OpClassification.cpp - what a frontend op does to elements ---------===//

#include "rope/Analysis/OpClassification.h"
#include "rope/Analysis/ConstantEvaluation.h"
#include "rope/Analysis/Sizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace mlir::rope::analysis {

//===----------------------------------------------------------------------===//
// Index-only ops
//===----------------------------------------------------------------------===//

namespace {

/// `map` with result `pos` replaced by `expr`.
AffineMap withResult(AffineMap map, unsigned pos, AffineExpr expr) {
  SmallVector<AffineExpr> results(map.getResults());
  results[pos] = expr;
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

/// Indices into a row-major group of dims of `sizes` that the single index
/// `index` of their collapsed dim designates. Unit dims read 0 and the
/// outermost other dim needs no `mod`, so inserting or removing unit dims
/// yields plain indices.
std::optional<SmallVector<AffineExpr>> delinearize(AffineExpr index,
                                                   ArrayRef<int64_t> sizes) {
  AffineExpr zero = getAffineConstantExpr(0, index.getContext());
  SmallVector<AffineExpr> indices(sizes.size(), zero);
  auto outermost = llvm::find_if(sizes, [](int64_t s) { return s != 1; });
  int64_t inner = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] == 1)
      continue;
    AffineExpr idx = index.floorDiv(inner);
    if (i == std::distance(sizes.begin(), outermost)) {
      indices[i] = idx;
      break;
    }
    if (ShapedType::isDynamic(sizes[i]))
      return std::nullopt;
    indices[i] = idx % sizes[i];
    inner *= sizes[i];
  }
  return indices;
}

/// The single index of a collapsed dim that `indices` into a row-major group
/// of dims of `sizes` designate.
std::optional<AffineExpr> linearize(ArrayRef<AffineExpr> indices,
                                    ArrayRef<int64_t> sizes) {
  AffineExpr index = getAffineConstantExpr(0, indices.front().getContext());
  auto outermost = llvm::find_if(sizes, [](int64_t s) { return s != 1; });
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] == 1)
      continue;
    index = index + indices[i] * stride;
    if (i == std::distance(sizes.begin(), outermost))
      break;
    if (ShapedType::isDynamic(sizes[i]))
      return std::nullopt;
    stride *= sizes[i];
  }
  return index;
}

/// Term of `source` for a term `t` of its expansion along `groups` (result
/// dims per source dim).
std::optional<Term> throughExpand(Term t, Value source,
                                  ArrayRef<int64_t> resultShape,
                                  ArrayRef<ReassociationIndices> groups) {
  SmallVector<AffineExpr> indices;
  for (const ReassociationIndices &group : groups) {
    SmallVector<AffineExpr> groupIndices;
    SmallVector<int64_t> groupSizes;
    for (int64_t dim : group) {
      groupIndices.push_back(t.map.getResult(dim));
      groupSizes.push_back(resultShape[dim]);
    }
    std::optional<AffineExpr> index = linearize(groupIndices, groupSizes);
    if (!index)
      return std::nullopt;
    indices.push_back(*index);
  }
  return makeTerm(
      source,
      AffineMap::get(t.map.getNumDims(), 0, indices, t.map.getContext()), t);
}

/// Term of `source` for a term `t` of its collapse along `groups` (source
/// dims per result dim).
std::optional<Term> throughCollapse(Term t, Value source,
                                    ArrayRef<int64_t> sourceShape,
                                    ArrayRef<ReassociationIndices> groups) {
  SmallVector<AffineExpr> indices(sourceShape.size());
  for (auto [result, group] : llvm::enumerate(groups)) {
    SmallVector<int64_t> groupSizes;
    for (int64_t dim : group)
      groupSizes.push_back(sourceShape[dim]);
    std::optional<SmallVector<AffineExpr>> groupIndices =
        delinearize(t.map.getResult(result), groupSizes);
    if (!groupIndices)
      return std::nullopt;
    for (auto [dim, index] : llvm::zip_equal(group, *groupIndices))
      indices[dim] = index;
  }
  return makeTerm(
      source,
      AffineMap::get(t.map.getNumDims(), 0, indices, t.map.getContext()), t);
}

/// Term of the source of a static reshape that both splits and merges dims
/// ([48, 4, 1] to [1, 12, 4, 4]): the shapes are cut where their running
/// products agree (48 | 4), and within each segment the result's indices are
/// linearised and split into the source's. Segments this small keep the
/// indices plain wherever one side of a segment is a single dim.
std::optional<Term> throughRegroupingReshape(Term t, Value source) {
  ArrayRef<int64_t> sourceShape =
      cast<RankedTensorType>(source.getType()).getShape();
  ArrayRef<int64_t> resultShape =
      cast<RankedTensorType>(t.value.getType()).getShape();
  if (ShapedType::isDynamicShape(sourceShape) ||
      ShapedType::isDynamicShape(resultShape))
    return std::nullopt;
  SmallVector<AffineExpr> indices;
  size_t s = 0, r = 0;
  while (s < sourceShape.size() || r < resultShape.size()) {
    size_t s0 = s, r0 = r;
    int64_t sourceSize = 1, resultSize = 1;
    // Grow the segment until both sides cover the same number of elements
    // and neither side can take another unit dim.
    do {
      if (s < sourceShape.size() &&
          (sourceSize <= resultSize || r == resultShape.size()))
        sourceSize *= sourceShape[s++];
      else if (r < resultShape.size())
        resultSize *= resultShape[r++];
      else
        return std::nullopt;
    } while (sourceSize != resultSize ||
             (s < sourceShape.size() && sourceShape[s] == 1) ||
             (r < resultShape.size() && resultShape[r] == 1));
    // A segment of the source's unit dims alone reads index 0.
    std::optional<AffineExpr> index =
        r == r0 ? getAffineConstantExpr(0, t.map.getContext())
                : linearize(t.map.getResults().slice(r0, r - r0),
                            resultShape.slice(r0, r - r0));
    std::optional<SmallVector<AffineExpr>> segment;
    if (!index ||
        !(segment = delinearize(*index, sourceShape.slice(s0, s - s0))))
      return std::nullopt;
    llvm::append_range(indices, *segment);
  }
  return makeTerm(
      source,
      AffineMap::get(t.map.getNumDims(), 0, indices, t.map.getContext()), t);
}

/// Term of a reshape's source: group by group when the reshape only groups
/// or splits dims, else (static shapes that regroup, e.g. [48, 4, 1] to
/// [1, 12, 4, 4]) through the linear index of the whole tensor.
std::optional<Term> throughReshape(Term t, Value source) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto resultType = cast<RankedTensorType>(t.value.getType());
  if (sourceType.getShape() == resultType.getShape())
    return makeTerm(source, t.map, t);
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReassociationIndicesForReshape(sourceType, resultType);
  if (!groups)
    return throughRegroupingReshape(t, source);
  if (sourceType.getRank() < resultType.getRank())
    return throughExpand(t, source, resultType.getShape(), *groups);
  return throughCollapse(t, source, sourceType.getShape(), *groups);
}

/// Term of the operand of a concatenation along `axis` that holds the
/// element `t` reads: chosen by a constant index, or any copy when all the
/// operands are one value (a repetition, as in `cat(freqs, freqs)`).
std::optional<Term> throughConcat(Term t, ValueRange inputs, int64_t axis) {
  AffineExpr index = t.map.getResult(axis);
  auto extent = [&](Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(axis);
  };
  if (auto constant = dyn_cast<AffineConstantExpr>(index)) {
    int64_t start = 0;
    for (Value input : inputs) {
      int64_t size = extent(input);
      if (ShapedType::isDynamic(size))
        return std::nullopt;
      if (constant.getValue() < start + size)
        return makeTerm(input, withResult(t.map, axis, index - start), t);
      start += size;
    }
    return std::nullopt;
  }
  if (!llvm::all_equal(inputs) || ShapedType::isDynamic(extent(inputs[0])))
    return std::nullopt;
  return makeTerm(inputs[0], withResult(t.map, axis, index % extent(inputs[0])),
                  t);
}

/// Term of the source or the destination of an insert_slice, whichever
/// holds the element `t` reads.
std::optional<Term> throughInsertSlice(Term t, tensor::InsertSliceOp op) {
  if (op.getSourceType().getRank() != op.getDestType().getRank() ||
      ShapedType::isDynamicShape(op.getStaticOffsets()) ||
      ShapedType::isDynamicShape(op.getStaticSizes()) ||
      ShapedType::isDynamicShape(op.getStaticStrides()))
    return std::nullopt;
  SmallVector<AffineExpr> sourceIndices;
  bool inside = true;
  for (auto [dim, index] : llvm::enumerate(t.map.getResults())) {
    int64_t offset = op.getStaticOffsets()[dim];
    int64_t size = op.getStaticSizes()[dim];
    int64_t stride = op.getStaticStrides()[dim];
    if (offset == 0 && stride == 1 &&
        size == op.getDestType().getDimSize(dim)) {
      sourceIndices.push_back(index);
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(index);
    if (!constant)
      return std::nullopt;
    int64_t c = constant.getValue() - offset;
    if (c < 0 || c % stride != 0 || c / stride >= size) {
      inside = false;
      continue;
    }
    sourceIndices.push_back(
        getAffineConstantExpr(c / stride, index.getContext()));
  }
  if (!inside)
    return makeTerm(op.getDest(), t.map, t);
  return makeTerm(
      op.getSource(),
      AffineMap::get(t.map.getNumDims(), 0, sourceIndices, t.map.getContext()),
      t);
}

/// Term of an extract_slice's source (static offsets and strides only).
std::optional<Term> throughExtractSlice(Term t, tensor::ExtractSliceOp op) {
  if (ShapedType::isDynamicShape(op.getStaticOffsets()) ||
      ShapedType::isDynamicShape(op.getStaticStrides()))
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  llvm::SmallBitVector dropped = op.getDroppedDims();
  SmallVector<AffineExpr> indices;
  unsigned resultDim = 0;
  for (auto [dim, offset, stride] :
       llvm::enumerate(op.getStaticOffsets(), op.getStaticStrides())) {
    AffineExpr index = getAffineConstantExpr(offset, ctx);
    if (!dropped.test(dim))
      index = index + t.map.getResult(resultDim++) * stride;
    indices.push_back(index);
  }
  return makeTerm(op.getSource(),
                  AffineMap::get(t.map.getNumDims(), 0, indices, ctx), t);
}

/// Term of a tosa.slice's input (constant start only).
std::optional<Term> throughTosaSlice(Term t, tosa::SliceOp op) {
  std::optional<SmallVector<int64_t>> start = constantIndices(op.getStart());
  if (!start)
    return std::nullopt;
  SmallVector<AffineExpr> indices;
  for (auto [index, offset] : llvm::zip_equal(t.map.getResults(), *start))
    indices.push_back(index + offset);
  return makeTerm(
      op.getInput1(),
      AffineMap::get(t.map.getNumDims(), 0, indices, op.getContext()), t);
}

/// Term of a tosa.tile's input (constant multiples of a static input only).
std::optional<Term> throughTile(Term t, tosa::TileOp op) {
  SmallVector<int64_t> multiples;
  auto sourceType = cast<RankedTensorType>(op.getInput1().getType());
  if (failed(op.getConstantMultiples(multiples)) ||
      !sourceType.hasStaticShape())
    return std::nullopt;
  SmallVector<AffineExpr> indices;
  for (auto [index, multiple, extent] :
       llvm::zip_equal(t.map.getResults(), multiples, sourceType.getShape()))
    indices.push_back(multiple == 1 ? index : index % extent);
  return makeTerm(
      op.getInput1(),
      AffineMap::get(t.map.getNumDims(), 0, indices, op.getContext()), t);
}

/// Term of a tosa.transpose's input.
Term throughTranspose(Term t, tosa::TransposeOp op) {
  SmallVector<AffineExpr> indices(t.map.getNumResults());
  for (auto [resultDim, sourceDim] : llvm::enumerate(op.getPerms()))
    indices[sourceDim] = t.map.getResult(resultDim);
  return makeTerm(
      op.getInput1(),
      AffineMap::get(t.map.getNumDims(), 0, indices, op.getContext()), t);
}

/// Term of a tosa.gather's values at a row given by constant indices
/// (`x[..., ::2]` exported as a gather with indices 0, 2, 4, ...):
/// output[n, w, c] = values[n, indices[n, w], c]. A row that depends on the
/// data is a lookup, not a view (TableMatching reads caches gathered by
/// position).
std::optional<Term> throughConstantGather(Term t, tosa::GatherOp op) {
  std::optional<double> row =
      evaluate(makeTerm(op.getIndices(), t.map.getMajorSubMap(2), t));
  if (!row)
    return std::nullopt;
  SmallVector<AffineExpr> indices(t.map.getResults());
  indices[1] =
      getAffineConstantExpr(static_cast<int64_t>(*row), op.getContext());
  return makeTerm(
      op.getValues(),
      AffineMap::get(t.map.getNumDims(), 0, indices, op.getContext()), t);
}

/// The scalar that a linalg op yields for `result`, read through the op's
/// loops. Every loop must be fixed by the result's index: parallel loops
/// appear in its indexing map; a reduction must run once (a matmul with a
/// unit contraction, as in `inv_freq @ positions`).
std::optional<Term> intoBody(Term t, linalg::LinalgOp op, OpResult result) {
  if (!op.hasPureTensorSemantics())
    return std::nullopt;
  AffineMap resultMap = op.getIndexingMapMatchingResult(result);
  if (!resultMap.isProjectedPermutation())
    return std::nullopt;
  SmallVector<AffineExpr> loops(op.getNumLoops());
  for (auto [pos, dim] : llvm::enumerate(resultMap.getResults()))
    loops[cast<AffineDimExpr>(dim).getPosition()] = t.map.getResult(pos);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [loop, range] : llvm::zip_equal(loops, ranges)) {
    if (loop)
      continue;
    if (range != 1)
      return std::nullopt;
    loop = getAffineConstantExpr(0, op.getContext());
  }
  Value yielded =
      op.getBlock()->getTerminator()->getOperand(result.getResultNumber());
  return makeTerm(yielded,
                  AffineMap::get(t.map.getNumDims(), 0, loops, op.getContext()),
                  t);
}

/// The term of the operand that the block argument `arg` of a linalg body
/// stands for.
std::optional<Term> outOfBody(Term t, BlockArgument arg) {
  auto op = dyn_cast_or_null<linalg::LinalgOp>(arg.getOwner()->getParentOp());
  if (!op || arg.getOwner() != op.getBlock())
    return std::nullopt;
  OpOperand *operand = op.getMatchingOpOperand(arg);
  return makeTerm(operand->get(),
                  op.getMatchingIndexingMap(operand).compose(t.map), t);
}

/// The extent of loop `loop` of `op`, from an operand that it indexes.
std::optional<Size> loopExtent(linalg::LinalgOp op, unsigned loop) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!ShapedType::isDynamic(ranges[loop]))
    return Size{ranges[loop], {}, 0, {}};
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [pos, result] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(result);
          d && d.getPosition() == loop)
        return sizeOfDim(operand.get(), pos);
  }
  return std::nullopt;
}

/// The index `index` (an index value in the body of `op`, whose loops `t`
/// reads) as an affine function of the iteration space of `t`: loop
/// indices, constants, sums and constant multiples, and the broadcast guard
/// torch-mlir writes at a dynamic size, `select(size == 1, 0, i)` for loop
/// index i, which is i itself when `size` is that loop's extent (a size of
/// 1 then leaves only i = 0).
std::optional<AffineExpr> bodyIndex(Value index, linalg::LinalgOp op,
                                    const Term &t,
                                    std::optional<Size> ownSize = std::nullopt,
                                    unsigned depth = 0) {
  if (depth > kMaxViewSteps)
    return std::nullopt;
  APInt constant;
  if (matchPattern(index, m_ConstantInt(&constant)))
    return getAffineConstantExpr(constant.getSExtValue(), op.getContext());
  Operation *def = index.getDefiningOp();
  if (auto loop = dyn_cast_or_null<linalg::IndexOp>(def)) {
    if (loop->getParentOp() != op.getOperation())
      return std::nullopt;
    return t.map.getResult(loop.getDim());
  }
  if (isa_and_nonnull<arith::IndexCastOp>(def))
    return bodyIndex(def->getOperand(0), op, t, std::nullopt, depth + 1);
  if (isa_and_nonnull<arith::AddIOp, arith::MulIOp>(def)) {
    std::optional<AffineExpr> a =
        bodyIndex(def->getOperand(0), op, t, std::nullopt, depth + 1);
    std::optional<AffineExpr> b =
        bodyIndex(def->getOperand(1), op, t, std::nullopt, depth + 1);
    if (!a || !b)
      return std::nullopt;
    if (isa<arith::AddIOp>(def))
      return *a + *b;
    if (!isa<AffineConstantExpr>(*a) && !isa<AffineConstantExpr>(*b))
      return std::nullopt;
    return *a * *b;
  }
  if (auto select = dyn_cast_or_null<arith::SelectOp>(def)) {
    auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
    auto loop = select.getFalseValue().getDefiningOp<linalg::IndexOp>();
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq ||
        !matchPattern(cmp.getRhs(), m_One()) ||
        !matchPattern(select.getTrueValue(), m_Zero()) || !loop ||
        loop->getParentOp() != op.getOperation())
      return std::nullopt;
    Size guarded = sizeOfValue(cmp.getLhs());
    std::optional<Size> extent = loopExtent(op, loop.getDim());
    if ((!extent || *extent != guarded) && (!ownSize || *ownSize != guarded))
      return std::nullopt;
    return t.map.getResult(loop.getDim());
  }
  return std::nullopt;
}

/// Term of the tensor that a `tensor.extract` in a linalg body reads at
/// indices computed from the loops (torch-mlir's broadcasts and
/// `repeat_kv` at dynamic shapes).
std::optional<Term> throughBodyExtract(Term t, tensor::ExtractOp extract,
                                       ViewOptions options) {
  auto op = dyn_cast<linalg::LinalgOp>(extract->getParentOp());
  if (!op || t.map.getNumResults() != op.getNumLoops())
    return std::nullopt;
  SmallVector<AffineExpr> indices;
  for (auto [pos, index] : llvm::enumerate(extract.getIndices())) {
    std::optional<Size> ownSize;
    if (options.ownSizeGuardsAsIndex)
      ownSize = sizeOfDim(extract.getTensor(), pos);
    std::optional<AffineExpr> e = bodyIndex(index, op, t, ownSize);
    if (!e)
      return std::nullopt;
    indices.push_back(*e);
  }
  return makeTerm(extract.getTensor(),
                  AffineMap::get(t.map.getNumDims(), 0, indices,
                                 op.getContext()),
                  t);
}

/// Term of the source of a `tensor.reshape` that only groups or splits
/// dims: each group's dynamic dims, one on either side, must be the same
/// size (the shape operand's entry against the source's dim; with one
/// dynamic dim in all, the element count fixes it).
std::optional<Term> throughShapeReshape(Term t, tensor::ReshapeOp op) {
  auto sourceType = dyn_cast<RankedTensorType>(op.getSource().getType());
  auto resultType = dyn_cast<RankedTensorType>(op.getType());
  if (!sourceType || !resultType)
    return std::nullopt;
  if (sourceType.getNumDynamicDims() + resultType.getNumDynamicDims() > 2) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(sourceType, resultType);
    if (!groups)
      return std::nullopt;
    bool expands = sourceType.getRank() < resultType.getRank();
    RankedTensorType few = expands ? sourceType : resultType;
    RankedTensorType many = expands ? resultType : sourceType;
    for (auto [dim, group] : llvm::enumerate(*groups)) {
      if (!few.isDynamicDim(dim))
        continue;
      auto dynamic = llvm::make_filter_range(
          group, [&](int64_t d) { return many.isDynamicDim(d); });
      if (llvm::range_size(dynamic) != 1)
        return std::nullopt;
      int64_t fewDim = dim, manyDim = *dynamic.begin();
      int64_t sourceDim = expands ? fewDim : manyDim;
      int64_t resultDim = expands ? manyDim : fewDim;
      if (sizeOfDim(op.getSource(), sourceDim) !=
          sizeOfDim(op.getResult(), resultDim))
        return std::nullopt;
    }
  }
  return throughReshape(t, op.getSource());
}

} // namespace

std::optional<Term> stepView(Term t, ViewOptions options) {
  if (auto arg = dyn_cast<BlockArgument>(t.value))
    return outOfBody(t, arg);
  Operation *def = t.value.getDefiningOp();
  if (!def)
    return std::nullopt;
  // A scalar in a linalg body that is not a block argument is computed,
  // unless it is read from a tensor at indices of the loops.
  if (!isa<RankedTensorType>(t.value.getType())) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(def))
      return throughBodyExtract(t, extract, options);
    return std::nullopt;
  }

  return llvm::TypeSwitch<Operation *, std::optional<Term>>(def)
      .Case([&](linalg::LinalgOp op) {
        return intoBody(t, op, cast<OpResult>(t.value));
      })
      .Case(
          [&](tensor::CastOp op) { return makeTerm(op.getSource(), t.map, t); })
      .Case([&](tensor::ExpandShapeOp op) {
        return throughExpand(t, op.getSrc(), op.getResultType().getShape(),
                             op.getReassociationIndices());
      })
      .Case([&](tensor::CollapseShapeOp op) {
        return throughCollapse(t, op.getSrc(), op.getSrcType().getShape(),
                               op.getReassociationIndices());
      })
      .Case(
          [&](tensor::ExtractSliceOp op) { return throughExtractSlice(t, op); })
      .Case([&](tensor::InsertSliceOp op) { return throughInsertSlice(t, op); })
      .Case([&](tensor::ConcatOp op) {
        return throughConcat(t, op.getInputs(), op.getDim());
      })
      .Case([&](tensor::ReshapeOp op) { return throughShapeReshape(t, op); })
      .Case(
          [&](tosa::ReshapeOp op) { return throughReshape(t, op.getInput1()); })
      .Case([&](tosa::SliceOp op) { return throughTosaSlice(t, op); })
      .Case([&](tosa::ConcatOp op) {
        return throughConcat(t, op.getInput1(), op.getAxis());
      })
      .Case([&](tosa::TileOp op) { return throughTile(t, op); })
      .Case([&](tosa::TransposeOp op) { return throughTranspose(t, op); })
      .Case([&](tosa::GatherOp op) { return throughConstantGather(t, op); })
      .Case([&](tosa::IdentityOp op) {
        return makeTerm(op.getInput1(), t.map, t);
      })
      .Default([](Operation *) { return std::nullopt; });
}

Term peelViews(Term t) {
  for (unsigned step = 0; step < kMaxViewSteps; ++step) {
    std::optional<Term> next = stepView(t);
    if (!next)
      break;
    t = *next;
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Elementwise computations
//===----------------------------------------------------------------------===//

unsigned bitWidth(Type type) {
  type = getElementTypeOrSelf(type);
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

/// The kind of a tosa.cast, by its element types.
static std::optional<Kind> castKind(Type from, Type to) {
  from = getElementTypeOrSelf(from);
  to = getElementTypeOrSelf(to);
  if (isa<FloatType>(from) && isa<FloatType>(to))
    return Kind::FloatCast;
  if (from.isSignlessInteger() && isa<FloatType>(to) && bitWidth(from) > 1)
    return Kind::IntToFloat;
  if (from.isSignlessInteger() && to.isSignlessInteger() &&
      bitWidth(from) > 1 && bitWidth(to) >= bitWidth(from))
    return Kind::IntExtend;
  return std::nullopt;
}

std::optional<Computation> classify(Term t) {
  Operation *def = t.value.getDefiningOp();
  if (!def || def->getNumResults() != 1)
    return std::nullopt;
  std::optional<Kind> kind =
      llvm::TypeSwitch<Operation *, std::optional<Kind>>(def)
          .Case<arith::AddFOp, tosa::AddOp>([](auto) { return Kind::Add; })
          .Case<arith::SubFOp, tosa::SubOp>([](auto) { return Kind::Sub; })
          .Case<arith::MulFOp>([](auto) { return Kind::Mul; })
          .Case([](tosa::MulOp op) -> std::optional<Kind> {
            // The shift applies to integer products only; a float product
            // has a zero shift.
            if (!isZeroConstant(op.getShift()))
              return std::nullopt;
            return Kind::Mul;
          })
          .Case<arith::DivFOp>([](auto) { return Kind::Div; })
          .Case<arith::NegFOp>([](auto) { return Kind::Neg; })
          .Case([](tosa::NegateOp op) -> std::optional<Kind> {
            if (!isZeroConstant(op.getInput1Zp()) ||
                !isZeroConstant(op.getOutputZp()))
              return std::nullopt;
            return Kind::Neg;
          })
          .Case<math::CosOp, tosa::CosOp>([](auto) { return Kind::Cos; })
          .Case<math::SinOp, tosa::SinOp>([](auto) { return Kind::Sin; })
          .Case<math::ExpOp, tosa::ExpOp>([](auto) { return Kind::Exp; })
          .Case<math::PowFOp, tosa::PowOp>([](auto) { return Kind::Pow; })
          .Case<tosa::ReciprocalOp>([](auto) { return Kind::Reciprocal; })
          .Case<arith::SIToFPOp>([](auto) { return Kind::IntToFloat; })
          .Case<arith::ExtSIOp>([](auto) { return Kind::IntExtend; })
          .Case([](arith::IndexCastOp op) -> std::optional<Kind> {
            if (bitWidth(op.getOut().getType()) <
                bitWidth(op.getIn().getType()))
              return std::nullopt;
            return Kind::IntExtend;
          })
          .Case<arith::ExtFOp, arith::TruncFOp>(
              [](auto) { return Kind::FloatCast; })
          .Case([](tosa::CastOp op) {
            return castKind(op.getInput().getType(), op.getType());
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return std::nullopt;
  bool binary = *kind == Kind::Add || *kind == Kind::Sub ||
                *kind == Kind::Mul || *kind == Kind::Div || *kind == Kind::Pow;
  Computation computation{*kind, {}};
  for (unsigned i = 0, e = binary ? 2 : 1; i < e; ++i)
    computation.operands.push_back(makeTerm(def->getOperand(i), t.map, t));
  return computation;
}

SmallVector<std::pair<Term, Term>, 2> bothOrders(const Computation &c) {
  return {{c.operands[0], c.operands[1]}, {c.operands[1], c.operands[0]}};
}

} // namespace mlir::rope::analysis

std::optional<unsigned>
mlir::rope::analysis::getMultiplyAccumulateLoop(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1)
    return std::nullopt;
  Block *body = op.getBlock();
  auto add = dyn_cast_or_null<arith::AddFOp>(
      body->getTerminator()->getOperand(0).getDefiningOp());
  if (!add)
    return std::nullopt;
  Value acc = body->getArgument(2);
  if ((add.getLhs() == acc) == (add.getRhs() == acc))
    return std::nullopt;
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  auto inputIndex = [&](Value v) -> int64_t {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<arith::ExtFOp, arith::TruncFOp>(def))
        return -1;
      v = def->getOperand(0);
    }
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body && arg.getArgNumber() < 2
               ? arg.getArgNumber()
               : -1;
  };
  int64_t a = inputIndex(mul.getLhs()), b = inputIndex(mul.getRhs());
  if (a < 0 || b < 0 || a == b)
    return std::nullopt;
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  return reductions.front();
}
