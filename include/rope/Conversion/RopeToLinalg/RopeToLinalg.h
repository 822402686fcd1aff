//===- RopeToLinalg.h - rope to linalg patterns -----------------*- C++ -*-===//

#ifndef ROPE_CONVERSION_ROPETOLINALG_ROPETOLINALG_H
#define ROPE_CONVERSION_ROPETOLINALG_ROPETOLINALG_H

namespace mlir {
class RewritePatternSet;
namespace rope {

/// Patterns that lower every rope op to linalg/tensor/arith/math on tensors.
void populateRopeToLinalgPatterns(RewritePatternSet &patterns);

} // namespace rope
} // namespace mlir

#endif // ROPE_CONVERSION_ROPETOLINALG_ROPETOLINALG_H
