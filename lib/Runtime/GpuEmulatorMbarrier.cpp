//===- GpuEmulatorMbarrier.cpp - mbarriers, vector clocks, deadlocks ------===//
//
// An mbarrier (PTX ISA, "Parallel Synchronization and Communication
// Instructions: mbarrier") counts arrivals and transaction bytes per phase:
// init(count) starts phase 0 expecting `count` arrivals; arrive removes
// arrivals, expect_tx adds transaction bytes that complete_tx (a TMA load
// landing) removes; when both reach zero the phase completes and the next
// one expects `count` arrivals again. try_wait.parity(p) returns once the
// phase of parity p has completed, that is, while the current phase's
// parity differs from p. A try_wait here blocks the thread until then (a
// valid schedule of PTX's time-limited try_wait in its retry loop), so a
// kernel never spins on the host thread.
//
// Threads that synchronise through mbarriers instead of block-wide barriers
// are ordered by vector clocks, on from the block's first mbarrier.init:
// thread t's clock C_t[t] starts at 1; an arrive releases C_t into the
// phase and then advances C_t[t]; a waiter whose phase completed acquires
// (joins) what the completed phases released; a TMA load releases the
// clock its issuing thread had when it issued it. The workgroup-memory
// checkers (GpuEmulatorCheckers.cpp) then see an access of thread o with
// clock c as ordered before thread t's when C_t[o] >= c.
//
// Named barriers (bar.sync / bar.arrive with an id and a thread count)
// order the threads that meet at them the same way: each arrival releases
// its thread's clock, and the waiters released by the last arrival acquire
// them all. The clocks come on with the first named barrier too.
//
// When every thread is blocked and no TMA load is in flight, nothing can
// change any more: reportDeadlock names each warp's wait.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorInternal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

using namespace rope::gpuemu;

namespace {
/// PTX's ranges of the arrival count and of the transaction count.
constexpr int64_t kMaxArrivals = (int64_t(1) << 20) - 1;
constexpr int64_t kMaxTransactionBytes = (int64_t(1) << 20) - 1;
} // namespace

namespace rope::gpuemu {

void BlockRunner::enableClocks() {
  if (clocksOn)
    return;
  clocks.assign(static_cast<std::size_t>(numThreads) * numThreads, 0);
  for (uint32_t t = 0; t < numThreads; ++t)
    clockOf(t)[t] = 1;
  clocksOn = true;
}

void BlockRunner::acquire(uint32_t thread, const uint32_t *other) {
  if (!clocksOn || !other)
    return;
  uint32_t *mine = clockOf(thread);
  for (uint32_t i = 0; i < numThreads; ++i)
    mine[i] = std::max(mine[i], other[i]);
}

Mbarrier &BlockRunner::initMbarrier(uint32_t thread, const void *address,
                                    uint32_t count) {
  enableClocks();
  auto offset = static_cast<int64_t>(
      static_cast<const unsigned char *>(address) - shared);
  auto found =
      std::find_if(mbarriers.begin(), mbarriers.end(),
                   [&](const Mbarrier &b) { return b.offset == offset; });
  if (found == mbarriers.end()) {
    mbarriers.emplace_back();
    found = mbarriers.end() - 1;
  } else {
    // PTX: init of an mbarrier in use is undefined.
    auto index = static_cast<uint32_t>(found - mbarriers.begin());
    for (const Fiber &fiber : fibers)
      if (fiber.state == FiberState::AtMbarrier && fiber.waitBarrier == index)
        failFiber("invalid mbarrier.init: %s initialises the mbarrier at "
                  "workgroup memory byte offset %lld while %s waits on it",
                  name(thread).text, (long long)offset,
                  name(fiber.linear).text);
    for (const PendingTmaLoad &load : tmaLoads)
      if (load.barrier == index)
        failFiber("invalid mbarrier.init: %s initialises the mbarrier at "
                  "workgroup memory byte offset %lld while a TMA load of %s "
                  "in flight completes on it",
                  name(thread).text, (long long)offset, name(load.issuer).text);
    if (found->pending != found->expected || found->tx != 0)
      failFiber("invalid mbarrier.init: %s initialises the mbarrier at "
                "workgroup memory byte offset %lld in the middle of its "
                "phase %llu (%u of %u arrivals and %lld transaction bytes "
                "missing)",
                name(thread).text, (long long)offset,
                (unsigned long long)found->phase, found->pending,
                found->expected, (long long)found->tx);
  }
  Mbarrier &barrier = *found;
  barrier.offset = offset;
  barrier.expected = barrier.pending = count;
  barrier.tx = 0;
  barrier.phase = 0;
  barrier.initThread = thread;
  barrier.initEpoch = epoch;
  barrier.initClock = clockOf(thread)[thread];
  barrier.arrivedClock.assign(numThreads, 0);
  barrier.completedClock.assign(numThreads, 0);
  return barrier;
}

Mbarrier *BlockRunner::mbarrierAt(uint32_t thread, const void *address,
                                  const char *op) {
  auto offset = static_cast<long long>(
      static_cast<const unsigned char *>(address) - shared);
  if (offset < 0 || offset > launch.sharedBytes - 8)
    failFiber("out-of-bounds access: %s calls %s on an mbarrier at workgroup "
              "memory byte offset %lld, outside the block's %lld bytes",
              name(thread).text, op, offset, (long long)launch.sharedBytes);
  if (offset % 8 != 0)
    failFiber("misaligned mbarrier: %s calls %s on an mbarrier at workgroup "
              "memory byte offset %lld, not a multiple of 8",
              name(thread).text, op, offset);
  for (std::size_t i = 0; i < mbarriers.size(); ++i) {
    Mbarrier &barrier = mbarriers[i];
    if (barrier.offset != offset)
      continue;
    bool ordered = thread == barrier.initThread || barrier.initEpoch != epoch ||
                   clockOf(thread)[barrier.initThread] >= barrier.initClock;
    if (!ordered)
      failFiber("data race: %s calls %s on the mbarrier at workgroup memory "
                "byte offset %lld, which %s initialised with no barrier or "
                "mbarrier wait in between",
                name(thread).text, op, offset, name(barrier.initThread).text);
    return &barrier;
  }
  failFiber("uninitialised mbarrier: %s calls %s on workgroup memory byte "
            "offset %lld, where no thread of the block called mbarrier.init",
            name(thread).text, op, offset);
}

void BlockRunner::arrive(uint32_t thread, Mbarrier &barrier, uint32_t count) {
  if (count == 0 || count > barrier.pending) {
    if (barrier.pending == 0)
      failFiber("invalid mbarrier.arrive: %s arrives on the mbarrier at "
                "workgroup memory byte offset %lld, whose phase %llu has all "
                "of its %u arrivals and waits for %lld transaction bytes",
                name(thread).text, (long long)barrier.offset,
                (unsigned long long)barrier.phase, barrier.expected,
                (long long)barrier.tx);
    failFiber("invalid mbarrier.arrive: %s arrives %u times on the mbarrier "
              "at workgroup memory byte offset %lld, whose phase %llu expects "
              "%u more arrivals",
              name(thread).text, count, (long long)barrier.offset,
              (unsigned long long)barrier.phase, barrier.pending);
  }
  uint32_t *mine = clockOf(thread);
  for (uint32_t i = 0; i < numThreads; ++i)
    barrier.arrivedClock[i] = std::max(barrier.arrivedClock[i], mine[i]);
  ++mine[thread];
  barrier.pending -= count;
  addTransactions(barrier, 0, nullptr);
}

void BlockRunner::addTransactions(Mbarrier &barrier, int64_t bytes,
                                  const uint32_t *clock) {
  barrier.tx += bytes;
  if (clock)
    for (uint32_t i = 0; i < numThreads; ++i)
      barrier.arrivedClock[i] = std::max(barrier.arrivedClock[i], clock[i]);
  if (barrier.tx > kMaxTransactionBytes || barrier.tx < -kMaxTransactionBytes) {
    error("invalid mbarrier transaction count: the mbarrier at workgroup "
          "memory byte offset %lld expects %lld transaction bytes in phase "
          "%llu, outside PTX's range of +-(2^20 - 1)",
          (long long)barrier.offset, (long long)barrier.tx,
          (unsigned long long)barrier.phase);
    return;
  }
  if (barrier.pending != 0 || barrier.tx != 0)
    return;
  // The phase completes: waiters of its parity continue.
  for (uint32_t i = 0; i < numThreads; ++i) {
    barrier.completedClock[i] =
        std::max(barrier.completedClock[i], barrier.arrivedClock[i]);
    barrier.arrivedClock[i] = 0;
  }
  uint32_t completedParity = static_cast<uint32_t>(barrier.phase & 1);
  ++barrier.phase;
  barrier.pending = barrier.expected;
  auto index = static_cast<uint32_t>(&barrier - mbarriers.data());
  for (Fiber &fiber : fibers) {
    if (fiber.state != FiberState::AtMbarrier || fiber.waitBarrier != index ||
        fiber.waitParity != completedParity)
      continue;
    fiber.state = FiberState::Ready;
    ready.push_back(fiber.linear);
  }
}

void BlockRunner::namedBarrier(int32_t id, int32_t count, bool wait) {
  Fiber &fiber = running();
  const char *op = wait ? "bar.sync" : "bar.arrive";
  if (id < 0 || id >= kNamedBarriers || count <= 0 || count % kWarpSize != 0 ||
      static_cast<uint32_t>(count) > numThreads)
    failFiber("invalid operand: %s calls %s on barrier %d for %d threads (a "
              "barrier 0 to 15, a multiple of 32 threads up to the block's "
              "%u)",
              name(fiber.linear).text, op, id, count, numThreads);
  enableClocks();
  NamedBarrier &barrier = namedBarriers[id];
  if (barrier.expected != 0 && barrier.expected != static_cast<uint32_t>(count))
    failFiber("divergent barrier: %s calls %s on barrier %d for %d threads, "
              "whose other arrivals of this round are for %u",
              name(fiber.linear).text, op, id, count, barrier.expected);
  if (barrier.expected == 0) {
    barrier.expected = static_cast<uint32_t>(count);
    barrier.arrivedClock.assign(numThreads, 0);
  }
  uint32_t *mine = clockOf(fiber.linear);
  for (uint32_t i = 0; i < numThreads; ++i)
    barrier.arrivedClock[i] = std::max(barrier.arrivedClock[i], mine[i]);
  ++mine[fiber.linear];
  if (++barrier.arrived < barrier.expected) {
    if (wait) {
      fiber.waitBarrier = static_cast<uint32_t>(id);
      yield(FiberState::AtNamedBarrier);
    }
    return;
  }
  // The last arrival: the waiters go on, knowing what every arrival did.
  std::vector<uint32_t> released = std::move(barrier.arrivedClock);
  barrier = NamedBarrier();
  for (Fiber &other : fibers) {
    if (other.state != FiberState::AtNamedBarrier ||
        other.waitBarrier != static_cast<uint32_t>(id))
      continue;
    acquire(other.linear, released.data());
    other.state = FiberState::Ready;
    ready.push_back(other.linear);
  }
  if (wait)
    acquire(fiber.linear, released.data());
}

void BlockRunner::waitParity(Mbarrier &barrier, uint32_t parity) {
  Fiber &fiber = running();
  auto index = static_cast<uint32_t>(&barrier - mbarriers.data());
  if (static_cast<uint32_t>(barrier.phase & 1) == parity) {
    // The phase of this parity is the current one: wait for it.
    fiber.waitBarrier = index;
    fiber.waitParity = parity;
    yield(FiberState::AtMbarrier);
  }
  acquire(fiber.linear, mbarriers[index].completedClock.data());
}

namespace {
/// What fiber `fiber` waits for, as a sentence's predicate.
std::string describeWait(const Fiber &fiber,
                         const std::vector<Mbarrier> &barriers,
                         const std::vector<uint32_t> &registerRequests) {
  char text[256];
  switch (fiber.state) {
  case FiberState::AtMbarrier: {
    const Mbarrier &b = barriers[fiber.waitBarrier];
    std::snprintf(text, sizeof(text),
                  "wait at the mbarrier at byte offset %lld for its phase of "
                  "parity %u (phase %llu misses %u of %u arrivals and %lld "
                  "transaction bytes)",
                  (long long)b.offset, fiber.waitParity,
                  (unsigned long long)b.phase, b.pending, b.expected,
                  (long long)b.tx);
    break;
  }
  case FiberState::AtBarrier:
    std::snprintf(text, sizeof(text), "wait at a barrier");
    break;
  case FiberState::AtNamedBarrier:
    std::snprintf(text, sizeof(text), "wait at named barrier %u",
                  fiber.waitBarrier);
    break;
  case FiberState::AtCollective: {
    uint32_t group = fiber.linear / kWarpgroupSize;
    bool forRegisters = fiber.call.kind == CollectiveKind::SetMaxNReg &&
                        group < registerRequests.size() &&
                        registerRequests[group] != 0;
    if (forRegisters)
      std::snprintf(text, sizeof(text),
                    "wait at setmaxnreg.inc for %u registers per thread that "
                    "no warpgroup releases",
                    registerRequests[group]);
    else
      std::snprintf(text, sizeof(text), "wait at %s",
                    collectiveName(fiber.call.kind));
    break;
  }
  case FiberState::Done:
    std::snprintf(text, sizeof(text), "returned");
    break;
  case FiberState::Ready:
    std::snprintf(text, sizeof(text), "can run");
    break;
  }
  return text;
}
} // namespace

void BlockRunner::reportDeadlock() {
  // A waited-on phase with all of its arrivals can only miss transaction
  // bytes, and no TMA load is in flight to bring them.
  for (const Fiber &fiber : fibers) {
    if (fiber.state != FiberState::AtMbarrier)
      continue;
    const Mbarrier &b = mbarriers[fiber.waitBarrier];
    if (b.pending != 0 || b.tx == 0)
      continue;
    error("transaction count never completes: %s waits for phase %llu of "
          "the mbarrier at workgroup memory byte offset %lld, which has all "
          "of its %u arrivals but %s %lld transaction bytes, and no TMA load "
          "in flight completes on it",
          name(fiber.linear).text, (unsigned long long)b.phase,
          (long long)b.offset, b.expected,
          b.tx > 0 ? "still expects" : "received more than expected by",
          (long long)(b.tx > 0 ? b.tx : -b.tx));
    return;
  }
  std::string text = "deadlock: every thread of the block waits and nothing "
                     "in flight can wake one:";
  uint32_t numWarps = (numThreads + kWarpSize - 1) / kWarpSize;
  for (uint32_t warp = 0; warp < numWarps; ++warp) {
    uint32_t first = warp * kWarpSize, end = first + lanesOfWarp(warp);
    char head[64];
    std::snprintf(head, sizeof(head), "%s warp %u:", warp ? ";" : "", warp);
    text += head;
    // Runs of lanes that wait alike.
    for (uint32_t lane = first; lane < end;) {
      std::string what =
          describeWait(fibers[lane], mbarriers, registerRequests);
      uint32_t last = lane;
      while (last + 1 < end && describeWait(fibers[last + 1], mbarriers,
                                            registerRequests) == what)
        ++last;
      char range[64];
      if (last == lane)
        std::snprintf(range, sizeof(range), "%s thread %u ",
                      lane == first ? "" : ",", lane);
      else
        std::snprintf(range, sizeof(range), "%s threads %u-%u ",
                      lane == first ? "" : ",", lane, last);
      text += range;
      text += what;
      lane = last + 1;
    }
  }
  error("%s (threads by linear id in block (%lld, %lld, %lld))", text.c_str(),
        (long long)blockId[0], (long long)blockId[1], (long long)blockId[2]);
}

} // namespace rope::gpuemu

namespace {
BlockRunner &runnerFor(const char *function, uint32_t &thread) {
  BlockRunner &runner = runnerOrDie(function);
  thread = runner.running().linear;
  return runner;
}
} // namespace

extern "C" void ropeGpuEmuMbarrierInit(void *mbarrier, int32_t count) {
  uint32_t thread;
  BlockRunner &runner = runnerFor("ropeGpuEmuMbarrierInit", thread);
  if (count < 1 || count > kMaxArrivals)
    runner.failFiber("invalid mbarrier.init: %s initialises an mbarrier for "
                     "%d arrivals (1 to 2^20 - 1)",
                     runner.name(thread).text, count);
  auto offset = static_cast<unsigned char *>(mbarrier) - runner.sharedBase();
  if (offset < 0 || offset > runner.sharedSize() - 8 || offset % 8 != 0)
    runner.failFiber("invalid mbarrier.init: %s initialises an mbarrier at "
                     "workgroup memory byte offset %lld, which is not an "
                     "8-byte-aligned 8 bytes of the block's %lld",
                     runner.name(thread).text, (long long)offset,
                     (long long)runner.sharedSize());
  runner.initMbarrier(thread, mbarrier, static_cast<uint32_t>(count));
}

extern "C" uint64_t ropeGpuEmuMbarrierArrive(void *mbarrier, int32_t count) {
  uint32_t thread;
  BlockRunner &runner = runnerFor("ropeGpuEmuMbarrierArrive", thread);
  Mbarrier *barrier = runner.mbarrierAt(thread, mbarrier, "mbarrier.arrive");
  uint64_t state = barrier->phase;
  runner.arrive(thread, *barrier, static_cast<uint32_t>(std::max(count, 0)));
  return state;
}

extern "C" void ropeGpuEmuMbarrierExpectTx(void *mbarrier, int64_t bytes) {
  uint32_t thread;
  BlockRunner &runner = runnerFor("ropeGpuEmuMbarrierExpectTx", thread);
  Mbarrier *barrier = runner.mbarrierAt(thread, mbarrier, "mbarrier.expect_tx");
  if (bytes < 0 || bytes > kMaxTransactionBytes)
    runner.failFiber("invalid mbarrier.expect_tx: %s expects %lld transaction "
                     "bytes (0 to 2^20 - 1)",
                     runner.name(thread).text, (long long)bytes);
  runner.addTransactions(*barrier, bytes, nullptr);
}

extern "C" uint64_t ropeGpuEmuMbarrierArriveExpectTx(void *mbarrier,
                                                     int64_t bytes) {
  ropeGpuEmuMbarrierExpectTx(mbarrier, bytes);
  return ropeGpuEmuMbarrierArrive(mbarrier, 1);
}

extern "C" int32_t ropeGpuEmuMbarrierTryWaitParity(void *mbarrier,
                                                   int32_t parity) {
  uint32_t thread;
  BlockRunner &runner = runnerFor("ropeGpuEmuMbarrierTryWaitParity", thread);
  Mbarrier *barrier =
      runner.mbarrierAt(thread, mbarrier, "mbarrier.try_wait.parity");
  runner.waitParity(*barrier, static_cast<uint32_t>(parity & 1));
  return 1;
}

extern "C" void ropeGpuEmuNamedBarrierSync(int32_t id, int32_t threads) {
  runnerOrDie("ropeGpuEmuNamedBarrierSync").namedBarrier(id, threads, true);
}

extern "C" void ropeGpuEmuNamedBarrierArrive(int32_t id, int32_t threads) {
  runnerOrDie("ropeGpuEmuNamedBarrierArrive").namedBarrier(id, threads, false);
}
