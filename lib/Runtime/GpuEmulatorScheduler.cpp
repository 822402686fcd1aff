//===- GpuEmulatorScheduler.cpp - launches, blocks, barriers --------------===//
//
// ropeGpuEmuLaunch hands the grid's blocks to host threads (an atomic
// counter; each host thread has its own BlockRunner). A runner runs a block
// by resuming its ready fibers in order, each until it blocks or returns:
//
//  * a fiber that arrives at a warp collective completes it when it is the
//    last lane of its warp to arrive (GpuEmulatorWarpOps.cpp); the lanes are
//    ready again;
//  * a fiber that arrives at a warpgroup collective (wgmma, setmaxnreg)
//    completes it when it is the last of its 128 threads
//    (GpuEmulatorWarpgroup.cpp);
//  * a fiber that waits on an mbarrier is ready again when the phase it
//    waits for completes (GpuEmulatorMbarrier.cpp);
//  * when no fiber is ready, every fiber waits at a barrier, a collective or
//    an mbarrier, or has returned. All returned: the block is done. All
//    waiting at barriers (or returned): released if no thread returned and
//    they agree on the site, otherwise divergent barrier. Else TMA loads in
//    flight land now (GpuEmulatorTma.cpp), which may complete phases. With
//    none in flight nothing can change: an incomplete collective whose
//    missing lanes returned or wait at a barrier is a divergent collective;
//    anything else is a deadlock, reported with each warp's wait.
//
// The order is deterministic for a given block: fibers are resumed in the
// order they became ready, starting with linear id order.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorInternal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

using namespace rope::gpuemu;

namespace {
thread_local BlockRunner *tlsRunner = nullptr;
/// ropeGpuEmuLaunchRegisters's value for the next launch of this thread.
thread_local int64_t nextLaunchRegisters = 0;

/// Where every fiber starts: the kernel, then done for good (the fiber is
/// never resumed after that; its context is prepared anew for a new block).
[[noreturn]] void fiberMain() {
  BlockRunner &runner = *tlsRunner;
  runner.launch.kernel(runner.launch.env);
  runner.yield(FiberState::Done);
  __builtin_trap();
}

/// Runs blocks of `launch` until none is left or the launch failed.
void runBlocks(Launch &launch) {
  BlockRunner runner(launch);
  while (!launch.failed.load(std::memory_order_relaxed)) {
    int64_t block = launch.nextBlock.fetch_add(1, std::memory_order_relaxed);
    if (block >= launch.numBlocks || !runner.runBlock(block))
      break;
  }
}
} // namespace

namespace rope::gpuemu {

BlockRunner *currentRunner() { return tlsRunner; }
void setCurrentRunner(BlockRunner *runner) { tlsRunner = runner; }

BlockRunner &runnerOrDie(const char *function) {
  if (BlockRunner *runner = tlsRunner)
    return *runner;
  static thread_local char message[256];
  std::snprintf(message, sizeof(message),
                "gpu emulator: %s called outside a kernel run by "
                "ropeGpuEmuLaunch",
                function);
  ropeRuntimeError(message, 0, nullptr);
}

void Launch::recordError(const char *message) {
  std::lock_guard<std::mutex> lock(errorMutex);
  if (failed.load(std::memory_order_relaxed))
    return;
  error = message;
  failed.store(true, std::memory_order_relaxed);
}

BlockRunner::BlockRunner(Launch &launch) : launch(launch) {}

BlockRunner::~BlockRunner() {
  for (Fiber &fiber : fibers)
    returnStack(fiber.stack);
  fibers.clear();
  if (shared)
    ::operator delete(shared, std::align_val_t(kSharedAlignment));
}

bool BlockRunner::ensureFibers() {
  if (!fibers.empty())
    return true;
  numThreads = static_cast<uint32_t>(launch.threadsPerBlock);
  // Sized once: a prepared context must not move (ucontext points into
  // itself).
  fibers.resize(numThreads);
  for (uint32_t i = 0; i < numThreads; ++i) {
    fibers[i].linear = i;
    if (!takeStack(fibers[i].stack, launch.stackBytes)) {
      error("cannot map %u fiber stacks of %zu bytes (ROPE_GPU_EMU_STACK_KB)",
            numThreads, launch.stackBytes);
      for (Fiber &fiber : fibers)
        returnStack(fiber.stack);
      fibers.clear();
      return false;
    }
  }
  warpArrivals.assign((numThreads + kWarpSize - 1) / kWarpSize, 0);
  warpgroupArrivals.assign((numThreads + kWarpgroupSize - 1) / kWarpgroupSize,
                           0);
  ready.reserve(numThreads);
  runQueue.reserve(numThreads);
  return true;
}

void BlockRunner::startFibers() {
  doneCount = barrierCount = 0;
  std::fill(warpArrivals.begin(), warpArrivals.end(), 0);
  resetHopperState();
  ready.clear();
  for (Fiber &fiber : fibers) {
    prepareContext(fiber.context, fiber.stack, &fiberMain,
                   fiber.linear % 64 * 64);
    fiber.state = FiberState::Ready;
    fiber.barrierSite = kAnyBarrierSite;
    fiber.pendingCopies.clear();
    fiber.openGroup = 0;
    fiber.wgmmaCommits = fiber.bulkCommits = 0;
    ready.push_back(fiber.linear);
  }
}

bool BlockRunner::runBlock(int64_t linearBlock) {
  if (!ensureFibers())
    return false;
  blockId[0] = linearBlock % launch.grid[0];
  blockId[1] = linearBlock / launch.grid[0] % launch.grid[1];
  blockId[2] = linearBlock / (launch.grid[0] * launch.grid[1]);
  resetSharedMemory();
  startFibers();
  BlockRunner *outer = tlsRunner;
  tlsRunner = this;
  bool finished = false;
  while (!finished && runReadyFibers() && resolveBlockedFibers(finished)) {
  }
  tlsRunner = outer;
  return !launch.failed.load(std::memory_order_relaxed);
}

bool BlockRunner::runReadyFibers() {
  while (!ready.empty()) {
    runQueue.swap(ready);
    ready.clear();
    for (uint32_t index : runQueue) {
      if (launch.failed.load(std::memory_order_relaxed))
        return false;
      Fiber &fiber = fibers[index];
      current = &fiber;
      switchContext(scheduler, fiber.context);
      current = nullptr;
      if (launch.failed.load(std::memory_order_relaxed))
        return false;
      afterYield(fiber);
    }
  }
  return !launch.failed.load(std::memory_order_relaxed);
}

void BlockRunner::afterYield(Fiber &fiber) {
  switch (fiber.state) {
  case FiberState::Done:
    ++doneCount;
    return;
  case FiberState::AtBarrier:
    ++barrierCount;
    return;
  case FiberState::Ready:
  case FiberState::AtMbarrier:
  case FiberState::AtNamedBarrier:
    return;
  case FiberState::AtCollective:
    break;
  }
  if (isWarpgroupCollective(fiber.call.kind)) {
    uint32_t group = fiber.linear / kWarpgroupSize;
    if (++warpgroupArrivals[group] < kWarpgroupSize)
      return;
    warpgroupArrivals[group] = 0;
    executeWarpgroupCollective(group);
    return;
  }
  uint32_t warp = fiber.linear / kWarpSize;
  if (++warpArrivals[warp] < lanesOfWarp(warp))
    return;
  warpArrivals[warp] = 0;
  if (!executeCollective(warp))
    return;
  uint32_t first = warp * kWarpSize, end = first + lanesOfWarp(warp);
  for (uint32_t lane = first; lane < end; ++lane) {
    fibers[lane].state = FiberState::Ready;
    ready.push_back(lane);
  }
}

uint32_t BlockRunner::lanesOfWarp(uint32_t warp) const {
  return std::min(kWarpSize, numThreads - warp * kWarpSize);
}

bool BlockRunner::resolveBlockedFibers(bool &finished) {
  if (doneCount == numThreads) {
    finished = true;
    return checkBlockEnd();
  }
  if (barrierCount + doneCount == numThreads)
    return releaseBarrier();
  if (tmaLoadsInFlight())
    return deliverTmaLoads();
  bool waitsOtherwise = false;
  for (const Fiber &fiber : fibers)
    waitsOtherwise |= fiber.state == FiberState::AtMbarrier ||
                      fiber.state == FiberState::AtNamedBarrier;
  for (uint32_t group = 0; group < registerRequests.size(); ++group)
    waitsOtherwise |= registerRequests[group] != 0;
  if (!waitsOtherwise) {
    for (uint32_t warp = 0; warp < warpArrivals.size(); ++warp) {
      if (warpArrivals[warp] != 0) {
        reportDivergentCollective(warp * kWarpSize, lanesOfWarp(warp), "warp");
        return false;
      }
    }
    for (uint32_t group = 0; group < warpgroupArrivals.size(); ++group) {
      if (warpgroupArrivals[group] != 0) {
        reportDivergentCollective(group * kWarpgroupSize, kWarpgroupSize,
                                  "warpgroup");
        return false;
      }
    }
  }
  reportDeadlock();
  return false;
}

void BlockRunner::reportDivergentCollective(uint32_t first, uint32_t count,
                                            const char *unit) {
  uint32_t end = first + count;
  bool ofWarpgroup = count == kWarpgroupSize;
  // The first lane that waits and the first that never comes (it waits
  // elsewhere: at a barrier, at a collective of the other kind, or it
  // returned).
  uint32_t waiting = end, missing = end;
  for (uint32_t lane = first; lane < end; ++lane) {
    const Fiber &fiber = fibers[lane];
    bool atCollective = fiber.state == FiberState::AtCollective &&
                        isWarpgroupCollective(fiber.call.kind) == ofWarpgroup;
    uint32_t &slot = atCollective ? waiting : missing;
    if (slot == end)
      slot = lane;
  }
  if (waiting == end || missing == end) {
    reportDeadlock();
    return;
  }
  bool returned = fibers[missing].state == FiberState::Done;
  const char *where = returned ? "returned"
                      : fibers[missing].state == FiberState::AtBarrier
                          ? "waits at a barrier"
                          : "waits at another collective";
  error("divergent %s collective: %s waits at %s, which %s of the same %s "
        "never reaches (it %s)",
        unit, name(waiting).text, collectiveName(fibers[waiting].call.kind),
        name(missing).text, unit, where);
}

bool BlockRunner::releaseBarrier() {
  // Every fiber waits at a barrier or has returned, and not all returned.
  uint32_t waiting = 0;
  while (fibers[waiting].state != FiberState::AtBarrier)
    ++waiting;
  if (doneCount != 0) {
    uint32_t returned = 0;
    while (fibers[returned].state != FiberState::Done)
      ++returned;
    error("divergent barrier: %s waits at a barrier that %s never reaches "
          "(it returned)",
          name(waiting).text, name(returned).text);
    return false;
  }
  const Fiber *sited = nullptr;
  for (const Fiber &fiber : fibers) {
    if (fiber.barrierSite == kAnyBarrierSite)
      continue;
    if (sited && fiber.barrierSite != sited->barrierSite) {
      error("divergent barrier: %s waits at barrier %lld, %s at barrier %lld",
            name(sited->linear).text,
            static_cast<long long>(sited->barrierSite), name(fiber.linear).text,
            static_cast<long long>(fiber.barrierSite));
      return false;
    }
    sited = sited ? sited : &fiber;
  }
  // A new barrier interval: accesses before it are ordered before the ones
  // after it.
  ++epoch;
  barrierCount = 0;
  for (Fiber &fiber : fibers) {
    fiber.state = FiberState::Ready;
    ready.push_back(fiber.linear);
  }
  return true;
}

void BlockRunner::resetHopperState() {
  mbarriers.clear();
  for (NamedBarrier &barrier : namedBarriers)
    barrier = NamedBarrier();
  tmaLoads.clear();
  pendingReads.clear();
  clocksOn = false;
  std::fill(warpgroupArrivals.begin(), warpgroupArrivals.end(), 0);
  launchRegisters = static_cast<uint32_t>(launch.registersPerThread);
  warpgroupRegisters.assign(warpgroupArrivals.size(), launchRegisters);
  registerRequests.assign(warpgroupArrivals.size(), 0);
}

bool BlockRunner::checkBlockEnd() {
  if (!tmaLoads.empty()) {
    const PendingTmaLoad &load = tmaLoads.front();
    error("the block ended with a TMA load in flight: %s issued it into "
          "workgroup memory byte offset %lld, and no thread waited for the "
          "mbarrier phase it completes",
          name(load.issuer).text, (long long)load.offset);
    return false;
  }
  if (!pendingReads.empty()) {
    const PendingOperandRead &read = pendingReads.front();
    if (read.isWgmma)
      error("the block ended with a wgmma in flight: warpgroup %u issued it "
            "in group %llu, which no wgmma.wait_group completed",
            read.owner, (unsigned long long)read.group);
    else
      error("the block ended with a TMA store reading workgroup memory: %s "
            "issued it in bulk group %llu, which no "
            "cp.async.bulk.wait_group.read completed",
            name(read.owner).text, (unsigned long long)read.group);
    return false;
  }
  return true;
}

void BlockRunner::yield(FiberState state) {
  Fiber &fiber = *current;
  fiber.state = state;
  switchContext(fiber.context, scheduler);
}

void BlockRunner::abandonFiber() {
  Fiber &fiber = *current;
  fiber.state = FiberState::Done;
  switchContext(fiber.context, scheduler);
  __builtin_trap();
}

void BlockRunner::failFiber(const char *format, ...) {
  va_list args;
  va_start(args, format);
  verror(format, args);
  va_end(args);
  abandonFiber();
}

} // namespace rope::gpuemu

namespace {
/// Why the launch configuration is invalid, or null.
const char *invalidLaunch(const Launch &launch) {
  if (!launch.kernel)
    return "no kernel function";
  for (int i = 0; i < 3; ++i)
    if (launch.grid[i] <= 0 || launch.block[i] <= 0)
      return "every grid and block extent must be positive";
  if (launch.grid[0] > INT32_MAX || launch.grid[1] > 65535 ||
      launch.grid[2] > 65535)
    return "the grid exceeds (2^31 - 1, 65535, 65535)";
  if (launch.block[0] > 1024 || launch.block[1] > 1024 ||
      launch.block[2] > 64 ||
      launch.block[0] * launch.block[1] * launch.block[2] > kMaxThreadsPerBlock)
    return "a block has at most 1024 threads, at most (1024, 1024, 64)";
  if (launch.sharedBytes < 0 || launch.sharedBytes > (int64_t(1) << 30))
    return "workgroup memory must be 0 to 1 GiB";
  return nullptr;
}

/// Runs the launch on its host threads; false with `message` on error.
bool runLaunch(Launch &launch, char *message, std::size_t capacity) {
  if (const char *why = invalidLaunch(launch)) {
    std::snprintf(message, capacity,
                  "gpu emulator: kernel '%s': invalid launch: grid (%lld, "
                  "%lld, %lld), block (%lld, %lld, %lld), %lld bytes of "
                  "workgroup memory: %s",
                  launch.name, (long long)launch.grid[0],
                  (long long)launch.grid[1], (long long)launch.grid[2],
                  (long long)launch.block[0], (long long)launch.block[1],
                  (long long)launch.block[2], (long long)launch.sharedBytes,
                  why);
    return false;
  }
  launch.threadsPerBlock = launch.block[0] * launch.block[1] * launch.block[2];
  launch.numBlocks = launch.grid[0] * launch.grid[1] * launch.grid[2];
  launch.stackBytes = stackBytesFromEnv();
  if (launch.registersPerThread == 0) {
    // As a kernel compiled for this block size gets at most: the 64K
    // registers of an SM shared by its threads, in units of 8, at most 255.
    int64_t share = 65536 / launch.threadsPerBlock / 8 * 8;
    launch.registersPerThread = std::min<int64_t>(share, 255);
  }
  int64_t hostThreads =
      hostThreadsFromEnv(launch.numBlocks, launch.threadsPerBlock);
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<std::size_t>(hostThreads - 1));
  for (int64_t i = 1; i < hostThreads; ++i)
    helpers.emplace_back(runBlocks, std::ref(launch));
  runBlocks(launch);
  for (std::thread &helper : helpers)
    helper.join();
  if (!launch.failed.load())
    return true;
  std::snprintf(message, capacity, "%s", launch.error.c_str());
  return false;
}
} // namespace

extern "C" void ropeGpuEmuLaunchRegisters(int32_t registersPerThread) {
  if (registersPerThread < 24 || registersPerThread > 255) {
    static thread_local char message[160];
    std::snprintf(message, sizeof(message),
                  "gpu emulator: ropeGpuEmuLaunchRegisters: %d registers per "
                  "thread (24 to 255)",
                  registersPerThread);
    ropeRuntimeError(message, 0, nullptr);
  }
  nextLaunchRegisters = registersPerThread;
}

extern "C" void ropeGpuEmuLaunch(RopeGpuEmuKernel kernel, void *env,
                                 const char *kernelName, int64_t gridX,
                                 int64_t gridY, int64_t gridZ, int64_t blockX,
                                 int64_t blockY, int64_t blockZ,
                                 int64_t sharedBytes) {
  if (BlockRunner *runner = tlsRunner)
    runner->failFiber("ropeGpuEmuLaunch called inside a kernel");
  // The message outlives the launch's state, which is gone (stacks
  // unmapped, host threads joined) before ropeRuntimeError, which may
  // longjmp to a ropeRuntimeCall, runs.
  static thread_local char message[4096];
  bool ok;
  {
    Launch launch;
    launch.kernel = kernel;
    launch.env = env;
    launch.name = kernelName ? kernelName : "?";
    int64_t grid[3] = {gridX, gridY, gridZ}, block[3] = {blockX, blockY,
                                                         blockZ};
    std::memcpy(launch.grid, grid, sizeof(grid));
    std::memcpy(launch.block, block, sizeof(block));
    launch.sharedBytes = sharedBytes;
    launch.registersPerThread = nextLaunchRegisters;
    nextLaunchRegisters = 0;
    ok = runLaunch(launch, message, sizeof(message));
  }
  if (!ok)
    ropeRuntimeError(message, 0, nullptr);
}

namespace {
int64_t component(const int64_t *extents, int64_t linear, int32_t dim) {
  switch (dim) {
  case 0:
    return linear % extents[0];
  case 1:
    return linear / extents[0] % extents[1];
  default:
    return linear / (extents[0] * extents[1]);
  }
}

BlockRunner &runnerForDim(const char *function, int32_t dim) {
  BlockRunner &runner = runnerOrDie(function);
  if (dim < 0 || dim > 2)
    runner.failFiber("invalid operand: %s: dimension %d (0, 1 or 2)",
                     function, dim);
  return runner;
}
} // namespace

extern "C" int64_t ropeGpuEmuThreadId(int32_t dim) {
  BlockRunner &runner = runnerForDim("ropeGpuEmuThreadId", dim);
  return component(runner.launch.block, runner.running().linear, dim);
}

extern "C" int64_t ropeGpuEmuBlockId(int32_t dim) {
  BlockRunner &runner = runnerForDim("ropeGpuEmuBlockId", dim);
  return runner.blockId[dim];
}

extern "C" int64_t ropeGpuEmuBlockDim(int32_t dim) {
  BlockRunner &runner = runnerForDim("ropeGpuEmuBlockDim", dim);
  return runner.launch.block[dim];
}

extern "C" int64_t ropeGpuEmuGridDim(int32_t dim) {
  BlockRunner &runner = runnerForDim("ropeGpuEmuGridDim", dim);
  return runner.launch.grid[dim];
}

extern "C" int64_t ropeGpuEmuLaneId(void) {
  return runnerOrDie("ropeGpuEmuLaneId").running().linear % kWarpSize;
}

extern "C" void ropeGpuEmuBarrier(void) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuBarrier");
  runner.running().barrierSite = kAnyBarrierSite;
  runner.yield(FiberState::AtBarrier);
}

extern "C" void ropeGpuEmuBarrierSite(int64_t site) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuBarrierSite");
  runner.running().barrierSite = site == kAnyBarrierSite ? site + 1 : site;
  runner.yield(FiberState::AtBarrier);
}
