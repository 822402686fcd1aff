//===- GpuEmulatorTma.cpp - tensor maps, TMA loads and stores -------------===//
//
// The Tensor Memory Accelerator copies a box of a tensor between global and
// workgroup memory, described by a tensor map (the driver's
// cuTensorMapEncodeTiled; ropeGpuEmuTensorMapEncodeTiled here, with the
// same parameters and rules). In workgroup memory the box is row-major,
// dimension 0 contiguous; a swizzle mode permutes its 16-byte chunks by
// XOR-ing address bits [4, 4 + b) with bits [7, 7 + b) (b = 1, 2, 3 for
// 32, 64, 128 bytes), on the workgroup-memory address itself, the layout
// that wgmma's matrix descriptors with the same mode read.
//
// A load reads global memory when issued, fills box elements outside the
// tensor with zeros (or NaN), and lands as late as possible: when no thread
// of the block can run any more. Landing writes the destination (as a
// write of the issuing thread with the clock it had at the issue) and
// completes the box's bytes on the mbarrier, whatever part of the box was
// outside the tensor. Until then a read of the destination is an error
// (the read before the mbarrier phase that fills it completed).
//
// A store reads its workgroup-memory source when issued (a read of the
// issuing thread) and writes the tensor's elements inside it at once; the
// source stays pending, and a write to it is an error, until
// cp.async.bulk.wait_group.read completes the store's bulk group.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorInternal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace rope::gpuemu;

namespace {

constexpr uint32_t kTensorMapMagic = 0x524f5045; // "ROPE"
constexpr int kMaxRank = 5;

/// The emulator's tensor map: what the 128 bytes of a CUtensorMap hold.
struct TensorMap {
  uint32_t magic;
  uint8_t rank, elementBytes, swizzle, nanFill;
  const unsigned char *base;
  uint64_t dims[kMaxRank];
  uint64_t strides[kMaxRank]; // bytes; strides[0] = elementBytes
  uint32_t box[kMaxRank];
};
static_assert(sizeof(TensorMap) <= 128, "a tensor map is 128 bytes");

/// The bytes of the swizzle span (0: none) of mode 0 none, 1 32B, 2 64B,
/// 3 128B (CUtensorMapSwizzle's order).
int64_t swizzleSpan(int mode) { return mode == 0 ? 0 : int64_t(16) << mode; }

/// The workgroup-memory offset where byte `offset` of a box lands.
int64_t swizzled(int64_t offset, int mode) {
  if (mode == 0)
    return offset;
  int64_t mask = (int64_t(1) << mode) - 1;
  return offset ^ (((offset >> 7) & mask) << 4);
}

int64_t boxBytes(const TensorMap &map) {
  int64_t bytes = map.elementBytes;
  for (int d = 0; d < map.rank; ++d)
    bytes *= map.box[d];
  return bytes;
}

[[noreturn]] void encodeError(const char *why, long long value) {
  static thread_local char message[512];
  std::snprintf(message, sizeof(message),
                "gpu emulator: ropeGpuEmuTensorMapEncodeTiled: %s (%lld)", why,
                value);
  ropeRuntimeError(message, 0, nullptr);
}

/// Calls `visit(boxOffset, globalAddressOrNull)` for every element of the
/// box at `coords`, null where the element lies outside the tensor.
template <typename Visit>
void forEachElement(const TensorMap &map, const int32_t *coords, Visit visit) {
  int64_t index[kMaxRank] = {0, 0, 0, 0, 0};
  int64_t count = boxBytes(map) / map.elementBytes;
  for (int64_t e = 0; e < count; ++e) {
    const unsigned char *global = map.base;
    for (int d = 0; d < map.rank && global; ++d) {
      int64_t at = static_cast<int64_t>(coords[d]) + index[d];
      if (at < 0 || static_cast<uint64_t>(at) >= map.dims[d])
        global = nullptr;
      else
        global += static_cast<uint64_t>(at) * map.strides[d];
    }
    visit(e * map.elementBytes, global);
    for (int d = 0; d < map.rank; ++d) {
      if (++index[d] < map.box[d])
        break;
      index[d] = 0;
    }
  }
}

const TensorMap &checkedMap(BlockRunner &runner, const void *tensorMap,
                            const char *op) {
  const auto *map = static_cast<const TensorMap *>(tensorMap);
  if (!map || reinterpret_cast<uintptr_t>(map) % 64 != 0 ||
      map->magic != kTensorMapMagic)
    runner.failFiber("invalid tensor map: %s issues %s with %p, which is not "
                     "a 64-byte-aligned map from "
                     "ropeGpuEmuTensorMapEncodeTiled",
                     runner.name(runner.running().linear).text, op, tensorMap);
  return *map;
}

/// The workgroup-memory offset of a box at `address`, checked: inside the
/// block's memory and 128-byte aligned (PTX; with a swizzle, the span's
/// pattern repeat too, so that the box's swizzle is the one of its rows).
int64_t boxOffset(BlockRunner &runner, const TensorMap &map,
                  const void *address, const char *op) {
  uint32_t thread = runner.running().linear;
  auto offset = static_cast<long long>(
      static_cast<const unsigned char *>(address) - runner.sharedBase());
  long long bytes = boxBytes(map);
  if (offset < 0 || offset > runner.sharedSize() ||
      bytes > runner.sharedSize() - offset)
    runner.failFiber("out-of-bounds access: %s issues %s of a %lld-byte box "
                     "at workgroup memory byte offset %lld, outside the "
                     "block's %lld bytes",
                     runner.name(thread).text, op, bytes, offset,
                     (long long)runner.sharedSize());
  long long alignment = map.swizzle ? 8 * swizzleSpan(map.swizzle) : 128;
  if (offset % alignment != 0)
    runner.failFiber("misaligned TMA box: %s issues %s at workgroup memory "
                     "byte offset %lld, which must be a multiple of %lld",
                     runner.name(thread).text, op, offset, alignment);
  return offset;
}

} // namespace

namespace rope::gpuemu {

void BlockRunner::issueTmaLoad(PendingTmaLoad load, Mbarrier &barrier) {
  int64_t end = load.offset + static_cast<int64_t>(load.image.size());
  for (int64_t i = load.offset; i < end; ++i) {
    ShadowByte &s = shadow[static_cast<std::size_t>(i)];
    if (s.asyncPending)
      failFiber("overlapping TMA loads: %s issues a TMA load into workgroup "
                "memory byte offset %lld, which a TMA load in flight writes "
                "too",
                name(load.issuer).text, (long long)i);
  }
  if (!checkPendingReads(load.issuer, load.offset,
                         static_cast<int64_t>(load.image.size()),
                         "a TMA load's destination"))
    abandonFiber();
  for (int64_t i = load.offset; i < end; ++i)
    shadow[static_cast<std::size_t>(i)].asyncPending = true;
  load.barrier = static_cast<uint32_t>(&barrier - mbarriers.data());
  tmaLoads.push_back(std::move(load));
}

const PendingTmaLoad *BlockRunner::tmaLoadWriting(int64_t offset) const {
  for (const PendingTmaLoad &load : tmaLoads)
    if (offset >= load.offset &&
        offset < load.offset + static_cast<int64_t>(load.image.size()))
      return &load;
  return nullptr;
}

void BlockRunner::reportEarlyAccess(uint32_t thread, int64_t offset,
                                    bool isWrite, const char *what) {
  const PendingTmaLoad *load = tmaLoadWriting(offset);
  const Mbarrier *barrier = load ? &mbarriers[load->barrier] : nullptr;
  error("%s before its mbarrier phase completed: %s %s workgroup memory "
        "byte offset %lld (%s), which a TMA load issued by %s fills when "
        "phase %llu of the mbarrier at byte offset %lld completes",
        isWrite ? "write" : "read", name(thread).text,
        isWrite ? "writes" : "reads", (long long)offset, what,
        load ? name(load->issuer).text : "?",
        barrier ? (unsigned long long)barrier->phase : 0ULL,
        barrier ? (long long)barrier->offset : -1LL);
}

bool BlockRunner::deliverTmaLoads() {
  std::vector<PendingTmaLoad> landing;
  landing.swap(tmaLoads);
  for (PendingTmaLoad &load : landing) {
    auto bytes = static_cast<int64_t>(load.image.size());
    for (int64_t i = 0; i < bytes; ++i)
      shadow[static_cast<std::size_t>(load.offset + i)].asyncPending = false;
    Accessor who;
    who.thread = load.issuer;
    who.clock = load.issueClock.data();
    if (!checkAccess(who, shared + load.offset, bytes, true,
                     "a TMA load's destination"))
      return false;
    std::memcpy(shared + load.offset, load.image.data(), load.image.size());
    addTransactions(mbarriers[load.barrier], -bytes, load.issueClock.data());
    if (launch.failed.load(std::memory_order_relaxed))
      return false;
  }
  return true;
}

} // namespace rope::gpuemu

extern "C" void ropeGpuEmuTensorMapEncodeTiled(
    void *tensorMap, int32_t elementBytes, int32_t rank,
    const void *globalAddress, const uint64_t *globalDim,
    const uint64_t *globalStrides, const uint32_t *boxDim,
    const uint32_t *elementStrides, int32_t swizzle, int32_t nanFill) {
  if (!tensorMap || reinterpret_cast<uintptr_t>(tensorMap) % 64 != 0)
    encodeError("the map must be 128 bytes aligned to 64", 0);
  if (elementBytes != 1 && elementBytes != 2 && elementBytes != 4 &&
      elementBytes != 8)
    encodeError("element size must be 1, 2, 4 or 8 bytes", elementBytes);
  if (rank < 1 || rank > kMaxRank)
    encodeError("rank must be 1 to 5", rank);
  if (!globalAddress || reinterpret_cast<uintptr_t>(globalAddress) % 16 != 0)
    encodeError("the global address must be a multiple of 16", 0);
  if (swizzle < 0 || swizzle > 3)
    encodeError("swizzle must be 0 none, 1 32B, 2 64B or 3 128B", swizzle);
  TensorMap map;
  std::memset(&map, 0, sizeof(map));
  map.magic = kTensorMapMagic;
  map.rank = static_cast<uint8_t>(rank);
  map.elementBytes = static_cast<uint8_t>(elementBytes);
  map.swizzle = static_cast<uint8_t>(swizzle);
  map.nanFill = nanFill != 0;
  map.base = static_cast<const unsigned char *>(globalAddress);
  for (int d = 0; d < rank; ++d) {
    if (globalDim[d] < 1 || globalDim[d] > (uint64_t(1) << 32))
      encodeError("every global dim must be 1 to 2^32",
                  static_cast<long long>(globalDim[d]));
    if (boxDim[d] < 1 || boxDim[d] > 256)
      encodeError("every box dim must be 1 to 256", boxDim[d]);
    if (elementStrides && elementStrides[d] != 1)
      encodeError("the emulator supports element strides of 1 only",
                  elementStrides[d]);
    map.dims[d] = globalDim[d];
    map.box[d] = boxDim[d];
    map.strides[d] =
        d == 0 ? static_cast<uint64_t>(elementBytes) : globalStrides[d - 1];
    if (d > 0 &&
        (map.strides[d] % 16 != 0 || map.strides[d] >= (uint64_t(1) << 40)))
      encodeError("global strides must be multiples of 16 below 2^40 bytes",
                  static_cast<long long>(map.strides[d]));
  }
  int64_t inner = int64_t(boxDim[0]) * elementBytes;
  if (inner % 16 != 0)
    encodeError("the box's inner dimension must be a multiple of 16 bytes",
                inner);
  // CUDA allows an inner dimension below the span; PTX does not say where
  // such rows land, so the emulator takes only full spans.
  if (swizzle != 0 && inner != swizzleSpan(swizzle))
    encodeError("with a swizzle the emulator needs the box's inner "
                "dimension to be the swizzle span (32, 64 or 128 bytes)",
                inner);
  std::memcpy(tensorMap, &map, sizeof(map));
}

extern "C" void ropeGpuEmuTmaLoad(void *dst, const void *tensorMap,
                                  const int32_t *coords, void *mbarrier) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuTmaLoad");
  uint32_t thread = runner.running().linear;
  const TensorMap &map = checkedMap(runner, tensorMap, "a TMA load");
  int64_t offset = boxOffset(runner, map, dst, "a TMA load");
  Mbarrier *barrier = runner.mbarrierAt(thread, mbarrier, "a TMA load");
  PendingTmaLoad load;
  load.issuer = thread;
  load.offset = offset;
  load.image.resize(static_cast<std::size_t>(boxBytes(map)));
  unsigned char fill = map.nanFill ? 0xff : 0x00;
  forEachElement(map, coords, [&](int64_t at, const unsigned char *global) {
    for (int b = 0; b < map.elementBytes; ++b) {
      // NaN fill: all ones but the sign bit (the top byte's 0x80).
      unsigned char byte = global ? global[b]
                           : (map.nanFill && b == map.elementBytes - 1) ? 0x7f
                                                                        : fill;
      int64_t landing = swizzled(offset + at + b, map.swizzle) - offset;
      load.image[static_cast<std::size_t>(landing)] = byte;
    }
  });
  if (runner.clocksEnabled()) {
    uint32_t *clock = runner.clockOf(thread);
    load.issueClock.assign(clock, clock + runner.numThreads);
    // What the thread does after the issue is not released by the load.
    ++clock[thread];
  }
  runner.issueTmaLoad(std::move(load), *barrier);
}

extern "C" void ropeGpuEmuTmaStore(const void *tensorMap, const int32_t *coords,
                                   const void *src) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuTmaStore");
  Fiber &fiber = runner.running();
  const TensorMap &map = checkedMap(runner, tensorMap, "a TMA store");
  int64_t offset = boxOffset(runner, map, src, "a TMA store");
  int64_t bytes = boxBytes(map);
  if (!runner.checkShared(fiber.linear, src, bytes, false,
                          "a TMA store's source"))
    runner.abandonFiber();
  const unsigned char *base = runner.sharedBase();
  forEachElement(map, coords, [&](int64_t at, const unsigned char *global) {
    if (!global)
      return; // outside the tensor: not written
    auto *out = const_cast<unsigned char *>(global);
    for (int b = 0; b < map.elementBytes; ++b)
      out[b] = base[swizzled(offset + at + b, map.swizzle)];
  });
  PendingOperandRead read;
  read.owner = fiber.linear;
  read.group = fiber.bulkCommits;
  read.isWgmma = false;
  read.what = "source";
  std::vector<int64_t> offsets(static_cast<std::size_t>(bytes));
  for (int64_t i = 0; i < bytes; ++i)
    offsets[static_cast<std::size_t>(i)] = offset + i;
  runner.addPendingRead(std::move(read), std::move(offsets));
}

extern "C" void ropeGpuEmuBulkCommit(void) {
  ++runnerOrDie("ropeGpuEmuBulkCommit").running().bulkCommits;
}

extern "C" void ropeGpuEmuBulkWaitRead(int32_t pendingGroups) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuBulkWaitRead");
  Fiber &fiber = runner.running();
  if (pendingGroups < 0)
    runner.failFiber("invalid operand: %s waits for bulk copies with %d "
                     "pending groups",
                     runner.name(fiber.linear).text, pendingGroups);
  uint64_t keep = static_cast<uint64_t>(pendingGroups);
  uint64_t completeBelow =
      fiber.bulkCommits > keep ? fiber.bulkCommits - keep : 0;
  runner.completePendingReads(
      [&](const PendingOperandRead &read) {
        return !read.isWgmma && read.owner == fiber.linear &&
               read.group < completeBelow;
      },
      [](const PendingOperandRead &) {});
}
