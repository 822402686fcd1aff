//===- GpuEmulatorCheckers.cpp - workgroup memory and its checkers --------===//
//
// Each runner owns one workgroup buffer, reused by its blocks and filled at
// every block start with the signalling-NaN pattern 0x7fa00000 (f32 words,
// little endian), so a read that escapes the checkers still shows. It
// starts at a multiple of 2^18 bytes (kSharedAlignment).
//
// Its shadow has one ShadowByte per byte. Barrier intervals ("epochs") are
// numbered per runner, across blocks; a block starts a new one and every
// barrier release another. An access by thread t of a byte in epoch e:
//   * the fields of an older epoch are forgotten (a barrier orders them);
//   * a write races with a write or read of another thread in e;
//   * a read races with a write of another thread in e, and reads a byte no
//     thread wrote since the block started (lastWrite before the block's
//     first epoch) as uninitialised;
//   * t is recorded as e's writer, or as one of two readers (two distinct
//     readers are enough to know that some reader is not a later writer).
// The same thread accessing a byte again is never a race. Lanes of one warp
// are threads like any others (independent thread scheduling).
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorInternal.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

using namespace rope::gpuemu;

namespace rope::gpuemu {

void BlockRunner::resetSharedMemory() {
  std::size_t bytes = static_cast<std::size_t>(launch.sharedBytes);
  if (!shared) {
    // At least one cache line, so that the base is a real address even for
    // kernels without workgroup memory.
    std::size_t capacity = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
    shared = static_cast<unsigned char *>(
        ::operator new(capacity, std::align_val_t(kSharedAlignment)));
    shadow.assign(bytes, ShadowByte());
  }
  static const unsigned char pattern[4] = {0x00, 0x00, 0xa0, 0x7f};
  for (std::size_t i = 0; i < bytes; ++i)
    shared[i] = pattern[i % 4];
  if (epoch > 0xf0000000u) {
    // Epochs would wrap: start the shadow over.
    std::fill(shadow.begin(), shadow.end(), ShadowByte());
    epoch = 0;
  }
  blockStartEpoch = ++epoch;
}

ThreadName BlockRunner::name(uint32_t thread) const {
  ThreadName result;
  const int64_t *b = launch.block;
  std::snprintf(result.text, sizeof(result.text),
                "thread (%lld, %lld, %lld) in block (%lld, %lld, %lld)",
                (long long)(thread % b[0]), (long long)(thread / b[0] % b[1]),
                (long long)(thread / (b[0] * b[1])), (long long)blockId[0],
                (long long)blockId[1], (long long)blockId[2]);
  return result;
}

void BlockRunner::verror(const char *format, va_list args) {
  char text[2048];
  int prefix = std::snprintf(text, sizeof(text), "gpu emulator: kernel '%s': ",
                             launch.name);
  if (prefix > 0 && static_cast<std::size_t>(prefix) < sizeof(text))
    std::vsnprintf(text + prefix, sizeof(text) - prefix, format, args);
  launch.recordError(text);
}

void BlockRunner::error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  verror(format, args);
  va_end(args);
}

Accessor BlockRunner::accessor(uint32_t thread) const {
  Accessor who;
  who.thread = thread;
  if (clocksOn)
    who.clock = clocks.data() + static_cast<std::size_t>(thread) * numThreads;
  return who;
}

bool BlockRunner::checkShared(uint32_t thread, const void *address,
                              int64_t bytes, bool isWrite, const char *what) {
  return checkAccess(accessor(thread), address, bytes, isWrite, what);
}

bool BlockRunner::checkAccess(Accessor who, const void *address, int64_t bytes,
                              bool isWrite, const char *what) {
  uint32_t thread = who.thread;
  const char *verb = isWrite ? "writes" : "reads";
  auto start = reinterpret_cast<uintptr_t>(address);
  auto base = reinterpret_cast<uintptr_t>(shared);
  auto size = static_cast<uintptr_t>(launch.sharedBytes);
  long long offset = static_cast<long long>(start - base);
  if (bytes < 0 || start < base || start - base > size ||
      static_cast<uintptr_t>(bytes) > size - (start - base)) {
    error("out-of-bounds access: %s %s %lld bytes at workgroup memory byte "
          "offset %lld (%s), outside the block's %lld bytes",
          name(thread).text, verb, (long long)bytes, offset, what,
          (long long)launch.sharedBytes);
    return false;
  }
  if (isWrite && !checkPendingReads(thread, offset, bytes, what))
    return false;
  auto t = static_cast<uint16_t>(thread);
  // Before the block's first mbarrier every access has clock 1, the value
  // each thread's own clock starts at when the clocks come on, so accesses
  // from before stay unordered with those after.
  uint32_t now = who.clock ? who.clock[thread] : 1;
  auto ordered = [&](uint16_t other, uint32_t otherClock) {
    return who.clock && who.clock[other] >= otherClock;
  };
  for (int64_t i = 0; i < bytes; ++i) {
    ShadowByte &s = shadow[static_cast<std::size_t>(offset + i)];
    if (s.asyncPending) {
      reportEarlyAccess(thread, offset + i, isWrite, what);
      return false;
    }
    if (s.epoch != epoch) {
      s.epoch = epoch;
      s.writer = s.reader = s.reader2 = kNoThread;
    }
    uint16_t other = kNoThread;
    const char *otherVerb = "wrote";
    if (s.writer != kNoThread && s.writer != t &&
        !ordered(s.writer, s.writerClock)) {
      other = s.writer;
    } else if (isWrite) {
      otherVerb = "read";
      if (s.reader != kNoThread && s.reader != t &&
          !ordered(s.reader, s.readerClock))
        other = s.reader;
      else if (s.reader2 != kNoThread && s.reader2 != t &&
               !ordered(s.reader2, s.reader2Clock))
        other = s.reader2;
    }
    if (other != kNoThread) {
      error("data race: %s %s workgroup memory byte offset %lld (%s), which "
            "%s %s with no barrier%s in between",
            name(thread).text, verb, offset + i, what, name(other).text,
            otherVerb, clocksOn ? " or mbarrier wait" : "");
      return false;
    }
    if (isWrite) {
      // Every earlier access is ordered before this write: it alone
      // matters to later accesses.
      s.writer = t;
      s.writerClock = now;
      s.reader = s.reader2 = kNoThread;
      s.lastWrite = epoch;
      continue;
    }
    if (s.lastWrite < blockStartEpoch) {
      error("uninitialised read: %s reads workgroup memory byte offset %lld "
            "(%s), which no thread has written since the block started",
            name(thread).text, offset + i, what);
      return false;
    }
    // Keep up to two readers that are not ordered before this one (a read
    // ordered before another is covered by it for later writes).
    if (s.reader == t || s.reader == kNoThread ||
        ordered(s.reader, s.readerClock)) {
      s.reader = t;
      s.readerClock = now;
    } else if (s.reader2 == t || s.reader2 == kNoThread ||
               ordered(s.reader2, s.reader2Clock)) {
      s.reader2 = t;
      s.reader2Clock = now;
    }
  }
  return true;
}

bool BlockRunner::checkPendingReads(uint32_t thread, int64_t offset,
                                    int64_t bytes, const char *what) {
  int64_t at = offset;
  while (at < offset + bytes &&
         shadow[static_cast<std::size_t>(at)].asyncReaders == 0)
    ++at;
  if (at == offset + bytes)
    return true;
  const PendingOperandRead *pending = nullptr;
  for (const PendingOperandRead &read : pendingReads)
    for (auto [begin, end] : read.ranges)
      if (at >= begin && at < end)
        pending = &read;
  if (!pending || pending->isWgmma)
    error("workgroup memory overwritten under a pending wgmma: %s writes "
          "byte offset %lld (%s), which wgmma.mma_async of warpgroup %u "
          "reads as its %s until wgmma.wait_group completes its group %llu",
          name(thread).text, (long long)at, what, pending ? pending->owner : 0,
          pending ? pending->what : "operand",
          pending ? (unsigned long long)pending->group : 0ULL);
  else
    error("workgroup memory overwritten under a pending TMA store: %s "
          "writes byte offset %lld (%s), which the TMA store of %s reads "
          "until cp.async.bulk.wait_group.read completes its group %llu",
          name(thread).text, (long long)at, what, name(pending->owner).text,
          (unsigned long long)pending->group);
  return false;
}

void BlockRunner::addPendingRead(PendingOperandRead read,
                                 std::vector<int64_t> offsets) {
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  for (std::size_t i = 0; i < offsets.size();) {
    std::size_t j = i + 1;
    while (j < offsets.size() && offsets[j] == offsets[j - 1] + 1)
      ++j;
    read.ranges.emplace_back(offsets[i], offsets[j - 1] + 1);
    i = j;
  }
  for (auto [begin, end] : read.ranges)
    for (int64_t at = begin; at < end; ++at)
      ++shadow[static_cast<std::size_t>(at)].asyncReaders;
  pendingReads.push_back(std::move(read));
}

} // namespace rope::gpuemu

extern "C" void *ropeGpuEmuShared(int64_t offset) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuShared");
  return runner.sharedBase() + offset;
}

extern "C" void ropeGpuEmuSharedAccess(const void *address, int64_t bytes,
                                       int32_t isWrite) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuSharedAccess");
  if (!runner.checkShared(runner.running().linear, address, bytes,
                          isWrite != 0, isWrite ? "a store" : "a load"))
    runner.abandonFiber();
}

extern "C" void ropeGpuEmuOutOfBounds(int32_t addressSpace, int64_t dim,
                                      int64_t index, int64_t extent) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuOutOfBounds");
  char space[32];
  switch (addressSpace) {
  case 0:
  case 1:
    std::snprintf(space, sizeof(space), "global");
    break;
  case 3:
    std::snprintf(space, sizeof(space), "workgroup");
    break;
  case 5:
    std::snprintf(space, sizeof(space), "private");
    break;
  default:
    std::snprintf(space, sizeof(space), "address space %d", addressSpace);
    break;
  }
  runner.failFiber("out-of-bounds access: %s indexes dimension %lld of a "
                   "%s memref at %lld, outside [0, %lld)",
                   runner.name(runner.running().linear).text, (long long)dim,
                   space, (long long)index, (long long)extent);
}

namespace {
/// `format` with each `{i}` (i < count) replaced by values[i], as
/// ropeRuntimeError does.
void substitute(const char *format, int64_t count, const int64_t *values,
                char *out, std::size_t capacity) {
  std::size_t used = 0;
  for (const char *p = format; p && *p && used + 1 < capacity; ++p) {
    char *end = nullptr;
    long long index = *p == '{' ? std::strtoll(p + 1, &end, 10) : -1;
    if (end && end != p + 1 && *end == '}' && index >= 0 && index < count) {
      int n = std::snprintf(out + used, capacity - used, "%lld",
                            (long long)values[index]);
      used = std::min(capacity - 1, used + static_cast<std::size_t>(n));
      p = end;
      continue;
    }
    out[used++] = *p;
  }
  out[used] = '\0';
}
} // namespace

extern "C" void ropeGpuEmuKernelError(const char *message, int64_t numValues,
                                      const int64_t *values) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuKernelError");
  char text[1024];
  substitute(message, numValues, values, text, sizeof(text));
  runner.failFiber("runtime check failed in %s: %s",
                   runner.name(runner.running().linear).text, text);
}
