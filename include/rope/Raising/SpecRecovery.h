//===- SpecRecovery.h - a rotary spec from its frequencies ------*- C++ -*-===//
//
// The inverse of RotarySpecAttr::getInverseFrequencies: the spec whose
// frequencies are given ones. Frontends state a rotary embedding by its
// frequencies (an `inv_freq` buffer, or cos/sin caches), not by the config
// they came from; --rope-raise recovers the spec from them so that the rest
// of the pipeline works on the spec. Recovery is exact for the kinds that
// the frequencies determine (no scaling, linear), and otherwise yields
// per-frequency factors with the same frequencies.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RAISING_SPECRECOVERY_H
#define ROPE_RAISING_SPECRECOVERY_H

#include "rope/Dialect/Rope/IR/RopeAttrs.h"

namespace mlir::rope {

/// Relative distance within which a frequency counts as the one a spec
/// implies. f32 constants computed as Hugging Face does
/// (`1 / base ** (arange(0, r, 2) / r)` in f32) are within about 2^-23.
inline constexpr double kRecoveredFrequencyTolerance = 0x1p-21;

/// Relative distance within which a single f32 constant (the attention
/// factor) counts as a decimal it was rounded from (two f32 roundings).
inline constexpr double kRecoveredAttentionFactorTolerance = 0x1p-23;

/// The spec whose inverse frequencies (for h = invFreq.size() pairs, all
/// positive and finite) are `invFreq` within kRecoveredFrequencyTolerance,
/// for the whole head (`dims` and `offset` 0), with `layout`, `inverse`, and
/// `attentionFactor` within kRecoveredAttentionFactorTolerance (absent when
/// it is 1):
///
/// * `base^(−i/h) / factor` gives `base` and, when `factor != 1`,
///   `#rope.linear<factor>`, each the shortest decimal (at most 7
///   significant digits, what configs hold) that fits, else the exact fit;
/// * any other frequencies give `#rope.freq_factors` relative to the base of
///   the two highest frequencies, which the usual schemes (Llama 3, YaRN)
///   leave unscaled, each factor the shortest decimal that fits.
///
/// Fails when neither form fits.
FailureOr<RotarySpecAttr> recoverRotarySpec(MLIRContext *ctx,
                                            ArrayRef<double> invFreq,
                                            RotaryLayout layout, bool inverse,
                                            double attentionFactor);

} // namespace mlir::rope

#endif // ROPE_RAISING_SPECRECOVERY_H
