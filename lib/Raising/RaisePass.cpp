//===- RaisePass.cpp - the --rope-raise driver ----------------------------===//
//
// Applies the raising patterns (RaiseRotary.cpp, RaiseAttention.cpp) and
// nothing else: unrelated IR stays as the frontend wrote it.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Raising/Passes.h"
#include "rope/Raising/RaiseReport.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPERAISE
#include "rope/Raising/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

struct RopeRaisePass : public rope::impl::RopeRaiseBase<RopeRaisePass> {
  using RopeRaiseBase::RopeRaiseBase;

  void runOnOperation() override {
    RaiseReport nearMisses;
    RaiseReport *reportTo = report ? &nearMisses : nullptr;
    RewritePatternSet patterns(&getContext());
    populateRaiseRotaryPatterns(patterns);
    populateRaiseAttentionPatterns(patterns, reportTo);
    // Only raise: leave unrelated IR as it is (no folding or constant CSE);
    // the ops a raised rotation replaced die with it.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    config.setListener(reportTo);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    if (reportTo)
      reportTo->emitRemarks();
  }
};

} // namespace
