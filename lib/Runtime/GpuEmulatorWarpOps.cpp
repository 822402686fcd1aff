//===- GpuEmulatorWarpOps.cpp - shuffle, mma.sync and ldmatrix ------------===//
//
// A lane calling a warp collective records its operands in its fiber and
// blocks; the scheduler calls executeCollective when the last lane of the
// warp arrives, on the scheduler's stack, with every lane's operands (and
// result pointers, into the lanes' blocked frames) at hand. All lanes must
// call the same collective with the same mode/width, shape or matrix count:
// otherwise it is a divergent warp collective. mma.sync and ldmatrix need a
// full warp (PTX: undefined if a thread of the warp has exited); a shuffle
// works in a partial last warp if its width does not exceed the warp. Every
// existing lane of the warp must take part in a shuffle, also those from
// `width` on (stricter than gpu.shuffle, which lets them skip it).
//
// The fragment layouts are those of the PTX ISA (parallel-thread-execution),
// sections "Matrix Fragments for mma.m16n8k16 with floating point type",
// "Matrix Fragments for mma.m16n8k8" (.tf32) and "Warp-level matrix load
// instruction: ldmatrix"; each function below quotes its formula. There,
// groupID = laneid >> 2 and threadID_in_group = laneid % 4.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorInternal.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace rope::gpuemu;

namespace {

enum ShuffleMode { kXor = 0, kDown = 1, kUp = 2, kIdx = 3 };
const char *const kShuffleModeNames[] = {"xor", "down", "up", "idx"};

enum MmaShape { kF16 = 0, kBf16 = 1, kTf32 = 2 };
const char *const kMmaShapeNames[] = {"m16n8k16 f16", "m16n8k16 bf16",
                                      "m16n8k8 tf32"};

/// "gpu.shuffle xor width 8", "mma.sync m16n8k8 tf32", "ldmatrix x4 trans".
void describeCall(const CollectiveCall &call, char *out, std::size_t size) {
  switch (call.kind) {
  case CollectiveKind::Shuffle:
    std::snprintf(out, size, "gpu.shuffle %s width %d",
                  kShuffleModeNames[call.param0], call.param1);
    return;
  case CollectiveKind::Mma:
    std::snprintf(out, size, "mma.sync %s", kMmaShapeNames[call.param0]);
    return;
  case CollectiveKind::Ldmatrix:
    std::snprintf(out, size, "ldmatrix x%d%s", call.param0,
                  call.param1 ? " trans" : "");
    return;
  case CollectiveKind::Elect:
    std::snprintf(out, size, "elect.sync membermask 0x%x",
                  static_cast<uint32_t>(call.param0));
    return;
  default:
    std::snprintf(out, size, "%s", collectiveName(call.kind));
    return;
  }
}

bool sameCollective(const CollectiveCall &a, const CollectiveCall &b) {
  return a.kind == b.kind && a.param0 == b.param0 &&
         (a.kind == CollectiveKind::Mma || a.param1 == b.param1);
}

/// The source lane of `lane` for gpu.shuffle and whether it is valid, as
/// GPU_ShuffleOp's documentation says: a lane below `width` reads lane
/// lane ^ offset, lane + offset, lane - offset or offset (idx), valid when
/// that is below `width` (and not negative); a lane from `width` on gets
/// false. (CUDA's __shfl_*_sync instead splits the warp into groups of
/// `width`; MLIR's NVVM lowering, like its documentation, makes only the
/// first `width` lanes members.)
bool shuffleSource(int64_t lane, int32_t mode, int32_t offset, int32_t width,
                   int64_t &source) {
  switch (mode) {
  case kXor:
    source = lane ^ static_cast<int64_t>(offset);
    break;
  case kDown:
    source = lane + offset;
    break;
  case kUp:
    source = lane - offset;
    break;
  default:
    source = offset;
    break;
  }
  return lane < width && source >= 0 && source < width;
}

/// tf32 given as f32: the tensor core reads sign, exponent and the top 10
/// mantissa bits; the low 13 are ignored.
double tf32ToDouble(float value) {
  if (std::isnan(value))
    return value;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return floatFromBits(bits & ~0x1fffu);
}

//===--- mma.sync fragment layouts (PTX ISA) ------------------------------===//

struct Coord {
  int row, col;
};

// m16n8k16 .f16/.bf16, A (16x16), a0..a7 (low to high of 4 .f16x2 regs):
//   row = groupID      for ai where 0 <= i < 2 || 4 <= i < 6
//         groupID + 8  otherwise
//   col = (threadID_in_group * 2) + (i & 0x1)      for ai where i < 4
//         (threadID_in_group * 2) + (i & 0x1) + 8  for ai where i >= 4
Coord fragmentA16(int lane, int i) {
  int group = lane >> 2, inGroup = lane % 4;
  return {group + 8 * ((i >> 1) & 1), inGroup * 2 + (i & 1) + 8 * (i >> 2)};
}

// m16n8k16 .f16/.bf16, B (16x8, row = k, col = n), b0..b3 (2 .f16x2 regs):
//   row = (threadID_in_group * 2) + (i & 0x1)      for bi where i < 2
//         (threadID_in_group * 2) + (i & 0x1) + 8  for bi where i >= 2
//   col = groupID
Coord fragmentB16(int lane, int i) {
  int group = lane >> 2, inGroup = lane % 4;
  return {inGroup * 2 + (i & 1) + 8 * (i >> 1), group};
}

// m16n8k8 .tf32, A (16x8), a0..a3 (4 .b32 regs):
//   row = groupID for a0 and a2, groupID + 8 for a1 and a3
//   col = threadID_in_group for a0 and a1, threadID_in_group + 4 for a2, a3
Coord fragmentATf32(int lane, int i) {
  int group = lane >> 2, inGroup = lane % 4;
  return {group + 8 * (i & 1), inGroup + 4 * (i >> 1)};
}

// m16n8k8 .tf32, B (8x8, row = k, col = n), b0..b1 (2 .b32 regs):
//   row = threadID_in_group for b0, threadID_in_group + 4 for b1
//   col = groupID
Coord fragmentBTf32(int lane, int i) {
  int group = lane >> 2, inGroup = lane % 4;
  return {inGroup + 4 * i, group};
}

// C and D (16x8, .f32) of both shapes, c0..c3:
//   row = groupID for c0 and c1, groupID + 8 for c2 and c3
//   col = (threadID_in_group * 2) + (i & 0x1)
Coord fragmentC(int lane, int i) {
  int group = lane >> 2, inGroup = lane % 4;
  return {group + 8 * (i >> 1), inGroup * 2 + (i & 1)};
}

struct MmaTile {
  double a[16][16] = {}; // [m][k]
  double b[16][8] = {};  // [k][n]
  float c[16][8] = {};   // [m][n]
};

/// Puts `lane`'s fragments of A, B and C into the whole tile.
void gatherMmaLane(int32_t shape, int lane, const CollectiveCall &call,
                   MmaTile &tile) {
  if (shape == kTf32) {
    float a[4], b[2];
    std::memcpy(a, call.in0, sizeof(a));
    std::memcpy(b, call.in1, sizeof(b));
    for (int i = 0; i < 4; ++i) {
      Coord at = fragmentATf32(lane, i);
      tile.a[at.row][at.col] = tf32ToDouble(a[i]);
    }
    for (int i = 0; i < 2; ++i) {
      Coord at = fragmentBTf32(lane, i);
      tile.b[at.row][at.col] = tf32ToDouble(b[i]);
    }
  } else {
    uint16_t a[8], b[4];
    std::memcpy(a, call.in0, sizeof(a));
    std::memcpy(b, call.in1, sizeof(b));
    auto decode = shape == kF16 ? halfToDouble : bf16ToDouble;
    for (int i = 0; i < 8; ++i) {
      Coord at = fragmentA16(lane, i);
      tile.a[at.row][at.col] = decode(a[i]);
    }
    for (int i = 0; i < 4; ++i) {
      Coord at = fragmentB16(lane, i);
      tile.b[at.row][at.col] = decode(b[i]);
    }
  }
  float c[4];
  std::memcpy(c, call.in2, sizeof(c));
  for (int i = 0; i < 4; ++i) {
    Coord at = fragmentC(lane, i);
    tile.c[at.row][at.col] = c[i];
  }
}

/// D = A * B + C. Every product of two f16/bf16/tf32 values is exact in a
/// double (at most 22 significant bits, no overflow); the sum starts at C
/// and adds the products in increasing k, each addition rounded once to f32
/// (a double sum of an f32 and an exact product rounded to f32 equals the
/// correctly rounded f32 sum: 53 >= 2 * 24 + 2). Tensor cores add in
/// another, unspecified order and precision; results agree within the f32
/// rounding of K additions.
void multiplyTile(const MmaTile &tile, int k, float d[16][8]) {
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      float sum = tile.c[m][n];
      for (int i = 0; i < k; ++i)
        sum = static_cast<float>(static_cast<double>(sum) +
                                 tile.a[m][i] * tile.b[i][n]);
      d[m][n] = sum;
    }
  }
}

/// The register of ldmatrix (m8n8, b16) that lane `lane` receives from an
/// 8x8 matrix whose rows are `rows` (PTX ISA, "ldmatrix" Figure: "ldmatrix
/// fragment layout for one 8x8 Matrix with 16-bit elements"): a group of
/// four consecutive lanes holds one row, lane l gets row l / 4, elements
/// 2 (l % 4) and 2 (l % 4) + 1, the first in the low half. With .trans the
/// matrix is read column-major: lane l gets column l / 4, rows 2 (l % 4)
/// and 2 (l % 4) + 1.
uint32_t ldmatrixRegister(const uint16_t rows[8][8], int lane, bool transpose) {
  int fixed = lane / 4, first = 2 * (lane % 4);
  uint16_t low = transpose ? rows[first][fixed] : rows[fixed][first];
  uint16_t high = transpose ? rows[first + 1][fixed] : rows[fixed][first + 1];
  return static_cast<uint32_t>(low) | (static_cast<uint32_t>(high) << 16);
}

} // namespace

namespace rope::gpuemu {

/// IEEE binary16 to double (exact).
double halfToDouble(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half >> 15) << 31;
  uint32_t exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24
    double magnitude = mantissa * (1.0 / 16777216.0);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) // infinity or NaN
    return floatFromBits(sign | 0x7f800000u | (mantissa << 13));
  return floatFromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// bfloat16 is the high half of an f32.
double bf16ToDouble(uint16_t value) {
  return floatFromBits(static_cast<uint32_t>(value) << 16);
}

bool BlockRunner::executeCollective(uint32_t warp) {
  uint32_t lanes = lanesOfWarp(warp);
  if (!checkCollectiveAgreement(warp, lanes))
    return false;
  const CollectiveCall &call = fibers[warp * kWarpSize].call;
  if (call.kind == CollectiveKind::Shuffle)
    return shuffle(warp, lanes);
  if (call.kind == CollectiveKind::Elect)
    return elect(warp, lanes);
  if (lanes < kWarpSize) {
    error("%s in a partial warp: %s is in warp %u, which has %u of 32 threads "
          "(the block has %u)",
          collectiveName(call.kind), name(warp * kWarpSize).text, warp, lanes,
          numThreads);
    return false;
  }
  return call.kind == CollectiveKind::Mma ? mma(warp) : ldmatrix(warp);
}

bool BlockRunner::checkCollectiveAgreement(uint32_t warp, uint32_t lanes) {
  const Fiber &first = fibers[warp * kWarpSize];
  for (uint32_t i = 1; i < lanes; ++i) {
    const Fiber &lane = fibers[warp * kWarpSize + i];
    if (sameCollective(first.call, lane.call))
      continue;
    char one[64], other[64];
    describeCall(first.call, one, sizeof(one));
    describeCall(lane.call, other, sizeof(other));
    error("divergent warp collective: %s calls %s, %s of the same warp %s",
          name(first.linear).text, one, name(lane.linear).text, other);
    return false;
  }
  return true;
}

bool BlockRunner::shuffle(uint32_t warp, uint32_t lanes) {
  uint32_t base = warp * kWarpSize;
  int32_t width = fibers[base].call.param1;
  if (static_cast<uint32_t>(width) > lanes) {
    // "The first `width` lanes of the subgroup must be active."
    error("gpu.shuffle of width %d in a partial warp: %s is in warp %u, which "
          "has %u threads (the block has %u)",
          width, name(base).text, warp, lanes, numThreads);
    return false;
  }
  int32_t results[kWarpSize];
  int8_t valid[kWarpSize];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const CollectiveCall &call = fibers[base + lane].call;
    int64_t source = 0;
    valid[lane] = shuffleSource(lane, call.param0, call.param2, width, source);
    results[lane] = valid[lane] ? fibers[base + source].call.value : call.value;
  }
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    fibers[base + lane].call.value = results[lane];
    fibers[base + lane].call.valid = valid[lane];
  }
  return true;
}

bool BlockRunner::elect(uint32_t warp, uint32_t lanes) {
  uint32_t base = warp * kWarpSize;
  auto mask = static_cast<uint32_t>(fibers[base].call.param0);
  uint32_t full = lanes == kWarpSize ? 0xffffffffu : (1u << lanes) - 1;
  if (mask != full) {
    // The lanes outside the mask would not take part; the emulator has
    // every lane of the warp call it.
    error("elect.sync with membermask 0x%x: %s is in warp %u, whose %u "
          "threads all call it; the emulator needs membermask 0x%x",
          mask, name(base).text, warp, lanes, full);
    return false;
  }
  // The lowest lane of the member mask is elected.
  for (uint32_t lane = 0; lane < lanes; ++lane)
    fibers[base + lane].call.value = lane == 0;
  return true;
}

bool BlockRunner::mma(uint32_t warp) {
  uint32_t base = warp * kWarpSize;
  int32_t shape = fibers[base].call.param0;
  MmaTile tile;
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    gatherMmaLane(shape, static_cast<int>(lane), fibers[base + lane].call,
                  tile);
  float d[16][8];
  multiplyTile(tile, shape == kTf32 ? 8 : 16, d);
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    float out[4];
    for (int i = 0; i < 4; ++i) {
      Coord at = fragmentC(static_cast<int>(lane), i);
      out[i] = d[at.row][at.col];
    }
    std::memcpy(fibers[base + lane].call.out, out, sizeof(out));
  }
  return true;
}

bool BlockRunner::ldmatrix(uint32_t warp) {
  uint32_t base = warp * kWarpSize;
  int32_t count = fibers[base].call.param0;
  bool transpose = fibers[base].call.param1 != 0;
  uint16_t rows[4][8][8];
  // Lane 8 m + r gives row r of matrix m; each row is read (16 bytes) by
  // the lane that gave its address.
  for (int32_t lane = 0; lane < 8 * count; ++lane) {
    const void *row = fibers[base + lane].call.in0;
    if (!checkShared(base + lane, row, 16, false, "an ldmatrix row"))
      return false;
    if (reinterpret_cast<uintptr_t>(row) % 16 != 0) {
      error("misaligned ldmatrix: %s gives row address at workgroup memory "
            "byte offset %lld, not a multiple of 16",
            name(base + lane).text, (long long)(static_cast<const unsigned char *>(row) - shared));
      return false;
    }
    std::memcpy(rows[lane / 8][lane % 8], row, 16);
  }
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    uint32_t out[4];
    for (int32_t m = 0; m < count; ++m)
      out[m] = ldmatrixRegister(rows[m], static_cast<int>(lane), transpose);
    std::memcpy(fibers[base + lane].call.out, out, sizeof(uint32_t) * count);
  }
  return true;
}

} // namespace rope::gpuemu

extern "C" int32_t ropeGpuEmuShuffle(int32_t value, int32_t offset,
                                     int32_t width, int32_t mode,
                                     int8_t *valid) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuShuffle");
  Fiber &fiber = runner.running();
  if (mode < kXor || mode > kIdx || width < 1 ||
      width > static_cast<int32_t>(kWarpSize))
    runner.failFiber("invalid operand: %s calls gpu.shuffle with mode %d "
                     "(0 xor, 1 down, 2 up, 3 idx) and width %d (1 to 32)",
                     runner.name(fiber.linear).text, mode, width);
  CollectiveCall &call = fiber.call;
  call = CollectiveCall();
  call.kind = CollectiveKind::Shuffle;
  call.param0 = mode;
  call.param1 = width;
  call.param2 = offset;
  call.value = value;
  runner.yield(FiberState::AtCollective);
  if (valid)
    *valid = call.valid;
  return call.value;
}

extern "C" void ropeGpuEmuMmaSync(int32_t shape, const void *a, const void *b,
                                  const float *c, float *d) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuMmaSync");
  Fiber &fiber = runner.running();
  if (shape < kF16 || shape > kTf32 || !a || !b || !c || !d)
    runner.failFiber("invalid operand: %s calls mma.sync with shape %d (0 "
                     "m16n8k16 f16, 1 m16n8k16 bf16, 2 m16n8k8 tf32) or a "
                     "null fragment",
                     runner.name(fiber.linear).text, shape);
  CollectiveCall &call = fiber.call;
  call = CollectiveCall();
  call.kind = CollectiveKind::Mma;
  call.param0 = shape;
  call.in0 = a;
  call.in1 = b;
  call.in2 = c;
  call.out = d;
  runner.yield(FiberState::AtCollective);
}

extern "C" void ropeGpuEmuLdmatrix(const void *rowAddress, int32_t numMatrices,
                                   int32_t transpose, uint32_t *out) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuLdmatrix");
  Fiber &fiber = runner.running();
  if ((numMatrices != 1 && numMatrices != 2 && numMatrices != 4) || !out)
    runner.failFiber("invalid operand: %s calls ldmatrix with %d matrices "
                     "(1, 2 or 4) or a null result",
                     runner.name(fiber.linear).text, numMatrices);
  CollectiveCall &call = fiber.call;
  call = CollectiveCall();
  call.kind = CollectiveKind::Ldmatrix;
  call.param0 = numMatrices;
  call.param1 = transpose != 0;
  call.in0 = rowAddress;
  call.out = out;
  runner.yield(FiberState::AtCollective);
}

extern "C" int32_t ropeGpuEmuElectSync(uint32_t memberMask) {
  BlockRunner &runner = runnerOrDie("ropeGpuEmuElectSync");
  CollectiveCall &call = runner.running().call;
  call = CollectiveCall();
  call.kind = CollectiveKind::Elect;
  call.param0 = static_cast<int32_t>(memberMask);
  runner.yield(FiberState::AtCollective);
  return call.value;
}
