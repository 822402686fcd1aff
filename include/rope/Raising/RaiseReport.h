//===- RaiseReport.h - why a near miss was not raised -----------*- C++ -*-===//
//
// --rope-raise-report: the raising patterns record the ops they recognised
// far enough to call a near miss (for attention: the P·V product, the
// softmax and the logits) but then could not raise, with the reason. Ops
// that a later step raises after all, or that die, drop out; the rest are
// reported as remarks at the op once the patterns are done.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RAISING_RAISEREPORT_H
#define ROPE_RAISING_RAISEREPORT_H

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

#include <string>

namespace mlir::rope {

class RaiseReport : public RewriterBase::Listener {
public:
  /// Records that `op` was recognised as `what` ("attention") but not
  /// raised, because of `reason`; the latest reason per op wins.
  void nearMiss(Operation *op, StringRef what, const Twine &reason);

  /// One remark per op still in the IR, in the order first recorded:
  /// "rope-raise: <what> not raised: <reason>".
  void emitRemarks();

  void notifyOperationErased(Operation *op) override;
  void notifyOperationReplaced(Operation *op, ValueRange) override;

private:
  llvm::MapVector<Operation *, std::string> misses;
};

} // namespace mlir::rope

#endif // ROPE_RAISING_RAISEREPORT_H
