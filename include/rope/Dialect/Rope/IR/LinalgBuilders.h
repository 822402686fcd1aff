//===- LinalgBuilders.h - linalg building blocks of rope lowerings -*- C++ -*-===//
//
// The pieces every rope lowering is assembled from: frequencies, cos/sin
// tables, the rotation of a block, head splitting for GQA, masks and the
// attention logits. The plain lowering (--convert-rope-to-linalg) applies them
// to whole tensors; the FlashAttention-style decomposition applies them to
// tiles inside its loops.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_LINALGBUILDERS_H
#define ROPE_DIALECT_ROPE_IR_LINALGBUILDERS_H

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

namespace mlir::rope::lowering {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

//===----------------------------------------------------------------------===//
// Small building blocks
//===----------------------------------------------------------------------===//

/// Map from `numDims` loop dims to the listed ones.
AffineMap dimsMap(MLIRContext *ctx, unsigned numDims, ArrayRef<unsigned> dims);
/// [begin, end) as loop dim indices.
SmallVector<unsigned> range(unsigned begin, unsigned end);

Value toF32(OpBuilder &b, Location loc, Value v);
Value fromF32(OpBuilder &b, Location loc, Value v, Type type);
Value f32Const(OpBuilder &b, Location loc, double v);
Value f64Const(OpBuilder &b, Location loc, double v);
Value negInfF32(OpBuilder &b, Location loc);
Value f64Tensor(OpBuilder &b, Location loc, ArrayRef<double> values);
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType);
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Type elementType, TypedAttr value);
/// A position element widened to i64.
Value positionToI64(OpBuilder &b, Location loc, Value p);

/// The phase p·f of an integer position and an f64 frequency, formed in f64
/// and reduced to [-π, π] there (exact enough that the f32 sine and cosine of
/// the result stay within a few ulps for positions up to 2^20 and beyond).
Value buildReducedPhase(OpBuilder &b, Location loc, Value position,
                        Value frequency);

/// exp(x − max) in f32, and 0 where max is −inf (a row that has seen no
/// visible key yet), so fully masked rows give 0 instead of NaN.
Value buildShiftedExp(OpBuilder &b, Location loc, Value x, Value max);

/// Accumulates lhs·rhs (widened to f32) into `init` over the reduction loops
/// of `iters`, the sum in f32 and stored as init's element type; `fastMath`
/// applies to the multiply and the add.
Value buildMultiplyAccumulate(OpBuilder &b, Location loc, Value lhs, Value rhs,
                              Value init, ArrayRef<AffineMap> maps,
                              ArrayRef<IteratorType> iters,
                              arith::FastMathFlags fastMath =
                                  arith::FastMathFlags::none);

/// An elementwise f32 generic over the shape of `like`, its inputs read
/// through `inMaps`, its body `fn` of the input elements.
Value buildElementwise(OpBuilder &b, Location loc, ValueRange ins,
                       ArrayRef<AffineMap> inMaps, Value like,
                       function_ref<Value(OpBuilder &, Location, ValueRange)> fn);

/// An elementwise generic that overwrites `dest` in place (bufferization
/// reuses dest's buffer): `fn` gets the input elements read through `inMaps`
/// followed by dest's current element. A generic that reads its output must
/// not be fused into a consumer that broadcasts its result (the update would
/// repeat): rope-fuse-elementwise-ops, unlike upstream's fusion, never does.
Value buildElementwiseUpdateInPlace(
    OpBuilder &b, Location loc, ValueRange ins, ArrayRef<AffineMap> inMaps,
    Value dest, function_ref<Value(OpBuilder &, Location, ValueRange)> fn);


//===----------------------------------------------------------------------===//
// Positions, frequencies, tables, rotation
//===----------------------------------------------------------------------===//

/// `[len]` positions `offset, offset+1, ...` as i64.
Value buildIota(OpBuilder &b, Location loc, OpFoldResult len, Value offset);
/// Largest (smallest) entry of an integer tensor, as an i64 scalar.
Value buildMaxPosition(OpBuilder &b, Location loc, Value positions);
Value buildMinPosition(OpBuilder &b, Location loc, Value positions);

/// Inverse frequencies (tensor<hxf64>) of `spec` for a head of `headDim`.
/// Kinds that depend on the largest position call `maxPosition` for it (an i64
/// scalar); the others are compile-time constants.
Value buildInverseFrequencies(OpBuilder &b, Location loc, RotarySpecAttr spec,
                              int64_t headDim,
                              function_ref<Value()> maxPosition);

/// cos/sin tables as rope.rotate_with_tables takes them: of width r (one
/// coefficient per rotated element) or r/2 (one per pair), their other dims
/// following the input's as getTableRowDims says.
struct CosSin {
  Value cos, sin;
};

/// cos/sin tables, positions × [h] (f32), attention factor and direction
/// folded in; the phase is formed and reduced in f64.
CosSin buildTable(OpBuilder &b, Location loc, Value positions, Value invFreq,
                  RotarySpecAttr spec);

/// Lengths of the position runs that buildTableOfRun takes (a decode's key
/// tiles are 64 keys).
constexpr int64_t kMinTableRun = 8, kMaxTableRun = 256;

/// Whether a table of `positions` may be built by buildTableOfRun: 1-D,
/// static, of kMinTableRun to kMaxTableRun positions, with frequencies known
/// at compile time.
bool tableTakesRunCheck(Value positions, RotarySpecAttr spec);

/// buildTable's tables of `positions` [n] (tableTakesRunCheck), computed by
/// angle addition where the positions are one run p₀, p₀ + 1, ..., p₀ + n − 1
/// (checked at run time; a decode's key tiles are): cos and sin of p₀·f
/// (longer series, within ~1e-15) combined with those of j·f, compile-time
/// constants, in f64: 4 multiply-adds an entry instead of a series, 1/4 of
/// the vector work. The entries are then within 0.5 ulp + 1e-15 of the
/// exact values. Other positions take buildTable.
CosSin buildTableOfRun(OpBuilder &b, Location loc, Value positions,
                       RotarySpecAttr spec, int64_t headDim);

/// The rotation of one pair (a, b) by cos and sin (scalars or vectors of
/// f32): (a·cos − b·sin, b·cos + a·sin). Every lowering of a rotation uses
/// this, so they round alike (`fastMath` lets a rotation that only feeds
/// contracted products contract too).
std::pair<Value, Value>
buildPairRotation(OpBuilder &b, Location loc, Value a, Value second, Value cos,
                  Value sin,
                  arith::FastMathFlags fastMath = arith::FastMathFlags::none);

/// Map from `numLoops` loops to member `member` of pair `pair` of a pair
/// view (buildPairView) whose leading dims are read at `leading`.
AffineMap pairReadMap(ArrayRef<AffineExpr> leading, unsigned numLoops,
                      AffineExpr pair, AffineExpr member, RotaryLayout layout);

/// The rotated range of `x` viewed as pairs: [.., 2, h] (half: member c of
/// pair t at c·h + t) or [.., h, 2] (interleaved: at 2t + c).
Value buildPairView(OpBuilder &b, Location loc, Value x, RotaryRange dims);

/// Map from `numLoops` loops to the element of a cos/sin table (as
/// rope.rotate_with_tables reads it, rows following the input's dims by
/// getTableRowDims) that member `member` of pair `pair` of a rotation of
/// `dims` uses, the input's non-head dims read at `inputIndices` (one per
/// dim but the head; a table's static 1 broadcasts).
AffineMap tableReadMap(Value table, ArrayRef<AffineExpr> inputIndices,
                       unsigned numLoops, int64_t seqDim, RotaryRange dims,
                       AffineExpr pair, AffineExpr member);

/// The coefficients of pair member `member` alone, one per pair: per-pair
/// tables as they are, per-element tables sliced to that member's elements
/// (a table read at the pair index alone must have one column per pair for
/// a generic's loop bounds to agree with it).
CosSin buildMemberCoefficients(OpBuilder &b, Location loc, CosSin table,
                               RotaryRange dims, int64_t member);

/// One side of a product over the head dim (Q or K of Q·Kᵀ): `input` read
/// at `map` (head dim last, at the product's reduction loop) and, where
/// `tables` are given, its pairs rotated by them as they are read (the
/// tables' rows follow `input`'s dim `seqDim`).
struct ProductSide {
  Value input;
  AffineMap map;
  CosSin tables = {};
  int64_t seqDim = 0;
};

/// `init` + Σ_d lhs[.., d]·rhs[.., d] over the head dim, the loop
/// `reduction` of `iterators` (`initMap` reads the result), with the pairs
/// of `dims` of each side that has tables rotated as they are read: no
/// rotated tensor exists. The dims the rotation passes through are one
/// product of slices; the rotated ones one more, over the pairs t (the
/// reduction runs over r/2 of them), whose body adds both members'
/// products. The rotation is buildPairRotation's, contracted into FMAs where
/// `fastMath` (which flags the products and the accumulation) contracts. Both
/// sides pair `dims` alike.
Value buildProductRotatingPairs(
    OpBuilder &b, Location loc, ArrayRef<ProductSide> sides, RotaryRange dims,
    Value init, AffineMap initMap, ArrayRef<IteratorType> iterators,
    unsigned reduction,
    arith::FastMathFlags fastMath = arith::FastMathFlags::none);

/// Applies tables to `x` (head dim last, sequence at `seqDim`); dims outside
/// the rotary range pass through. The result has element type `resultType`.
Value buildRotation(OpBuilder &b, Location loc, Value x, CosSin table,
                    RotaryRange dims, int64_t seqDim, Type resultType);

/// `x` rotated by `table` into a new f32 tensor, for a tile of Q or K of
/// attention. A generic over (leading dims, pair index) per pair member
/// computes that member of every pair; each is inserted into the [.., D]
/// result at its offsets (pass-through dims copied there first). The insertions keep
/// the rotation a separate computation: elementwise fusion would otherwise
/// move it into the Q·Kᵀ product that reads it, which has one more loop (the
/// other side's rows), rotating every element again for each of those rows;
/// and the product reads plain [.., D] rows, not a [.., 2, h] view that
/// reshape propagation would turn into a split reduction.
Value buildMaterializedRotation(OpBuilder &b, Location loc, Value x,
                                CosSin table, RotaryRange dims, int64_t seqDim);

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Map of positions ([S] or [B, S]) into a loop nest with batch loop
/// `batchDim` and sequence loop `seqDim`.
AffineMap positionsMap(MLIRContext *ctx, Value positions, unsigned numDims,
                       unsigned batchDim, unsigned seqDim);
/// [B, Hq, ...] -> [B, Hkv, G, ...].
Value splitHeads(OpBuilder &b, Location loc, Value t, int64_t hkv, int64_t g);

/// Row-wise reduction over the last dim of a rank-5 f32 tensor:
/// max (init -inf) or sum (init 0).
Value buildRowMax(OpBuilder &b, Location loc, Value x);
Value buildRowSum(OpBuilder &b, Location loc, Value x);

/// acc[b,kh,g,i,e] += Σ_j p[b,kh,g,i,j] v[b,kh,j,e] (acc f32).
Value buildProbsTimesValues(OpBuilder &b, Location loc, Value p, Value v,
                            Value acc);

/// out = acc / rowSum (0 where rowSum is 0: every key masked out), converted
/// to `elementType`; acc is rank 5, rowSum its first four dims.
Value buildNormalizedOutput(OpBuilder &b, Location loc, Value acc, Value rowSum,
                            Type elementType);

} // namespace mlir::rope::lowering

#endif // ROPE_DIALECT_ROPE_IR_LINALGBUILDERS_H
