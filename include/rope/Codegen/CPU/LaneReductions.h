//===- LaneReductions.h - reductions across lanes, 16 at once --*- C++ -*-===//
//-*-===//
//
// Reducing 16 outputs at once instead of one register at a time: the
// innermost-dim vector.multi_reduction that both the decode lane sums
// (--rope-vectorize-contractions) and the attention tiles' row max and row
// sum (--rope-vectorize-row-reductions) leave, lowered as whole-vector ops
// and a butterfly of shuffles across the 16 outputs' registers.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_LANEREDUCTIONS_H
#define ROPE_CODEGEN_CPU_LANEREDUCTIONS_H

#include "mlir/IR/PatternMatch.h"

#include <cstdint>

namespace mlir::rope {

/// Outputs (and f32 lanes of an AVX-512 register) that one lane reduction
/// serves.
constexpr int64_t kReductionLanes = 16;

/// Adds the pattern that lowers a vector.multi_reduction over the innermost
/// dim of a source holding kReductionLanes outputs of k · kReductionLanes
/// elements each (any combining kind): each output's k slices of 16 lanes
/// combined elementwise (whole vectors, one register per output), then the
/// 16 registers paired up four times, each pair's two shuffles gathering
/// the halves of its outputs' runs of lanes into two registers that one
/// combination merges (16 lanes per output, then 8, 4, 2, 1: 15
/// combinations and 30 shuffles in all, until output o is lane o). Reducing
/// each output's register across its own lanes instead takes log₂ 16
/// dependent shuffles and combinations per output (64 in all), and a full
/// 16 × 16 transpose before a tree of combinations 64 shuffles. `benefit`
/// should put it above the generic multi-reduction lowerings.
void populateLaneReductionPatterns(RewritePatternSet &patterns,
                                   PatternBenefit benefit);

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_LANEREDUCTIONS_H
