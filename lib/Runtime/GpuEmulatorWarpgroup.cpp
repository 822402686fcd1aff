//===- GpuEmulatorWarpgroup.cpp - wgmma and setmaxnreg --------------------===//
//
// Warpgroup collectives: all 128 threads of a warpgroup (four consecutive
// warps, linear ids [128 g, 128 g + 128)) call them with the same operands
// (PTX's .sync.aligned), and the last to arrive performs them on the
// scheduler's stack. They order no memory between the threads (PTX's
// .aligned promises none): a wgmma's operands are read as its first
// thread's reads, checked against that thread's clock, and its wait lets
// the other threads know those reads happened (so that any of them may
// release the operands' memory to a producer).
//
// wgmma.mma_async m64nNk16 (f16 or bf16 inputs, f32 accumulators; PTX ISA,
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): A from
// registers (the mma.m16n8k16 A fragment, warp w holding rows 16 w ..
// 16 w + 15) or from workgroup memory, B from workgroup memory, both
// through 64-bit matrix descriptors (wgmmaElementOffset below). The product
// is computed when issued, so D holds it at once; what stays asynchronous
// is the operands' workgroup memory, which no write may touch until a
// wgmma.wait_group completes the group (commit_group) the product belongs
// to: such a write is reported. (Reading D before the wait is not caught:
// the emulator cannot see register reads.)
//
// setmaxnreg.{inc,dec}.sync.aligned.u32 N moves the warpgroup's registers
// per thread to N (24 to 256, a multiple of 8) within the block's budget:
// the registers per thread at launch times the block's threads. .dec
// releases at once; .inc waits until enough are free, and a request that
// nothing will satisfy is part of a deadlock.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorInternal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace rope::gpuemu;

namespace {

enum WgmmaType { kWgmmaF16 = 0, kWgmmaBf16 = 1 };

/// The fields of a wgmma matrix descriptor (PTX ISA, "Matrix Descriptor
/// Format"): bits 0-13 start address >> 4, 16-29 leading dimension byte
/// offset >> 4, 32-45 stride dimension byte offset >> 4, 49-51 base
/// offset, 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B).
struct Descriptor {
  int64_t start, leading, stride;
  int baseOffset;
  int swizzleBits; // b of the XOR of bits [4, 4 + b) with [7, 7 + b)
};

/// The start address is the low 18 bits of the operand's workgroup-memory
/// address: its offset, as workgroup memory starts at a multiple of 2^18.
Descriptor decodeDescriptor(uint64_t bits) {
  Descriptor d;
  d.start = static_cast<int64_t>(bits & 0x3fff) << 4;
  d.leading = static_cast<int64_t>((bits >> 16) & 0x3fff) << 4;
  d.stride = static_cast<int64_t>((bits >> 32) & 0x3fff) << 4;
  d.baseOffset = static_cast<int>((bits >> 49) & 0x7);
  int mode = static_cast<int>(bits >> 62);
  d.swizzleBits = mode == 1 ? 3 : mode == 2 ? 2 : mode == 3 ? 1 : 0;
  return d;
}

/// The workgroup-memory offset of element (row, k) of an operand (row: m of
/// A or n of B) with 2-byte elements, in the canonical layouts of PTX's
/// "Shared Memory Matrix Layout" (T = 8 elements = 16 bytes, a core matrix
/// is 8 x 16 bytes; span = 16 << swizzleBits bytes):
///   K-major, no swizzle:  core matrices of 8 rows of 8 k; (row / 8) steps
///     SBO, (k / 8) steps LBO, rows 16 bytes apart;
///   K-major, swizzled:    rows `span` bytes apart, (row / 8) steps SBO,
///     k contiguous (LBO unused);
///   MN-major, no swizzle: core matrices of 8 k of 8 rows; (row / 8) steps
///     SBO, (k / 8) steps LBO, k 16 bytes apart;
///   MN-major, swizzled:   rows contiguous over the span, (row / (span/2))
///     steps LBO, k `span` bytes apart, (k / 8) steps SBO;
/// then the swizzle XORs address bits [4, 4 + b) with bits [7, 7 + b).
int64_t wgmmaElementOffset(const Descriptor &d, bool mnMajor, int64_t row,
                           int64_t k) {
  int64_t span = int64_t(16) << d.swizzleBits;
  int64_t offset;
  if (!mnMajor && d.swizzleBits == 0)
    offset = (row / 8) * d.stride + (k / 8) * d.leading + (row % 8) * 16 +
             (k % 8) * 2;
  else if (!mnMajor)
    offset = (row / 8) * d.stride + (row % 8) * span + k * 2;
  else if (d.swizzleBits == 0)
    offset = (row / 8) * d.stride + (k / 8) * d.leading + (k % 8) * 16 +
             (row % 8) * 2;
  else
    offset = (row / (span / 2)) * d.leading + (row % (span / 2)) * 2 +
             (k / 8) * d.stride + (k % 8) * span;
  int64_t address = d.start + offset;
  int64_t mask = (int64_t(1) << d.swizzleBits) - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

// The A fragment of m64nNk16 from registers: warp w of the warpgroup holds
// rows 16 w .. 16 w + 15 as mma.m16n8k16 does (a0..a7, low half first):
//   row = 16 w + groupID + 8 ((i >> 1) & 1), col = 2 tig + (i & 1) + 8 (i >> 2)
// and the D fragment, N / 2 f32 per thread:
//   row = 16 w + groupID + 8 ((i >> 1) & 1), col = 8 (i >> 2) + 2 tig + (i & 1)
// with groupID = lane >> 2, tig = lane % 4.
struct Coord {
  int row, col;
};
Coord fragmentA(uint32_t thread, int i) {
  int warp = static_cast<int>(thread / kWarpSize) % 4;
  int lane = static_cast<int>(thread % kWarpSize);
  return {16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1),
          2 * (lane % 4) + (i & 1) + 8 * (i >> 2)};
}
Coord fragmentD(uint32_t thread, int i) {
  int warp = static_cast<int>(thread / kWarpSize) % 4;
  int lane = static_cast<int>(thread % kWarpSize);
  return {16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1),
          8 * (i >> 2) + 2 * (lane % 4) + (i & 1)};
}

void describeWgmma(const WgmmaCall &w, char *out, std::size_t size) {
  std::snprintf(out, size,
                "wgmma.mma_async m64n%dk16 %s (A from %s, descriptors 0x%llx "
                "0x%llx, trans %d %d, scale-d %d, scale %d %d)",
                w.n, w.type == kWgmmaF16 ? "f16" : "bf16",
                w.aRegisters ? "registers" : "memory",
                (unsigned long long)w.aDescriptor,
                (unsigned long long)w.bDescriptor, w.transposeA, w.transposeB,
                w.scaleD, w.scaleA, w.scaleB);
}

bool sameWgmma(const WgmmaCall &a, const WgmmaCall &b) {
  return a.type == b.type && a.n == b.n &&
         (a.aRegisters == nullptr) == (b.aRegisters == nullptr) &&
         (a.aRegisters || a.aDescriptor == b.aDescriptor) &&
         a.bDescriptor == b.bDescriptor && a.transposeA == b.transposeA &&
         a.transposeB == b.transposeB && a.scaleD == b.scaleD &&
         a.scaleA == b.scaleA && a.scaleB == b.scaleB;
}

} // namespace

namespace rope::gpuemu {

void BlockRunner::releaseWarpgroup(uint32_t group) {
  for (uint32_t t = group * kWarpgroupSize; t < (group + 1) * kWarpgroupSize;
       ++t) {
    fibers[t].state = FiberState::Ready;
    ready.push_back(t);
  }
}

bool BlockRunner::checkWarpgroupAgreement(uint32_t group) {
  uint32_t first = group * kWarpgroupSize;
  const CollectiveCall &lead = fibers[first].call;
  for (uint32_t t = first + 1; t < first + kWarpgroupSize; ++t) {
    const CollectiveCall &call = fibers[t].call;
    bool same = call.kind == lead.kind;
    if (same && lead.kind == CollectiveKind::Wgmma)
      same = sameWgmma(*lead.wgmma, *call.wgmma);
    else if (same)
      same = call.param0 == lead.param0 && call.param1 == lead.param1;
    if (same)
      continue;
    char one[192], other[192];
    if (lead.kind == CollectiveKind::Wgmma && call.kind == lead.kind) {
      describeWgmma(*lead.wgmma, one, sizeof(one));
      describeWgmma(*call.wgmma, other, sizeof(other));
    } else {
      std::snprintf(one, sizeof(one), "%s %d %d", collectiveName(lead.kind),
                    lead.param0, lead.param1);
      std::snprintf(other, sizeof(other), "%s %d %d", collectiveName(call.kind),
                    call.param0, call.param1);
    }
    error("divergent warpgroup collective: %s calls %s, %s of the same "
          "warpgroup %s",
          name(first).text, one, name(t).text, other);
    return false;
  }
  return true;
}

bool BlockRunner::executeWarpgroupCollective(uint32_t group) {
  if (!checkWarpgroupAgreement(group))
    return false;
  bool ok;
  switch (fibers[group * kWarpgroupSize].call.kind) {
  case CollectiveKind::Wgmma:
    ok = wgmma(group);
    break;
  case CollectiveKind::WgmmaWait:
    ok = wgmmaWait(group);
    break;
  default:
    // setmaxnreg releases the warpgroup itself, possibly later.
    return setMaxNReg(group);
  }
  if (ok)
    releaseWarpgroup(group);
  return ok;
}

bool BlockRunner::wgmma(uint32_t group) {
  uint32_t first = group * kWarpgroupSize;
  const WgmmaCall &w = *fibers[first].call.wgmma;
  const int n = w.n;
  auto decode = w.type == kWgmmaF16 ? halfToDouble : bf16ToDouble;
  // A is 64 x 16, B is 16 x N (k, n); both read whole, then multiplied.
  std::vector<double> a(64 * 16), b(16 * static_cast<std::size_t>(n));
  auto readOperand = [&](uint64_t bits, bool mnMajor, int rows, bool isA,
                         std::vector<double> &out) {
    Descriptor d = decodeDescriptor(bits);
    // PTX leaves open how the hardware applies a base offset; the
    // emulator takes the swizzle on the address bits, which is what a base
    // offset of 0 with the pattern aligned to its repeat means.
    int64_t lineBits =
        d.swizzleBits ? (d.start >> 7) & ((int64_t(1) << d.swizzleBits) - 1)
                      : 0;
    if (d.baseOffset != 0 || lineBits != 0) {
      error("unsupported wgmma descriptor: warpgroup %u gives %s descriptor "
            "0x%llx with base offset %d and start address %lld; the emulator "
            "needs base offset 0 and a swizzle pattern that starts at a "
            "multiple of %lld bytes",
            group, isA ? "the A" : "the B", (unsigned long long)bits,
            d.baseOffset, (long long)d.start,
            (long long)(128 << d.swizzleBits));
      return false;
    }
    std::vector<int64_t> offsets;
    offsets.reserve(static_cast<std::size_t>(rows) * 32);
    for (int r = 0; r < rows; ++r) {
      for (int k = 0; k < 16; ++k) {
        int64_t at = wgmmaElementOffset(d, mnMajor, r, k);
        if (at < 0 || at + 2 > launch.sharedBytes) {
          error("out-of-bounds access: wgmma.mma_async of warpgroup %u reads "
                "its %s operand's element (%d, %d) at workgroup memory byte "
                "offset %lld, outside the block's %lld bytes (descriptor "
                "0x%llx)",
                group, isA ? "A" : "B", r, k, (long long)at,
                (long long)launch.sharedBytes, (unsigned long long)bits);
          return false;
        }
        if (!checkShared(first, shared + at, 2, false,
                         isA ? "a wgmma A operand" : "a wgmma B operand"))
          return false;
        uint16_t raw;
        std::memcpy(&raw, shared + at, 2);
        double value = decode(raw);
        if (isA)
          out[static_cast<std::size_t>(r) * 16 + k] = value * w.scaleA;
        else
          out[static_cast<std::size_t>(k) * n + r] = value * w.scaleB;
        offsets.push_back(at);
        offsets.push_back(at + 1);
      }
    }
    PendingOperandRead read;
    read.owner = group;
    read.group = fibers[first].wgmmaCommits;
    read.isWgmma = true;
    read.what = isA ? "A operand" : "B operand";
    addPendingRead(std::move(read), std::move(offsets));
    return true;
  };
  if (w.aRegisters) {
    for (uint32_t t = first; t < first + kWarpgroupSize; ++t) {
      uint16_t regs[8];
      std::memcpy(regs, fibers[t].call.wgmma->aRegisters, sizeof(regs));
      for (int i = 0; i < 8; ++i) {
        Coord at = fragmentA(t, i);
        a[static_cast<std::size_t>(at.row) * 16 + at.col] =
            decode(regs[i]) * w.scaleA;
      }
    }
  } else if (!readOperand(w.aDescriptor, w.transposeA != 0, 64, true, a)) {
    return false;
  }
  if (!readOperand(w.bDescriptor, w.transposeB != 0, n, false, b))
    return false;
  // D = A B (+ D): exact products, added in increasing k to the
  // accumulator, each addition rounded to f32 (as mma.sync's emulation).
  int perThread = n / 2;
  for (uint32_t t = first; t < first + kWarpgroupSize; ++t) {
    const WgmmaCall &mine = *fibers[t].call.wgmma;
    std::vector<float> out(static_cast<std::size_t>(perThread));
    for (int i = 0; i < perThread; ++i) {
      Coord at = fragmentD(t, i);
      float sum = w.scaleD ? mine.c[i] : 0.0f;
      for (int k = 0; k < 16; ++k)
        sum =
            static_cast<float>(static_cast<double>(sum) +
                               a[static_cast<std::size_t>(at.row) * 16 + k] *
                                   b[static_cast<std::size_t>(k) * n + at.col]);
      out[static_cast<std::size_t>(i)] = sum;
    }
    std::memcpy(mine.d, out.data(), out.size() * sizeof(float));
  }
  return true;
}

bool BlockRunner::wgmmaWait(uint32_t group) {
  uint32_t first = group * kWarpgroupSize;
  const Fiber &lead = fibers[first];
  for (uint32_t t = first + 1; t < first + kWarpgroupSize; ++t) {
    if (fibers[t].wgmmaCommits == lead.wgmmaCommits)
      continue;
    error("divergent wgmma groups: %s waits after %llu wgmma.commit_group, "
          "%s of the same warpgroup after %llu",
          name(first).text, (unsigned long long)lead.wgmmaCommits, name(t).text,
          (unsigned long long)fibers[t].wgmmaCommits);
    return false;
  }
  auto keep = static_cast<uint64_t>(lead.call.param0);
  uint64_t completeBelow =
      lead.wgmmaCommits > keep ? lead.wgmmaCommits - keep : 0;
  // The completed products' operands become reads of the warpgroup's first
  // thread now, so that a later write must be ordered after this wait.
  std::vector<std::pair<int64_t, int64_t>> completed;
  completePendingReads(
      [&](const PendingOperandRead &read) {
        return read.isWgmma && read.owner == group &&
               read.group < completeBelow;
      },
      [&](const PendingOperandRead &read) {
        completed.insert(completed.end(), read.ranges.begin(),
                         read.ranges.end());
      });
  for (auto [begin, end] : completed)
    if (!checkShared(first, shared + begin, end - begin, false,
                     "a wgmma operand"))
      return false;
  if (clocksEnabled() && !completed.empty()) {
    // The reads are the first thread's, at its clock now; every thread of
    // the warpgroup has passed the wait, so each knows they are done.
    uint32_t readClock = clockOf(first)[first];
    for (uint32_t t = first + 1; t < first + kWarpgroupSize; ++t)
      clockOf(t)[first] = std::max(clockOf(t)[first], readClock);
    ++clockOf(first)[first];
  }
  return true;
}

bool BlockRunner::grantRegisterRequests() {
  bool granted = false;
  for (uint32_t group = 0; group < registerRequests.size(); ++group) {
    uint32_t wanted = registerRequests[group];
    if (wanted == 0)
      continue;
    uint64_t inUse = 0;
    for (uint32_t g = 0; g < warpgroupRegisters.size(); ++g)
      inUse += uint64_t(g == group ? wanted : warpgroupRegisters[g]) *
               kWarpgroupSize;
    if (inUse > uint64_t(launchRegisters) * numThreads)
      continue;
    warpgroupRegisters[group] = wanted;
    registerRequests[group] = 0;
    releaseWarpgroup(group);
    granted = true;
  }
  return granted;
}

bool BlockRunner::setMaxNReg(uint32_t group) {
  uint32_t first = group * kWarpgroupSize;
  auto target = static_cast<uint32_t>(fibers[first].call.param0);
  bool increase = fibers[first].call.param1 != 0;
  uint32_t current = warpgroupRegisters[group];
  if (increase ? target < current : target > current) {
    error("invalid setmaxnreg: warpgroup %u (%s) calls setmaxnreg.%s to %u "
          "registers per thread, but it has %u",
          group, name(first).text, increase ? "inc" : "dec", target, current);
    return false;
  }
  if (increase) {
    registerRequests[group] = target;
    grantRegisterRequests();
    return true;
  }
  warpgroupRegisters[group] = target;
  releaseWarpgroup(group);
  grantRegisterRequests();
  return true;
}

} // namespace rope::gpuemu

namespace {
BlockRunner &warpgroupRunner(const char *function, const char *op) {
  BlockRunner &runner = runnerOrDie(function);
  if (runner.numThreads % kWarpgroupSize != 0)
    runner.failFiber("%s needs whole warpgroups: %s is in a block of %u "
                     "threads, not a multiple of 128",
                     op, runner.name(runner.running().linear).text,
                     runner.numThreads);
  return runner;
}
} // namespace

extern "C" void ropeGpuEmuWgmmaFence(void) {
  // Orders the warpgroup's register accesses before wgmma's: nothing to do
  // when the product is computed at the issue.
  (void)runnerOrDie("ropeGpuEmuWgmmaFence");
}

extern "C" void ropeGpuEmuFenceProxyAsync(void) {
  // Generic-proxy writes of workgroup memory become visible to the async
  // proxy (wgmma operands, TMA stores): the emulator has one memory.
  (void)runnerOrDie("ropeGpuEmuFenceProxyAsync");
}

extern "C" void ropeGpuEmuWgmma(int32_t type, int32_t n,
                                const uint32_t *aRegisters,
                                uint64_t aDescriptor, uint64_t bDescriptor,
                                int32_t transposeA, int32_t transposeB,
                                int32_t scaleD, int32_t scaleA, int32_t scaleB,
                                const float *c, float *d) {
  BlockRunner &runner = warpgroupRunner("ropeGpuEmuWgmma", "wgmma.mma_async");
  Fiber &fiber = runner.running();
  bool valid = (type == kWgmmaF16 || type == kWgmmaBf16) && n >= 8 &&
               n <= 256 && n % 8 == 0 && (scaleA == 1 || scaleA == -1) &&
               (scaleB == 1 || scaleB == -1) && (scaleD == 0 || scaleD == 1) &&
               (transposeA == 0 || transposeA == 1) &&
               (transposeB == 0 || transposeB == 1) &&
               !(aRegisters && transposeA) && d && (c || scaleD == 0);
  if (!valid)
    runner.failFiber("invalid operand: %s calls wgmma.mma_async with type %d "
                     "(0 f16, 1 bf16), N %d (8 to 256, a multiple of 8), "
                     "scale-d %d (0, 1), scales %d %d (1, -1), transposes %d "
                     "%d (0, 1; A from registers: 0)%s",
                     runner.name(fiber.linear).text, type, n, scaleD, scaleA,
                     scaleB, transposeA, transposeB,
                     d ? "" : " or a null accumulator");
  WgmmaCall call;
  call.type = type;
  call.n = n;
  call.aRegisters = aRegisters;
  call.aDescriptor = aDescriptor;
  call.bDescriptor = bDescriptor;
  call.transposeA = transposeA;
  call.transposeB = transposeB;
  call.scaleD = scaleD;
  call.scaleA = scaleA;
  call.scaleB = scaleB;
  call.c = c;
  call.d = d;
  fiber.call = CollectiveCall();
  fiber.call.kind = CollectiveKind::Wgmma;
  fiber.call.wgmma = &call;
  runner.yield(FiberState::AtCollective);
}

extern "C" void ropeGpuEmuWgmmaCommit(void) {
  ++warpgroupRunner("ropeGpuEmuWgmmaCommit", "wgmma.commit_group")
        .running()
        .wgmmaCommits;
}

extern "C" void ropeGpuEmuWgmmaWait(int32_t pendingGroups) {
  BlockRunner &runner =
      warpgroupRunner("ropeGpuEmuWgmmaWait", "wgmma.wait_group");
  Fiber &fiber = runner.running();
  if (pendingGroups < 0)
    runner.failFiber("invalid operand: %s waits for wgmma with %d pending "
                     "groups",
                     runner.name(fiber.linear).text, pendingGroups);
  fiber.call = CollectiveCall();
  fiber.call.kind = CollectiveKind::WgmmaWait;
  fiber.call.param0 = pendingGroups;
  runner.yield(FiberState::AtCollective);
}

extern "C" void ropeGpuEmuSetMaxNReg(int32_t registers, int32_t increase) {
  BlockRunner &runner = warpgroupRunner("ropeGpuEmuSetMaxNReg", "setmaxnreg");
  Fiber &fiber = runner.running();
  if (registers < 24 || registers > 256 || registers % 8 != 0)
    runner.failFiber("invalid operand: %s calls setmaxnreg with %d registers "
                     "per thread (24 to 256, a multiple of 8)",
                     runner.name(fiber.linear).text, registers);
  fiber.call = CollectiveCall();
  fiber.call.kind = CollectiveKind::SetMaxNReg;
  fiber.call.param0 = registers;
  fiber.call.param1 = increase != 0;
  runner.yield(FiberState::AtCollective);
}
