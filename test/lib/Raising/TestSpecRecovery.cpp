//===- TestSpecRecovery.cpp - spec -> frequencies -> spec round trip ------===//
//
// --rope-raise recovers a spec from the frequencies it finds in the IR
// (recoverRotarySpec). This testing aid checks recovery against the spec's
// own frequency code (RotarySpecAttr::getInverseFrequencies) for every
// rope.rotate of the input: the frequencies of the spec that is recovered
// from a spec's frequencies must be those frequencies. A lit test can so
// cover every scaling kind, including the ones whose frequencies no
// frontend test spells out.
//
//===----------------------------------------------------------------------===//

#include "RopeTestPasses.h"

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Raising/SpecRecovery.h"

#include "mlir/Pass/Pass.h"

#include <cmath>

namespace mlir::rope::test {
#define GEN_PASS_DECL_ROPETESTSPECRECOVERY
#define GEN_PASS_DEF_ROPETESTSPECRECOVERY
#include "TestPasses.h.inc"
} // namespace mlir::rope::test

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Slack on top of recovery's own tolerances for the double roundings of
/// computing the frequencies twice (a few ulps of f64).
constexpr double kRoundingSlack = 0x1p-50;

bool isClose(double value, double expected, double tolerance) {
  return std::abs(value - expected) <=
         (tolerance + kRoundingSlack) * std::abs(expected);
}

struct RopeTestSpecRecoveryPass
    : public rope::test::impl::RopeTestSpecRecoveryBase<RopeTestSpecRecoveryPass> {
  using Base::Base;

  void runOnOperation() override {
    // Every rotation is checked, so that one run reports every failure.
    bool allRoundTrip = true;
    getOperation()->walk([&](RotateOp op) {
      if (failed(checkRoundTrip(op)))
        allRoundTrip = false;
    });
    if (!allRoundTrip)
      signalPassFailure();
  }

  /// Recovers a spec from the frequencies of `op`'s spec at the largest
  /// position `maxPosition`, checks that it has the same frequencies and
  /// attention factor, and says whether it is the same spec.
  LogicalResult checkRoundTrip(RotateOp op) {
    RotarySpecAttr spec = op.getSpec();
    int64_t headDim = op.getHeadDim();
    SmallVector<double> invFreq =
        spec.getInverseFrequencies(headDim, maxPosition);
    FailureOr<RotarySpecAttr> recovered = recoverRotarySpec(
        op.getContext(), invFreq, spec.getLayout(), spec.getInverse(),
        spec.getEffectiveAttentionFactor());
    if (failed(recovered))
      return op.emitError() << "no spec recovered from the frequencies of "
                            << spec;
    // Recovery sees the frequencies of the rotated dims only; --rope-raise
    // takes the rotated dims from where they sit in the head.
    RotarySpecAttr roundTrip = RotarySpecAttr::get(
        op.getContext(), recovered->getBase(), spec.getDims(),
        spec.getOffset(), recovered->getLayout(), recovered->getScaling(),
        recovered->getAttentionFactor(), recovered->getInverse());
    if (failed(roundTrip.verifyForHeadDim(
            [&] { return op.emitOpError("recovers an invalid spec: "); },
            headDim)))
      return failure();
    SmallVector<double> recoveredFreq =
        roundTrip.getInverseFrequencies(headDim, maxPosition);
    if (recoveredFreq.size() != invFreq.size())
      return op.emitError() << "recovered " << roundTrip << " with "
                            << recoveredFreq.size() << " frequencies, not "
                            << invFreq.size();
    for (auto [i, expected, actual] :
         llvm::enumerate(invFreq, recoveredFreq)) {
      if (!isClose(actual, expected, kRecoveredFrequencyTolerance))
        return op.emitError()
               << "recovered " << roundTrip << " whose frequency " << i
               << " is " << actual << ", not " << expected;
    }
    double expectedFactor = spec.getEffectiveAttentionFactor();
    double actualFactor = roundTrip.getEffectiveAttentionFactor();
    if (!isClose(actualFactor, expectedFactor,
                 kRecoveredAttentionFactorTolerance))
      return op.emitError() << "recovered " << roundTrip
                            << " whose attention factor is " << actualFactor
                            << ", not " << expectedFactor;
    if (roundTrip.getLayout() != spec.getLayout() ||
        roundTrip.getInverse() != spec.getInverse())
      return op.emitError() << "recovered " << roundTrip
                            << " of another layout or direction";
    if (roundTrip == spec)
      op.emitRemark() << "same spec: " << roundTrip;
    else
      op.emitRemark() << "same frequencies: " << roundTrip;
    return success();
  }
};

} // namespace

void mlir::rope::test::registerTestSpecRecoveryPass() {
  registerPass([] { return createRopeTestSpecRecovery(); });
}
