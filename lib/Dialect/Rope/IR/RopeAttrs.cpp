//===- RopeAttrs.cpp - rope attributes ------------------------------------===//
//
// The rotary spec, its scaling kinds and the frequency math they imply. The
// formulas are those of Hugging Face modeling_rope_utils (docs/Dialects);
// they run at compile time in f64, so the lowering emits exact constants.
// The inverse, a spec from its frequencies, is in SpecRecovery.cpp.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeAttrs.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rope;

//===----------------------------------------------------------------------===//
// Parameter parsing helpers
//===----------------------------------------------------------------------===//

FailureOr<bool> mlir::rope::detail::parseBool(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected 'true' or 'false'");
}

FailureOr<SmallVector<double>> mlir::rope::detail::parseF64List(AsmParser &parser) {
  SmallVector<double> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        double v;
        if (parser.parseFloat(v))
          return failure();
        values.push_back(v);
        return success();
      }))
    return failure();
  return values;
}

void mlir::rope::detail::printF64List(AsmPrinter &printer,
                                      ArrayRef<double> values) {
  printer << '[';
  llvm::interleaveComma(values, printer, [&](double v) { printer << v; });
  printer << ']';
}

#include "rope/Dialect/Rope/IR/RopeEnums.cpp.inc"
#include "rope/Dialect/Rope/IR/RopeAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "rope/Dialect/Rope/IR/RopeAttrs.cpp.inc"

void RopeDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "rope/Dialect/Rope/IR/RopeAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Shared math
//===----------------------------------------------------------------------===//

/// f_i = base^(-2i/r), i = 0..r/2-1.
static SmallVector<double> baseFrequencies(double base, int64_t rotaryDims) {
  SmallVector<double> freqs;
  for (int64_t i = 0; i < rotaryDims / 2; ++i)
    freqs.push_back(std::pow(base, -2.0 * static_cast<double>(i) /
                                       static_cast<double>(rotaryDims)));
  return freqs;
}

static bool isPositiveFinite(double v) { return std::isfinite(v) && v > 0.0; }

static LogicalResult checkPositive(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef name, double value) {
  if (!isPositiveFinite(value))
    return emitError() << "expects '" << name
                       << "' to be positive and finite, got " << value;
  return success();
}

static LogicalResult checkFactorList(function_ref<InFlightDiagnostic()> emitError,
                                     StringRef name, ArrayRef<double> values) {
  if (values.empty())
    return emitError() << "expects '" << name << "' to be non-empty";
  for (double v : values)
    if (!isPositiveFinite(v))
      return emitError() << "expects every entry of '" << name
                         << "' to be positive and finite, got " << v;
  return success();
}

static LogicalResult checkListLength(function_ref<InFlightDiagnostic()> emitError,
                                     StringRef name, ArrayRef<double> values,
                                     int64_t rotaryDims) {
  if (static_cast<int64_t>(values.size()) != rotaryDims / 2)
    return emitError() << "expects '" << name << "' to have rotary_dims/2 = "
                       << rotaryDims / 2 << " entries, got " << values.size();
  return success();
}

//===----------------------------------------------------------------------===//
// #rope.linear
//===----------------------------------------------------------------------===//

LogicalResult LinearScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                        double factor) {
  return checkPositive(emitError, "factor", factor);
}

SmallVector<double> LinearScalingAttr::getInverseFrequencies(double base,
                                                             int64_t rotaryDims,
                                                             int64_t) const {
  SmallVector<double> freqs = baseFrequencies(base, rotaryDims);
  for (double &f : freqs)
    f /= getFactor();
  return freqs;
}

bool LinearScalingAttr::dependsOnMaxPosition() const { return false; }
double LinearScalingAttr::getDefaultAttentionFactor() const { return 1.0; }
LogicalResult LinearScalingAttr::verifyForRotaryDims(
    function_ref<InFlightDiagnostic()>, int64_t) const {
  return success();
}

//===----------------------------------------------------------------------===//
// #rope.dynamic
//===----------------------------------------------------------------------===//

LogicalResult DynamicScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                         double factor, int64_t originalMax) {
  if (failed(checkPositive(emitError, "factor", factor)))
    return failure();
  if (originalMax <= 0)
    return emitError() << "expects 'original_max_position_embeddings' to be "
                          "positive, got "
                       << originalMax;
  return success();
}

SmallVector<double> DynamicScalingAttr::getInverseFrequencies(
    double base, int64_t rotaryDims, int64_t maxPosition) const {
  double orig = static_cast<double>(getOriginalMaxPositionEmbeddings());
  double len = std::max(static_cast<double>(maxPosition) + 1.0, orig);
  double r = static_cast<double>(rotaryDims);
  double scaledBase =
      base * std::pow(getFactor() * len / orig - (getFactor() - 1.0), r / (r - 2.0));
  return baseFrequencies(scaledBase, rotaryDims);
}

bool DynamicScalingAttr::dependsOnMaxPosition() const { return true; }
double DynamicScalingAttr::getDefaultAttentionFactor() const { return 1.0; }
LogicalResult DynamicScalingAttr::verifyForRotaryDims(
    function_ref<InFlightDiagnostic()> emitError, int64_t rotaryDims) const {
  // The NTK exponent r/(r-2) needs r > 2.
  if (rotaryDims <= 2)
    return emitError() << "dynamic scaling needs rotary dims > 2, got "
                       << rotaryDims;
  return success();
}

//===----------------------------------------------------------------------===//
// #rope.yarn
//===----------------------------------------------------------------------===//

LogicalResult YarnScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      double factor, int64_t originalMax,
                                      double betaFast, double betaSlow,
                                      std::optional<double> mscale,
                                      std::optional<double> mscaleAllDim,
                                      bool) {
  if (failed(checkPositive(emitError, "factor", factor)) ||
      failed(checkPositive(emitError, "beta_fast", betaFast)) ||
      failed(checkPositive(emitError, "beta_slow", betaSlow)))
    return failure();
  if (originalMax <= 0)
    return emitError() << "expects 'original_max_position_embeddings' to be "
                          "positive, got "
                       << originalMax;
  if (mscale && failed(checkPositive(emitError, "mscale", *mscale)))
    return failure();
  if (mscaleAllDim &&
      failed(checkPositive(emitError, "mscale_all_dim", *mscaleAllDim)))
    return failure();
  return success();
}

SmallVector<double> YarnScalingAttr::getInverseFrequencies(double base,
                                                           int64_t rotaryDims,
                                                           int64_t) const {
  double dim = static_cast<double>(rotaryDims);
  double orig = static_cast<double>(getOriginalMaxPositionEmbeddings());
  // Dimension index at which a frequency completes `rotations` turns over the
  // original context.
  auto correctionDim = [&](double rotations) {
    return dim * std::log(orig / (rotations * 2.0 * M_PI)) / (2.0 * std::log(base));
  };
  double low = correctionDim(getBetaFast());
  double high = correctionDim(getBetaSlow());
  if (getTruncate()) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, dim - 1.0);
  if (low == high)
    high += 0.001; // Avoid a zero-width ramp.

  SmallVector<double> freqs = baseFrequencies(base, rotaryDims);
  for (auto [j, f] : llvm::enumerate(freqs)) {
    double ramp =
        std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);
    double extrapolationWeight = 1.0 - ramp;
    double interpolated = f / getFactor();
    f = interpolated * (1.0 - extrapolationWeight) + f * extrapolationWeight;
  }
  return freqs;
}

bool YarnScalingAttr::dependsOnMaxPosition() const { return false; }

double YarnScalingAttr::getDefaultAttentionFactor() const {
  auto mscaleOf = [](double scale, double m) {
    return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
  };
  if (getMscale() && getMscaleAllDim())
    return mscaleOf(getFactor(), *getMscale()) /
           mscaleOf(getFactor(), *getMscaleAllDim());
  return mscaleOf(getFactor(), 1.0);
}

LogicalResult YarnScalingAttr::verifyForRotaryDims(
    function_ref<InFlightDiagnostic()>, int64_t) const {
  return success();
}

//===----------------------------------------------------------------------===//
// #rope.llama3
//===----------------------------------------------------------------------===//

LogicalResult Llama3ScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                        double factor, double lowFreqFactor,
                                        double highFreqFactor,
                                        int64_t originalMax) {
  if (failed(checkPositive(emitError, "factor", factor)) ||
      failed(checkPositive(emitError, "low_freq_factor", lowFreqFactor)) ||
      failed(checkPositive(emitError, "high_freq_factor", highFreqFactor)))
    return failure();
  // The smoothing divides by (high - low).
  if (highFreqFactor <= lowFreqFactor)
    return emitError() << "expects 'high_freq_factor' (" << highFreqFactor
                       << ") to be greater than 'low_freq_factor' ("
                       << lowFreqFactor << ")";
  if (originalMax <= 0)
    return emitError() << "expects 'original_max_position_embeddings' to be "
                          "positive, got "
                       << originalMax;
  return success();
}

SmallVector<double> Llama3ScalingAttr::getInverseFrequencies(double base,
                                                             int64_t rotaryDims,
                                                             int64_t) const {
  double orig = static_cast<double>(getOriginalMaxPositionEmbeddings());
  double lowWavelen = orig / getLowFreqFactor();
  double highWavelen = orig / getHighFreqFactor();
  SmallVector<double> freqs = baseFrequencies(base, rotaryDims);
  for (double &f : freqs) {
    double wavelen = 2.0 * M_PI / f;
    if (wavelen > lowWavelen) {
      f = f / getFactor();
    } else if (wavelen >= highWavelen) {
      double smooth = (orig / wavelen - getLowFreqFactor()) /
                      (getHighFreqFactor() - getLowFreqFactor());
      f = (1.0 - smooth) * f / getFactor() + smooth * f;
    }
  }
  return freqs;
}

bool Llama3ScalingAttr::dependsOnMaxPosition() const { return false; }
double Llama3ScalingAttr::getDefaultAttentionFactor() const { return 1.0; }
LogicalResult Llama3ScalingAttr::verifyForRotaryDims(
    function_ref<InFlightDiagnostic()>, int64_t) const {
  return success();
}

//===----------------------------------------------------------------------===//
// #rope.longrope
//===----------------------------------------------------------------------===//

LogicalResult LongRopeScalingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<double> shortFactor,
    ArrayRef<double> longFactor, double factor, int64_t originalMax) {
  if (failed(checkFactorList(emitError, "short_factor", shortFactor)) ||
      failed(checkFactorList(emitError, "long_factor", longFactor)) ||
      failed(checkPositive(emitError, "factor", factor)))
    return failure();
  if (shortFactor.size() != longFactor.size())
    return emitError() << "expects 'short_factor' and 'long_factor' to have the "
                          "same length, got "
                       << shortFactor.size() << " and " << longFactor.size();
  if (originalMax <= 1)
    return emitError() << "expects 'original_max_position_embeddings' to be "
                          "greater than 1, got "
                       << originalMax;
  return success();
}

SmallVector<double> LongRopeScalingAttr::getInverseFrequencies(
    double base, int64_t rotaryDims, int64_t maxPosition) const {
  // maxPosition + 1 > L_orig, written so that INT64_MAX does not overflow.
  ArrayRef<double> ext = maxPosition >= getOriginalMaxPositionEmbeddings()
                             ? getLongFactor()
                             : getShortFactor();
  SmallVector<double> freqs = baseFrequencies(base, rotaryDims);
  for (auto [f, e] : llvm::zip_equal(freqs, ext))
    f /= e;
  return freqs;
}

bool LongRopeScalingAttr::dependsOnMaxPosition() const { return true; }

double LongRopeScalingAttr::getDefaultAttentionFactor() const {
  if (getFactor() <= 1.0)
    return 1.0;
  return std::sqrt(1.0 + std::log(getFactor()) /
                             std::log(static_cast<double>(
                                 getOriginalMaxPositionEmbeddings())));
}

LogicalResult LongRopeScalingAttr::verifyForRotaryDims(
    function_ref<InFlightDiagnostic()> emitError, int64_t rotaryDims) const {
  return checkListLength(emitError, "short_factor", getShortFactor(), rotaryDims);
}

//===----------------------------------------------------------------------===//
// #rope.freq_factors
//===----------------------------------------------------------------------===//

LogicalResult FreqFactorsScalingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<double> factors) {
  return checkFactorList(emitError, "factors", factors);
}

SmallVector<double> FreqFactorsScalingAttr::getInverseFrequencies(
    double base, int64_t rotaryDims, int64_t) const {
  SmallVector<double> freqs = baseFrequencies(base, rotaryDims);
  for (auto [f, d] : llvm::zip_equal(freqs, getFactors()))
    f /= d;
  return freqs;
}

bool FreqFactorsScalingAttr::dependsOnMaxPosition() const { return false; }
double FreqFactorsScalingAttr::getDefaultAttentionFactor() const { return 1.0; }
LogicalResult FreqFactorsScalingAttr::verifyForRotaryDims(
    function_ref<InFlightDiagnostic()> emitError, int64_t rotaryDims) const {
  return checkListLength(emitError, "factors", getFactors(), rotaryDims);
}

//===----------------------------------------------------------------------===//
// #rope.spec
//===----------------------------------------------------------------------===//

LogicalResult RotarySpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                     double base, int64_t dims, int64_t offset,
                                     RotaryLayout, ScalingAttrInterface scaling,
                                     std::optional<double> attentionFactor,
                                     bool) {
  if (failed(checkPositive(emitError, "base", base)))
    return failure();
  // Below 1 the frequencies base^(-2i/r) grow instead of decaying from 1
  // (base = 1e-40 makes them 1e40 radians per position: noise).
  if (base <= 1.0)
    return emitError() << "expects 'base' to be greater than 1 (the "
                          "frequencies base^(-2i/r) decay from 1), got "
                       << base;
  if (dims < 0 || dims % 2 != 0)
    return emitError() << "expects 'dims' to be even and non-negative (0 means "
                          "the whole head dim), got "
                       << dims;
  if (offset < 0)
    return emitError() << "expects 'offset' to be non-negative, got " << offset;
  if (attentionFactor &&
      failed(checkPositive(emitError, "attention_factor", *attentionFactor)))
    return failure();
  if (dims != 0 && scaling &&
      failed(scaling.verifyForRotaryDims(emitError, dims)))
    return failure();
  return success();
}

double RotarySpecAttr::getEffectiveAttentionFactor() const {
  if (getAttentionFactor())
    return *getAttentionFactor();
  return getScaling() ? getScaling().getDefaultAttentionFactor() : 1.0;
}

SmallVector<double> RotarySpecAttr::getInverseFrequencies(int64_t headDim,
                                                          int64_t maxPosition) const {
  int64_t r = getRotaryDims(headDim);
  if (!getScaling())
    return baseFrequencies(getBase(), r);
  return getScaling().getInverseFrequencies(getBase(), r, maxPosition);
}

LogicalResult RotarySpecAttr::verifyForHeadDim(
    function_ref<InFlightDiagnostic()> emitError, int64_t headDim) const {
  int64_t r = getRotaryDims(headDim);
  if (r <= 0 || r % 2 != 0)
    return emitError() << "rotary dims must be even and positive, got " << r
                       << " (head dim " << headDim << ")";
  if (r > kMaxFrequencyDims)
    return emitError() << "rotary dims " << r << " exceed the supported maximum "
                       << kMaxFrequencyDims
                       << " (the frequencies are compile-time constants)";
  // offset + r may overflow int64_t (offset is any non-negative integer);
  // as uint64_t it cannot.
  if (r > headDim || getOffset() > headDim - r)
    return emitError() << "rotary dims [" << getOffset() << ", "
                       << static_cast<uint64_t>(getOffset()) +
                              static_cast<uint64_t>(r)
                       << ") exceed the head dim " << headDim;
  if (getScaling() && failed(getScaling().verifyForRotaryDims(emitError, r)))
    return failure();
  return verifyImpliedNumbers(emitError, headDim);
}

LogicalResult RotarySpecAttr::verifyImpliedNumbers(
    function_ref<InFlightDiagnostic()> emitError, int64_t headDim) const {
  // Each parameter may be in range while what it implies is not: a factor
  // of 4.9e-324 divides a frequency into inf, a yarn boundary that small
  // makes its ramp 0/0. Frequencies that depend on the largest position
  // are checked at both ends of the positions.
  SmallVector<int64_t, 2> maxPositions = {0};
  if (dependsOnMaxPosition())
    maxPositions.push_back(std::numeric_limits<int64_t>::max() - 1);
  for (int64_t maxPosition : maxPositions) {
    for (auto [i, f] :
         llvm::enumerate(getInverseFrequencies(headDim, maxPosition))) {
      if (!std::isnormal(f) || f < 0.0 || f > kMaxFrequency)
        return emitError() << "implies inverse frequency " << f << " for pair "
                           << i << " (largest position " << maxPosition
                           << "); every frequency must be positive, normal "
                              "and at most 2^20 radians per position";
    }
  }
  double m = getEffectiveAttentionFactor();
  if (!isPositiveFinite(m))
    return emitError() << "implies attention factor " << m
                       << "; it must be positive and finite";
  return success();
}

RotarySpecAttr RotarySpecAttr::getInverted() const {
  return RotarySpecAttr::get(getContext(), getBase(), getDims(), getOffset(),
                             getLayout(), getScaling(), getAttentionFactor(),
                             !getInverse());
}

//===----------------------------------------------------------------------===//
// #rope.pairs
//===----------------------------------------------------------------------===//

LogicalResult
RotaryPairsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t dims, int64_t offset, RotaryLayout) {
  if (dims < 0 || dims % 2 != 0)
    return emitError() << "expects 'dims' to be even and non-negative (0 means "
                          "the whole head dim), got "
                       << dims;
  if (offset < 0)
    return emitError() << "expects 'offset' to be non-negative, got " << offset;
  return success();
}

//===----------------------------------------------------------------------===//
// #rope.buckets
//===----------------------------------------------------------------------===//

LogicalResult
RelativeBucketsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t numBuckets, int64_t maxDistance,
                            bool bidirectional) {
  // T5 needs at least one exact bucket and one logarithmic bucket per
  // direction: max_exact = buckets per direction / 2 must be positive.
  int64_t minimum = bidirectional ? 4 : 2;
  if (numBuckets < minimum || numBuckets > (int64_t{1} << 20))
    return emitError() << "expects 'num_buckets' in [" << minimum << ", 2^20]"
                       << (bidirectional ? " (bidirectional)" : "") << ", got "
                       << numBuckets;
  int64_t maxExact = (bidirectional ? numBuckets / 2 : numBuckets) / 2;
  // log(max_distance / max_exact) is the denominator of the bucket formula.
  if (maxDistance <= maxExact)
    return emitError() << "expects 'max_distance' (" << maxDistance
                       << ") to exceed the exact buckets per direction ("
                       << maxExact << ")";
  return success();
}
