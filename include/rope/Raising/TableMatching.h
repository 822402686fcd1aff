//===- TableMatching.h - cos/sin tables and positions -----------*- C++ -*-===//
//
// What a rotation's cos and sin operands are made of, as the raising
// matchers find them in a frontend's IR. A table computed from positions
// (`trig(p · freq_j)`, possibly times a constant) or gathered by position
// from a constant cache yields the frequencies a spec is recovered from and
// the positions tensor the raised rotation reads; any other table that is
// read element for element along the head is an element table, an operand
// of rope.rotate_with_tables as it is. Tables are taken apart one head
// element at a time, so that however a frontend laid the frequencies out
// along the head (concatenated, inserted, tiled, interleaved, before or
// after the trig), each element resolves to its own frequency.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RAISING_TABLEMATCHING_H
#define ROPE_RAISING_TABLEMATCHING_H

#include "rope/Analysis/OpClassification.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rope::raising {

using analysis::Kind;
using analysis::Term;

//===----------------------------------------------------------------------===//
// Tables of positions times frequencies
//===----------------------------------------------------------------------===//

/// A column of a constant cache of cos or sin values [L, W] that a table
/// reads by position (`cos_cached[position_ids]`). A cache that a frontend
/// flattened (tosa gathers rows of [1, L·W, 1] at `p·W + column`) states its
/// row length W; otherwise it is 0 and the rows are the cache's last dim.
struct GatheredColumn {
  ElementsAttr cache;
  int64_t column;
  int64_t rowLength = 0;

  bool operator==(const GatheredColumn &other) const {
    return cache == other.cache && column == other.column &&
           rowLength == other.rowLength;
  }
};

/// What a cos or sin table is made of: `scale · trig(p · freq_j)` with `p`
/// read from positions and `freq_j` per head element j, either computed
/// (`frequencies`) or gathered from a cache by position (`columns`, until
/// `resolveGathered` turns them into frequencies). The positions are any of
/// `positions`, the integer tensors on the chain of views and widenings that
/// the table reads (outermost first); two tables read the same positions
/// when their chains end in the same read.
struct Table {
  SmallVector<Term> positions;
  SmallVector<double> frequencies;
  SmallVector<GatheredColumn> columns;
  double scale;

  bool operator==(const Table &other) const {
    return positions.back() == other.positions.back() &&
           frequencies == other.frequencies && columns == other.columns &&
           scale == other.scale;
  }
  bool operator!=(const Table &other) const { return !(*this == other); }
};

/// `t` as a table of `trig` (Cos or Sin) of positions times frequencies,
/// over a head of `headDim` elements: all computed or all gathered.
std::optional<Table> matchTable(Term t, Kind trig, int64_t headDim);

/// Frequencies and attention factor of caches `m·cos(p·f)`, `m·sin(p·f)`
/// read by position (row p), from rows 0 and 1 (`m = cos[0]`,
/// `f = atan2(sin[1], cos[1])`, well conditioned for every f < π), checked
/// against every row within a few f32 roundings of what an f32 computation
/// of the caches (f32 phase, cosf/sinf) leaves: 2^-21·m·(1 + p·f). Then the
/// two tables read the same computed frequencies. Tables with computed
/// frequencies are left as they are.
LogicalResult resolveGathered(Table &cos, Table &sin);

//===----------------------------------------------------------------------===//
// Positions
//===----------------------------------------------------------------------===//

/// How the raised rotation reads its positions: the dims `keptDims` of
/// `source` (the others are unit dims), as `[S]`, `[B, S]`, or `[B, 1]` when
/// `appendUnit`, along `seqDim`.
struct PositionsOperand {
  Value source;
  SmallVector<int64_t> keptDims;
  bool appendUnit;
  int64_t seqDim;
};

/// Checks that `positions` varies only along one dim of `type` (the
/// sequence) and possibly its leading dim (the batch), as rope.rotate's
/// `[S]` and `[B, S]` positions do, and says how to read it so.
std::optional<PositionsOperand> analyzePositions(Term positions,
                                                 RankedTensorType type);

/// The positions tensor `operand` describes: its source without the unit
/// dims, then with a unit sequence dim if asked.
Value materializePositions(PatternRewriter &rewriter, Location loc,
                           const PositionsOperand &operand);

//===----------------------------------------------------------------------===//
// Element tables
//===----------------------------------------------------------------------===//

/// The innermost tensor along the views of `t` that is an element table of
/// an iteration space of `type`: a float tensor read element for element
/// along the head (its last dim at the head index, a table of one
/// coefficient per element), each other dim either a static 1 or a leading
/// dim of the space, in order and with a compatible extent. That is the
/// table before any broadcast to the shape of the rotation; every such
/// tensor on the chain holds the same elements. Such a tensor is a cos or
/// sin table of rope.rotate_with_tables whatever computed it (a function
/// argument, a weight, a slice or gather of a cache).
std::optional<Term> findElementTable(Term t, RankedTensorType type);

/// Where the table `t` reads (an element table) lies in an iteration space
/// of rank `rank`: its dims that vary (`kept`, the head dim last), the
/// space's dims they follow, and its shape in the broadcast form of
/// rope.rotate_with_tables (the space's rank, unit dims elsewhere).
struct ElementTableLayout {
  SmallVector<int64_t> kept, follows, shape;
};

ElementTableLayout getElementTableLayout(Term t, unsigned rank);

/// The table `t` reads (an element table) reshaped to the rank of the
/// iteration space of `type`: its unit dims dropped, then the space's unit
/// dims inserted, each into the next kept dim.
Value materializeElementTable(PatternRewriter &rewriter, Location loc, Term t,
                              RankedTensorType type);

} // namespace mlir::rope::raising

#endif // ROPE_RAISING_TABLEMATCHING_H
