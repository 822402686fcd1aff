//===- GpuEmulatorAsyncCopy.cpp - cp.async and its groups -----------------===//
//
// cp.async copies global memory into workgroup memory "in the background":
// the data may land any time before the wait that covers it, so a kernel
// that reads the destination without that wait is wrong. The emulator makes
// the latest moment the only one: a copy reads its source when issued, and
// writes its destination only when a wait completes its group. A missing
// wait therefore leaves the destination as it was (the NaN pattern, which
// the uninitialised-read checker reports, or stale data), and the write
// happens at the wait as a write of the waiting thread for the race
// checker. A barrier does not complete copies (as in PTX).
//
// Groups follow PTX's cp.async.commit_group / cp.async.wait_group N: each
// copy joins the thread's open group; commit closes it (an empty group is
// a group too); wait(N) completes every committed group but the newest N.
// Copies not committed stay pending even under wait(0). Copies still pending
// when the thread returns are dropped.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorInternal.h"

#include <cstring>

using namespace rope::gpuemu;

namespace {
void recordCopy(const char *function, void *dst, const void *src,
                int64_t bytes, int64_t srcBytes) {
  BlockRunner &runner = runnerOrDie(function);
  Fiber &fiber = runner.running();
  ThreadName name = runner.name(fiber.linear);
  const char *who = name.text;
  if (bytes != 4 && bytes != 8 && bytes != 16)
    runner.failFiber("invalid operand: %s issues cp.async of %lld bytes (4, "
                     "8 or 16)",
                     who, (long long)bytes);
  if (srcBytes < 0 || srcBytes > bytes)
    runner.failFiber("invalid operand: %s issues cp.async reading %lld of its "
                     "%lld bytes",
                     who, (long long)srcBytes, (long long)bytes);
  auto start = reinterpret_cast<uintptr_t>(dst);
  auto base = reinterpret_cast<uintptr_t>(runner.sharedBase());
  auto size = static_cast<uintptr_t>(runner.sharedSize());
  long long offset = static_cast<long long>(start - base);
  if (start < base || start - base > size ||
      static_cast<uintptr_t>(bytes) > size - (start - base))
    runner.failFiber("out-of-bounds access: %s issues cp.async of %lld bytes "
                     "to workgroup memory byte offset %lld, outside the "
                     "block's %lld bytes",
                     who, (long long)bytes, offset,
                     (long long)runner.sharedSize());
  if (start % bytes != 0 ||
      (srcBytes > 0 && reinterpret_cast<uintptr_t>(src) % bytes != 0))
    runner.failFiber("misaligned cp.async: %s copies %lld bytes from %p to "
                     "workgroup memory byte offset %lld; both must be "
                     "multiples of the size",
                     who, (long long)bytes, src, offset);
  PendingCopy copy;
  copy.dst = static_cast<unsigned char *>(dst);
  copy.bytes = static_cast<uint32_t>(bytes);
  copy.group = fiber.openGroup;
  if (srcBytes > 0)
    std::memcpy(copy.data, src, static_cast<std::size_t>(srcBytes));
  fiber.pendingCopies.push_back(copy);
}
} // namespace

extern "C" void ropeGpuEmuAsyncCopy(void *dst, const void *src,
                                    int64_t bytes) {
  recordCopy("ropeGpuEmuAsyncCopy", dst, src, bytes, bytes);
}

extern "C" void ropeGpuEmuAsyncCopyPartial(void *dst, const void *src,
                                           int64_t bytes, int64_t srcBytes) {
  recordCopy("ropeGpuEmuAsyncCopyPartial", dst, src, bytes, srcBytes);
}

extern "C" void ropeGpuEmuAsyncCommit(void) {
  ++runnerOrDie("ropeGpuEmuAsyncCommit").running().openGroup;
}

extern "C" void ropeGpuEmuAsyncWait(int32_t pendingGroups) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuAsyncWait");
  Fiber &fiber = runner.running();
  if (pendingGroups < 0)
    runner.failFiber("invalid operand: %s waits for cp.async with %d pending "
                     "groups",
                     runner.name(fiber.linear).text, pendingGroups);
  // Committed groups are 0 .. openGroup - 1; keep the newest pendingGroups.
  uint64_t keep = static_cast<uint64_t>(pendingGroups);
  uint64_t completeBelow = fiber.openGroup > keep ? fiber.openGroup - keep : 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < fiber.pendingCopies.size(); ++i) {
    PendingCopy &copy = fiber.pendingCopies[i];
    if (copy.group >= completeBelow) {
      fiber.pendingCopies[kept++] = copy;
      continue;
    }
    if (!runner.checkShared(fiber.linear, copy.dst, copy.bytes, true,
                            "a cp.async destination"))
      runner.abandonFiber();
    std::memcpy(copy.dst, copy.data, copy.bytes);
  }
  fiber.pendingCopies.resize(kept);
}
