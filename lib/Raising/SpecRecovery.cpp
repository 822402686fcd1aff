//===- SpecRecovery.cpp - a rotary spec from its frequencies --------------===//
//
// Recovery mirrors the frequency code of the spec's attributes
// (RopeAttrs.cpp): it tries the forms that code computes, simplest first.
//
//===----------------------------------------------------------------------===//

#include "rope/Raising/SpecRecovery.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rope;

static bool isClose(double value, double expected, double tolerance) {
  return std::abs(value - expected) <= tolerance * std::abs(expected);
}

/// Candidates for a positive parameter estimated as `estimate`: the decimals
/// of 1 to 7 significant digits (what configs hold), then the estimate.
static SmallVector<double> shortDecimals(double estimate) {
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
static double snap(double value, double tolerance) {
  for (double candidate : shortDecimals(value))
    if (isClose(value, candidate, tolerance))
      return candidate;
  return value;
}

FailureOr<RotarySpecAttr>
mlir::rope::recoverRotarySpec(MLIRContext *ctx, ArrayRef<double> invFreq,
                              RotaryLayout layout, bool inverse,
                              double attentionFactor) {
  int64_t h = invFreq.size();
  auto frequency = [&](double base, int64_t i) {
    return std::pow(base, -static_cast<double>(i) / static_cast<double>(h));
  };
  auto fits = [&](double base, double factor) {
    for (int64_t i = 0; i < h; ++i)
      if (!isClose(invFreq[i], frequency(base, i) / factor,
                   kRecoveredFrequencyTolerance))
        return false;
    return true;
  };
  // What #rope.spec's verifier accepts: frequencies decaying from 1.
  auto isValidBase = [](double base) {
    return std::isfinite(base) && base > 1.0;
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
                  kRecoveredFrequencyTolerance)) {
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
      factors.push_back(snap(factor, kRecoveredFrequencyTolerance));
    }
    scaling = FreqFactorsScalingAttr::get(ctx, factors);
  }
  std::optional<double> statedFactor;
  if (attentionFactor != 1.0)
    statedFactor = snap(attentionFactor, kRecoveredAttentionFactorTolerance);
  return RotarySpecAttr::get(ctx, base, /*dims=*/0, /*offset=*/0, layout,
                             scaling, statedFactor, inverse);
}
