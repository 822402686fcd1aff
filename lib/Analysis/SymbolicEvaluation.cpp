//===- SymbolicEvaluation.cpp - elements as functions of the point --------===//

#include "rope/Analysis/SymbolicEvaluation.h"
#include "rope/Analysis/ConstantEvaluation.h"
#include "rope/Analysis/OpClassification.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

namespace mlir::rope::analysis {

//===----------------------------------------------------------------------===//
// Formulas
//===----------------------------------------------------------------------===//

struct Formula::Node {
  Op op;
  AffineExpr expr;
  std::shared_ptr<const Node> lhs, rhs;
  unsigned id = 0;
};

Formula Formula::alwaysTrue() {
  return Formula(std::make_shared<Node>(Node{Op::True, {}, {}, {}}));
}
Formula Formula::atLeastZero(AffineExpr expr) {
  return Formula(std::make_shared<Node>(Node{Op::AtLeastZero, expr, {}, {}}));
}
Formula Formula::zero(AffineExpr expr) {
  return Formula(std::make_shared<Node>(Node{Op::Zero, expr, {}, {}}));
}
Formula Formula::opaque(unsigned id) {
  return Formula(std::make_shared<Node>(Node{Op::Opaque, {}, {}, {}, id}));
}
Formula Formula::operator!() const {
  return Formula(std::make_shared<Node>(Node{Op::Not, {}, node, {}}));
}
Formula Formula::operator&&(const Formula &other) const {
  if (node->op == Op::True)
    return other;
  if (other.node->op == Op::True)
    return *this;
  return Formula(std::make_shared<Node>(Node{Op::And, {}, node, other.node}));
}
Formula Formula::operator||(const Formula &other) const {
  return Formula(std::make_shared<Node>(Node{Op::Or, {}, node, other.node}));
}

std::optional<Formula> Formula::mapExprs(
    function_ref<std::optional<AffineExpr>(AffineExpr)> rewrite) const {
  switch (node->op) {
  case Op::True:
  case Op::Opaque:
    return *this;
  case Op::AtLeastZero:
  case Op::Zero: {
    std::optional<AffineExpr> expr = rewrite(node->expr);
    if (!expr)
      return std::nullopt;
    return Formula(std::make_shared<Node>(Node{node->op, *expr, {}, {}}));
  }
  case Op::Not: {
    std::optional<Formula> inner = Formula(node->lhs).mapExprs(rewrite);
    return inner ? std::optional<Formula>(!*inner) : std::nullopt;
  }
  case Op::And:
  case Op::Or: {
    std::optional<Formula> a = Formula(node->lhs).mapExprs(rewrite);
    std::optional<Formula> b = Formula(node->rhs).mapExprs(rewrite);
    if (!a || !b)
      return std::nullopt;
    return node->op == Op::And ? (*a && *b) : (*a || *b);
  }
  }
  return std::nullopt;
}

bool Formula::holds(function_ref<int64_t(AffineExpr)> value,
                    function_ref<bool(unsigned)> opaque) const {
  return holdsAt(*node, value, opaque);
}

bool Formula::holdsAt(const Node &n, function_ref<int64_t(AffineExpr)> value,
                      function_ref<bool(unsigned)> opaque) const {
  switch (n.op) {
  case Op::True:
    return true;
  case Op::AtLeastZero:
    return value(n.expr) >= 0;
  case Op::Zero:
    return value(n.expr) == 0;
  case Op::Opaque:
    return opaque && opaque(n.id);
  case Op::Not:
    return !holdsAt(*n.lhs, value, opaque);
  case Op::And:
    return holdsAt(*n.lhs, value, opaque) && holdsAt(*n.rhs, value, opaque);
  case Op::Or:
    return holdsAt(*n.lhs, value, opaque) || holdsAt(*n.rhs, value, opaque);
  }
  return false;
}

void Formula::forEachExpr(function_ref<void(AffineExpr)> fn) const {
  if (node->op == Op::AtLeastZero || node->op == Op::Zero)
    fn(node->expr);
  if (node->lhs)
    Formula(node->lhs).forEachExpr(fn);
  if (node->rhs)
    Formula(node->rhs).forEachExpr(fn);
}

void Formula::forEachOpaque(function_ref<void(unsigned)> fn) const {
  if (node->op == Op::Opaque)
    fn(node->id);
  if (node->lhs)
    Formula(node->lhs).forEachOpaque(fn);
  if (node->rhs)
    Formula(node->rhs).forEachOpaque(fn);
}

//===----------------------------------------------------------------------===//
// Piecewise values
//===----------------------------------------------------------------------===//

namespace {

using Pieces = SmallVector<Piece>;

/// Beyond this many pieces (or operands deep) a value is not a mask rule
/// worth describing.
constexpr size_t kMaxPieces = 64;
constexpr unsigned kMaxDepth = 48;


Piece constantPiece(Formula when, double value) {
  return Piece{std::move(when), std::nullopt, value};
}

/// An integral constant as an affine expression.
std::optional<AffineExpr> asAffine(const Piece &p, MLIRContext *ctx) {
  if (p.affine)
    return p.affine;
  if (p.constant != std::trunc(p.constant) || std::abs(p.constant) > 0x1p52)
    return std::nullopt;
  return getAffineConstantExpr(static_cast<int64_t>(p.constant), ctx);
}

/// Every pair of pieces of `a` and `b` combined by `combine` (which may
/// refuse), under both formulas.
std::optional<Pieces>
combine(const Pieces &a, const Pieces &b,
        function_ref<bool(const Piece &, const Piece &, Formula, Pieces &)>
            fn) {
  Pieces out;
  for (const Piece &x : a)
    for (const Piece &y : b) {
      if (!fn(x, y, x.when && y.when, out) || out.size() > kMaxPieces)
        return std::nullopt;
    }
  return out;
}

enum class Relation { Ge, Gt, Le, Lt, Eq, Ne };

/// `a rel b` of two pieces as boolean pieces (1 where it holds, 0 else).
bool compare(const Piece &a, const Piece &b, Formula when, Relation rel,
             MLIRContext *ctx, Pieces &out) {
  if (!a.affine && !b.affine) {
    double x = a.constant, y = b.constant;
    bool r = rel == Relation::Ge   ? x >= y
             : rel == Relation::Gt ? x > y
             : rel == Relation::Le ? x <= y
             : rel == Relation::Lt ? x < y
             : rel == Relation::Eq ? x == y
                                   : x != y;
    out.push_back(constantPiece(when, r));
    return true;
  }
  std::optional<AffineExpr> x = asAffine(a, ctx), y = asAffine(b, ctx);
  if (!x || !y)
    return false;
  AffineExpr diff = *x - *y; // integers: a > b is a - b - 1 >= 0
  Formula holds = rel == Relation::Ge   ? Formula::atLeastZero(diff)
                  : rel == Relation::Gt ? Formula::atLeastZero(diff - 1)
                  : rel == Relation::Le ? Formula::atLeastZero(-diff)
                  : rel == Relation::Lt ? Formula::atLeastZero(-diff - 1)
                  : rel == Relation::Eq ? Formula::zero(diff)
                                        : !Formula::zero(diff);
  out.push_back(constantPiece(when && holds, 1.0));
  out.push_back(constantPiece(when && !holds, 0.0));
  return true;
}

std::optional<Relation> relationOf(Operation *op) {
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    using P = arith::CmpIPredicate;
    switch (cmp.getPredicate()) {
    case P::sge: return Relation::Ge;
    case P::sgt: return Relation::Gt;
    case P::sle: return Relation::Le;
    case P::slt: return Relation::Lt;
    case P::eq: return Relation::Eq;
    case P::ne: return Relation::Ne;
    default: return std::nullopt; // unsigned: not an index comparison
    }
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    using P = arith::CmpFPredicate;
    switch (cmp.getPredicate()) {
    case P::OGE: case P::UGE: return Relation::Ge;
    case P::OGT: case P::UGT: return Relation::Gt;
    case P::OLE: case P::ULE: return Relation::Le;
    case P::OLT: case P::ULT: return Relation::Lt;
    case P::OEQ: case P::UEQ: return Relation::Eq;
    case P::ONE: case P::UNE: return Relation::Ne;
    default: return std::nullopt;
    }
  }
  if (isa<tosa::GreaterOp>(op))
    return Relation::Gt;
  if (isa<tosa::GreaterEqualOp>(op))
    return Relation::Ge;
  if (isa<tosa::EqualOp>(op))
    return Relation::Eq;
  return std::nullopt;
}

/// One piece of a comparison, a logical or an integer arithmetic op `def`
/// of pieces `x` and `y`, under `when`; false when it cannot be described.
bool combineBinary(Operation *def, std::optional<Relation> rel,
                   const Piece &x, const Piece &y, Formula when, Pieces &out) {
  MLIRContext *ctx = def->getContext();
  if (rel)
    return compare(x, y, when, *rel, ctx, out);
  if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp, tosa::LogicalAndOp,
          tosa::LogicalOrOp, tosa::LogicalXorOp>(def)) {
    if (x.affine || y.affine)
      return false;
    bool p = x.constant != 0.0, q = y.constant != 0.0;
    bool r = isa<arith::AndIOp, tosa::LogicalAndOp>(def)  ? p && q
             : isa<arith::OrIOp, tosa::LogicalOrOp>(def) ? p || q
                                                         : p != q;
    out.push_back(constantPiece(when, r));
    return true;
  }
  if (!x.affine && !y.affine) {
    double r = isa<arith::AddIOp>(def)   ? x.constant + y.constant
               : isa<arith::SubIOp>(def) ? x.constant - y.constant
                                         : x.constant * y.constant;
    out.push_back(constantPiece(when, r));
    return true;
  }
  std::optional<AffineExpr> ex = asAffine(x, ctx), ey = asAffine(y, ctx);
  if (!ex || !ey)
    return false;
  if (isa<arith::MulIOp>(def) && !x.affine == !y.affine)
    return false; // a product of two functions of the point
  AffineExpr r = isa<arith::AddIOp>(def)   ? *ex + *ey
                 : isa<arith::SubIOp>(def) ? *ex - *ey
                                           : *ex * *ey;
  out.push_back(Piece{when, r, 0.0});
  return true;
}

/// A select of pieces: the condition's pieces must be truth values.
std::optional<Pieces> select(const Pieces &c, const Pieces &x,
                             const Pieces &y) {
  Pieces out;
  for (const Piece &cp : c) {
    if (cp.affine)
      return std::nullopt;
    for (const Piece &v : cp.constant != 0.0 ? x : y)
      out.push_back(Piece{cp.when && v.when, v.affine, v.constant});
    if (out.size() > kMaxPieces)
      return std::nullopt;
  }
  return out;
}

/// A constant integer vector that steps evenly, `a·k + b` (an iota, as
/// torch's tosa export spells `arange`), read at a function of the point.
std::optional<Pieces> progression(Attribute attr, AffineMap map) {
  auto dense = dyn_cast<DenseIntElementsAttr>(attr);
  if (!dense || map.getNumResults() != 1)
    return std::nullopt;
  auto type = cast<ShapedType>(dense.getType());
  if (type.getRank() != 1 || type.getDimSize(0) < 2)
    return std::nullopt;
  SmallVector<APInt> values(dense.getValues<APInt>());
  int64_t b = values[0].getSExtValue(), a = values[1].getSExtValue() - b;
  for (auto [k, v] : llvm::enumerate(values))
    if (v.getSExtValue() != a * static_cast<int64_t>(k) + b)
      return std::nullopt;
  return Pieces{Piece{Formula::alwaysTrue(), map.getResult(0) * a + b, 0.0}};
}

/// Evaluation of one term, with where opaque booleans go (null: none
/// allowed).
struct Evaluator {
  SmallVectorImpl<Term> *opaque;

  std::optional<Pieces> evaluateAt(Term t, unsigned depth);
  std::optional<Pieces> evaluateKnown(Term t, unsigned depth);
  std::optional<Pieces> evaluateOp(Operation *def, Term t, unsigned depth);
  std::optional<Pieces> evaluateComputation(const Computation &c,
                                            unsigned depth);
  std::optional<Pieces> opaqueAtom(Term t);
};

/// Comparisons, logic, integer arithmetic, selects and value-preserving
/// casts that define `t`; none for other ops.
std::optional<Pieces> Evaluator::evaluateOp(Operation *def, Term t, unsigned depth) {
  auto operand = [&](unsigned i) {
    return evaluateAt(makeTerm(def->getOperand(i), t.map, t), depth + 1);
  };
  if (isa<arith::SelectOp, tosa::SelectOp>(def)) {
    std::optional<Pieces> c = operand(0), x = operand(1), y = operand(2);
    if (!c || !x || !y)
      return std::nullopt;
    return select(*c, *x, *y);
  }
  // Casts that keep the (integer or truth) value.
  if (isa<arith::ExtUIOp, arith::ExtSIOp, arith::TruncIOp, arith::IndexCastOp,
          arith::IndexCastUIOp, arith::SIToFPOp, arith::UIToFPOp,
          arith::ExtFOp, arith::TruncFOp, tosa::CastOp>(def))
    return operand(0);
  if (isa<tosa::LogicalNotOp>(def)) {
    std::optional<Pieces> a = operand(0);
    if (!a)
      return std::nullopt;
    for (Piece &p : *a) {
      if (p.affine)
        return std::nullopt;
      p.constant = p.constant == 0.0;
    }
    return a;
  }
  if (def->getNumOperands() != 2)
    return std::nullopt;
  std::optional<Relation> rel = relationOf(def);
  bool logic = isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp,
                   tosa::LogicalAndOp, tosa::LogicalOrOp, tosa::LogicalXorOp>(def) &&
               getElementTypeOrSelf(def->getResult(0).getType()).isInteger(1);
  bool arithmetic = isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def);
  if (!rel && !logic && !arithmetic)
    return std::nullopt;
  std::optional<Pieces> a = operand(0), b = operand(1);
  if (!a || !b)
    return std::nullopt;
  return combine(*a, *b, [&](const Piece &x, const Piece &y, Formula when,
                             Pieces &out) {
    return combineBinary(def, rel, x, y, std::move(when), out);
  });
}

/// Float arithmetic of the pieces (the sum of two additive masks, a mask
/// scaled): constants only, rounded as the program rounds them.
std::optional<Pieces> Evaluator::evaluateComputation(const Computation &c,
                                                     unsigned depth) {
  SmallVector<Pieces, 2> args;
  for (Term operand : c.operands) {
    std::optional<Pieces> arg = evaluateAt(operand, depth + 1);
    if (!arg)
      return std::nullopt;
    args.push_back(std::move(*arg));
  }
  auto apply = [&](double x, double y) -> std::optional<double> {
    switch (c.kind) {
    case Kind::Add: return x + y;
    case Kind::Sub: return x - y;
    case Kind::Mul: return x * y;
    case Kind::Neg: return -x;
    case Kind::IntToFloat:
    case Kind::IntExtend:
    case Kind::FloatCast: return x;
    default: return std::nullopt;
    }
  };
  bool valuePreserving = c.kind == Kind::IntToFloat ||
                         c.kind == Kind::IntExtend || c.kind == Kind::FloatCast;
  if (args.size() == 1) {
    if (valuePreserving)
      return args[0];
    for (Piece &p : args[0]) {
      std::optional<double> r = p.affine ? std::nullopt : apply(p.constant, 0);
      if (!r)
        return std::nullopt;
      p.constant = *r;
    }
    return args[0];
  }
  if (args.size() != 2)
    return std::nullopt;
  return combine(args[0], args[1], [&](const Piece &x, const Piece &y,
                                       Formula when, Pieces &out) {
    if (x.affine || y.affine)
      return false;
    std::optional<double> r = apply(x.constant, y.constant);
    if (!r)
      return false;
    out.push_back(constantPiece(when, *r));
    return true;
  });
}

/// An i1 term that does not evaluate, as an opaque atom: the deepest
/// tensor read along its views (so that a caller can take the tensor as an
/// operand). None when it is not a boolean or reads no tensor.
std::optional<Pieces> Evaluator::opaqueAtom(Term t) {
  if (!opaque || !getElementTypeOrSelf(t.value.getType()).isInteger(1))
    return std::nullopt;
  std::optional<Term> tensorRead;
  for (unsigned step = 0; step < 16; ++step) {
    if (isa<RankedTensorType>(t.value.getType()))
      tensorRead = t;
    std::optional<Term> next = stepView(t);
    if (!next)
      break;
    t = *next;
  }
  if (!tensorRead)
    return std::nullopt;
  auto *found = llvm::find(*opaque, *tensorRead);
  unsigned id = found - opaque->begin();
  if (found == opaque->end())
    opaque->push_back(*tensorRead);
  Formula atom = Formula::opaque(id);
  return Pieces{constantPiece(atom, 1.0), constantPiece(!atom, 0.0)};
}

std::optional<Pieces> Evaluator::evaluateAt(Term t, unsigned depth) {
  if (depth > kMaxDepth)
    return std::nullopt;
  std::optional<Pieces> known = evaluateKnown(t, depth);
  if (known)
    return known;
  return opaqueAtom(t);
}

std::optional<Pieces> Evaluator::evaluateKnown(Term t, unsigned depth) {
  t = peelViews(t);
  Formula always = Formula::alwaysTrue();
  if (auto index = t.value.getDefiningOp<linalg::IndexOp>())
    return Pieces{Piece{always, t.map.getResult(index.getDim()), 0.0}};
  Attribute attr;
  if (matchPattern(t.value, m_Constant(&attr))) {
    if (std::optional<double> value = readConstant(attr, t.map))
      return Pieces{constantPiece(always, *value)};
    return progression(attr, t.map);
  }
  if (Operation *def = t.value.getDefiningOp())
    if (std::optional<Pieces> pieces = evaluateOp(def, t, depth))
      return pieces;
  if (std::optional<Computation> c = classify(t))
    return evaluateComputation(*c, depth);
  return std::nullopt;
}

} // namespace

std::optional<SmallVector<Piece>>
evaluateSymbolically(Term t, SmallVectorImpl<Term> *opaque) {
  return Evaluator{opaque}.evaluateAt(t, 0);
}

} // namespace mlir::rope::analysis
