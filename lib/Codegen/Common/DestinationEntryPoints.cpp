//===- DestinationEntryPoints.cpp - results into the caller's buffers -----===//
//
// A public function @f gets a destination-passing form @f__into, and @f
// becomes a call of it with fresh buffers, so that one body serves both a
// caller that wants new arrays and one that reuses its own (a KV cache, an
// output buffer of a serving loop).
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/Common/Passes.h"
#include "rope/Dialect/Rope/IR/ExtentRelations.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDESTINATIONENTRYPOINTS
#include "rope/Codegen/Common/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// Rebuilds values at a function's entry from its arguments alone: the
/// extents of its tensors and the scalar arithmetic over them. Everything
/// it builds is recorded in order, so that another function with the same
/// arguments (the allocating form) can rebuild it too.
class EntryExpressions {
public:
  EntryExpressions(func::FuncOp func)
      : entry(func.getBody().front()), builder(func.getContext()) {
    builder.setInsertionPointToStart(&entry);
  }

  /// Extent `dim` of `tensor`, or failure where it is not a function of the
  /// arguments' extents.
  FailureOr<Value> extent(Value tensor, int64_t dim) {
    auto type = cast<RankedTensorType>(tensor.getType());
    Location loc = tensor.getLoc();
    if (!type.isDynamicDim(dim))
      return constant(loc, type.getDimSize(dim));
    auto key = std::make_pair(tensor, dim);
    if (Value known = extents.lookup(key))
      return known;
    FailureOr<Value> built = buildExtent(tensor, dim);
    if (succeeded(built))
      extents[key] = *built;
    return built;
  }

  /// `value` rebuilt at the entry, or failure where it depends on more than
  /// the arguments' extents and constants.
  FailureOr<Value> scalar(Value value) {
    if (Value known = scalars.lookupOrNull(value))
      return known;
    FailureOr<Value> built = buildScalar(value);
    if (succeeded(built))
      scalars.map(value, *built);
    return built;
  }

  OpBuilder &getBuilder() { return builder; }

  /// The ops built so far, in order.
  ArrayRef<Operation *> getBuilt() const { return built; }

  /// Erases what was built (nothing else uses it yet).
  void eraseBuilt() {
    for (Operation *op : llvm::reverse(built))
      op->erase();
    built.clear();
  }

private:
  FailureOr<Value> buildScalar(Value value) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() != &entry)
        return failure();
      return value;
    }
    Operation *op = value.getDefiningOp();
    if (!op || op->getBlock() != &entry || op->getNumRegions() != 0 ||
        !isMemoryEffectFree(op))
      return failure();
    if (auto dimOp = dyn_cast<tensor::DimOp>(op)) {
      std::optional<int64_t> index = dimOp.getConstantIndex();
      if (!index)
        return failure();
      return extent(dimOp.getSource(), *index);
    }
    // Pure, without regions, in the entry block: evaluating it earlier
    // changes nothing but where it runs.
    for (Value operand : op->getOperands())
      if (failed(scalar(operand)))
        return failure();
    Operation *clone = record(builder.clone(*op, scalars));
    return clone->getResult(cast<OpResult>(value).getResultNumber());
  }

  FailureOr<Value> buildExtent(Value tensor, int64_t dim) {
    Location loc = tensor.getLoc();
    if (auto argument = dyn_cast<BlockArgument>(tensor)) {
      if (argument.getOwner() != &entry)
        return failure();
      return record(tensor::DimOp::create(builder, loc, tensor,
                                          constant(loc, dim)))
          ->getResult(0);
    }
    Operation *op = tensor.getDefiningOp();
    auto result = cast<OpResult>(tensor);
    if (auto empty = dyn_cast<tensor::EmptyOp>(op))
      return scalar(empty.getDynamicSize(dim));
    // A destination-style result has its destination's shape.
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      if (dps.hasPureTensorSemantics())
        return extent(dps.getTiedOpOperand(result)->get(), dim);
    if (auto reifiable = dyn_cast<ReifyRankedShapedTypeOpInterface>(op)) {
      // Reified where the op is (its shape values may be defined there),
      // then rebuilt at the entry, and the reified ops erased.
      InsertedOps reified;
      OpBuilder atOp(op, &reified);
      ReifiedRankedShapedTypeDims shapes;
      FailureOr<Value> size = failure();
      if (succeeded(reifyResultShapes(atOp, op, shapes))) {
        OpFoldResult extent = shapes[result.getResultNumber()][dim];
        if (auto attr = dyn_cast<Attribute>(extent))
          size = constant(loc, cast<IntegerAttr>(attr).getInt());
        else
          size = scalar(cast<Value>(extent));
      }
      for (Operation *dead : llvm::reverse(reified.ops)) {
        if (!dead->use_empty())
          continue;
        for (Value value : dead->getResults())
          scalars.erase(value);
        dead->erase();
      }
      return size;
    }
    return failure();
  }

  /// The ops a builder inserted.
  struct InsertedOps : OpBuilder::Listener {
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      ops.push_back(op);
    }
    SmallVector<Operation *> ops;
  };

  Value constant(Location loc, int64_t value) {
    return record(arith::ConstantIndexOp::create(builder, loc, value))
        ->getResult(0);
  }

  Operation *record(Operation *op) {
    built.push_back(op);
    return op;
  }

  Block &entry;
  OpBuilder builder;
  IRMapping scalars;
  DenseMap<std::pair<Value, int64_t>, Value> extents;
  SmallVector<Operation *> built;
};

/// What the destination form does with one result: the value it
/// materializes and the view of its destination that receives it (a
/// reshape of the result is peeled into the same reshape of the
/// destination, so that the producer writes the caller's buffer).
struct Destination {
  Value source;
  Value view;
};

/// The view of `out` (the memref argument) that receives `result`, built at
/// the entry.
FailureOr<Destination> peelReshapes(Value result, Value out,
                                    EntryExpressions &expressions) {
  OpBuilder &b = expressions.getBuilder();
  Value view = out;
  while (true) {
    Operation *op = result.getDefiningOp();
    if (auto expand = dyn_cast_if_present<tensor::ExpandShapeOp>(op)) {
      // out[expanded] = expand(src): src goes into collapse(out).
      RankedTensorType srcType = expand.getSrcType();
      auto type = MemRefType::get(srcType.getShape(), srcType.getElementType());
      view = memref::CollapseShapeOp::create(b, expand.getLoc(), type, view,
                                             expand.getReassociationIndices());
      result = expand.getSrc();
      continue;
    }
    if (auto collapse = dyn_cast_if_present<tensor::CollapseShapeOp>(op)) {
      // out[collapsed] = collapse(src): src goes into expand(out), whose
      // extents are src's.
      RankedTensorType srcType = collapse.getSrcType();
      SmallVector<OpFoldResult> shape;
      for (int64_t d = 0; d < srcType.getRank(); ++d) {
        if (!srcType.isDynamicDim(d)) {
          shape.push_back(b.getIndexAttr(srcType.getDimSize(d)));
          continue;
        }
        FailureOr<Value> size = expressions.extent(collapse.getSrc(), d);
        if (failed(size))
          return failure();
        shape.push_back(*size);
      }
      auto type = MemRefType::get(srcType.getShape(), srcType.getElementType());
      view = memref::ExpandShapeOp::create(b, collapse.getLoc(), type, view,
                                           collapse.getReassociationIndices(),
                                           shape);
      result = collapse.getSrc();
      continue;
    }
    return Destination{result, view};
  }
}

/// Whether `func` is public, has a body of one block and returns ranked
/// tensors only.
bool takesDestinations(func::FuncOp func) {
  return func.isPublic() && !func.isExternal() &&
         func.getBody().hasOneBlock() && func.getNumResults() > 0 &&
         llvm::all_of(func.getResultTypes(), llvm::IsaPred<RankedTensorType>);
}

/// The identity-layout memref a caller passes for a result of `type`.
MemRefType destinationType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The dynamic extents of every result of `returnOp`, built at the entry
/// before the destinations exist, so that both forms can compute them from
/// the arguments alone. Where one is not known there, erases what it built
/// and fails, leaving the function as it was.
FailureOr<SmallVector<SmallVector<Value>>>
buildResultExtents(func::ReturnOp returnOp, EntryExpressions &expressions) {
  SmallVector<SmallVector<Value>> resultExtents;
  for (Value result : returnOp.getOperands()) {
    auto resultType = cast<RankedTensorType>(result.getType());
    SmallVector<Value> &sizes = resultExtents.emplace_back();
    for (int64_t d = 0; d < resultType.getRank(); ++d) {
      if (!resultType.isDynamicDim(d))
        continue;
      FailureOr<Value> size = expressions.extent(result, d);
      if (failed(size)) {
        expressions.eraseBuilt();
        return failure();
      }
      sizes.push_back(*size);
    }
  }
  return resultExtents;
}

/// Asserts at the entry that each destination in `outs` has its result's
/// extents: a caller's buffer of another size would be written out of
/// bounds, or only in part. Runs before `func` is retyped, so that the
/// message names the function the caller knows.
void checkDestinationExtents(func::FuncOp func, ArrayRef<Value> outs,
                             ArrayRef<SmallVector<Value>> resultExtents,
                             OpBuilder &b) {
  Location loc = func.getLoc();
  FunctionType type = func.getFunctionType();
  for (auto [i, out] : llvm::enumerate(outs)) {
    auto resultType = cast<RankedTensorType>(type.getResult(i));
    unsigned dynamic = 0;
    for (int64_t d = 0; d < resultType.getRank(); ++d) {
      if (!resultType.isDynamicDim(d))
        continue;
      Value given = memref::DimOp::create(b, loc, out, d);
      Value expected = resultExtents[i][dynamic++];
      Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         given, expected);
      std::string message;
      llvm::raw_string_ostream os(message);
      os << rope::formatRuntimeLocation(loc) << ": error: destination #" << i
         << " of @" << func.getSymName() << " has {0} "
         << "entries along dim " << d << ", but its result has {1}";
      rope::AssertOp::create(b, loc, same, message,
                             ValueRange{given, expected});
    }
  }
}

/// Replaces `returnOp` by writes of its results into `outs` and an empty
/// return.
void writeResultsIntoDestinations(func::ReturnOp returnOp, ArrayRef<Value> outs,
                                  EntryExpressions &expressions) {
  SmallVector<Destination> destinations;
  for (auto [result, out] : llvm::zip(returnOp.getOperands(), outs)) {
    FailureOr<Destination> destination = peelReshapes(result, out, expressions);
    // A collapse peeled above needs extents of its source; where they are
    // unknown the result is materialized as it is.
    destinations.push_back(succeeded(destination) ? *destination
                                                  : Destination{result, out});
  }
  OpBuilder &b = expressions.getBuilder();
  b.setInsertionPoint(returnOp);
  for (const Destination &destination : destinations)
    bufferization::MaterializeInDestinationOp::create(
        b, returnOp.getLoc(), /*result=*/Type(), destination.source,
        destination.view, /*restrict=*/b.getUnitAttr(),
        /*writable=*/b.getUnitAttr());
  func::ReturnOp::create(b, returnOp.getLoc());
  returnOp.erase();
}

/// Renames `func` to `intoName` and gives it the type of its destination
/// form: no results, the destinations `outs` after the arguments.
void retypeAsDestinationForm(func::FuncOp func, StringRef intoName,
                             ArrayRef<Value> outs) {
  MLIRContext *context = func.getContext();
  SmallVector<Type> intoInputs(func.getFunctionType().getInputs());
  for (Value out : outs)
    intoInputs.push_back(out.getType());
  func.setSymName(intoName);
  func.setFunctionType(FunctionType::get(context, intoInputs, {}));
  // The destinations' argument attributes (none) after the arguments'.
  if (ArrayAttr argAttrs = func.getAllArgAttrs()) {
    SmallVector<Attribute> attrs(argAttrs.begin(), argAttrs.end());
    attrs.resize(intoInputs.size(), DictionaryAttr::get(context));
    func.setAllArgAttrs(attrs);
  }
}

/// Builds the allocating form `name` of type `type` after `into` (the
/// destination form): it rebuilds the result extents from its own
/// arguments (the ops `extentOps` built in `into`), allocates fresh buffers
/// of them and calls `into`. The result attributes move to it, since only
/// it has results.
void buildAllocatingForm(func::FuncOp into, StringRef name, FunctionType type,
                         ArrayRef<Operation *> extentOps,
                         ArrayRef<SmallVector<Value>> resultExtents) {
  MLIRContext *context = into.getContext();
  Location loc = into.getLoc();
  OpBuilder after(context);
  after.setInsertionPointAfter(into);
  auto allocating = func::FuncOp::create(after, loc, name, type);
  if (ArrayAttr argAttrs = into.getAllArgAttrs())
    allocating.setAllArgAttrs(
        argAttrs.getValue().take_front(type.getNumInputs()));
  allocating.setResAttrsAttr(into.getResAttrsAttr());
  into.removeResAttrsAttr();
  Block *body = allocating.addEntryBlock();
  OpBuilder inBody = OpBuilder::atBlockBegin(body);
  IRMapping mapping;
  Block &entry = into.getBody().front();
  for (auto [from, to] :
       llvm::zip(entry.getArguments().take_front(type.getNumInputs()),
                 body->getArguments()))
    mapping.map(from, to);
  for (Operation *op : extentOps)
    inBody.clone(*op, mapping);
  SmallVector<Value> buffers, callArgs(body->getArguments());
  for (auto [i, resultType] : llvm::enumerate(type.getResults())) {
    SmallVector<Value> sizes;
    for (Value size : resultExtents[i])
      sizes.push_back(mapping.lookup(size));
    Value buffer =
        memref::AllocOp::create(inBody, loc, destinationType(resultType), sizes,
                                inBody.getI64IntegerAttr(64));
    buffers.push_back(buffer);
    callArgs.push_back(buffer);
  }
  func::CallOp::create(inBody, loc, into, callArgs);
  SmallVector<Value> results;
  for (auto [buffer, resultType] : llvm::zip(buffers, type.getResults()))
    results.push_back(bufferization::ToTensorOp::create(
        inBody, loc, resultType, buffer, /*restrict=*/true,
        /*writable=*/false));
  func::ReturnOp::create(inBody, loc, results);
}

/// Turns `func` into its destination form `intoName` and builds the
/// allocating form under its old name after it. Leaves `func` as it was
/// and fails where a result's extents are not known at the entry.
LogicalResult splitEntryPoints(func::FuncOp func, StringRef intoName) {
  Block &entry = func.getBody().front();
  auto returnOp = cast<func::ReturnOp>(entry.getTerminator());
  FunctionType type = func.getFunctionType();

  EntryExpressions expressions(func);
  FailureOr<SmallVector<SmallVector<Value>>> resultExtents =
      buildResultExtents(returnOp, expressions);
  if (failed(resultExtents))
    return failure();
  // The allocating form rebuilds the same extents over its own arguments.
  SmallVector<Operation *> extentOps(expressions.getBuilt());

  // From here on nothing fails: the function becomes @f__into.
  SmallVector<Value> outs;
  for (Type resultType : type.getResults())
    outs.push_back(
        entry.addArgument(destinationType(resultType), func.getLoc()));
  checkDestinationExtents(func, outs, *resultExtents, expressions.getBuilder());
  writeResultsIntoDestinations(returnOp, outs, expressions);
  StringAttr name = func.getSymNameAttr();
  retypeAsDestinationForm(func, intoName, outs);
  buildAllocatingForm(func, name.getValue(), type, extentOps, *resultExtents);
  return success();
}

struct RopeDestinationEntryPointsPass
    : public rope::impl::RopeDestinationEntryPointsBase<
          RopeDestinationEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (takesDestinations(func))
        functions.push_back(func);
    for (func::FuncOp func : functions) {
      std::string intoName = (func.getSymName() + "__into").str();
      if (!module.lookupSymbol(intoName))
        (void)splitEntryPoints(func, intoName);
    }
  }
};

} // namespace
