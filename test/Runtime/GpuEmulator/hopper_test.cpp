//===- hopper_test.cpp - sm_90a kernels run by libRopeGpuEmulator ---------===//
//
// rope-gpu-emulator-hopper-test SCENARIO: hand-written kernels that use the
// emulator's Hopper operations (mbarriers, TMA, wgmma, elect.sync,
// setmaxnreg), each checked against a host reference, and the negative
// scenarios of their checkers (EmulatorTestKernels.h says how a scenario
// reports).
//
// The references place and read operands through the layouts as CuTe
// writes them, (shape):(stride) in elements with Swizzle<B, 4, 3> on the
// byte address (cute/atom/mma_traits_sm90_gmma.hpp, cute/swizzle.hpp), an
// independent statement of what the emulator implements from the PTX
// ISA's prose. Operand values are multiples of 1/4 in [-2, 2]: exact in f16
// and bf16, with products and sums exact in f32, so results compare equal.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestKernels.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

//===--- Numbers and layouts of the references -----------------------------===//

uint16_t toF16(float value) {
  _Float16 half = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &half, sizeof(bits));
  return bits;
}
uint16_t toBf16(float value) { // exact for the values used here
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16);
}

std::vector<float> randomQuarters(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> values(count);
  for (float &v : values)
    v = static_cast<float>(static_cast<int>(rng() % 17) - 8) / 4.0f;
  return values;
}

/// cute::Swizzle<B, 4, 3> on a byte address.
int64_t cuteSwizzle(int64_t address, int b) {
  int64_t yyy = ((int64_t(1) << b) - 1) << 7;
  return address ^ ((address & yyy) >> 3);
}

/// A wgmma operand's layout: 2-byte elements, T = 8 elements per 16 bytes.
struct OperandLayout {
  bool mnMajor;
  int swizzle;    // CuTe's B: 0 none, 1 32B, 2 64B, 3 128B
  int64_t start;  // bytes
  int64_t lbo, sbo; // bytes
  /// The descriptor's swizzle field: 0 none, 1 128B, 2 64B, 3 32B.
  uint64_t descriptor() const {
    uint64_t mode = swizzle == 0 ? 0 : swizzle == 3 ? 1 : swizzle == 2 ? 2 : 3;
    return (static_cast<uint64_t>(start >> 4) & 0x3fff) |
           ((static_cast<uint64_t>(lbo >> 4) & 0x3fff) << 16) |
           ((static_cast<uint64_t>(sbo >> 4) & 0x3fff) << 32) | (mode << 62);
  }
  /// The byte of element (mn, k), from the canonical layouts in CuTe's
  /// notation (strides in elements; n = 2^swizzle):
  ///   K-major none    ((8,m),(T,2k)):((1T,SBO),(1,LBO))
  ///   K-major swz     ((8,m),(T,2k)):((nT,SBO),(1,T))
  ///   MN-major none   ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
  ///   MN-major swz    ((T,n,m),(8,k)):((1,T,LBO),(nT,SBO))
  int64_t byteOf(int64_t mn, int64_t k) const {
    const int64_t T = 8, n = int64_t(1) << swizzle;
    int64_t lboE = lbo / 2, sboE = sbo / 2, e;
    if (!mnMajor && swizzle == 0)
      e = (mn % 8) * T + (mn / 8) * sboE + (k % T) + (k / T) * lboE;
    else if (!mnMajor)
      e = (mn % 8) * n * T + (mn / 8) * sboE + (k % T) + (k / T) * T;
    else if (swizzle == 0)
      e = (mn % T) + (mn / T) * sboE + (k % 8) * T + (k / 8) * lboE;
    else
      e = (mn % T) + ((mn / T) % n) * T + (mn / (T * n)) * lboE +
          (k % 8) * n * T + (k / 8) * sboE;
    return cuteSwizzle(start + 2 * e, swizzle);
  }
};

/// A layout of `rows` x 16 at `start` whose strides keep its core matrices
/// apart.
OperandLayout operandLayout(bool mnMajor, int swizzle, int64_t start,
                            int64_t rows) {
  int64_t span = int64_t(16) << swizzle;
  OperandLayout l{mnMajor, swizzle, start, 0, 0};
  if (!mnMajor && swizzle == 0) {
    l.lbo = 128;     // the two k halves side by side
    l.sbo = 256;     // then the next 8 rows
  } else if (!mnMajor) {
    l.lbo = 16;      // unused
    l.sbo = 8 * span;
  } else if (swizzle == 0) {
    l.sbo = 128;                 // 8-row blocks side by side
    l.lbo = 128 * (rows / 8);    // then the second 8 of k
  } else {
    l.sbo = 8 * span;            // 8 k of span bytes, then the next 8
    l.lbo = 16 * span;           // the next span of rows after both
  }
  return l;
}

/// CuTe's thread-value layouts of the m64nNk16 fragments, index m + 64 x:
///   D: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))
///   A: ((4,8,4),(2,2,2)):((128,1,16),(64,8,512))
/// for thread t = t0 + 4 t1 + 32 t2 and value v = v0 + 2 v1 + 4 v2.
void fragmentCoord(int t, int v, int &row, int &col) {
  int t0 = t % 4, t1 = t / 4 % 8, t2 = t / 32;
  int v0 = v % 2, v1 = v / 2 % 2, v2 = v / 4;
  int index = 128 * t0 + 1 * t1 + 16 * t2 + 64 * v0 + 8 * v1 + 512 * v2;
  row = index % 64;
  col = index / 64;
}

//===--- wgmma: every operand layout ---------------------------------------===//

struct WgmmaCase {
  int type;       // 0 f16, 1 bf16
  int n;
  bool aFromRegisters;
  OperandLayout a, b;
  int scaleD, scaleA, scaleB;
};

struct WgmmaEnv {
  WgmmaCase c;
  const uint16_t *aBits; // [64][16]
  const uint16_t *bBits; // [n][16] (B transposed: row n, column k)
  const float *cInit;    // [64][n]
  float *out;            // [64][n]
};

void wgmmaKernel(void *p) {
  auto *env = static_cast<WgmmaEnv *>(p);
  const WgmmaCase &c = env->c;
  int t = static_cast<int>(linearThread());
  unsigned char *base = shared<unsigned char>(0);
  // Each thread stages its share of the operands in workgroup memory.
  for (int e = t; e < 64 * 16; e += 128)
    if (!c.aFromRegisters)
      store(reinterpret_cast<uint16_t *>(base + c.a.byteOf(e / 16, e % 16)),
            env->aBits[e]);
  for (int e = t; e < c.n * 16; e += 128)
    store(reinterpret_cast<uint16_t *>(base + c.b.byteOf(e / 16, e % 16)),
          env->bBits[e]);
  ropeGpuEmuFenceProxyAsync();
  ropeGpuEmuBarrier();
  uint32_t aRegs[4];
  for (int v = 0; v < 8; v += 2) {
    int row, col, row1, col1;
    fragmentCoord(t, v, row, col);
    fragmentCoord(t, v + 1, row1, col1);
    aRegs[v / 2] = env->aBits[row * 16 + col] |
                   (static_cast<uint32_t>(env->aBits[row1 * 16 + col1]) << 16);
  }
  std::vector<float> acc(static_cast<std::size_t>(c.n / 2));
  for (int v = 0; v < c.n / 2; ++v) {
    int row, col;
    fragmentCoord(t, v, row, col);
    acc[static_cast<std::size_t>(v)] = env->cInit[row * c.n + col];
  }
  ropeGpuEmuWgmmaFence();
  ropeGpuEmuWgmma(c.type, c.n, c.aFromRegisters ? aRegs : nullptr,
                  c.a.descriptor(), c.b.descriptor(), c.a.mnMajor,
                  c.b.mnMajor, c.scaleD, c.scaleA, c.scaleB, acc.data(),
                  acc.data());
  ropeGpuEmuWgmmaCommit();
  ropeGpuEmuWgmmaWait(0);
  for (int v = 0; v < c.n / 2; ++v) {
    int row, col;
    fragmentCoord(t, v, row, col);
    env->out[row * c.n + col] = acc[static_cast<std::size_t>(v)];
  }
}

bool runWgmmaCase(const char *scenario, const WgmmaCase &c, unsigned seed) {
  std::vector<float> a = randomQuarters(64 * 16, seed);
  std::vector<float> b = randomQuarters(static_cast<std::size_t>(c.n) * 16,
                                        seed + 1);
  std::vector<float> init = randomQuarters(64 * static_cast<std::size_t>(c.n),
                                           seed + 2);
  std::vector<uint16_t> aBits(a.size()), bBits(b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    aBits[i] = c.type == 0 ? toF16(a[i]) : toBf16(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i)
    bBits[i] = c.type == 0 ? toF16(b[i]) : toBf16(b[i]);
  std::vector<float> out(init.size(), -1.0f);
  WgmmaEnv env{c, aBits.data(), bBits.data(), init.data(), out.data()};
  launch(wgmmaKernel, &env, "wgmma", {1, 1, 1}, {128, 1, 1}, 65536);
  for (int m = 0; m < 64; ++m) {
    for (int n = 0; n < c.n; ++n) {
      double sum = c.scaleD ? init[static_cast<std::size_t>(m * c.n + n)] : 0;
      for (int k = 0; k < 16; ++k)
        sum += double(c.scaleA) * a[static_cast<std::size_t>(m * 16 + k)] *
               double(c.scaleB) * b[static_cast<std::size_t>(n * 16 + k)];
      float got = out[static_cast<std::size_t>(m * c.n + n)];
      if (static_cast<double>(got) != sum) {
        char detail[256];
        std::snprintf(detail, sizeof(detail),
                      "N %d, A %s (major %d, swizzle %d), B major %d "
                      "swizzle %d: D[%d][%d] is %g, expected %g",
                      c.n, c.aFromRegisters ? "registers" : "memory",
                      c.a.mnMajor, c.a.swizzle, c.b.mnMajor, c.b.swizzle, m,
                      n, got, sum);
        return wrong(scenario, detail);
      }
    }
  }
  return true;
}

/// Every swizzle and major-ness of A and B, N = 8, 64 and 256, A from
/// registers, bf16, scale-d 0 and the negated scales.
bool wgmmaLayouts() {
  const char *name = "wgmma-layouts";
  unsigned seed = 1;
  constexpr int64_t kB = 32768; // B's region; A's is [0, 32768)
  for (int mnA = 0; mnA < 2; ++mnA)
    for (int mnB = 0; mnB < 2; ++mnB)
      for (int swz = 0; swz < 4; ++swz) {
        WgmmaCase c{0, 64, false, operandLayout(mnA, swz, 0, 64),
                    operandLayout(mnB, 3 - swz, kB, 64), 1, 1, 1};
        if (!runWgmmaCase(name, c, seed += 3))
          return false;
      }
  for (int n : {8, 16, 128, 256}) {
    for (int mnB = 0; mnB < 2; ++mnB) {
      WgmmaCase c{0, n, true, operandLayout(false, 0, 0, 64),
                  operandLayout(mnB, mnB ? 3 : 1, kB, n), 1, 1, 1};
      if (!runWgmmaCase(name, c, seed += 3))
        return false;
    }
  }
  WgmmaCase bf16{1, 64, false, operandLayout(false, 3, 0, 64),
                 operandLayout(true, 2, kB, 64), 0, -1, 1};
  WgmmaCase negB{1, 32, true, operandLayout(false, 0, 0, 64),
                 operandLayout(false, 0, kB, 32), 1, 1, -1};
  return runWgmmaCase(name, bf16, seed + 3) && runWgmmaCase(name, negB, seed + 6);
}

//===--- TMA: boxes in and out of a tensor ---------------------------------===//

struct TmaBoxEnv {
  alignas(64) unsigned char map[128];
  int32_t loadAt[3], storeAt[3];
  int64_t boxBytes;
  float *seen;   // the box as read back, [boxBytes / 4]
};

void tmaBoxKernel(void *p) {
  auto *env = static_cast<TmaBoxEnv *>(p);
  int64_t t = linearThread();
  uint64_t *bar = shared<uint64_t>(16384);
  if (t == 0)
    ropeGpuEmuMbarrierInit(bar, 1);
  ropeGpuEmuBarrier();
  if (ropeGpuEmuElectSync(0xffffffffu)) {
    ropeGpuEmuMbarrierArriveExpectTx(bar, env->boxBytes);
    ropeGpuEmuTmaLoad(shared<void>(0), env->map, env->loadAt, bar);
  }
  ropeGpuEmuMbarrierTryWaitParity(bar, 0);
  const float *box = shared<float>(0);
  for (int64_t i = t; i < env->boxBytes / 4; i += 32)
    env->seen[i] = load(&box[i]);
  ropeGpuEmuBarrier();
  if (t == 0) {
    ropeGpuEmuTmaStore(env->map, env->storeAt, shared<void>(0));
    ropeGpuEmuBulkCommit();
    ropeGpuEmuBulkWaitRead(0);
  }
}

/// A 3-d f32 tensor (40 x 7 x 3, dim 0 innermost, rows padded to 48) and a
/// 32 x 4 x 2 box with the 128-byte swizzle, loaded partly outside the
/// tensor (negative and past-the-end coordinates; zero or NaN fill), read
/// back through the swizzle, then stored elsewhere partly outside.
bool tmaBox(const char *name, bool nanFill) {
  const uint64_t dims[3] = {40, 7, 3};
  const uint64_t strides[2] = {48 * 4, 48 * 4 * 7};
  const uint32_t box[3] = {32, 4, 2};
  std::vector<float> tensor(48 * 7 * 3);
  for (std::size_t i = 0; i < tensor.size(); ++i)
    tensor[i] = static_cast<float>(i);
  TmaBoxEnv env;
  env.boxBytes = 32 * 4 * 2 * 4;
  std::vector<float> seen(static_cast<std::size_t>(env.boxBytes / 4));
  env.seen = seen.data();
  const int32_t loadAt[3] = {16, -2, 2}, storeAt[3] = {20, 5, 1};
  std::memcpy(env.loadAt, loadAt, sizeof(loadAt));
  std::memcpy(env.storeAt, storeAt, sizeof(storeAt));
  ropeGpuEmuTensorMapEncodeTiled(env.map, 4, 3, tensor.data(), dims, strides,
                                 box, nullptr, 3, nanFill);
  launch(tmaBoxKernel, &env, "tma_box", {1, 1, 1}, {32, 1, 1}, 16392);
  // The element at box index (x, y, z) lands at swizzle(its row-major byte).
  auto element = [&](const std::vector<float> &t, int64_t x, int64_t y,
                     int64_t z, bool &inside) {
    inside = x >= 0 && x < 40 && y >= 0 && y < 7 && z >= 0 && z < 3;
    return inside ? t[static_cast<std::size_t>(z * 48 * 7 + y * 48 + x)] : 0;
  };
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 32; ++x) {
        int64_t linear = ((z * 4 + y) * 32 + x) * 4;
        float got = seen[static_cast<std::size_t>(cuteSwizzle(linear, 3) / 4)];
        bool inside;
        float want =
            element(tensor, loadAt[0] + x, loadAt[1] + y, loadAt[2] + z, inside);
        bool ok = inside ? got == want : nanFill ? std::isnan(got) : got == 0;
        if (!ok) {
          char detail[160];
          std::snprintf(detail, sizeof(detail),
                        "loaded box element (%d, %d, %d) is %g, expected %g%s",
                        x, y, z, got, want, inside ? "" : " (outside)");
          return wrong(name, detail);
        }
      }
  // The store wrote the box (as loaded) where it is inside the tensor.
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 7; ++y)
      for (int x = 0; x < 40; ++x) {
        int64_t bx = x - storeAt[0], by = y - storeAt[1], bz = z - storeAt[2];
        bool inBox = bx >= 0 && bx < 32 && by >= 0 && by < 4 && bz >= 0 &&
                     bz < 2;
        bool fromInside;
        float loaded = inBox ? element(tensor, loadAt[0] + bx, loadAt[1] + by,
                                       loadAt[2] + bz, fromInside)
                             : 0;
        float got = tensor[static_cast<std::size_t>(z * 48 * 7 + y * 48 + x)];
        float before = static_cast<float>(z * 48 * 7 + y * 48 + x);
        bool ok = !inBox ? got == before
                  : fromInside ? got == loaded
                  : nanFill    ? std::isnan(got)
                               : got == 0;
        if (!ok) {
          char detail[160];
          std::snprintf(detail, sizeof(detail),
                        "stored tensor element (%d, %d, %d) is %g", x, y, z,
                        got);
          return wrong(name, detail);
        }
      }
  return true;
}

//===--- A warp-specialised pipeline: TMA -> mbarriers -> wgmma -------------===//

// 384 threads: warpgroup 0 produces (setmaxnreg.dec 40; its elected thread
// issues the TMA loads), warpgroups 1 and 2 consume (setmaxnreg.inc 232):
// each multiplies its 64 rows of Q (64 x 64 f16, loaded once) with every
// key tile (64 x 64 f16, 128-byte swizzle) of a two-stage ring, S += Q K^T,
// and releases the stage through the `empty` mbarrier. The sum over tiles
// is Q (sum of K tiles)^T.
constexpr int kTiles = 6, kStages = 2;
constexpr int64_t kTileBytes = 64 * 64 * 2;
constexpr int64_t kQ = 0, kRing = 2 * kTileBytes,
                  kBarriers = kRing + kStages * kTileBytes;

struct PipelineEnv {
  alignas(64) unsigned char qMap[128];
  alignas(64) unsigned char kMap[128];
  float *out; // [128][64]
  bool skipEmptyWait; // the negative variant: the producer overwrites
};

/// The shared-window address of workgroup byte `offset`, from its address.
int64_t sharedWindow(int64_t offset) {
  return static_cast<int64_t>(
      reinterpret_cast<uintptr_t>(shared<unsigned char>(offset)) & 0x3ffff);
}

uint64_t *barrierAt(int index) {
  return shared<uint64_t>(kBarriers + 8 * index);
}
// Barriers: 0 Q, 1..2 full, 3..4 empty.
void pipelineKernel(void *p) {
  auto *env = static_cast<PipelineEnv *>(p);
  int t = static_cast<int>(linearThread());
  int group = t / 128;
  if (t == 0) {
    ropeGpuEmuMbarrierInit(barrierAt(0), 1);
    for (int s = 0; s < kStages; ++s) {
      ropeGpuEmuMbarrierInit(barrierAt(1 + s), 1);
      ropeGpuEmuMbarrierInit(barrierAt(3 + s), 2);
    }
  }
  ropeGpuEmuBarrier();
  if (group == 0) {
    ropeGpuEmuSetMaxNReg(40, 0);
    if (t >= 32 || !ropeGpuEmuElectSync(0xffffffffu))
      return;
    int32_t q0[2] = {0, 0}, q1[2] = {0, 64};
    ropeGpuEmuMbarrierArriveExpectTx(barrierAt(0), 2 * kTileBytes);
    ropeGpuEmuTmaLoad(shared<void>(kQ), env->qMap, q0, barrierAt(0));
    ropeGpuEmuTmaLoad(shared<void>(kQ + kTileBytes), env->qMap, q1,
                      barrierAt(0));
    for (int i = 0; i < kTiles; ++i) {
      int s = i % kStages;
      if (!env->skipEmptyWait)
        ropeGpuEmuMbarrierTryWaitParity(barrierAt(3 + s),
                                        ((i / kStages) & 1) ^ 1);
      int32_t at[2] = {0, 64 * i};
      ropeGpuEmuMbarrierArriveExpectTx(barrierAt(1 + s), kTileBytes);
      ropeGpuEmuTmaLoad(shared<void>(kRing + s * kTileBytes), env->kMap, at,
                        barrierAt(1 + s));
    }
    return;
  }
  ropeGpuEmuSetMaxNReg(232, 1);
  int local = t % 128;
  std::vector<float> acc(32, 0.0f);
  ropeGpuEmuMbarrierTryWaitParity(barrierAt(0), 0);
  int64_t q = kQ + (group - 1) * kTileBytes;
  for (int i = 0; i < kTiles; ++i) {
    int s = i % kStages;
    ropeGpuEmuMbarrierTryWaitParity(barrierAt(1 + s), (i / kStages) & 1);
    ropeGpuEmuWgmmaFence();
    for (int k = 0; k < 4; ++k) {
      // K-major, 128-byte swizzle, 8 rows of 128 bytes per 1024; the k16
      // slice k starts 32 bytes further. The start addresses are taken from
      // the addresses, as a GPU kernel does (the shared window's low 18
      // bits).
      OperandLayout a{false, 3, sharedWindow(q) + 32 * k, 16, 1024};
      OperandLayout b{false, 3, sharedWindow(kRing + s * kTileBytes) + 32 * k,
                      16, 1024};
      ropeGpuEmuWgmma(0, 64, nullptr, a.descriptor(), b.descriptor(), 0, 0,
                      1, 1, 1, acc.data(), acc.data());
    }
    ropeGpuEmuWgmmaCommit();
    ropeGpuEmuWgmmaWait(0);
    if (local < 32 && ropeGpuEmuElectSync(0xffffffffu))
      ropeGpuEmuMbarrierArrive(barrierAt(3 + s), 1);
  }
  for (int v = 0; v < 32; ++v) {
    int row, col;
    fragmentCoord(local, v, row, col);
    env->out[(row + 64 * (group - 1)) * 64 + col] =
        acc[static_cast<std::size_t>(v)];
  }
}

bool pipeline(const char *name, bool skipEmptyWait) {
  std::vector<float> qf = randomQuarters(128 * 64, 11);
  std::vector<float> kf = randomQuarters(64 * kTiles * 64, 12);
  std::vector<uint16_t> qh(qf.size()), kh(kf.size());
  for (std::size_t i = 0; i < qf.size(); ++i)
    qh[i] = toF16(qf[i]);
  for (std::size_t i = 0; i < kf.size(); ++i)
    kh[i] = toF16(kf[i]);
  PipelineEnv env;
  env.skipEmptyWait = skipEmptyWait;
  std::vector<float> out(128 * 64, -1.0f);
  env.out = out.data();
  const uint64_t qDims[2] = {64, 128}, kDims[2] = {64, 64 * kTiles};
  const uint64_t rowBytes[1] = {128};
  const uint32_t box[2] = {64, 64};
  ropeGpuEmuTensorMapEncodeTiled(env.qMap, 2, 2, qh.data(), qDims, rowBytes,
                                 box, nullptr, 3, 0);
  ropeGpuEmuTensorMapEncodeTiled(env.kMap, 2, 2, kh.data(), kDims, rowBytes,
                                 box, nullptr, 3, 0);
  ropeGpuEmuLaunchRegisters(168);
  launch(pipelineKernel, &env, "warp_specialized", {1, 1, 1}, {384, 1, 1},
         kBarriers + 64);
  for (int m = 0; m < 128; ++m)
    for (int n = 0; n < 64; ++n) {
      double sum = 0;
      for (int i = 0; i < kTiles; ++i)
        for (int d = 0; d < 64; ++d)
          sum += double(qf[static_cast<std::size_t>(m * 64 + d)]) *
                 kf[static_cast<std::size_t>((64 * i + n) * 64 + d)];
      float got = out[static_cast<std::size_t>(m * 64 + n)];
      if (static_cast<double>(got) != sum) {
        char detail[128];
        std::snprintf(detail, sizeof(detail), "S[%d][%d] is %g, expected %g",
                      m, n, got, sum);
        return wrong(name, detail);
      }
    }
  return true;
}

//===--- mbarrier hand-off between two warps -------------------------------===//

// Warp 0 writes workgroup memory with plain stores and arrives; warp 1
// waits for the phase (or, negative, does not) and reads what warp 0 wrote.
struct HandoffEnv {
  bool wait;
  int32_t *out;
};

void handoffKernel(void *p) {
  auto *env = static_cast<HandoffEnv *>(p);
  int64_t t = linearThread();
  uint64_t *bar = shared<uint64_t>(256);
  int32_t *data = shared<int32_t>(0);
  if (t == 0)
    ropeGpuEmuMbarrierInit(bar, 32);
  ropeGpuEmuBarrier();
  if (t < 32) {
    store(&data[t], static_cast<int32_t>(t * 3));
    ropeGpuEmuMbarrierArrive(bar, 1);
    return;
  }
  if (env->wait)
    ropeGpuEmuMbarrierTryWaitParity(bar, 0);
  env->out[t - 32] = load(&data[63 - t]);
}

bool handoff(const char *name, bool wait) {
  std::vector<int32_t> out(32, -1);
  HandoffEnv env{wait, out.data()};
  launch(handoffKernel, &env, "handoff", {1, 1, 1}, {64, 1, 1}, 264);
  for (int i = 0; i < 32; ++i)
    if (out[static_cast<std::size_t>(i)] != (31 - i) * 3)
      return wrong(name, "a value handed over through the mbarrier differs");
  return true;
}

//===--- Named barriers between warpgroups ---------------------------------===//

// Warpgroup 0 writes and arrives at named barrier 1 (bar.arrive, no wait);
// warpgroup 1 syncs on it (bar.sync) and reads: ordered by the barrier,
// with no block-wide barrier in between. `consumerCount` other than 256 is
// the negative variant.
struct NamedEnv {
  int32_t consumerCount;
  int32_t *out;
};

void namedBarrierKernel(void *p) {
  auto *env = static_cast<NamedEnv *>(p);
  int64_t t = linearThread();
  int32_t *data = shared<int32_t>(0);
  if (t < 128) {
    store(&data[t], static_cast<int32_t>(5 * t));
    ropeGpuEmuNamedBarrierArrive(1, 256);
    return;
  }
  ropeGpuEmuNamedBarrierSync(1, env->consumerCount);
  env->out[t - 128] = load(&data[255 - t]);
}

bool namedBarrier(const char *name, int32_t consumerCount) {
  std::vector<int32_t> out(128, -1);
  NamedEnv env{consumerCount, out.data()};
  launch(namedBarrierKernel, &env, "named_barrier", {1, 1, 1}, {256, 1, 1},
         512);
  for (int i = 0; i < 128; ++i)
    if (out[static_cast<std::size_t>(i)] != 5 * (127 - i))
      return wrong(name, "a value handed over through the named barrier "
                         "differs");
  return true;
}

//===--- Negative scenarios: one per checker -------------------------------===//

struct SmallTmaEnv {
  alignas(64) unsigned char map[128];
  int64_t expectBytes;
};
constexpr uint64_t kSmallDims[2] = {64, 64};
constexpr uint64_t kSmallStride[1] = {128};
constexpr uint32_t kSmallBox[2] = {64, 16}; // 2048 bytes of f16

// Thread 0 issues a TMA load of a 64 x 16 f16 box and the warp reads it at
// once, without waiting for the mbarrier.
void earlyReadKernel(void *p) {
  auto *env = static_cast<SmallTmaEnv *>(p);
  uint64_t *bar = shared<uint64_t>(4096);
  int64_t t = linearThread();
  if (t == 0)
    ropeGpuEmuMbarrierInit(bar, 1);
  ropeGpuEmuBarrier();
  if (t == 0) {
    int32_t at[2] = {0, 0};
    ropeGpuEmuMbarrierArriveExpectTx(bar, env->expectBytes);
    ropeGpuEmuTmaLoad(shared<void>(0), env->map, at, bar);
  }
  (void)load(shared<uint16_t>(2 * t));
  ropeGpuEmuMbarrierTryWaitParity(bar, 0);
}

// Thread 0 issues a TMA load and then writes into its destination.
void earlyWriteKernel(void *p) {
  auto *env = static_cast<SmallTmaEnv *>(p);
  uint64_t *bar = shared<uint64_t>(4096);
  if (linearThread() == 0) {
    int32_t at[2] = {0, 0};
    ropeGpuEmuMbarrierInit(bar, 1);
    ropeGpuEmuMbarrierArriveExpectTx(bar, env->expectBytes);
    ropeGpuEmuTmaLoad(shared<void>(0), env->map, at, bar);
    store(shared<uint16_t>(64), static_cast<uint16_t>(0));
  }
  ropeGpuEmuMbarrierTryWaitParity(bar, 0);
}

// expect_tx announces more bytes than the load brings; everyone waits.
void txIncompleteKernel(void *p) {
  auto *env = static_cast<SmallTmaEnv *>(p);
  uint64_t *bar = shared<uint64_t>(4096);
  int64_t t = linearThread();
  if (t == 0)
    ropeGpuEmuMbarrierInit(bar, 1);
  ropeGpuEmuBarrier();
  if (t == 0) {
    int32_t at[2] = {0, 0};
    ropeGpuEmuMbarrierArriveExpectTx(bar, env->expectBytes);
    ropeGpuEmuTmaLoad(shared<void>(0), env->map, at, bar);
  }
  ropeGpuEmuMbarrierTryWaitParity(bar, 0);
}

template <void (*Kernel)(void *)> bool smallTma(int64_t expectBytes) {
  std::vector<uint16_t> tensor(64 * 64, 0x3c00);
  SmallTmaEnv env;
  env.expectBytes = expectBytes;
  ropeGpuEmuTensorMapEncodeTiled(env.map, 2, 2, tensor.data(), kSmallDims,
                                 kSmallStride, kSmallBox, nullptr, 3, 0);
  launch(Kernel, &env, "negative", {1, 1, 1}, {32, 1, 1}, 4104);
  return true;
}

// A wgmma reads B from workgroup memory; a thread overwrites B before the
// wait.
void wgmmaOverwriteKernel(void *) {
  int t = static_cast<int>(linearThread());
  uint16_t *b = shared<uint16_t>(0);
  for (int e = t; e < 8 * 16; e += 128)
    store(&b[e], static_cast<uint16_t>(0x3c00));
  ropeGpuEmuBarrier();
  uint32_t aRegs[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
  float acc[4] = {0, 0, 0, 0};
  OperandLayout bLayout = operandLayout(false, 0, 0, 8);
  ropeGpuEmuWgmmaFence();
  ropeGpuEmuWgmma(0, 8, aRegs, 0, bLayout.descriptor(), 0, 0, 0, 1, 1, acc,
                  acc);
  ropeGpuEmuWgmmaCommit();
  if (t == 5)
    store(&b[20], static_cast<uint16_t>(0));
  ropeGpuEmuWgmmaWait(0);
}

// With mbarriers in use (clocks on), thread 40 writes a row of B after the
// block's barrier and nothing orders it before the wgmma, whose operands
// are read as thread 0's.
void wgmmaUnorderedKernel(void *) {
  int t = static_cast<int>(linearThread());
  uint16_t *b = shared<uint16_t>(0);
  if (t == 0)
    ropeGpuEmuMbarrierInit(shared<uint64_t>(4096), 1);
  for (int e = t; e < 8 * 16; e += 128)
    store(&b[e], static_cast<uint16_t>(0x3c00));
  ropeGpuEmuBarrier();
  if (t == 40)
    store(&b[3], static_cast<uint16_t>(0x4000));
  uint32_t aRegs[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
  float acc[4] = {0, 0, 0, 0};
  OperandLayout bLayout = operandLayout(false, 0, 0, 8);
  ropeGpuEmuWgmmaFence();
  ropeGpuEmuWgmma(0, 8, aRegs, 0, bLayout.descriptor(), 0, 0, 0, 1, 1, acc,
                  acc);
  ropeGpuEmuWgmmaCommit();
  ropeGpuEmuWgmmaWait(0);
}

// Warp 0 waits for barrier A, which warp 1 arrives at only after barrier
// B, at which warp 0 would arrive after A.
void deadlockKernel(void *) {
  int64_t t = linearThread();
  uint64_t *a = shared<uint64_t>(0), *b = shared<uint64_t>(8);
  if (t == 0) {
    ropeGpuEmuMbarrierInit(a, 1);
    ropeGpuEmuMbarrierInit(b, 1);
  }
  ropeGpuEmuBarrier();
  uint64_t *first = t < 32 ? a : b, *second = t < 32 ? b : a;
  ropeGpuEmuMbarrierTryWaitParity(first, 0);
  if (t % 32 == 0)
    ropeGpuEmuMbarrierArrive(second, 1);
}

// Warpgroup 0 asks for more registers than the block has; warpgroup 1
// keeps its own.
void registerBudgetKernel(void *) {
  if (linearThread() < 128)
    ropeGpuEmuSetMaxNReg(256, 1);
}

void uninitialisedMbarrierKernel(void *) {
  ropeGpuEmuMbarrierTryWaitParity(shared<uint64_t>(8), 0);
}

// A TMA store's source is rewritten before cp.async.bulk.wait_group.read.
void storeOverwriteKernel(void *p) {
  auto *env = static_cast<SmallTmaEnv *>(p);
  int64_t t = linearThread();
  uint16_t *box = shared<uint16_t>(0);
  for (int64_t e = t; e < 64 * 16; e += 32)
    store(&box[e], static_cast<uint16_t>(e));
  ropeGpuEmuFenceProxyAsync();
  ropeGpuEmuBarrier();
  if (t == 0) {
    int32_t at[2] = {0, 8};
    ropeGpuEmuTmaStore(env->map, at, box);
    ropeGpuEmuBulkCommit();
    store(&box[7], static_cast<uint16_t>(1));
    ropeGpuEmuBulkWaitRead(0);
  }
}

// Thread 0 issues a TMA load and the block ends without waiting for it.
void loadInFlightKernel(void *p) {
  auto *env = static_cast<SmallTmaEnv *>(p);
  uint64_t *bar = shared<uint64_t>(4096);
  if (linearThread() == 0) {
    int32_t at[2] = {0, 0};
    ropeGpuEmuMbarrierInit(bar, 1);
    ropeGpuEmuMbarrierArriveExpectTx(bar, env->expectBytes);
    ropeGpuEmuTmaLoad(shared<void>(0), env->map, at, bar);
  }
}

// Half of a warpgroup waits for its wgmma groups, the other half returns.
void divergentWaitKernel(void *) {
  if (linearThread() < 64)
    ropeGpuEmuWgmmaWait(0);
}

template <void (*Kernel)(void *), int64_t Threads, int64_t Shared,
          int32_t Registers = 0>
bool negative() {
  if (Registers)
    ropeGpuEmuLaunchRegisters(Registers);
  launch(Kernel, nullptr, "negative", {1, 1, 1}, {Threads, 1, 1}, Shared);
  return true;
}

const Scenario kScenarios[] = {
    {"wgmma-layouts", wgmmaLayouts},
    {"tma-box", [] { return tmaBox("tma-box", false); }},
    {"tma-box-nan", [] { return tmaBox("tma-box-nan", true); }},
    {"warp-specialized", [] { return pipeline("warp-specialized", false); }},
    {"mbarrier-handoff", [] { return handoff("mbarrier-handoff", true); }},
    {"named-barrier", [] { return namedBarrier("named-barrier", 256); }},
    // Negative: each must end with the emulator's error (exit 1).
    {"mbarrier-no-wait", [] { return handoff("mbarrier-no-wait", false); }},
    {"named-barrier-count",
     [] { return namedBarrier("named-barrier-count", 128); }},
    {"ring-overwrite", [] { return pipeline("ring-overwrite", true); }},
    {"read-before-phase", [] { return smallTma<earlyReadKernel>(2048); }},
    {"write-before-phase", [] { return smallTma<earlyWriteKernel>(2048); }},
    {"tx-never-completes", [] { return smallTma<txIncompleteKernel>(4096); }},
    {"load-in-flight-at-exit",
     [] { return smallTma<loadInFlightKernel>(2048); }},
    {"divergent-wgmma-wait", negative<divergentWaitKernel, 128, 0>},
    {"wgmma-overwrite", negative<wgmmaOverwriteKernel, 128, 4096>},
    {"wgmma-unordered-operand", negative<wgmmaUnorderedKernel, 128, 4104>},
    {"deadlock", negative<deadlockKernel, 64, 16>},
    {"register-budget", negative<registerBudgetKernel, 256, 0, 128>},
    {"uninitialised-mbarrier", negative<uninitialisedMbarrierKernel, 32, 16>},
    {"store-overwrite",
     [] {
       std::vector<uint16_t> tensor(64 * 64);
       SmallTmaEnv env;
       ropeGpuEmuTensorMapEncodeTiled(env.map, 2, 2, tensor.data(), kSmallDims,
                                      kSmallStride, kSmallBox, nullptr, 3, 0);
       launch(storeOverwriteKernel, &env, "negative", {1, 1, 1}, {32, 1, 1},
              2048);
       return true;
     }},
};

} // namespace

int main(int argc, char **argv) {
  return runScenario(argc, argv, kScenarios, "rope-gpu-emulator-hopper-test");
}
