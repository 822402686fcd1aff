//===- GpuEmulatorInternal.h - state shared by the emulator's parts -------===//
//
// libRopeGpuEmulator.so (include/rope/Runtime/GpuEmulator.h) is split by
// concern:
//   GpuEmulatorFibers.cpp     stacks and the context switch;
//   GpuEmulatorScheduler.cpp  the launch, its host threads, each block's
//                             scheduler, barriers, thread ids;
//   GpuEmulatorCheckers.cpp   workgroup memory, its shadow (races,
//                             uninitialised reads, bounds), error messages;
//   GpuEmulatorWarpOps.cpp    warp collectives: shuffle, mma.sync, ldmatrix;
//   GpuEmulatorAsyncCopy.cpp  cp.async groups.
//
// One BlockRunner per host thread of a launch runs whole blocks, one at a
// time: its fibers are the block's GPU threads. The fibers of a block never
// leave the host thread that runs it, so thread_local state (the current
// runner) is the current block's.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_RUNTIME_GPUEMULATORINTERNAL_H
#define ROPE_LIB_RUNTIME_GPUEMULATORINTERNAL_H

#include "rope/Runtime/GpuEmulator.h"

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#if !defined(__x86_64__) || defined(ROPE_GPU_EMU_UCONTEXT)
#define ROPE_GPU_EMU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

namespace rope::gpuemu {

constexpr uint32_t kWarpSize = 32;
constexpr int64_t kMaxThreadsPerBlock = 1024;
/// "No thread" in the shadow of workgroup memory (ids are < 1024).
constexpr uint16_t kNoThread = 0xffff;

//===----------------------------------------------------------------------===//
// Fibers (GpuEmulatorFibers.cpp)
//===----------------------------------------------------------------------===//

/// A fiber's stack: mmap'ed, with a PROT_NONE guard page below it.
class Stack {
public:
  Stack() = default;
  Stack(const Stack &) = delete;
  Stack &operator=(const Stack &) = delete;
  Stack(Stack &&other) noexcept;
  Stack &operator=(Stack &&other) noexcept;
  ~Stack() { release(); }

  /// Maps `bytes` (rounded up to pages) plus the guard page; false if the
  /// mapping failed.
  bool allocate(std::size_t bytes);
  void release();
  /// One past the highest usable byte (page-aligned).
  char *top() const { return mapping ? mapping + mappedBytes : nullptr; }
  std::size_t usableBytes() const;

private:
  char *mapping = nullptr;
  std::size_t mappedBytes = 0;
};

/// A saved execution context: the stack pointer where the switch pushed the
/// callee-saved registers (x86-64), or a ucontext elsewhere.
struct Context {
  void *sp = nullptr;
#ifdef ROPE_GPU_EMU_USE_UCONTEXT
  ucontext_t uc;
#endif
};

/// Makes `context` start `entry` (which must never return) on `stack`,
/// `skew` bytes (a multiple of 16) below its top: stacks are page-aligned,
/// and fibers whose hot frames all sat at the same page offset would
/// compete for the same cache sets.
void prepareContext(Context &context, Stack &stack, void (*entry)(),
                    std::size_t skew);
/// Saves the running context into `from` and continues `to`.
void switchContext(Context &from, Context &to);

/// A stack of `bytes` usable bytes, from the process's pool of stacks of
/// finished launches or newly mapped; false if mapping failed.
bool takeStack(Stack &stack, std::size_t bytes);
/// Gives `stack` back to the pool (or unmaps it when the pool is full).
void returnStack(Stack &stack);

/// ROPE_GPU_EMU_STACK_KB in bytes (default 256 KiB).
std::size_t stackBytesFromEnv();
/// The most fibers (stacks) of one launch: hostThreadsFromEnv keeps the
/// launch's mappings well below Linux's default limit.
constexpr int64_t kMaxFibersPerLaunch = 16384;
/// How many host threads run `numBlocks` blocks of `threadsPerBlock`
/// (ROPE_GPU_EMU_THREADS, default hardware_concurrency): at least 1, at
/// most numBlocks and kMaxFibersPerLaunch / threadsPerBlock.
int64_t hostThreadsFromEnv(int64_t numBlocks, int64_t threadsPerBlock);

//===----------------------------------------------------------------------===//
// The launch and its blocks
//===----------------------------------------------------------------------===//

/// What all host threads of one ropeGpuEmuLaunch share.
struct Launch {
  RopeGpuEmuKernel kernel = nullptr;
  void *env = nullptr;
  const char *name = "";
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t sharedBytes = 0;
  int64_t threadsPerBlock = 1;
  int64_t numBlocks = 1;
  std::size_t stackBytes = 0;

  std::atomic<int64_t> nextBlock{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::string error;

  /// Keeps the first error of the launch and stops it.
  void recordError(const char *message);
};

enum class FiberState : uint8_t { Ready, AtBarrier, AtCollective, Done };
enum class CollectiveKind : uint8_t { Shuffle, Mma, Ldmatrix };

/// What a lane brings to a warp collective and what it gets back.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::Shuffle;
  /// Shuffle: mode, width, offset. Mma: shape. Ldmatrix: count, transpose.
  int32_t param0 = 0, param1 = 0, param2 = 0;
  int32_t value = 0;  // shuffle: this lane's value, then the result
  int8_t valid = 0;   // shuffle: whether the source lane was in the group
  const void *in0 = nullptr, *in1 = nullptr; // mma: a, b; ldmatrix: row
  const float *in2 = nullptr;                // mma: c
  void *out = nullptr;                       // mma: d; ldmatrix: out
};

/// One cp.async copy waiting for its group to complete.
struct PendingCopy {
  unsigned char *dst = nullptr;
  uint32_t bytes = 0;
  uint64_t group = 0;
  unsigned char data[16] = {};
};

/// One GPU thread of the running block.
struct Fiber {
  Context context;
  Stack stack;
  FiberState state = FiberState::Done;
  uint32_t linear = 0;
  int64_t barrierSite = 0;
  CollectiveCall call;
  std::vector<PendingCopy> pendingCopies;
  /// The group that the next copy joins (= the number of commits so far).
  uint64_t openGroup = 0;
};

/// The checkers' record of one byte of workgroup memory. Epochs count the
/// runner's barrier intervals across blocks, so a new block needs no reset:
/// fields of an older epoch are stale.
struct ShadowByte {
  uint32_t epoch = 0;           // the interval the three ids below are of
  uint32_t lastWrite = 0;       // the interval of the latest write
  uint16_t writer = kNoThread;  // the thread that wrote it in `epoch`
  uint16_t reader = kNoThread;  // a thread that read it in `epoch`
  uint16_t reader2 = kNoThread; // another one (so: several readers)
};

/// A thread's name in messages: "thread (x, y, z) in block (x, y, z)".
struct ThreadName {
  char text[128];
};

/// The site of ropeGpuEmuBarrier, which matches any other barrier.
constexpr int64_t kAnyBarrierSite = INT64_MIN;

/// The operation's name in messages.
inline const char *collectiveName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::Shuffle:
    return "gpu.shuffle";
  case CollectiveKind::Mma:
    return "mma.sync";
  case CollectiveKind::Ldmatrix:
    return "ldmatrix";
  }
  return "a warp collective";
}

/// Runs whole blocks of a launch on one host thread.
class BlockRunner {
public:
  explicit BlockRunner(Launch &launch);
  ~BlockRunner();
  BlockRunner(const BlockRunner &) = delete;
  BlockRunner &operator=(const BlockRunner &) = delete;

  /// Runs block `linearBlock` (x fastest) to its end or the launch's first
  /// error; false if the stacks could not be allocated (error recorded).
  bool runBlock(int64_t linearBlock);

  // --- Called on a fiber (GPU thread) of this runner -------------------
  Fiber &running() { return *current; }
  /// Leaves the fiber for the scheduler in `state` until it is resumed.
  void yield(FiberState state);
  /// Records an error (the standard prefix is added) and leaves the fiber
  /// for good.
  [[noreturn]] void failFiber(const char *format, ...)
      __attribute__((format(printf, 2, 3)));
  /// Leaves the fiber for good after an error was recorded.
  [[noreturn]] void abandonFiber();

  // --- Checkers (GpuEmulatorCheckers.cpp) ---------------------------------
  /// Checks an access of workgroup memory by thread `thread` and records
  /// it in the shadow; false (error recorded) if it is out of bounds,
  /// racy or reads uninitialised bytes. `what` names the operation.
  bool checkShared(uint32_t thread, const void *address, int64_t bytes,
                   bool isWrite, const char *what);
  /// Records the error "gpu emulator: kernel '<name>': <format...>".
  void error(const char *format, ...) __attribute__((format(printf, 2, 3)));
  /// The name of linear thread id `thread` of the running block.
  ThreadName name(uint32_t thread) const;
  /// The verror behind error() and failFiber().
  void verror(const char *format, va_list args);
  unsigned char *sharedBase() const { return shared; }
  int64_t sharedSize() const { return launch.sharedBytes; }

  // --- Warp collectives (GpuEmulatorWarpOps.cpp) --------------------------
  /// All lanes of warp `warp` arrived at a collective: checks that they
  /// agree and performs it; false on error (recorded).
  bool executeCollective(uint32_t warp);

  Launch &launch;
  int64_t blockId[3] = {0, 0, 0};
  uint32_t numThreads = 0;

private:
  bool ensureFibers();
  void resetSharedMemory();
  void startFibers();
  bool runReadyFibers();
  void afterYield(Fiber &fiber);
  bool resolveBlockedFibers(bool &finished);
  void reportDivergentCollective(uint32_t warp);
  bool releaseBarrier();
  uint32_t lanesOfWarp(uint32_t warp) const;
  bool checkCollectiveAgreement(uint32_t warp, uint32_t lanes);
  bool shuffle(uint32_t warp, uint32_t lanes);
  bool mma(uint32_t warp);
  bool ldmatrix(uint32_t warp);

  std::vector<Fiber> fibers;
  Context scheduler;
  Fiber *current = nullptr;
  unsigned char *shared = nullptr;
  std::vector<ShadowByte> shadow;
  /// The current barrier interval and the block's first one.
  uint32_t epoch = 0, blockStartEpoch = 0;
  std::vector<uint32_t> ready, runQueue;
  std::vector<uint32_t> warpArrivals;
  uint32_t doneCount = 0, barrierCount = 0;

};

/// The runner whose fiber runs on this host thread (null outside kernels).
BlockRunner *currentRunner();
void setCurrentRunner(BlockRunner *runner);

/// The runner of the calling kernel thread; reports an error through
/// ropeRuntimeError when there is none (a call outside any kernel).
BlockRunner &runnerOrDie(const char *function);

} // namespace rope::gpuemu

#endif // ROPE_LIB_RUNTIME_GPUEMULATORINTERNAL_H
