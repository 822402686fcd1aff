//===- TableTiling.cpp - tiling of rope.table -----------------------------===//
//
// TilingInterface of rope.table: the iteration domain is the positions' dims
// and the pair index; a tile is the table of a slice of the positions, taken
// over every pair (the pair index stays whole: a tile of it would need its
// own slice of the inverse frequencies, which the table builds itself). A
// spec whose frequencies depend on the largest position does not tile.
// This is what lets a loop over key tiles compute each tile's cos/sin where
// it reads them (rope-tile-attention, decode over an un-rotated cache).
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rope;

SmallVector<utils::IteratorType> TableOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(getCos().getType().getRank(),
                                          utils::IteratorType::parallel);
}

SmallVector<Range> TableOp::getIterationDomain(OpBuilder &b) {
  SmallVector<Range> domain;
  for (OpFoldResult size : tensor::getMixedSizes(b, getLoc(), getCos()))
    domain.push_back(Range{b.getIndexAttr(0), size, b.getIndexAttr(1)});
  return domain;
}

FailureOr<TilingResult>
TableOp::getTiledImplementation(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                                ArrayRef<OpFoldResult> sizes) {
  int64_t pairs = getCos().getType().getShape().back();
  std::optional<int64_t> pairOffset = getConstantIntValue(offsets.back());
  std::optional<int64_t> pairCount = getConstantIntValue(sizes.back());
  if (getSpec().dependsOnMaxPosition() || pairOffset != 0 || pairCount != pairs)
    return failure();
  unsigned rank = getPositions().getType().getRank();
  auto slice = tensor::ExtractSliceOp::create(
      b, getLoc(), getPositions(), offsets.take_front(rank),
      sizes.take_front(rank),
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
  auto tiled =
      TableOp::create(b, getLoc(), slice.getResult(), getSpec(), getHeadDim());
  return TilingResult{{tiled.getOperation()},
                      SmallVector<Value>(tiled->getResults()),
                      {slice.getOperation()}};
}

LogicalResult TableOp::getResultTilePosition(
    OpBuilder &, unsigned, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultSizes.assign(sizes.begin(), sizes.end());
  return success();
}

FailureOr<TilingResult>
TableOp::generateResultTileValue(OpBuilder &b, unsigned,
                                 ArrayRef<OpFoldResult> offsets,
                                 ArrayRef<OpFoldResult> sizes) {
  return getTiledImplementation(b, offsets, sizes);
}
