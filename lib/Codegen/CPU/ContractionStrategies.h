//===- ContractionStrategies.h - the contraction strategies -----*- C++ -*-===//
//
// What the files of --rope-vectorize-contractions share:
// VectorizeContractions.cpp (the pass: it plans, runs the strategies and the
// pattern rounds after them), ContractionPlanning.cpp (which strategy a
// contraction takes), and one file per strategy: DotProductContractions.cpp
// (a one-row product along W's rows as stored), LaneSumContractions.cpp
// (reductions along the inputs' innermost dim, lanes apart in registers),
// OperandPacking.cpp (B packed for the register blocks, transposing packs in
// 16 × 16 register blocks), RegisterBlockContractions.cpp (the loops around a
// register block, split over cores and cache panels where the op is large)
// and ElementwiseNeighbours.cpp (the ops around a contraction computed on
// its register blocks).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_CODEGEN_CPU_CONTRACTIONSTRATEGIES_H
#define ROPE_LIB_CODEGEN_CPU_CONTRACTIONSTRATEGIES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace mlir {
class RewritePatternSet;
class RewriterBase;
namespace rope {
struct RegisterBlockShape;
} // namespace rope
} // namespace mlir

namespace mlir::rope::contractions {

//===----------------------------------------------------------------------===//
// The plan: which strategy each contraction takes (ContractionPlanning.cpp)
//===----------------------------------------------------------------------===//

/// Where the register block of one contraction lies: loop dims and sizes.
struct RegisterBlock {
  unsigned rowDim, colDim;
  int64_t rows, columns;
  /// The input that carries the column dim (B); the other one is A.
  unsigned bOperand;
  unsigned aOperand() const { return 1 - bOperand; }
};

/// The operands of a one-row contraction that reads both its inputs along
/// the reduction dim, contiguously: out[0, n] += a[0, k] · w[n, k], the
/// matrix-vector product of a decode step (a linear layer's weight stored
/// [out, in], seen through the transpose a frontend writes). f16 and bf16
/// inputs are widened in registers as they are loaded: a pack would convert
/// the whole weight on every call, reading it once more and writing twice
/// its size.
struct DotProductForm {
  Value a, w; // a: [1, K], w: [N, K], f32, f16 or bf16
  int64_t n;  // W's rows
};

/// A sum along the innermost dim of two or more inputs: out[...] +=
/// f(x₀[..., r], x₁[..., r], ...), each x read contiguously along r (its
/// innermost dim, not sliced with a stride) and f any elementwise function.
/// The scores of a decode tile whose keys are rotated inside the reduction
/// (Σ_t q·rotate(k, cos, sin)) take this form: no copy of K exists to be
/// packed into the register blocks' layout, and K's rows already run along
/// the reduction.
struct LaneSumForm {
  /// Output dims of the register block's columns (the innermost) and rows
  /// (one that the inputs reading the columns do not read, so that a row
  /// block shares their loads), if any.
  unsigned colDim;
  std::optional<unsigned> rowDim;
  int64_t extent; // of the reduction
  /// Lanes of a step: a register of f32 (16 with AVX-512), or half of one
  /// where the extent is not a multiple of that (a head of 80: 40 pairs).
  int64_t lanes;
};

/// The contractions of a function by strategy, in the order they were met.
struct ContractionPlan {
  /// Register blocks, or dot products for a one-row product of
  /// matchDotProduct's form (decided as each is rewritten).
  SmallVector<std::pair<linalg::LinalgOp, RegisterBlock>> registerBlocks;
  SmallVector<std::pair<linalg::GenericOp, LaneSumForm>> laneSums;

  bool empty() const { return registerBlocks.empty() && laneSums.empty(); }
};

/// The strategy of each linalg op under `root` whose register blocks are
/// `shape`.
ContractionPlan planContractions(Operation *root,
                                 const RegisterBlockShape &shape);

/// `op` as dot products, if it has their form.
std::optional<DotProductForm> matchDotProduct(linalg::GenericOp op);

/// `op` as lane sums, if it has their form (`hostRows`: the rows of the
/// host's register block).
std::optional<LaneSumForm> matchLaneSum(linalg::GenericOp op, int64_t hostRows);

/// Whether `op` is a large contraction outside any loop (a user's matmul),
/// which this pass packs and splits over cores and cache panels itself.
bool isLargeTopLevel(linalg::GenericOp op);

/// The largest of `candidates` that divides `extent`, if any.
std::optional<int64_t> largestDivisor(int64_t extent,
                                      ArrayRef<int64_t> candidates);

/// `value` read at `map`'s indices, seen through a `linalg.transpose` that
/// produced it: the transpose's input and the map that reads it there.
std::pair<Value, AffineMap> throughTranspose(Value value, AffineMap map);

/// Row chunks across cores: a few per core keeps the load balanced.
inline constexpr int64_t kRowChunks = 8;

/// Discardable marker of the loops this pass creates, removed before it
/// returns: in the reduction ones the accumulator is hoisted into registers
/// once the slices around it are simplified.
inline constexpr llvm::StringLiteral kRegisterBlockLoop =
    "rope.register_block_loop";

//===----------------------------------------------------------------------===//
// Dot products (DotProductContractions.cpp)
//===----------------------------------------------------------------------===//

/// `op` (matchDotProduct's form) as dot products over the rows of W as
/// stored, split over the cores (`rows`: the host's register block rows).
LogicalResult rewriteAsDotProducts(RewriterBase &rewriter, linalg::GenericOp op,
                                   const DotProductForm &form, int64_t rows);

//===----------------------------------------------------------------------===//
// Lane sums (LaneSumContractions.cpp)
//===----------------------------------------------------------------------===//

/// `op` (matchLaneSum's form) as register blocks of lane sums of up to
/// `rows` rows.
LogicalResult rewriteAsLaneSums(RewriterBase &rewriter, linalg::GenericOp op,
                                const LaneSumForm &form, int64_t rows);

/// Adds the pattern that turns a lane sum's step into FMAs.
void populateLaneSumStepPatterns(RewritePatternSet &patterns);

//===----------------------------------------------------------------------===//
// Packed operands (OperandPacking.cpp)
//===----------------------------------------------------------------------===//

/// The contraction in its canonical form, out + a·b with contractible
/// multiply-adds in f32, of `inputs` into `init` (an f32 tensor); inputs of a
/// narrower float type are widened exactly (arith.extf) as they are read.
linalg::GenericOp buildCanonicalContraction(
    RewriterBase &rewriter, Location loc, ValueRange inputs, Value init,
    ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators);

/// `op` over packed operands, A and B in f32, B with the column dim
/// innermost or, for `columnPanels`, in column panels; `op` itself where
/// nothing needs packing.
linalg::GenericOp packOperands(RewriterBase &rewriter, linalg::GenericOp op,
                               const RegisterBlock &block, bool columnPanels);

//===----------------------------------------------------------------------===//
// Register blocks (RegisterBlockContractions.cpp)
//===----------------------------------------------------------------------===//

/// A large contraction outside any loop (its B in column panels) split over
/// the cores and into cache panels: the tile to put into register blocks.
linalg::GenericOp tileForCoresAndCaches(RewriterBase &rewriter,
                                        linalg::GenericOp op,
                                        const RegisterBlock &block);

/// The static pieces of `op`, whose row extent is only known at run time,
/// each with its register block.
FailureOr<SmallVector<std::pair<linalg::GenericOp, RegisterBlock>>>
splitDynamicRows(RewriterBase &rewriter, linalg::GenericOp op,
                 const RegisterBlock &block);

/// `op`, with static shapes and its operands packed, as loops around one
/// register block.
LogicalResult tileIntoRegisterBlocks(RewriterBase &rewriter,
                                     linalg::GenericOp op,
                                     const RegisterBlock &block);

//===----------------------------------------------------------------------===//
// Elementwise neighbours (ElementwiseNeighbours.cpp)
//===----------------------------------------------------------------------===//

/// `op` (static, packed) with its elementwise neighbours in one loop nest
/// over register blocks; false, leaving the IR as it was, where it has none
/// or its blocks do not divide its extents.
FailureOr<bool> tileWithElementwiseNeighbours(RewriterBase &rewriter,
                                              linalg::GenericOp op,
                                              const RegisterBlock &block);

/// Adds the patterns that compute math ops on vectors one row at a time.
void populateMathByRowPatterns(RewritePatternSet &patterns);

} // namespace mlir::rope::contractions

#endif // ROPE_LIB_CODEGEN_CPU_CONTRACTIONSTRATEGIES_H
