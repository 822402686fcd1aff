//===- DecomposeAttentionRows.cpp - attention as one query row per tile ---===//
//
// --rope-decompose-attention-rows (GPU): attention configured as one query
// row per tile (a thread's row on the GPU), key tiles in a loop.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Transforms/Passes.h"
#include "rope/Dialect/Rope/Transforms/Transforms.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEATTENTIONROWS
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "rope/Dialect/Rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

struct RopeDecomposeAttentionRowsPass
    : public rope::impl::RopeDecomposeAttentionRowsBase<
          RopeDecomposeAttentionRowsPass> {
  using RopeDecomposeAttentionRowsBase::RopeDecomposeAttentionRowsBase;

  void runOnOperation() override {
    if (keyTile <= 0) {
      getOperation()->emitError()
          << "rope-decompose-attention-rows: key-tile must be positive, got "
          << static_cast<int64_t>(keyTile);
      return signalPassFailure();
    }
    AttentionTilingOptions options;
    options.keyTile = keyTile;
    options.oneRowPerTile = true;
    options.unmaskVisibleKeyTiles = false;
    // A row's temporaries have the head dims' sizes: static ones only.
    auto staticHeads = [](AttentionOp op) {
      int64_t d = op.getQuery().getType().getDimSize(3);
      int64_t dv = op.getValue().getType().getDimSize(3);
      return !ShapedType::isDynamic(d) && !ShapedType::isDynamic(dv) &&
             d != 0 && dv != 0;
    };
    if (failed(tileAndDecomposeAttention(getOperation(), options, staticHeads)))
      signalPassFailure();
  }
};

} // namespace
