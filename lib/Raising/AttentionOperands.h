//===- AttentionOperands.h - Q, K and V of a raised attention ---*- C++ -*-===//
//
// What the files of --rope-raise's attention matcher share: the attention
// space that the matcher reads a frontend's attention in (RaiseAttention.cpp
// follows the output back through it, AttentionMaskRules.cpp evaluates masks
// over it), and the reads of Q, K and V in that space (AttentionOperands.cpp):
// the tensors a frontend's products read, found however many transposes,
// reshapes and kv-head repeats lie between them and their use.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_RAISING_ATTENTIONOPERANDS_H
#define ROPE_LIB_RAISING_ATTENTIONOPERANDS_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <cstdint>
#include <utility>

namespace mlir {
class OpBuilder;
namespace rope::analysis {
struct Size;
struct Term;
struct ViewOptions;
} // namespace rope::analysis
} // namespace mlir

namespace mlir::rope::raising {

/// The attention space: n (batch·head, as the batched products run over
/// them), i (query), j (key), e (value dim), d (head dim).
enum AttentionDim : unsigned { kN, kI, kJ, kE, kD, kNumDims };

inline AffineExpr dimExpr(MLIRContext *ctx, AttentionDim dim) {
  return getAffineDimExpr(dim, ctx);
}

/// The extent of n for `batch` batches (dynamic or not) of `heads` heads;
/// dynamic where the product does not fit in int64 (a mutant's extents):
/// what holds at every n holds at those.
inline int64_t batchHeadExtent(int64_t batch, int64_t heads) {
  int64_t product;
  if (ShapedType::isDynamic(batch) ||
      llvm::MulOverflow<int64_t>(batch, heads, product))
    return ShapedType::kDynamic;
  return product;
}

/// The deepest tensor along the views `t` reads through (not into a linalg
/// body's computation) that `accepts` the term it is read by: a frontend's
/// Q, K, V or mask in the layout attention wants, however many transposes
/// and reshapes the export put between it and its use. The deepest, so that
/// a repeat of kv heads or a broadcast mask is read from before it. Views
/// are stepped through as `options` allow.
Value deepestTensorRead(analysis::Term t, analysis::ViewOptions options,
                        function_ref<bool(analysis::Term)> accepts);

/// Where an attention operand comes from: `source`, of rank 2 to 4, read
/// at attention's [B, H, S, D] indices once its dims are permuted by
/// `permutation` (source dim permutation[p] is read at the p-th of the
/// trailing indices; the identity when it is laid out as attention wants);
/// the leading indices that a lower rank lacks are unit dims.
struct OperandRead {
  Value source;
  SmallVector<int64_t, 4> permutation;

  explicit operator bool() const { return static_cast<bool>(source); }
  RankedTensorType getSourceType() const {
    return cast<RankedTensorType>(source.getType());
  }
  int64_t getDimSize(int64_t p) const {
    int64_t missing = 4 - getSourceType().getRank();
    return p < missing ? 1
                       : getSourceType().getDimSize(permutation[p - missing]);
  }
  /// The size of attention dim `p` (B, H, S or D) of the operand.
  analysis::Size getSize(int64_t p) const;
  /// The operand itself as [B, H, S, D]: transposed into place and given
  /// its leading unit dims if need be.
  Value materialize(OpBuilder &b, Location loc) const;
};

/// Whether index expressions `a` and `b` agree at every point: the same
/// expression, or functions of the batch·head index n alone that agree at
/// each of its `nExtent` values. A collapse of [B, H] followed by an expand
/// (GQA's repeat, with batch > 1) spells (b, h) as `n floordiv H`,
/// `(n mod H) floordiv G`, ... in forms the simplifier does not unify.
/// a − b is a linear function plus a periodic one whose period P divides
/// the product of the divisors of both, so agreeing at 0 .. 2P − 1 (two
/// periods: the linear part's slope is 0, then its periodic part too) is
/// agreeing everywhere. That bounds the points tried at any extent: a
/// dynamic one (a dynamic batch) or a huge static one; a static extent
/// beyond two periods of the bound (or of a period too long) is tried point
/// by point up to 2^16 points (batch 512 of 32 heads, GQA's divisors
/// multiplying to 2^12).
bool sameIndex(AffineExpr a, AffineExpr b, int64_t nExtent);

/// The tensor that `t` reads at `expected` ([B, H, S, D] indices): as it
/// is, else the deepest one it reads with its dims in another order (GPT-J
/// rotates K as [B, S, H, D] and transposes it straight into Kᵀ). A tensor
/// of lower rank stands for the trailing indices when the leading ones are
/// unit (a 2-D [S, D] of one head). `nExtent` is the extent of n, over
/// which indices of n alone are compared point by point (dynamic: at every
/// n).
OperandRead findOperand(analysis::Term t, ArrayRef<AffineExpr> expected,
                        int64_t nExtent, analysis::ViewOptions options,
                        std::optional<int64_t> heads = std::nullopt);

/// K and V read by query head `h` of `heads` in batch `b`, with the fewest
/// kv heads they are read by: the GQA grouping itself, not a repeat of it.
/// Null reads when there is no such grouping.
std::pair<OperandRead, OperandRead> findKeyValue(analysis::Term keyTerm,
                                                 analysis::Term valueTerm,
                                                 int64_t batch, AffineExpr b,
                                                 AffineExpr h, int64_t heads);

} // namespace mlir::rope::raising

#endif // ROPE_LIB_RAISING_ATTENTIONOPERANDS_H
