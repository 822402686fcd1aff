//===- HostAllocator.cpp - a cache of large blocks for compiled code ------===//
//
// include/rope/Runtime/HostAllocator.h says what and why. Large blocks are
// page-aligned and recorded by address while handed out, so that a free
// knows whether the block is one of them (compiled code frees small and
// large blocks through the same function). A program has few large blocks
// at a time, so both records are small fixed tables scanned in order: the
// library keeps to the C library (no libstdc++), like the rest of it.
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/HostAllocator.h"

#include <pthread.h>
#include <stdlib.h>

namespace {

/// Blocks at least this large are cached.
constexpr uint64_t kCachedMinBytes = uint64_t(1) << 20;
/// Their alignment (and that of their capacity): a page.
constexpr uint64_t kPageBytes = 4096;
/// Large blocks handed out and idle at a time that the tables record; more
/// go to (and come back from) the C library directly.
constexpr int kMaxLive = 256;
constexpr int kMaxIdle = 64;

struct Block {
  void *address;
  uint64_t capacity;
};

pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
Block live[kMaxLive];
int numLive = 0;
Block idle[kMaxIdle];
int numIdle = 0;
uint64_t idleBytes = 0;
/// Bytes of the large blocks handed out now, and the most at any time.
uint64_t liveBytes = 0;
uint64_t peakLiveBytes = 0;
/// ROPE_HOST_CACHE_MIB in bytes, read at the first large allocation; unset,
/// the bound follows the program (heldBound).
uint64_t limitBytes = 0;
bool limitSet = false;
bool limitRead = false;
/// Unset, the blocks held may reach this much even below the program's peak.
constexpr uint64_t kDefaultIdleFloor = uint64_t(1) << 30;

/// Unset ROPE_HOST_CACHE_MIB, the large blocks held, handed out or idle,
/// stay within the most the program has had handed out at once (`peak`),
/// or 1 GiB where that is less: a call's temporaries are what its next call
/// asks for again, and a long prompt's outgrow any fixed limit (a long
/// prefill through a frontend graph frees more than 1 GiB of blocks per
/// call; what a fixed limit did not keep came back from mmap each call, the
/// kernel clearing its pages), while the program's peak memory stays what
/// it would be without the cache.
uint64_t heldBound(uint64_t peak) {
  return peak > kDefaultIdleFloor ? peak : kDefaultIdleFloor;
}

/// Whether a block of `capacity` bytes just taken back fits in the cache:
/// within ROPE_HOST_CACHE_MIB of idle blocks where it is set, else within
/// heldBound.
bool fitsIdle(uint64_t capacity) {
  if (limitSet)
    return idleBytes + capacity <= limitBytes;
  return liveBytes + idleBytes + capacity <= heldBound(peakLiveBytes);
}

/// Before a fresh block of `capacity` bytes is taken from the C library:
/// returns idle blocks, largest first, until the blocks held stay within
/// heldBound (a new peak of blocks handed out leaves no idle ones over the
/// floor). Nothing where ROPE_HOST_CACHE_MIB bounds the idle blocks alone.
void evictForFresh(uint64_t capacity) {
  if (limitSet)
    return;
  uint64_t live = liveBytes + capacity;
  uint64_t bound = heldBound(live > peakLiveBytes ? live : peakLiveBytes);
  while (numIdle > 0 && live + idleBytes > bound) {
    int largest = 0;
    for (int i = 1; i < numIdle; ++i)
      if (idle[i].capacity > idle[largest].capacity)
        largest = i;
    free(idle[largest].address);
    idleBytes -= idle[largest].capacity;
    idle[largest] = idle[--numIdle];
  }
}

struct Lock {
  Lock() { pthread_mutex_lock(&mutex); }
  ~Lock() { pthread_mutex_unlock(&mutex); }
};

/// A block of at least `size` bytes aligned to `alignment`, or null where
/// the cache does not serve the request (small, over-aligned, off, or its
/// table of blocks handed out is full).
void *allocateLarge(uint64_t size, uint64_t alignment) {
  if (size < kCachedMinBytes || alignment > kPageBytes)
    return nullptr;
  uint64_t capacity = (size + kPageBytes - 1) & ~(kPageBytes - 1);
  Lock lock;
  if (!limitRead) {
    const char *limit = getenv("ROPE_HOST_CACHE_MIB");
    limitSet = limit != nullptr;
    limitBytes = limitSet ? strtoull(limit, nullptr, 10) << 20 : 0;
    limitRead = true;
  }
  if ((limitSet && limitBytes == 0) || numLive == kMaxLive)
    return nullptr;
  // The smallest idle block that fits and wastes at most a quarter.
  int best = -1;
  for (int i = 0; i < numIdle; ++i)
    if (idle[i].capacity >= capacity &&
        idle[i].capacity <= capacity + capacity / 4 &&
        (best < 0 || idle[i].capacity < idle[best].capacity))
      best = i;
  Block block;
  if (best >= 0) {
    block = idle[best];
    idle[best] = idle[--numIdle];
    idleBytes -= block.capacity;
  } else {
    block = {nullptr, capacity};
    evictForFresh(capacity);
    if (posix_memalign(&block.address, kPageBytes, capacity) != 0)
      return nullptr;
  }
  live[numLive++] = block;
  liveBytes += block.capacity;
  if (liveBytes > peakLiveBytes)
    peakLiveBytes = liveBytes;
  return block.address;
}

/// Takes back `address` if it is a large block handed out; false otherwise.
bool releaseLarge(void *address) {
  // Every cached block is page-aligned: the small temporaries that compiled
  // loops free at each step are rejected here without taking the lock.
  if (reinterpret_cast<uintptr_t>(address) % kPageBytes != 0)
    return false;
  Lock lock;
  int i = 0;
  while (i < numLive && live[i].address != address)
    ++i;
  if (i == numLive)
    return false;
  Block block = live[i];
  live[i] = live[--numLive];
  liveBytes -= block.capacity;
  if (numIdle == kMaxIdle || !fitsIdle(block.capacity)) {
    free(block.address);
    return true;
  }
  idle[numIdle++] = block;
  idleBytes += block.capacity;
  return true;
}

} // namespace

extern "C" void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  if (void *block = allocateLarge(size, 16))
    return block;
  return malloc(size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                    uint64_t size) {
  if (void *block = allocateLarge(size, alignment))
    return block;
  void *block = nullptr;
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  return posix_memalign(&block, alignment, size) == 0 ? block : nullptr;
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  if (ptr && !releaseLarge(ptr))
    free(ptr);
}

extern "C" size_t ropeHostCachedBytes(void) {
  Lock lock;
  return idleBytes;
}

extern "C" void ropeHostReleaseCachedMemory(void) {
  Lock lock;
  for (int i = 0; i < numIdle; ++i)
    free(idle[i].address);
  numIdle = 0;
  idleBytes = 0;
}
