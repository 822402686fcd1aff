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
// So the matchers do not walk ops; they walk `Term`s: a value read through an
// affine map from the iteration space of the candidate rotation (the shape of
// its result). Index-only ops turn a term into a term of their operand
// (`peelViews`); what remains is a computation whose operands are again terms
// (`classify`). With the last (head) dim fixed to a constant j, a term names
// "element j of every head": that is how the pairing is checked (element j
// of rot(x) must be ±x at j's partner) and how the tables are taken apart
// (element j of cos must be cos(p · f_j)), whatever concatenations, tiles or
// interleavings put the elements in place. A term that depends on nothing but
// j is evaluated at compile time, which is how the frequencies f_j are
// recovered; the spec follows from them. A spelling is supported once, in
// `stepView`/`classify`, and every shape pattern gets it.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>
#include <optional>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPERAISE
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Bounds on walks over use-def chains; real rotations need a few dozen steps.
constexpr unsigned kMaxViewSteps = 64;
constexpr unsigned kMaxEvaluationDepth = 32;
/// The largest head the matchers look at, element by element; real heads
/// have at most a few hundred elements.
constexpr int64_t kMaxHeadDim = 4096;

//===----------------------------------------------------------------------===//
// Terms
//===----------------------------------------------------------------------===//

/// `value` read through `map`: element `i` of the iteration space is
/// `value[map(i)]`. A tensor is indexed by its dims; a scalar computed in the
/// body of a linalg op by that op's loops; any other scalar ignores the index
/// (its map has no results).
struct Term {
  Value value;
  AffineMap map;

  bool operator==(const Term &other) const {
    return value == other.value && map == other.map;
  }
  bool operator!=(const Term &other) const { return !(*this == other); }
};

/// A term in canonical form, so that equal reads compare equal whatever the
/// spelling: the map simplified, and every static unit dim of a tensor read
/// at 0 (the only index a valid program can use there, however a frontend
/// wrote the broadcast).
Term makeTerm(Value value, AffineMap map) {
  map = simplifyAffineMap(map);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return {value, map};
  assert(map.getNumResults() == static_cast<unsigned>(type.getRank()) &&
         "a tensor term has one index per dim");
  AffineExpr zero = getAffineConstantExpr(0, map.getContext());
  SmallVector<AffineExpr> results(map.getResults());
  bool changed = false;
  for (auto [extent, result] : llvm::zip_equal(type.getShape(), results)) {
    if (extent == 1 && result != zero) {
      result = zero;
      changed = true;
    }
  }
  if (changed)
    map = AffineMap::get(map.getNumDims(), 0, results, map.getContext());
  return {value, map};
}

/// `value` read at the iteration point itself; `value` has the iteration
/// space's shape.
Term identityTerm(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return makeTerm(value, AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                           value.getContext()));
}

/// `map` with result `pos` replaced by `expr`.
AffineMap withResult(AffineMap map, unsigned pos, AffineExpr expr) {
  SmallVector<AffineExpr> results(map.getResults());
  results[pos] = expr;
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

/// `t` at the iteration points whose last (head) dim is `j`.
Term atHeadIndex(Term t, int64_t j) {
  MLIRContext *ctx = t.map.getContext();
  unsigned numDims = t.map.getNumDims();
  return makeTerm(t.value,
                  t.map.replace(getAffineDimExpr(numDims - 1, ctx),
                                getAffineConstantExpr(j, ctx), numDims, 0));
}

/// Whether `t` reads all of a tensor of `type` at the iteration point itself.
bool isIdentityRead(Term t, RankedTensorType type) {
  if (t.value.getType() != type ||
      t.map.getNumDims() != static_cast<unsigned>(type.getRank()))
    return false;
  for (auto [i, result] : llvm::enumerate(t.map.getResults())) {
    if (type.getDimSize(i) == 1
            ? !isa<AffineConstantExpr>(result)
            : result != getAffineDimExpr(i, t.map.getContext()))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Index-only ops
//===----------------------------------------------------------------------===//

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
  return makeTerm(source, AffineMap::get(t.map.getNumDims(), 0, indices,
                                         t.map.getContext()));
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
  return makeTerm(source, AffineMap::get(t.map.getNumDims(), 0, indices,
                                         t.map.getContext()));
}

/// Term of a reshape's source when the reshape only groups or splits dims.
std::optional<Term> throughReshape(Term t, Value source) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto resultType = cast<RankedTensorType>(t.value.getType());
  if (sourceType.getShape() == resultType.getShape())
    return makeTerm(source, t.map);
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReassociationIndicesForReshape(sourceType, resultType);
  if (!groups)
    return std::nullopt;
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
        return makeTerm(input, withResult(t.map, axis, index - start));
      start += size;
    }
    return std::nullopt;
  }
  if (!llvm::all_equal(inputs) || ShapedType::isDynamic(extent(inputs[0])))
    return std::nullopt;
  return makeTerm(inputs[0],
                  withResult(t.map, axis, index % extent(inputs[0])));
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
    return makeTerm(op.getDest(), t.map);
  return makeTerm(
      op.getSource(),
      AffineMap::get(t.map.getNumDims(), 0, sourceIndices, t.map.getContext()));
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
  return makeTerm(
      yielded, AffineMap::get(t.map.getNumDims(), 0, loops, op.getContext()));
}

/// The term of the operand that the block argument `arg` of a linalg body
/// stands for.
std::optional<Term> outOfBody(Term t, BlockArgument arg) {
  auto op = dyn_cast_or_null<linalg::LinalgOp>(arg.getOwner()->getParentOp());
  if (!op || arg.getOwner() != op.getBlock())
    return std::nullopt;
  OpOperand *operand = op.getMatchingOpOperand(arg);
  return makeTerm(operand->get(),
                  op.getMatchingIndexingMap(operand).compose(t.map));
}

/// Constant integer contents of a shape or index operand.
std::optional<SmallVector<int64_t>> constantIndices(Value v) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  return llvm::to_vector(
      llvm::map_range(attr.getValues<APInt>(),
                      [](const APInt &x) { return x.getSExtValue(); }));
}

/// One step through an op that only moves elements: the term of the operand
/// element that `t` reads, or nothing when `t` is computed (or unknown).
std::optional<Term> stepView(Term t) {
  if (auto arg = dyn_cast<BlockArgument>(t.value))
    return outOfBody(t, arg);
  Operation *def = t.value.getDefiningOp();
  if (!def)
    return std::nullopt;
  MLIRContext *ctx = def->getContext();
  unsigned numDims = t.map.getNumDims();
  // A scalar in a linalg body that is not a block argument is computed.
  if (!isa<RankedTensorType>(t.value.getType()))
    return std::nullopt;

  return llvm::TypeSwitch<Operation *, std::optional<Term>>(def)
      .Case([&](linalg::LinalgOp op) {
        return intoBody(t, op, cast<OpResult>(t.value));
      })
      .Case([&](tensor::CastOp op) { return makeTerm(op.getSource(), t.map); })
      .Case([&](tensor::ExpandShapeOp op) {
        return throughExpand(t, op.getSrc(), op.getResultType().getShape(),
                             op.getReassociationIndices());
      })
      .Case([&](tensor::CollapseShapeOp op) {
        return throughCollapse(t, op.getSrc(), op.getSrcType().getShape(),
                               op.getReassociationIndices());
      })
      .Case([&](tensor::ExtractSliceOp op) -> std::optional<Term> {
        if (ShapedType::isDynamicShape(op.getStaticOffsets()) ||
            ShapedType::isDynamicShape(op.getStaticStrides()))
          return std::nullopt;
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
                        AffineMap::get(numDims, 0, indices, ctx));
      })
      .Case([&](tensor::InsertSliceOp op) { return throughInsertSlice(t, op); })
      .Case([&](tensor::ConcatOp op) {
        return throughConcat(t, op.getInputs(), op.getDim());
      })
      .Case(
          [&](tosa::ReshapeOp op) { return throughReshape(t, op.getInput1()); })
      .Case([&](tosa::SliceOp op) -> std::optional<Term> {
        std::optional<SmallVector<int64_t>> start =
            constantIndices(op.getStart());
        if (!start)
          return std::nullopt;
        SmallVector<AffineExpr> indices;
        for (auto [index, offset] : llvm::zip_equal(t.map.getResults(), *start))
          indices.push_back(index + offset);
        return makeTerm(op.getInput1(),
                        AffineMap::get(numDims, 0, indices, ctx));
      })
      .Case([&](tosa::ConcatOp op) {
        return throughConcat(t, op.getInput1(), op.getAxis());
      })
      .Case([&](tosa::TileOp op) -> std::optional<Term> {
        SmallVector<int64_t> multiples;
        auto sourceType = cast<RankedTensorType>(op.getInput1().getType());
        if (failed(op.getConstantMultiples(multiples)) ||
            !sourceType.hasStaticShape())
          return std::nullopt;
        SmallVector<AffineExpr> indices;
        for (auto [index, multiple, extent] : llvm::zip_equal(
                 t.map.getResults(), multiples, sourceType.getShape()))
          indices.push_back(multiple == 1 ? index : index % extent);
        return makeTerm(op.getInput1(),
                        AffineMap::get(numDims, 0, indices, ctx));
      })
      .Case([&](tosa::TransposeOp op) {
        SmallVector<AffineExpr> indices(t.map.getNumResults());
        for (auto [resultDim, sourceDim] : llvm::enumerate(op.getPerms()))
          indices[sourceDim] = t.map.getResult(resultDim);
        return makeTerm(op.getInput1(),
                        AffineMap::get(numDims, 0, indices, ctx));
      })
      .Case(
          [&](tosa::IdentityOp op) { return makeTerm(op.getInput1(), t.map); })
      .Default([](Operation *) { return std::nullopt; });
}

/// `t` followed through every index-only op to the computation (or value
/// without a known definition) it reads.
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

enum class Kind {
  Add,
  Sub,
  Mul,
  Div,
  Neg,
  Cos,
  Sin,
  Exp,
  Pow,
  Reciprocal,
  /// Signed integer to float.
  IntToFloat,
  /// Integer widening (value-preserving).
  IntExtend,
  /// Between float types.
  FloatCast,
};

/// What `t` computes from its operands at the same iteration point.
struct Computation {
  Kind kind;
  SmallVector<Term, 2> operands;
};

/// Whether `v` is a constant whose every element is zero.
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

unsigned bitWidth(Type type) {
  type = getElementTypeOrSelf(type);
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

/// The kind of a tosa.cast, by its element types.
std::optional<Kind> castKind(Type from, Type to) {
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

/// The elementwise computation that defines `t`, if it is one we know.
/// Operands of tosa ops broadcast implicitly (unit dims), which the terms'
/// canonical form expresses.
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
    computation.operands.push_back(makeTerm(def->getOperand(i), t.map));
  return computation;
}

/// A binary computation's operands in both orders (for commuted operands).
SmallVector<std::pair<Term, Term>, 2> bothOrders(const Computation &c) {
  return {{c.operands[0], c.operands[1]}, {c.operands[1], c.operands[0]}};
}

//===----------------------------------------------------------------------===//
// Compile-time evaluation
//===----------------------------------------------------------------------===//

/// `v` rounded to the float type `type` (the precision the program holds
/// it in); other types leave it alone.
double roundTo(double v, Type type) {
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

double toDouble(APFloat value) {
  bool losesInfo;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

/// The element of constant `attr` that `map` reads; the map must be constant
/// unless every element is the same.
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

/// The value `t` reads, when it follows from constants and loop indices
/// alone, computed in f64 and rounded to each op's result type as the
/// program would.
std::optional<double> evaluate(Term t, unsigned depth = 0) {
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
    std::optional<double> arg = evaluate(operand, depth + 1);
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

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

/// A column of a constant cache of cos or sin values [L, W] that a table
/// reads by position (`cos_cached[position_ids]`).
struct GatheredColumn {
  ElementsAttr cache;
  int64_t column;

  bool operator==(const GatheredColumn &other) const {
    return cache == other.cache && column == other.column;
  }
};

/// What a cos or sin table is made of: `scale · trig(p · freq_j)` with `p`
/// read from positions and `freq_j` per head element j, either computed
/// (`frequencies`) or gathered from a cache by position (`columns`, until
/// `resolveGathered` turns them into frequencies). The positions are any of
/// `positions`, the integer tensors on the chain of views and widenings that
/// the table reads (outermost first); two tables read the same positions
/// when their chains end in the same read.
struct Table {
  SmallVector<Term> positions;
  SmallVector<double> frequencies;
  SmallVector<GatheredColumn> columns;
  double scale;

  bool operator==(const Table &other) const {
    return positions.back() == other.positions.back() &&
           frequencies == other.frequencies && columns == other.columns &&
           scale == other.scale;
  }
  bool operator!=(const Table &other) const { return !(*this == other); }
};

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

/// `t` as an element of a constant cache [L, W] read at a row given by
/// integer positions and a constant column: `tensor.extract` in a linalg
/// body (torch-mlir's indexing) or `tosa.gather`.
std::optional<std::pair<SmallVector<Term>, GatheredColumn>>
matchGather(Term t) {
  ElementsAttr cache;
  Term row;
  AffineExpr column;
  if (auto extract = t.value.getDefiningOp<tensor::ExtractOp>()) {
    if (extract.getIndices().size() != 2 ||
        !matchPattern(extract.getTensor(), m_Constant(&cache)))
      return std::nullopt;
    row = makeTerm(extract.getIndices()[0], t.map);
    std::optional<double> col =
        evaluate(makeTerm(extract.getIndices()[1], t.map));
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
    row = makeTerm(gather.getIndices(), t.map.getMajorSubMap(2));
    column = t.map.getResult(2);
  } else {
    return std::nullopt;
  }
  auto constantColumn = dyn_cast<AffineConstantExpr>(column);
  SmallVector<Term> positions = matchIntegerPositions(row);
  if (!constantColumn || positions.empty())
    return std::nullopt;
  return std::make_pair(std::move(positions),
                        GatheredColumn{cache, constantColumn.getValue()});
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

/// `t` as a table of `trig` (Cos or Sin) of positions times frequencies.
/// The table is taken apart one head element at a time, so that however
/// the frontend laid the frequencies out along the head (concatenated,
/// inserted, tiled, interleaved, before or after the trig), each element
/// resolves to its own frequency.
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

/// Element (row, column) of a constant cache, as f64.
double cacheAt(ElementsAttr cache, int64_t row, int64_t column) {
  SmallVector<uint64_t> index(cache.getShapedType().getRank(), 0);
  index[index.size() - 2] = row;
  index.back() = column;
  auto it = cache.value_begin<APFloat>();
  return toDouble(*std::next(it, cache.getFlattenedIndex(index)));
}

/// Frequencies and attention factor of caches `m·cos(p·f)`, `m·sin(p·f)`
/// read by position (row p), from rows 0 and 1 (`m = cos[0]`,
/// `f = atan2(sin[1], cos[1])`, well conditioned for every f < π), checked
/// against every row within a few f32 roundings of what an f32 computation
/// of the caches (f32 phase, cosf/sinf) leaves: 2^-21·m·(1 + p·f). Then the
/// two tables read the same computed frequencies.
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
    ArrayRef<int64_t> cosShape = c.cache.getShapedType().getShape();
    ArrayRef<int64_t> sinShape = s.cache.getShapedType().getShape();
    int64_t rows = cosShape.drop_back().back();
    if (rows < 2 || sinShape.drop_back().back() != rows || c.column < 0 ||
        c.column >= cosShape.back() || s.column < 0 ||
        s.column >= sinShape.back())
      return failure();
    double m = cacheAt(c.cache, 0, c.column);
    double f = std::atan2(cacheAt(s.cache, 1, s.column) / m,
                          cacheAt(c.cache, 1, c.column) / m);
    if (!std::isfinite(m) || m <= 0.0 || !std::isfinite(f) || f <= 0.0 ||
        (factor && *factor != m))
      return failure();
    for (int64_t p = 0; p < rows; ++p) {
      double phase = static_cast<double>(p) * f;
      double tolerance = 0x1p-21 * m * (1.0 + phase);
      if (std::abs(cacheAt(c.cache, p, c.column) - m * std::cos(phase)) >
              tolerance ||
          std::abs(cacheAt(s.cache, p, s.column) - m * std::sin(phase)) >
              tolerance)
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

/// How the raised rotation reads its positions: the dims `keptDims` of
/// `source` (the others are unit dims), as `[S]`, `[B, S]`, or `[B, 1]` when
/// `appendUnit`, along `seqDim`.
struct PositionsOperand {
  Value source;
  SmallVector<int64_t> keptDims;
  bool appendUnit;
  int64_t seqDim;
};

/// Checks that `positions` varies only along one dim of `type` (the
/// sequence) and possibly its leading dim (the batch), as rope.rotate's
/// `[S]` and `[B, S]` positions do, and says how to read it so.
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
Value keepDims(PatternRewriter &rewriter, Location loc, Value source,
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

/// The positions tensor `operand` describes: its source without the unit
/// dims (keepDims), then with a unit sequence dim if asked.
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
// Spec recovery
//===----------------------------------------------------------------------===//

/// Relative distance within which a frequency counts as the one a spec
/// implies. f32 constants computed as Hugging Face does
/// (`1 / base ** (arange(0, r, 2) / r)` in f32) are within about 2^-23.
constexpr double kFrequencyTolerance = 0x1p-21;

/// Relative distance within which a single f32 constant (the attention
/// factor) counts as a decimal it was rounded from (two f32 roundings).
constexpr double kSnapTolerance = 0x1p-23;

bool isClose(double value, double expected, double tolerance) {
  return std::abs(value - expected) <= tolerance * std::abs(expected);
}

/// Candidates for a positive parameter estimated as `estimate`: the decimals
/// of 1 to 7 significant digits (what configs hold), then the estimate.
SmallVector<double> shortDecimals(double estimate) {
  if (!std::isfinite(estimate) || estimate <= 0.0)
    return {};
  SmallVector<double> candidates;
  int magnitude = static_cast<int>(std::floor(std::log10(estimate)));
  for (int digits = 1; digits <= 7; ++digits) {
    // Scale by an exact power of ten on the side that keeps the result the
    // double nearest the decimal.
    int exponent = magnitude - digits + 1;
    double power = std::pow(10.0, std::abs(exponent));
    candidates.push_back(exponent >= 0 ? std::round(estimate / power) * power
                                       : std::round(estimate * power) / power);
  }
  candidates.push_back(estimate);
  return candidates;
}

/// The shortest decimal within `tolerance` (relative) of `value`, else
/// `value`.
double snap(double value, double tolerance) {
  for (double candidate : shortDecimals(value))
    if (isClose(value, candidate, tolerance))
      return candidate;
  return value;
}

/// The spec whose inverse frequencies (for h = invFreq.size() pairs, all
/// positive and finite) are `invFreq`: `base^(−i/h) / factor` when they are
/// that (linear scaling for factor ≠ 1), else explicit per-frequency factors.
FailureOr<RotarySpecAttr> recoverSpec(MLIRContext *ctx,
                                      ArrayRef<double> invFreq,
                                      RotaryLayout layout, bool inverse,
                                      double scale) {
  int64_t h = invFreq.size();
  auto frequency = [&](double base, int64_t i) {
    return std::pow(base, -static_cast<double>(i) / static_cast<double>(h));
  };
  auto fits = [&](double base, double factor) {
    for (int64_t i = 0; i < h; ++i)
      if (!isClose(invFreq[i], frequency(base, i) / factor,
                   kFrequencyTolerance))
        return false;
    return true;
  };
  auto isValidBase = [](double base) {
    return std::isfinite(base) && base > 0.0 && base != 1.0;
  };

  // Geometric: the endpoints give the ratio, the first element the factor.
  double base = 10000.0; // Irrelevant with a single frequency.
  ScalingAttrInterface scaling;
  std::optional<double> fit;
  SmallVector<double> bases =
      h > 1 ? shortDecimals(std::pow(invFreq[h - 1] / invFreq[0],
                                     -static_cast<double>(h) /
                                         static_cast<double>(h - 1)))
            : SmallVector<double>{base};
  for (double candidate : bases) {
    if (!isValidBase(candidate))
      continue;
    for (double factor : shortDecimals(1.0 / invFreq[0])) {
      if (!fits(candidate, factor))
        continue;
      base = candidate;
      fit = factor;
      break;
    }
    if (fit)
      break;
  }
  if (fit && *fit != 1.0) {
    scaling = LinearScalingAttr::get(ctx, *fit);
  } else if (!fit) {
    if (h < 2)
      return failure();
    // Per-frequency factors relative to the base of the two highest
    // frequencies, which the usual schemes (Llama 3, YaRN) leave unscaled.
    // Any base represents the frequencies exactly; this one keeps the
    // factors near 1 where nothing was scaled.
    double estimate =
        std::pow(invFreq[1] / invFreq[0], -static_cast<double>(h));
    base = 10000.0;
    for (double candidate : shortDecimals(estimate)) {
      if (isValidBase(candidate) &&
          isClose(invFreq[1] / invFreq[0], frequency(candidate, 1),
                  kFrequencyTolerance)) {
        base = candidate;
        break;
      }
    }
    // Each factor as the shortest decimal that keeps its frequency within
    // the tolerance of a geometric fit.
    SmallVector<double> factors;
    for (int64_t i = 0; i < h; ++i) {
      double factor = frequency(base, i) / invFreq[i];
      if (!std::isfinite(factor) || factor <= 0.0)
        return failure();
      factors.push_back(snap(factor, kFrequencyTolerance));
    }
    scaling = FreqFactorsScalingAttr::get(ctx, factors);
  }
  std::optional<double> attentionFactor;
  if (scale != 1.0)
    attentionFactor = snap(scale, kSnapTolerance);
  return RotarySpecAttr::get(ctx, base, /*dims=*/0, /*offset=*/0, layout,
                             scaling, attentionFactor, inverse);
}

//===----------------------------------------------------------------------===//
// Opaque tables
//===----------------------------------------------------------------------===//

/// Whether `t` reads a float tensor element for element along the head of
/// an iteration space of `type`: its last dim at the head index (a table of
/// one coefficient per element), each other dim either a static 1 or a
/// leading dim of the space, in order and with a compatible extent. Such a
/// tensor is a cos or sin table of rope.rotate_with_tables whatever computed
/// it (a function argument, a weight, a slice or gather of a cache).
bool isElementTableRead(Term t, RankedTensorType type) {
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

/// The innermost tensor along the views of `t` that is an element table
/// (see isElementTableRead): the table before any broadcast to the shape of
/// the rotation. Every such tensor on the chain holds the same elements.
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

/// Where the table `t` reads (an element table) lies in an iteration space
/// of rank `rank`: its dims that vary (`kept`, the head dim last), the
/// space's dims they follow, and its shape in the broadcast form of
/// rope.rotate_with_tables (the space's rank, unit dims elsewhere).
struct ElementTableLayout {
  SmallVector<int64_t> kept, follows, shape;
};

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

/// The table `t` reads (an element table) reshaped to the rank of the
/// iteration space: its unit dims dropped (keepDims), then the space's unit
/// dims inserted, each into the next kept dim.
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
    return recoverSpec(ctx, invFreq, pairs.getKind(), inverse, table.scale);
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
    Term root = identityTerm(op->getResult(0));

    // The rotation and where its elements land in the head.
    Operation *rotation = nullptr;
    int64_t offset = 0;
    for (int64_t j = 0; j < headDim && !rotation; ++j) {
      Term element = peelViews(atHeadIndex(root, j));
      Operation *candidate = element.value.getDefiningOp();
      if (!isa_and_nonnull<RotateOp, RotateWithTablesOp>(candidate))
        continue;
      auto last = dyn_cast<AffineConstantExpr>(element.map.getResults().back());
      if (!last)
        continue;
      rotation = candidate;
      offset = j - last.getValue();
    }
    if (!rotation)
      return rewriter.notifyMatchFailure(op, "no rotation inside");
    Value rotationInput = rotation->getOperand(0);
    auto rotatedType = cast<RankedTensorType>(rotationInput.getType());
    int64_t rotatedDim = rotatedType.getShape().back();
    if (rotatedType.getRank() != type.getRank() || offset < 0 ||
        offset + rotatedDim > headDim || rotatedDim == headDim)
      return rewriter.notifyMatchFailure(op, "rotation does not fit the head");

    // The full tensor the rotated elements were taken from.
    Value input;
    for (Term t = identityTerm(rotationInput);;) {
      if (t.value.getType() == type) {
        input = t.value;
        break;
      }
      std::optional<Term> next = stepView(t);
      if (!next)
        return rewriter.notifyMatchFailure(op, "rotated slice of what?");
      t = *next;
    }

    // Element by element: rotated elements come from the rotation of the
    // input's elements at the same place, the others from the input.
    Term inputTerm = identityTerm(input);
    Term rotatedTerm = identityTerm(rotation->getResult(0));
    Term rotationInputTerm = identityTerm(rotationInput);
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

    if (auto withTables = dyn_cast<RotateWithTablesOp>(rotation)) {
      // The tables follow the rotation's leading dims, which are the
      // input's: they stay as they are.
      rewriter.replaceOpWithNewOp<RotateWithTablesOp>(
          op, input, withTables.getCos(), withTables.getSin(),
          withTables.getLayout(), withTables.getRotaryDims(),
          offset + withTables.getRotaryOffset(), withTables.getSeqDim());
      return success();
    }
    auto rotate = cast<RotateOp>(rotation);
    RotarySpecAttr spec = rotate.getSpec();
    auto partial = RotarySpecAttr::get(
        op->getContext(), spec.getBase(), spec.getRotaryDims(rotatedDim),
        offset + spec.getOffset(), spec.getLayout(), spec.getScaling(),
        spec.getAttentionFactor(), spec.getInverse());
    rewriter.replaceOpWithNewOp<RotateOp>(op, input, rotate.getPositions(),
                                          partial, rotate.getSeqDim());
    return success();
  }
};

struct RopeRaisePass : public rope::impl::RopeRaiseBase<RopeRaisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseRotaryPatterns(patterns);
    // Only raise: leave unrelated IR as it is (no folding or constant CSE);
    // the ops a raised rotation replaced die with it.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
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
}
