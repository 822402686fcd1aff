//===- GpuEmulatorInternal.h - state shared by the emulator's parts -------===//
//
// libRopeGpuEmulator.so (include/rope/Runtime/GpuEmulator.h) is split by
// concern:
//   GpuEmulatorFibers.cpp     stacks and the context switch;
//   GpuEmulatorScheduler.cpp  the launch, its host threads, each block's
//                             scheduler, barriers, thread ids;
//   GpuEmulatorCheckers.cpp   workgroup memory, its shadow (races,
//                             uninitialised reads, bounds), error messages;
//   GpuEmulatorWarpOps.cpp    warp collectives: shuffle, mma.sync, ldmatrix,
//                             elect.sync;
//   GpuEmulatorAsyncCopy.cpp  cp.async groups;
//   GpuEmulatorMbarrier.cpp   mbarriers, the vector clocks that order
//                             threads synchronised through them, deadlocks;
//   GpuEmulatorTma.cpp        tensor maps, TMA loads and stores;
//   GpuEmulatorWarpgroup.cpp  warpgroup collectives: wgmma and its groups,
//                             setmaxnreg.
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
#include <utility>
#include <vector>

#if !defined(__x86_64__) || defined(ROPE_GPU_EMU_UCONTEXT)
#define ROPE_GPU_EMU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

namespace rope::gpuemu {

constexpr uint32_t kWarpSize = 32;
/// Four consecutive warps (wgmma, setmaxnreg).
constexpr uint32_t kWarpgroupSize = 128;
constexpr int64_t kMaxThreadsPerBlock = 1024;
/// Where each block's workgroup memory starts: a multiple of 2^18 bytes, so
/// that the low 18 bits of a workgroup-memory address are its offset, as
/// the GPU's shared window has it; a wgmma matrix descriptor built from an
/// address ((address & 0x3ffff) >> 4) then names the same bytes here.
constexpr std::size_t kSharedAlignment = std::size_t(1) << 18;
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
  /// Registers per thread the block starts with (setmaxnreg's budget).
  int64_t registersPerThread = 0;

  std::atomic<int64_t> nextBlock{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::string error;

  /// Keeps the first error of the launch and stops it.
  void recordError(const char *message);
};

enum class FiberState : uint8_t {
  Ready,
  AtBarrier,
  AtCollective,
  /// mbarrier.try_wait.parity until the phase completes (Fiber::waitBarrier).
  AtMbarrier,
  /// bar.sync on a named barrier until its count arrives (waitBarrier).
  AtNamedBarrier,
  Done
};
/// Shuffle .. Elect: warp collectives; Wgmma ..: warpgroup collectives.
enum class CollectiveKind : uint8_t {
  Shuffle,
  Mma,
  Ldmatrix,
  Elect,
  Wgmma,
  WgmmaWait,
  SetMaxNReg
};
inline bool isWarpgroupCollective(CollectiveKind kind) {
  return kind >= CollectiveKind::Wgmma;
}

/// What a thread brings to wgmma.mma_async (ropeGpuEmuWgmma).
struct WgmmaCall {
  int32_t type = 0, n = 0;              // 0 f16, 1 bf16; N of m64nNk16
  const uint32_t *aRegisters = nullptr; // A from registers, else aDescriptor
  uint64_t aDescriptor = 0, bDescriptor = 0;
  int32_t transposeA = 0, transposeB = 0, scaleD = 1, scaleA = 1, scaleB = 1;
  const float *c = nullptr;
  float *d = nullptr;
};

/// What a lane brings to a warp collective and what it gets back.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::Shuffle;
  /// Shuffle: mode, width, offset. Mma: shape. Ldmatrix: count, transpose.
  /// Elect: member mask. Wgmma: WgmmaCall. WgmmaWait: pending groups, this
  /// thread's commits. SetMaxNReg: registers, increase.
  int32_t param0 = 0, param1 = 0, param2 = 0;
  int32_t value = 0;  // shuffle: this lane's value, then the result
  int8_t valid = 0;   // shuffle: whether the source lane was in the group
  const void *in0 = nullptr, *in1 = nullptr; // mma: a, b; ldmatrix: row
  const float *in2 = nullptr;                // mma: c
  void *out = nullptr;                       // mma: d; ldmatrix: out
  const struct WgmmaCall *wgmma = nullptr;   // wgmma: its operands
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
  /// AtMbarrier: the index of the mbarrier (BlockRunner::mbarriers) and the
  /// parity of the phase whose completion the thread waits for.
  uint32_t waitBarrier = 0, waitParity = 0;
  /// wgmma.commit_group and cp.async.bulk.commit_group calls so far.
  uint64_t wgmmaCommits = 0, bulkCommits = 0;
};

/// The checkers' record of one byte of workgroup memory. Epochs count the
/// runner's barrier intervals across blocks, so a new block needs no reset:
/// fields of an older epoch are stale.
///
/// Within an epoch, threads synchronised through mbarriers are ordered by
/// vector clocks (GpuEmulatorMbarrier.cpp): each id comes with the clock of
/// its thread at the access, and an access of another thread is ordered
/// before the current one when the current thread's clock of that thread
/// has reached it.
struct ShadowByte {
  uint32_t epoch = 0;           // the interval the three ids below are of
  uint32_t lastWrite = 0;       // the interval of the latest write
  uint32_t writerClock = 0, readerClock = 0, reader2Clock = 0;
  uint16_t writer = kNoThread;  // the thread that wrote it in `epoch`
  uint16_t reader = kNoThread;  // a thread that read it in `epoch`
  uint16_t reader2 = kNoThread; // another one (so: several readers)
  /// A TMA load that has not landed yet will write this byte.
  bool asyncPending = false;
  /// Pending asynchronous reads (wgmma operands, TMA store sources) of it.
  uint16_t asyncReaders = 0;
};

/// Who accesses workgroup memory: a thread with its vector clock (null
/// while the block uses no mbarrier), or a TMA load with the clock its
/// issuing thread had when it issued it.
struct Accessor {
  uint32_t thread = 0;
  const uint32_t *clock = nullptr;
};

/// An mbarrier object in workgroup memory (PTX: mbarrier, 8 bytes). Its
/// state lives here, keyed by the offset; the 8 bytes themselves are not
/// touched.
struct Mbarrier {
  int64_t offset = 0;
  uint32_t expected = 0; // arrivals per phase (mbarrier.init's count)
  uint32_t pending = 0;  // arrivals still missing in the current phase
  int64_t tx = 0;        // transaction bytes expected but not completed
  uint64_t phase = 0;    // completed phases
  uint32_t initThread = 0, initEpoch = 0, initClock = 0;
  /// The join of the clocks released into the current phase, and of those
  /// of every completed phase (what a waiter acquires).
  std::vector<uint32_t> arrivedClock, completedClock;
};

/// A named barrier (PTX bar.sync / bar.arrive with an id): `expected`
/// threads (0: no arrival yet) release the waiting ones, which acquire what
/// every arrival released.
struct NamedBarrier {
  uint32_t expected = 0, arrived = 0;
  std::vector<uint32_t> arrivedClock;
};
constexpr int32_t kNamedBarriers = 16;

/// A TMA load in flight: the box image (swizzled as it lands), its
/// destination, the mbarrier it completes and its issuing thread's clock.
struct PendingTmaLoad {
  uint32_t issuer = 0;
  uint32_t barrier = 0;
  int64_t offset = 0;
  std::vector<unsigned char> image;
  std::vector<uint32_t> issueClock;
};

/// Workgroup memory that an asynchronous operation may still read: the
/// operands of a wgmma until its group's wait, the source of a TMA store
/// until cp.async.bulk.wait_group.read.
struct PendingOperandRead {
  /// Byte ranges [first, second), disjoint.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  uint32_t owner = 0; // the warpgroup (wgmma) or the thread (TMA store)
  uint64_t group = 0; // the commit group it belongs to
  bool isWgmma = true;
  const char *what = "";
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
  case CollectiveKind::Elect:
    return "elect.sync";
  case CollectiveKind::Wgmma:
    return "wgmma.mma_async";
  case CollectiveKind::WgmmaWait:
    return "wgmma.wait_group";
  case CollectiveKind::SetMaxNReg:
    return "setmaxnreg";
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
  /// The same for any accessor, with its explicit clock.
  bool checkAccess(Accessor who, const void *address, int64_t bytes,
                   bool isWrite, const char *what);
  /// The accessor for thread `thread` now.
  Accessor accessor(uint32_t thread) const;
  /// A write of [offset, offset + bytes) must not hit workgroup memory that
  /// a pending wgmma or TMA store still reads.
  bool checkPendingReads(uint32_t thread, int64_t offset, int64_t bytes,
                         const char *what);
  /// Records an asynchronous read of `offsets` (any order, duplicates
  /// allowed) until completePendingReads drops it.
  void addPendingRead(PendingOperandRead read, std::vector<int64_t> offsets);
  /// Drops the pending reads that `done` selects; calls `each` on every
  /// dropped one first.
  template <typename Done, typename Each>
  void completePendingReads(Done done, Each each) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pendingReads.size(); ++i) {
      PendingOperandRead &read = pendingReads[i];
      if (!done(read)) {
        if (kept != i)
          pendingReads[kept] = std::move(read);
        ++kept;
        continue;
      }
      for (auto [begin, end] : read.ranges)
        for (int64_t at = begin; at < end; ++at)
          --shadow[static_cast<std::size_t>(at)].asyncReaders;
      each(read);
    }
    pendingReads.resize(kept);
  }
  /// An access of byte `offset`, which a TMA load in flight will write.
  void reportEarlyAccess(uint32_t thread, int64_t offset, bool isWrite,
                         const char *what);
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
  /// All 128 threads of warpgroup `group` arrived at a warpgroup
  /// collective (GpuEmulatorWarpgroup.cpp).
  bool executeWarpgroupCollective(uint32_t group);

  // --- mbarriers and clocks (GpuEmulatorMbarrier.cpp) ---------------------
  /// The mbarrier at `address`, checked (bounds, alignment, initialised and
  /// ordered after its init for `thread`); null with the fiber failed.
  Mbarrier *mbarrierAt(uint32_t thread, const void *address, const char *op);
  Mbarrier &initMbarrier(uint32_t thread, const void *address, uint32_t count);
  /// `count` arrivals of `thread` (which releases its clock into the phase).
  void arrive(uint32_t thread, Mbarrier &barrier, uint32_t count);
  /// Adds (expect_tx) or removes (complete_tx) transaction bytes; completes
  /// the phase when nothing is missing. `clock`: what complete_tx releases.
  void addTransactions(Mbarrier &barrier, int64_t bytes, const uint32_t *clock);
  /// Blocks the running fiber until the phase of parity `parity` of
  /// `barrier` completes, then acquires its clock.
  void waitParity(Mbarrier &barrier, uint32_t parity);
  /// bar.sync (wait) or bar.arrive of the running thread on named barrier
  /// `id` with `count` threads.
  void namedBarrier(int32_t id, int32_t count, bool wait);
  /// Turns on the vector clocks (first mbarrier of the block).
  void enableClocks();
  bool clocksEnabled() const { return clocksOn; }
  /// Thread `thread`'s vector clock (clocks on).
  uint32_t *clockOf(uint32_t thread) {
    return clocks.data() + static_cast<std::size_t>(thread) * numThreads;
  }
  /// Joins thread `thread`'s clock with `other` (acquire).
  void acquire(uint32_t thread, const uint32_t *other);

  // --- TMA (GpuEmulatorTma.cpp) ---------------------------------------------
  void issueTmaLoad(PendingTmaLoad load, Mbarrier &barrier);
  /// Lands every TMA load in flight (when no thread can run): writes their
  /// destinations and completes their transactions. False on error.
  bool deliverTmaLoads();
  bool tmaLoadsInFlight() const { return !tmaLoads.empty(); }
  /// The TMA load in flight that writes byte `offset`, or null.
  const PendingTmaLoad *tmaLoadWriting(int64_t offset) const;
  std::vector<PendingOperandRead> pendingReads;

  // --- Registers (setmaxnreg) ----------------------------------------------
  /// Registers per thread at launch and each warpgroup's current count.
  uint32_t launchRegisters = 0;
  std::vector<uint32_t> warpgroupRegisters;
  /// Warpgroups whose setmaxnreg.inc waits for registers (target count).
  std::vector<uint32_t> registerRequests;
  bool grantRegisterRequests();

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
  /// Some of threads [first, first + count) wait at a collective that the
  /// others never reach; `unit`: "warp" or "warpgroup".
  void reportDivergentCollective(uint32_t first, uint32_t count,
                                 const char *unit);
  bool releaseBarrier();
  /// Every fiber is blocked and nothing in flight can wake one: reports
  /// why (a transaction count that cannot complete, or the deadlock with
  /// each warp's wait).
  void reportDeadlock();
  /// Block end: nothing may still be in flight.
  bool checkBlockEnd();
  void resetHopperState();
  uint32_t lanesOfWarp(uint32_t warp) const;
  bool checkCollectiveAgreement(uint32_t warp, uint32_t lanes);
  bool shuffle(uint32_t warp, uint32_t lanes);
  bool elect(uint32_t warp, uint32_t lanes);
  bool wgmma(uint32_t group);
  bool wgmmaWait(uint32_t group);
  bool setMaxNReg(uint32_t group);
  bool checkWarpgroupAgreement(uint32_t group);
  /// Makes the threads of warpgroup `group` ready again.
  void releaseWarpgroup(uint32_t group);
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
  std::vector<uint32_t> warpArrivals, warpgroupArrivals;
  uint32_t doneCount = 0, barrierCount = 0;
  /// The block's mbarriers, its TMA loads in flight, the vector clocks
  /// (numThreads x numThreads, on from the block's first mbarrier).
  std::vector<Mbarrier> mbarriers;
  NamedBarrier namedBarriers[kNamedBarriers];
  std::vector<PendingTmaLoad> tmaLoads;
  std::vector<uint32_t> clocks;
  bool clocksOn = false;
};

/// The f32 whose bits are `bits`, as a double.
inline double floatFromBits(uint32_t bits) {
  float value;
  __builtin_memcpy(&value, &bits, sizeof(value));
  return value;
}
/// IEEE binary16 and bfloat16 to double (exact; GpuEmulatorWarpOps.cpp).
double halfToDouble(uint16_t half);
double bf16ToDouble(uint16_t value);

/// The runner whose fiber runs on this host thread (null outside kernels).
BlockRunner *currentRunner();
void setCurrentRunner(BlockRunner *runner);

/// The runner of the calling kernel thread; reports an error through
/// ropeRuntimeError when there is none (a call outside any kernel).
BlockRunner &runnerOrDie(const char *function);

} // namespace rope::gpuemu

#endif // ROPE_LIB_RUNTIME_GPUEMULATORINTERNAL_H
