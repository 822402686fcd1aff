//===- Pipelines.h - named rope pass pipelines ------------------*- C++ -*-===//

#ifndef ROPE_PIPELINES_PIPELINES_H
#define ROPE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace rope {

/// Options of `--rope-lower-to-cpu`.
struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  PassOptions::Option<bool> cWrappers{
      *this, "c-wrappers",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers so functions can be called "
                     "from C with memref descriptors"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> foldRotation{
      *this, "fold-rotation",
      llvm::cl::desc("Fold rope.rotate of Q and K into the attention that "
                     "consumes them (--rope-fold-rotation-into-qk)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> decomposeAttention{
      *this, "decompose-attention",
      llvm::cl::desc("Tile attention into online-softmax loops "
                     "(--rope-decompose-attention) instead of materialising "
                     "the S×S scores"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run independent attention tiles on all cores through "
                     "OpenMP (link libomp; mlir-runner: -shared-libs=libomp.so)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Vectorisable polynomial approximations of f32 sin, cos "
                     "and exp instead of libm calls"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> queryTile{
      *this, "query-tile", llvm::cl::desc("Query rows per attention tile"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> keyTile{
      *this, "key-tile", llvm::cl::desc("Key rows per attention tile"),
      llvm::cl::init(64)};
};

/// rope (and any upstream dialects beside it) on tensors down to the LLVM
/// dialect: linalg lowering, bufferization, loops, LLVM conversion. The
/// result runs under mlir-runner or goes through mlir-translate.
void buildLowerToCPUPipeline(OpPassManager &pm, const LowerToCPUOptions &options);

/// Registers the named pipelines (`--rope-lower-to-cpu`).
void registerRopePipelines();

} // namespace rope
} // namespace mlir

#endif // ROPE_PIPELINES_PIPELINES_H
