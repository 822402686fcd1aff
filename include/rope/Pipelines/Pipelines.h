//===- Pipelines.h - named rope pass pipelines ------------------*- C++ -*-===//

#ifndef ROPE_PIPELINES_PIPELINES_H
#define ROPE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace rope {

/// Options both lowering pipelines (`--rope-lower-to-cpu`,
/// `--rope-lower-to-nvvm`) have, declared once.
template <typename Derived>
struct LoweringOptions : public PassPipelineOptions<Derived> {
  ::mlir::detail::PassOptions::Option<bool> runtimeChecks{
      *this, "runtime-checks",
      llvm::cl::desc("Check the rope ops' shape relations on dynamic extents "
                     "once per call (--rope-insert-runtime-checks); a failed "
                     "check reports through libRopeRuntime.so's "
                     "ropeRuntimeError, which the code then links"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> cWrappers{
      *this, "c-wrappers",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers so functions can be called "
                     "from C with memref descriptors"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> foldRotation{
      *this, "fold-rotation",
      llvm::cl::desc("Fold rope.rotate of Q and K into the attention that "
                     "consumes them (--rope-fold-rotation-into-qk)"),
      llvm::cl::init(true)};
};

/// Options of `--rope-lower-to-cpu`.
struct LowerToCPUOptions : public LoweringOptions<LowerToCPUOptions> {
  PassOptions::Option<bool> cacheAllocations{
      *this, "cache-allocations",
      llvm::cl::desc("Allocate buffers through MLIR's generic allocation "
                     "functions, which libRopeRuntime.so implements with a "
                     "cache of large blocks (no fresh pages to clear on each "
                     "call); the host then frees returned buffers with "
                     "_mlir_memref_to_llvm_free"),
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
      llvm::cl::desc("A vectorisable polynomial approximation of f32 exp "
                     "(softmax) instead of libm calls"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> microkernels{
      *this, "microkernels",
      llvm::cl::desc("Register-blocked FMA micro-kernels for contractions "
                     "with static shapes: attention tiles' Q·Kᵀ and P·V, "
                     "user matmuls (--rope-vectorize-contractions)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> cpuFeatures{
      *this, "cpu-features",
      llvm::cl::desc("The target's CPU features, which choose each "
                     "contraction's engine: 'host' (what the JIT compiles "
                     "for), or a comma-separated list of LLVM feature names "
                     "each with an optional + or -, from nothing or from the "
                     "host's where it begins with 'host' (e.g. "
                     "'host,-amx-bf16'); bf16/f16 matmuls go to AMX tiles "
                     "where it has them, else bf16 ones to AVX-512 BF16 dot "
                     "products (--rope-pack-tile-products)"),
      llvm::cl::init("host")};
  PassOptions::Option<int64_t> registerRows{
      *this, "register-rows",
      llvm::cl::desc("Rows of A per micro-kernel register block "
                     "(--rope-vectorize-contractions); 0: sized for the host "
                     "CPU (8 with AVX-512, else 4)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> registerColumns{
      *this, "register-columns",
      llvm::cl::desc("Columns of B per micro-kernel register block, a "
                     "multiple of 8 (--rope-vectorize-contractions); 0: sized "
                     "for the host CPU (32 with AVX-512, else 16)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> reductionUnroll{
      *this, "reduction-unroll",
      llvm::cl::desc("K steps per iteration of a register block's reduction "
                     "loop (--rope-vectorize-contractions); 1: not unrolled"),
      llvm::cl::init(8)};
  PassOptions::Option<bool> prefetchTiles{
      *this, "prefetch-tiles",
      llvm::cl::desc("Register blocks prefetch the K or V tile that the "
                     "attention's key loop reads next "
                     "(--rope-prefetch-streamed-tiles)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> queryTile{
      *this, "query-tile",
      llvm::cl::desc("Query rows per attention tile; 0: 128 where the "
                     "register block has 8 rows or more (AVX-512), else 64"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> keyTile{
      *this, "key-tile", llvm::cl::desc("Key rows per attention tile"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> splitKeys{
      *this, "split-keys",
      llvm::cl::desc(
          "Split attention's keys into this many partial states "
          "computed in parallel and merged (split-K): 0 or 1 never, "
          "-1 when kv heads × query tiles are fewer than 4, or each kv "
          "head has one query tile with keys rotated as they are "
          "loaded (decode)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> rowsRotatingKeysInScores{
      *this, "rows-rotating-keys-in-scores",
      llvm::cl::desc("Attention tiles with at most this many query rows per "
                     "kv head (decode) rotate each key pair inside the Q·Kᵀ "
                     "reduction instead of into a tile of rotated keys; 0: "
                     "never"),
      llvm::cl::init(8)};
  PassOptions::Option<bool> destinationEntryPoints{
      *this, "destination-entry-points",
      llvm::cl::desc("Give each public function @f a form @f__into that "
                     "writes its results into memrefs the caller passes "
                     "after the arguments (--rope-destination-entry-points); "
                     "@f allocates them and calls it"),
      llvm::cl::init(true)};
};

/// Options of `--rope-lower-to-nvvm`.
struct LowerToNVVMOptions : public LoweringOptions<LowerToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVIDIA architecture to compile kernels for (sm_90 is "
                     "Hopper, sm_80 Ampere)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVPTX target features; the PTX ISA version must know "
                     "the chip (PTX 7.8 for sm_90)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu.binary holds: `fatbin` (cubin + PTX), `bin` "
                     "(cubin, via ptxas), `isa` (PTX text, for inspection), "
                     "`llvm` (LLVM bitcode)"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimisation level of the kernels"),
      llvm::cl::init(3)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the generated kernels"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("Attention and matmuls with f16/bf16 operands on "
                     "tensor cores (--rope-attention-to-tensor-cores: one "
                     "FlashAttention-2-style kernel; "
                     "--rope-matmul-to-tensor-cores: a tiled mma.sync "
                     "kernel; sm_80 and later); what they do not take goes "
                     "on to the other lowerings"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> streamAttention{
      *this, "stream-attention",
      llvm::cl::desc("One thread per query row running the key loop of "
                     "the tiled online attention "
                     "(--rope-decompose-attention-rows), instead of one "
                     "kernel per step over the S×S scores"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("Instead of compiling the kernels for NVIDIA GPUs, run "
                     "them on the CPU in the GPU emulator with its checkers "
                     "(--rope-emulate-gpu; chip, features, format and "
                     "opt-level are then ignored): a GPU program without a "
                     "GPU, for tests and for debugging a kernel"),
      llvm::cl::init(false)};
};

/// Options of `--rope-emulate-gpu`.
struct EmulateGPUOptions : public PassPipelineOptions<EmulateGPUOptions> {
  PassOptions::Option<bool> cWrappers{
      *this, "c-wrappers",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers so functions can be called "
                     "from C with memref descriptors"),
      llvm::cl::init(false)};
};

/// rope (and any upstream dialects beside it) on tensors down to the LLVM
/// dialect: linalg lowering, bufferization, loops, LLVM conversion. The
/// result runs under mlir-runner or goes through mlir-translate.
void buildLowerToCPUPipeline(OpPassManager &pm, const LowerToCPUOptions &options);

/// rope on tensors to host code in the LLVM dialect plus a `gpu.binary` of
/// NVIDIA kernels. The lowered functions take and return GPU buffers (memref
/// descriptors whose pointers are device pointers); their host code calls the
/// mgpu* runtime API (libRopeCudaRuntime.so).
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const LowerToNVVMOptions &options);

/// The first half of `buildLowerToNVVMPipeline`: rope on tensors to host
/// functions on device buffers whose computations are gpu.launch kernels:
/// one per linalg op (parallel dims on a grid of threads, reduction dims a
/// loop in each thread), and one for each attention in rows (a thread per
/// query row running the key loop of the tiled rope.online_attention), or,
/// without rows, one per attention step over whole tensors (scores,
/// softmax, P·V). Only `runtimeChecks`, `foldRotation`, `streamAttention`
/// and `blockSize` of the options matter here.
void buildGPUMappingPipeline(OpPassManager &pm,
                             const LowerToNVVMOptions &options);

/// Host loops on memrefs (scf, cf, arith, math, memref, vector, OpenMP) to
/// the LLVM dialect: the end of `buildLowerToCPUPipeline`. With
/// `genericAllocations`, buffers come from MLIR's generic allocation
/// functions (libRopeRuntime.so's cache, HostAllocator.h) instead of malloc.
void buildHostLoopsToLLVMPipeline(OpPassManager &pm, bool cWrappers,
                                  bool approximateMath, bool openMP,
                                  bool genericAllocations = false);

/// GPU code on memrefs (gpu.launch kernels, gpu.alloc, gpu.memcpy: what
/// `buildGPUMappingPipeline` produces, or kernels written by hand) to the
/// LLVM dialect for the CPU, the kernels run by the GPU emulator with its
/// checkers (--rope-emulate-gpu-on-host; link libRopeGpuEmulator.so and
/// libRopeRuntime.so).
void buildEmulateGPUPipeline(OpPassManager &pm,
                             const EmulateGPUOptions &options);

/// Registers the named pipelines (`--rope-lower-to-cpu`, `--rope-lower-to-nvvm`).
void registerRopePipelines();

} // namespace rope
} // namespace mlir

#endif // ROPE_PIPELINES_PIPELINES_H
