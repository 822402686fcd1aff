//===- GpuEmulator.h - GPU kernels run on the CPU, with checkers -*- C++
//-*-===//
//
// libRopeGpuEmulator.so runs the kernels of `gpu.launch` on the host with
// the semantics of a GPU (docs/gpu.md): code lowered for it calls
// ropeGpuEmuLaunch with the kernel's body as a C function, and the body
// calls the functions below where the GPU dialects have an operation.
//
//  * Every thread of a block is its own fiber (a stack of its own, switched
//    on the host thread that runs the block), so `gpu.barrier` really waits
//    for the whole block and a warp-collective operation (`gpu.shuffle`,
//    `mma.sync`, `ldmatrix`) for the 32 lanes of its warp. Fibers run until
//    they block; when every fiber of the block is blocked, the scheduler
//    releases the barrier or reports why it cannot be released.
//  * Blocks run one after another on each host thread; the launch spreads
//    them over ROPE_GPU_EMU_THREADS host threads (default: the host's cores,
//    at most one per block). ROPE_GPU_EMU_STACK_KB sets each fiber's stack
//    (default 256 KiB, plus a guard page).
//  * Checkers, always on: races on workgroup memory (two threads touching
//    one byte between the same two barriers, one of them writing, unless an
//    mbarrier orders them; threads of one warp included), reads of workgroup
//    memory that no thread wrote since the block started, accesses outside
//    workgroup memory or outside a memref (ropeGpuEmuOutOfBounds), divergent
//    barriers and warp and warpgroup collectives; and for Hopper's
//    asynchronous operations: reads of workgroup memory that a TMA load in
//    flight will fill (before the mbarrier phase it completes), writes to
//    workgroup memory that a pending wgmma or TMA store still reads,
//    mbarrier phases whose transaction count can never complete, and
//    deadlocks (every thread waits), reported with each warp's wait.
//  * Hopper (sm_90a) operations: mbarriers, TMA through tensor maps, wgmma
//    from registers and workgroup memory, elect.sync, setmaxnreg and the
//    proxy fence; the semantics each function states are PTX's.
//
// Errors stop the launch: no fiber or block is resumed after the first, and
// once every host thread of the launch has stopped and every fiber stack is
// released, ropeGpuEmuLaunch calls ropeRuntimeError (RuntimeErrors.h) on the
// calling thread with a message "gpu emulator: kernel '<name>': <checker>:
// ..." naming the thread(s) as "thread (x, y, z) in block (x, y, z)" and
// the byte offset or index. It never returns in that case.
//
// Except for ropeGpuEmuLaunch, the functions must be called by a kernel
// running under ropeGpuEmuLaunch (from the fiber of a GPU thread).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RUNTIME_GPUEMULATOR_H
#define ROPE_RUNTIME_GPUEMULATOR_H

#include "rope/Runtime/RuntimeErrors.h"

#include <cstdint>

extern "C" {
/// A kernel's body, run once per GPU thread; `env` is ropeGpuEmuLaunch's.
typedef void (*RopeGpuEmuKernel)(void *env);

/// Runs kernel(env) for every thread of the grid. Each block gets
/// `sharedBytes` of workgroup memory, zero-based, filled at block start
/// with the signalling-NaN pattern 0x7fa00000 (as little-endian f32 words),
/// at an address that is a multiple of 2^18 (so its low 18 bits are the
/// offset, as in the GPU's shared window: wgmma descriptors built from
/// addresses work unchanged).
/// The block may have at most 1024 threads; every extent must be positive.
ROPE_RUNTIME_EXPORT void ropeGpuEmuLaunch(RopeGpuEmuKernel kernel, void *env,
                                          const char *kernelName, int64_t gridX,
                                          int64_t gridY, int64_t gridZ,
                                          int64_t blockX, int64_t blockY,
                                          int64_t blockZ, int64_t sharedBytes);

/// gpu.thread_id, gpu.block_id, gpu.block_dim, gpu.grid_dim of the calling
/// thread; dim 0, 1, 2 is x, y, z.
ROPE_RUNTIME_EXPORT int64_t ropeGpuEmuThreadId(int32_t dim);
ROPE_RUNTIME_EXPORT int64_t ropeGpuEmuBlockId(int32_t dim);
ROPE_RUNTIME_EXPORT int64_t ropeGpuEmuBlockDim(int32_t dim);
ROPE_RUNTIME_EXPORT int64_t ropeGpuEmuGridDim(int32_t dim);
/// The linear thread id (x + bx * (y + by * z)) modulo 32; warp w holds
/// the linear ids [32 w, 32 w + 32).
ROPE_RUNTIME_EXPORT int64_t ropeGpuEmuLaneId(void);

/// gpu.barrier: waits until every thread of the block waits at a barrier;
/// a thread that returned or waits at a warp collective meanwhile is a
/// divergent-barrier error. Any barrier call matches any other one.
ROPE_RUNTIME_EXPORT void ropeGpuEmuBarrier(void);
/// The same, with the barrier's identity: all threads must wait at the same
/// `site` (e.g. a number per gpu.barrier operation), else divergent barrier.
ROPE_RUNTIME_EXPORT void ropeGpuEmuBarrierSite(int64_t site);

/// The address of byte `offset` of the block's workgroup memory.
ROPE_RUNTIME_EXPORT void *ropeGpuEmuShared(int64_t offset);
/// To be called before every access of `bytes` bytes of workgroup memory at
/// `address`: checks bounds (the whole access inside the block's buffer),
/// races, and, for reads, that every byte was written since block start.
ROPE_RUNTIME_EXPORT void ropeGpuEmuSharedAccess(const void *address,
                                                int64_t bytes, int32_t isWrite);
/// A generated bounds check failed: `index` is outside [0, extent) of
/// dimension `dim` of a memref in `addressSpace` (0 or 1: global, 3:
/// workgroup, 5: private). Reports the error; never returns to the kernel.
ROPE_RUNTIME_EXPORT void ropeGpuEmuOutOfBounds(int32_t addressSpace,
                                               int64_t dim, int64_t index,
                                               int64_t extent);
/// Any other failed runtime check inside a kernel (same arguments as
/// ropeRuntimeError): stops the launch like the checkers do. Kernels must
/// not call ropeRuntimeError itself (it would leave the fibers behind).
ROPE_RUNTIME_EXPORT void ropeGpuEmuKernelError(const char *message,
                                               int64_t numValues,
                                               const int64_t *values);

/// gpu.shuffle of a 32-bit value; mode: 0 xor, 1 down, 2 up, 3 idx
/// (gpu::ShuffleMode), as GPU_ShuffleOp's documentation defines it: a lane
/// k < width reads lane k ^ offset, k + offset, k - offset or offset (idx);
/// when that lane is not in [0, width), and for every lane k >= width,
/// *valid is 0 and the result is the lane's own value; else *valid is 1.
/// Collective: every lane of the warp must call it with the same mode and
/// width (1..32, at most the lanes of a partial last warp). `valid` may be
/// null.
ROPE_RUNTIME_EXPORT int32_t ropeGpuEmuShuffle(int32_t value, int32_t offset,
                                              int32_t width, int32_t mode,
                                              int8_t *valid);

/// mma.sync.aligned.row.col with f32 accumulators, collective over a full
/// warp. shape 0: m16n8k16 with f16 A and B; 1: m16n8k16 with bf16 A and B;
/// 2: m16n8k8 with tf32 A and B (passed as f32; the low 13 mantissa bits are
/// ignored). `a`: this lane's A fragment (8 x 16 bits, or 4 x f32 for tf32),
/// `b`: its B fragment (4 x 16 bits, or 2 x f32), `c`, `d`: 4 x f32, in the
/// PTX fragment layouts. d may be c. Each product is exact; the sum starts
/// at C and adds the products in increasing k, each addition rounded to
/// f32 (round to nearest even).
ROPE_RUNTIME_EXPORT void ropeGpuEmuMmaSync(int32_t shape, const void *a,
                                           const void *b, const float *c,
                                           float *d);

/// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16, collective over
/// a full warp: lane l gives the (16-byte aligned) workgroup-memory address
/// of row l % 8 of matrix l / 8 (lanes from 8 * numMatrices on give none,
/// and may pass null); out[m] receives this lane's 32-bit fragment of
/// matrix m as PTX defines it (.trans: of the transposed matrix).
ROPE_RUNTIME_EXPORT void ropeGpuEmuLdmatrix(const void *rowAddress,
                                            int32_t numMatrices,
                                            int32_t transpose, uint32_t *out);

/// cp.async.{ca,cg}.shared.global of `bytes` (4, 8 or 16; both addresses
/// aligned to it): the source is read now, the destination (workgroup
/// memory) is written only when a wait completes the copy's group.
ROPE_RUNTIME_EXPORT void ropeGpuEmuAsyncCopy(void *dst, const void *src,
                                             int64_t bytes);
/// The same, reading only the first `srcBytes` (0..bytes) of the source and
/// filling the rest of the destination with zeros (cp.async's src-size).
ROPE_RUNTIME_EXPORT void ropeGpuEmuAsyncCopyPartial(void *dst, const void *src,
                                                    int64_t bytes,
                                                    int64_t srcBytes);
/// cp.async.commit_group: the copies recorded since the last commit form a
/// group (possibly empty).
ROPE_RUNTIME_EXPORT void ropeGpuEmuAsyncCommit(void);
/// cp.async.wait_group N: completes, in the order issued, the copies of
/// every committed group of this thread except the newest `pendingGroups`
/// ones. Copies not yet committed stay pending (as in PTX; cp.async.wait_all
/// is commit then wait 0). A completed copy writes its destination now, as
/// a write of this thread for the race checker.
ROPE_RUNTIME_EXPORT void ropeGpuEmuAsyncWait(int32_t pendingGroups);

//===--- Hopper (sm_90a) --------------------------------------------------===//

/// The registers per thread that the next ropeGpuEmuLaunch on this host
/// thread starts each thread with (24 to 255; the kernel's compiled count):
/// setmaxnreg's budget is this times the block's threads. Without it a
/// launch assumes the most a block of its size can have (65536 / threads,
/// rounded down to 8, at most 255).
ROPE_RUNTIME_EXPORT void ropeGpuEmuLaunchRegisters(int32_t registersPerThread);

/// elect.sync: collective over the warp, every lane of which must call it
/// with `memberMask` covering them all; returns 1 in the elected (lowest)
/// lane, 0 in the others.
ROPE_RUNTIME_EXPORT int32_t ropeGpuEmuElectSync(uint32_t memberMask);

/// bar.sync id, threads and bar.arrive id, threads: named barrier `id` (0
/// to 15) releases its waiting threads once `threads` (a multiple of 32)
/// have arrived; bar.arrive counts without waiting. The waiters see what
/// every arrival did before it (as the race checker orders them). All
/// arrivals of one round must give the same count.
ROPE_RUNTIME_EXPORT void ropeGpuEmuNamedBarrierSync(int32_t id,
                                                    int32_t threads);
ROPE_RUNTIME_EXPORT void ropeGpuEmuNamedBarrierArrive(int32_t id,
                                                      int32_t threads);

/// mbarrier.init.shared.b64 [mbarrier], count: the 8-byte-aligned mbarrier
/// in workgroup memory starts phase 0 expecting `count` (1 to 2^20 - 1)
/// arrivals and no transaction bytes. Other threads may use it once a
/// barrier or mbarrier wait orders them after the init.
ROPE_RUNTIME_EXPORT void ropeGpuEmuMbarrierInit(void *mbarrier, int32_t count);
/// mbarrier.arrive (count arrivals, releasing this thread's prior accesses
/// to the waiters of the phase); returns the phase before the arrival.
ROPE_RUNTIME_EXPORT uint64_t ropeGpuEmuMbarrierArrive(void *mbarrier,
                                                      int32_t count);
/// mbarrier.expect_tx: the current phase also waits for `bytes` more
/// transaction bytes (no arrival).
ROPE_RUNTIME_EXPORT void ropeGpuEmuMbarrierExpectTx(void *mbarrier,
                                                    int64_t bytes);
/// mbarrier.arrive.expect_tx: expect_tx then one arrival.
ROPE_RUNTIME_EXPORT uint64_t ropeGpuEmuMbarrierArriveExpectTx(void *mbarrier,
                                                              int64_t bytes);
/// mbarrier.try_wait.parity in its retry loop: returns (1) once the phase
/// of parity `parity` has completed (at once if the current phase's parity
/// differs), acquiring what its arrivals released.
ROPE_RUNTIME_EXPORT int32_t ropeGpuEmuMbarrierTryWaitParity(void *mbarrier,
                                                            int32_t parity);

/// cuTensorMapEncodeTiled for the emulator: writes a tensor map into the
/// 128 bytes (64-byte aligned) at `tensorMap`. `elementBytes` 1, 2, 4 or 8;
/// rank 1 to 5; `globalDim[rank]` elements (dim 0 innermost),
/// `globalStrides[rank - 1]` bytes of dims 1.., multiples of 16;
/// `boxDim[rank]` 1 to 256, the inner one a multiple of 16 bytes and, with
/// a swizzle, the swizzle span; `elementStrides` null or all 1; swizzle 0
/// none, 1 32B, 2 64B, 3 128B; nanFill: out-of-bounds elements read as NaN
/// instead of 0. A rule broken is a ropeRuntimeError naming it. Host side.
ROPE_RUNTIME_EXPORT void ropeGpuEmuTensorMapEncodeTiled(
    void *tensorMap, int32_t elementBytes, int32_t rank,
    const void *globalAddress, const uint64_t *globalDim,
    const uint64_t *globalStrides, const uint32_t *boxDim,
    const uint32_t *elementStrides, int32_t swizzle, int32_t nanFill);
/// cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx
/// ::bytes: the box at element coordinates `coords[rank]` (may be negative)
/// into workgroup memory at `dst` (128-byte aligned; with a swizzle, to the
/// pattern's repeat: 256, 512 or 1024 bytes), completing the box's bytes on
/// `mbarrier` when it lands (as late as possible: when no thread can run).
ROPE_RUNTIME_EXPORT void ropeGpuEmuTmaLoad(void *dst, const void *tensorMap,
                                           const int32_t *coords,
                                           void *mbarrier);
/// cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group: the box at
/// `coords` from workgroup memory at `src` to the tensor (elements outside
/// it are not written). `src` must not be written until
/// ropeGpuEmuBulkWaitRead completes the store's group.
ROPE_RUNTIME_EXPORT void ropeGpuEmuTmaStore(const void *tensorMap,
                                            const int32_t *coords,
                                            const void *src);
/// cp.async.bulk.commit_group and cp.async.bulk.wait_group.read N (this
/// thread's TMA stores: all committed groups but the newest N).
ROPE_RUNTIME_EXPORT void ropeGpuEmuBulkCommit(void);
ROPE_RUNTIME_EXPORT void ropeGpuEmuBulkWaitRead(int32_t pendingGroups);
/// fence.proxy.async.shared::cta (one memory here: nothing to order).
ROPE_RUNTIME_EXPORT void ropeGpuEmuFenceProxyAsync(void);

/// wgmma.fence.sync.aligned.
ROPE_RUNTIME_EXPORT void ropeGpuEmuWgmmaFence(void);
/// wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}, collective over a
/// warpgroup (the block's threads a multiple of 128): type 0 f16, 1 bf16;
/// N 8 to 256, a multiple of 8. A: this thread's 4 x .b32 registers
/// (`aRegisters`, the mma.m16n8k16 A fragment of its warp's 16 rows) or,
/// when null, the matrix descriptor `aDescriptor`; B: `bDescriptor`.
/// transposeA/B 1: M-/N-major (descriptors only). scaleD 0: D = A B, 1:
/// D = A B + C; scaleA/B 1 or -1. `c`, `d`: this thread's N / 2 f32 of
/// the accumulator (d may be c), written at once. The descriptors' memory
/// must not be written until ropeGpuEmuWgmmaWait completes the group.
ROPE_RUNTIME_EXPORT void
ropeGpuEmuWgmma(int32_t type, int32_t n, const uint32_t *aRegisters,
                uint64_t aDescriptor, uint64_t bDescriptor, int32_t transposeA,
                int32_t transposeB, int32_t scaleD, int32_t scaleA,
                int32_t scaleB, const float *c, float *d);
/// wgmma.commit_group.sync.aligned and wgmma.wait_group.sync.aligned N
/// (collective: completes every committed group but the newest N).
ROPE_RUNTIME_EXPORT void ropeGpuEmuWgmmaCommit(void);
ROPE_RUNTIME_EXPORT void ropeGpuEmuWgmmaWait(int32_t pendingGroups);
/// setmaxnreg.{dec,inc}.sync.aligned.u32 registers (24 to 256, a multiple
/// of 8), collective over a warpgroup; .inc waits until the block's budget
/// has the registers free.
ROPE_RUNTIME_EXPORT void ropeGpuEmuSetMaxNReg(int32_t registers,
                                              int32_t increase);
} // extern "C"

#endif // ROPE_RUNTIME_GPUEMULATOR_H
