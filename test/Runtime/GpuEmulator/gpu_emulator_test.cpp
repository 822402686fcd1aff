//===- gpu_emulator_test.cpp - kernels run by libRopeGpuEmulator ----------===//
//
// rope-gpu-emulator-test SCENARIO: runs one hand-written kernel through
// ropeGpuEmuLaunch, checks its result against a reference computed on the
// host, prints "SCENARIO: ok" (exit 0) or "SCENARIO: wrong data ..." (exit
// 1). A checker error of the emulator is printed to stdout and exits 1
// (the negative scenarios, whose messages the lit tests check). Kernels
// touch workgroup memory only through load()/store(), which call
// ropeGpuEmuSharedAccess first, as generated code does.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestKernels.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

//===--- block-reduction, missing-barrier ---------------------------------===//

struct ReductionEnv {
  const int64_t *in;
  int64_t *out;
  bool barriers;
};

void reductionKernel(void *p) {
  auto *env = static_cast<ReductionEnv *>(p);
  int64_t n = ropeGpuEmuBlockDim(0) * ropeGpuEmuBlockDim(1) *
              ropeGpuEmuBlockDim(2);
  int64_t t = linearThread(), block = linearBlock();
  int64_t *partial = shared<int64_t>(0);
  store(&partial[t], env->in[block * n + t]);
  ropeGpuEmuBarrier();
  for (int64_t stride = n / 2; stride > 0; stride /= 2) {
    if (t < stride)
      store(&partial[t], load(&partial[t]) + load(&partial[t + stride]));
    if (env->barriers)
      ropeGpuEmuBarrier();
  }
  if (t == 0)
    env->out[block] = load(&partial[0]);
}

bool runReduction(const char *scenario, bool barriers) {
  const int64_t blocks = 4, threads = 256;
  std::vector<int64_t> in(blocks * threads), out(blocks, -1);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<int64_t>(i * 7919 % 1000) - 300;
  ReductionEnv env{in.data(), out.data(), barriers};
  launch(reductionKernel, &env, scenario, {blocks, 1, 1}, {16, 8, 2},
         threads * 8);
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t expected = 0;
    for (int64_t i = 0; i < threads; ++i)
      expected += in[b * threads + i];
    if (out[b] != expected)
      return wrong(scenario, "block sums differ");
  }
  return true;
}

bool blockReduction() { return runReduction("block_reduction", true); }
bool missingBarrier() { return runReduction("missing_barrier", false); }

//===--- transpose-shared -------------------------------------------------===//

struct TransposeEnv {
  const float *in;
  float *out;
  int64_t rows, cols;
};

void transposeKernel(void *p) {
  auto *env = static_cast<TransposeEnv *>(p);
  int64_t tx = ropeGpuEmuThreadId(0), ty = ropeGpuEmuThreadId(1);
  int64_t bx = ropeGpuEmuBlockId(0), by = ropeGpuEmuBlockId(1);
  float *tile = shared<float>(0); // 32 x 33 (padded like a GPU kernel)
  for (int64_t j = 0; j < 32; j += 8)
    store(&tile[(ty + j) * 33 + tx],
          env->in[(by * 32 + ty + j) * env->cols + bx * 32 + tx]);
  ropeGpuEmuBarrier();
  for (int64_t j = 0; j < 32; j += 8)
    env->out[(bx * 32 + ty + j) * env->rows + by * 32 + tx] =
        load(&tile[tx * 33 + ty + j]);
}

bool transposeShared() {
  const int64_t rows = 64, cols = 96;
  std::vector<float> in(rows * cols), out(rows * cols, -1.0f);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(i) * 0.5f;
  TransposeEnv env{in.data(), out.data(), rows, cols};
  launch(transposeKernel, &env, "transpose", {cols / 32, rows / 32, 1},
         {32, 8, 1}, 32 * 33 * 4);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (out[c * rows + r] != in[r * cols + c])
        return wrong("transpose-shared", "element differs");
  return true;
}

//===--- shuffles ---------------------------------------------------------===//

struct ShuffleEnv {
  int32_t mode, width;
  int32_t *out;
  int8_t *valid;
};

int32_t shuffleOffset(int32_t mode, int32_t lane, int32_t width) {
  if (mode == 3) // idx: per-lane sources, some outside [0, width)
    return (lane * 3 + 1) % (width + 2);
  return mode == 0 ? (width == 32 ? 21 : 5) : 3;
}

void shuffleKernel(void *p) {
  auto *env = static_cast<ShuffleEnv *>(p);
  int64_t t = linearThread();
  int32_t lane = static_cast<int32_t>(ropeGpuEmuLaneId());
  int32_t value = 1000 * static_cast<int32_t>(t / 32) + 7 * lane + 3;
  int8_t valid = -1;
  env->out[t] = ropeGpuEmuShuffle(
      value, shuffleOffset(env->mode, lane, env->width), env->width, env->mode,
      &valid);
  env->valid[t] = valid;
}

/// A butterfly sum over the first 16 lanes of each warp in a block of 48
/// threads (its second warp is a partial warp of 16 lanes); lanes from 16
/// on get invalid results and keep their value.
void partialWarpSumKernel(void *p) {
  auto *out = static_cast<int32_t *>(p);
  int64_t t = linearThread();
  int32_t sum = static_cast<int32_t>(t);
  for (int32_t offset = 8; offset > 0; offset /= 2) {
    int8_t valid = 0;
    int32_t other = ropeGpuEmuShuffle(sum, offset, 16, 0, &valid);
    sum += valid ? other : 0;
  }
  out[t] = sum;
}

bool checkShuffle(const char *scenario, int32_t mode, int32_t width) {
  std::vector<int32_t> out(64);
  std::vector<int8_t> valid(64);
  ShuffleEnv env{mode, width, out.data(), valid.data()};
  launch(shuffleKernel, &env, scenario, {1, 1, 1}, {64, 1, 1}, 0);
  for (int32_t t = 0; t < 64; ++t) {
    // GPU_ShuffleOp: lanes from `width` on, and sources outside [0, width),
    // are invalid.
    int32_t lane = t % 32, offset = shuffleOffset(mode, lane, width);
    int32_t source = mode == 0   ? lane ^ offset
                     : mode == 1 ? lane + offset
                     : mode == 2 ? lane - offset
                                 : offset;
    bool ok = lane < width && source >= 0 && source < width;
    int32_t from = ok ? source : lane;
    if (valid[t] != ok || out[t] != 1000 * (t / 32) + 7 * from + 3)
      return wrong(scenario, "lane result or validity differs");
  }
  return true;
}

bool shuffleScenario(const char *scenario, int32_t mode) {
  if (!checkShuffle(scenario, mode, 32) || !checkShuffle(scenario, mode, 8))
    return false;
  if (mode != 0)
    return true;
  std::vector<int32_t> sums(48);
  launch(partialWarpSumKernel, sums.data(), "partial_warp_sum", {1, 1, 1},
         {48, 1, 1}, 0);
  for (int32_t t = 0; t < 48; ++t) {
    int32_t warpStart = t / 32 * 32;
    int32_t expected = t % 32 < 16 ? 16 * warpStart + 120 : t;
    if (sums[t] != expected)
      return wrong(scenario, "partial-warp sum differs");
  }
  return true;
}

//===--- mma.sync, ldmatrix -----------------------------------------------===//
// The fragment layouts below are written from the PTX ISA's figures
// independently of the emulator's; mma-f16/bf16 also load the fragments
// with ldmatrix the way CUTLASS-style kernels do (A: x4, B: x2.trans).

double halfValue(uint16_t h) {
  int exponent = (h >> 10) & 31, mantissa = h & 1023;
  double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                                   : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}
double bf16Value(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}
double tf32Value(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits &= 0xffffe000u;
  std::memcpy(&f, &bits, 4);
  return f;
}

struct MmaEnv {
  int32_t shape;         // 0 f16, 1 bf16, 2 tf32
  const uint16_t *a16;   // [16][16], or
  const float *a32;      // [16][8]
  const uint16_t *b16;   // [16][8] (k, n), or
  const float *b32;      // [8][8]
  const float *c;        // [16][8]
  float *d;              // [16][8]
  float *dLdmatrix;      // [16][8] (f16/bf16: through ldmatrix)
  int swapLane;          // a lane whose a0 and a1 are swapped, or -1
};

void gatherFragments(const MmaEnv &env, int lane, uint16_t a16[8],
                     uint16_t b16[4], float a32[4], float b32[2], float c[4]) {
  int g = lane / 4, t = lane % 4;
  for (int i = 0; i < 8 && env.shape != 2; ++i) {
    int row = (i % 4 < 2) ? g : g + 8, col = 2 * t + (i % 2) + (i >= 4 ? 8 : 0);
    a16[i] = env.a16[row * 16 + col];
  }
  for (int i = 0; i < 4 && env.shape != 2; ++i)
    b16[i] = env.b16[(2 * t + (i % 2) + (i >= 2 ? 8 : 0)) * 8 + g];
  for (int i = 0; i < 4 && env.shape == 2; ++i)
    a32[i] = env.a32[((i == 0 || i == 2) ? g : g + 8) * 8 + (i < 2 ? t : t + 4)];
  for (int i = 0; i < 2 && env.shape == 2; ++i)
    b32[i] = env.b32[(i == 0 ? t : t + 4) * 8 + g];
  for (int i = 0; i < 4; ++i)
    c[i] = env.c[(i < 2 ? g : g + 8) * 8 + 2 * t + (i % 2)];
}

void scatterD(const float d[4], int lane, float *out) {
  int g = lane / 4, t = lane % 4;
  for (int i = 0; i < 4; ++i)
    out[(i < 2 ? g : g + 8) * 8 + 2 * t + (i % 2)] = d[i];
}

/// A and B into workgroup memory, then fragments through ldmatrix.
void mmaThroughLdmatrix(const MmaEnv &env, int lane, const float c[4]) {
  uint16_t *a = shared<uint16_t>(0), *b = shared<uint16_t>(512);
  for (int i = 0; i < 8; ++i)
    store(&a[lane * 8 + i], env.a16[lane * 8 + i]);
  for (int i = 0; i < 4; ++i)
    store(&b[lane * 4 + i], env.b16[lane * 4 + i]);
  ropeGpuEmuBarrier();
  int matrix = lane / 8, row = lane % 8 + 8 * (matrix % 2);
  uint32_t aFragment[4], bFragment[2];
  ropeGpuEmuLdmatrix(&a[row * 16 + 8 * (matrix / 2)], 4, 0, aFragment);
  ropeGpuEmuLdmatrix(lane < 16 ? &b[lane * 8] : nullptr, 2, 1, bFragment);
  float d[4];
  ropeGpuEmuMmaSync(env.shape, aFragment, bFragment, c, d);
  scatterD(d, lane, env.dLdmatrix);
}

void mmaKernel(void *p) {
  const MmaEnv &env = *static_cast<MmaEnv *>(p);
  int lane = static_cast<int>(ropeGpuEmuLaneId());
  uint16_t a16[8] = {}, b16[4] = {};
  float a32[4] = {}, b32[2] = {}, c[4], d[4];
  gatherFragments(env, lane, a16, b16, a32, b32, c);
  if (lane == env.swapLane)
    std::swap(a16[0], a16[1]);
  if (env.shape == 2)
    ropeGpuEmuMmaSync(2, a32, b32, c, d);
  else
    ropeGpuEmuMmaSync(env.shape, a16, b16, c, d);
  scatterD(d, lane, env.d);
  if (env.shape != 2)
    mmaThroughLdmatrix(env, lane, c);
}

/// Random inputs of the shape's type (values of magnitude 2^-8 to 2^5).
struct MmaInputs {
  std::vector<uint16_t> a16, b16;
  std::vector<float> a32, b32, c;
  std::vector<double> a, b; // [m][k], [k][n] as the tensor core reads them
};

MmaInputs randomMmaInputs(int32_t shape, std::mt19937 &random) {
  MmaInputs in;
  int k = shape == 2 ? 8 : 16;
  auto bits16 = [&](double &value) {
    uint32_t r = random(), exponent = r % 13; // 2^-8 .. 2^4
    uint16_t sign = (r >> 8 & 1) << 15;
    uint16_t h = shape == 0 ? sign | (exponent + 7) << 10 | (r >> 9 & 1023)
                            : sign | (exponent + 119) << 7 | (r >> 9 & 127);
    value = shape == 0 ? halfValue(h) : bf16Value(h);
    return h;
  };
  auto tf32 = [&](double &value) {
    uint32_t r = random(), bits = (r & 1) << 31 | ((r >> 1) % 13 + 119) << 23 |
                                  (random() & 0x7fffff);
    float f;
    std::memcpy(&f, &bits, 4);
    value = tf32Value(f);
    return f;
  };
  in.a.resize(16 * k);
  in.b.resize(k * 8);
  for (int i = 0; i < 16 * k; ++i)
    shape == 2 ? in.a32.push_back(tf32(in.a[i])) : in.a16.push_back(bits16(in.a[i]));
  for (int i = 0; i < k * 8; ++i)
    shape == 2 ? in.b32.push_back(tf32(in.b[i])) : in.b16.push_back(bits16(in.b[i]));
  for (int i = 0; i < 16 * 8; ++i)
    in.c.push_back(static_cast<float>(static_cast<int32_t>(random() % 2001) - 1000) / 64.0f);
  return in;
}

/// D against an f64 reference, element by element: the emulator adds in
/// f32, so it may differ by K + 1 roundings of the sum of magnitudes.
bool checkMma(const char *scenario, const MmaInputs &in, int k,
              const std::vector<float> &d) {
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      double exact = in.c[m * 8 + n], magnitude = std::fabs(exact);
      for (int i = 0; i < k; ++i) {
        exact += in.a[m * k + i] * in.b[i * 8 + n];
        magnitude += std::fabs(in.a[m * k + i] * in.b[i * 8 + n]);
      }
      double tolerance = (k + 1) * magnitude * std::ldexp(1.0, -24);
      if (!(std::fabs(d[m * 8 + n] - exact) <= tolerance)) {
        std::printf("%s: wrong result: D[%d][%d] = %.9g, expected %.9g\n",
                    scenario, m, n, d[m * 8 + n], exact);
        return false;
      }
    }
  }
  return true;
}

bool mmaScenario(const char *scenario, int32_t shape, int swapLane) {
  std::mt19937 random(1234 + shape);
  MmaInputs in = randomMmaInputs(shape, random);
  std::vector<float> d(128, NAN), dLdmatrix(128, NAN);
  MmaEnv env{shape,           in.a16.data(), in.a32.data(), in.b16.data(),
             in.b32.data(),   in.c.data(),   d.data(),      dLdmatrix.data(),
             swapLane};
  launch(mmaKernel, &env, scenario, {1, 1, 1}, {32, 1, 1}, 768);
  int k = shape == 2 ? 8 : 16;
  return checkMma(scenario, in, k, d) &&
         (shape == 2 || swapLane >= 0 || checkMma(scenario, in, k, dLdmatrix));
}

struct LdmatrixEnv {
  int32_t transpose;
  uint32_t *out; // [lane][variant x1, x2, x4][4]
};

uint16_t matrixValue(int m, int r, int c) {
  return static_cast<uint16_t>(m * 1000 + r * 10 + c);
}

void ldmatrixKernel(void *p) {
  auto *env = static_cast<LdmatrixEnv *>(p);
  int lane = static_cast<int>(ropeGpuEmuLaneId());
  // Row r of matrix m at byte offset (8 m + r) * 48: rows need not be
  // contiguous, only 16-byte aligned.
  uint16_t *row = shared<uint16_t>(lane * 48);
  for (int c = 0; c < 8; ++c)
    store(&row[c], matrixValue(lane / 8, lane % 8, c));
  ropeGpuEmuBarrier();
  const int counts[3] = {1, 2, 4};
  for (int variant = 0; variant < 3; ++variant) {
    const void *address = lane < 8 * counts[variant] ? row : nullptr;
    ropeGpuEmuLdmatrix(address, counts[variant], env->transpose,
                       &env->out[(lane * 3 + variant) * 4]);
  }
}

bool ldmatrixScenario(const char *scenario, int32_t transpose) {
  std::vector<uint32_t> out(32 * 3 * 4, 0xdeadbeef);
  LdmatrixEnv env{transpose, out.data()};
  launch(ldmatrixKernel, &env, scenario, {1, 1, 1}, {32, 1, 1}, 32 * 48);
  const int counts[3] = {1, 2, 4};
  for (int lane = 0; lane < 32; ++lane) {
    for (int variant = 0; variant < 3; ++variant) {
      for (int m = 0; m < 4; ++m) {
        // Lane l holds row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 (low
        // half first); transposed: that column, those rows.
        int fixed = lane / 4, first = 2 * (lane % 4);
        uint32_t low = transpose ? matrixValue(m, first, fixed)
                                 : matrixValue(m, fixed, first);
        uint32_t high = transpose ? matrixValue(m, first + 1, fixed)
                                  : matrixValue(m, fixed, first + 1);
        uint32_t expected = m < counts[variant] ? low | high << 16 : 0xdeadbeef;
        if (out[(lane * 3 + variant) * 4 + m] != expected)
          return wrong(scenario, "a lane's register differs");
      }
    }
  }
  return true;
}


//===--- cp.async ---------------------------------------------------------===//

struct CopyEnv {
  const float *in; // tiles x 256 floats
  float *out;      // tiles x 64
  int64_t tiles;
  bool waits, zeroFirst;
};

/// Each of 64 threads copies 16 bytes of a tile into one of two buffers
/// while the block sums the previous tile (each thread the 16 bytes that
/// thread 63 - t copied, so the barrier matters).
void doubleBufferKernel(void *p) {
  auto *env = static_cast<CopyEnv *>(p);
  int64_t t = linearThread();
  float *buffers = shared<float>(0); // 2 x 256 floats
  auto issue = [&](int64_t tile) {
    ropeGpuEmuAsyncCopy(&buffers[tile % 2 * 256 + t * 4],
                        &env->in[tile * 256 + t * 4], 16);
    ropeGpuEmuAsyncCommit();
  };
  if (env->zeroFirst) {
    for (int i = 0; i < 8; ++i)
      store(&buffers[i / 4 * 256 + t * 4 + i % 4], 0.0f);
    ropeGpuEmuBarrier();
  }
  issue(0);
  for (int64_t tile = 0; tile < env->tiles; ++tile) {
    if (tile + 1 < env->tiles)
      issue(tile + 1);
    if (env->waits)
      ropeGpuEmuAsyncWait(tile + 1 < env->tiles ? 1 : 0);
    ropeGpuEmuBarrier();
    const float *theirs = &buffers[tile % 2 * 256 + (63 - t) * 4];
    float sum = 0;
    for (int i = 0; i < 4; ++i)
      sum += load(&theirs[i]);
    env->out[tile * 64 + t] = sum;
    ropeGpuEmuBarrier();
  }
}

bool doubleBuffer(const char *scenario, bool waits, bool zeroFirst) {
  const int64_t tiles = 6;
  std::vector<float> in(tiles * 256), out(tiles * 64, -1.0f);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(i % 97) + 1.0f;
  CopyEnv env{in.data(), out.data(), tiles, waits, zeroFirst};
  launch(doubleBufferKernel, &env, scenario, {1, 1, 1}, {64, 1, 1}, 2048);
  for (int64_t tile = 0; tile < tiles; ++tile) {
    for (int64_t t = 0; t < 64; ++t) {
      const float *theirs = &in[tile * 256 + (63 - t) * 4];
      if (out[tile * 64 + t] != theirs[0] + theirs[1] + theirs[2] + theirs[3])
        return wrong(scenario, "a tile's sum differs");
    }
  }
  return true;
}

bool isNanPattern(const uint32_t *words, int count) {
  for (int i = 0; i < count; ++i)
    if (words[i] != 0x7fa00000u) // read behind the checkers' back
      return false;
  return true;
}

/// cp.async.wait_group semantics: uncommitted copies are not waited for,
/// wait(N) leaves the newest N committed groups (empty ones count).
void groupsKernel(void *p) {
  auto *status = static_cast<int32_t *>(p);
  int64_t t = linearThread();
  static const uint32_t source[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  uint32_t *s = shared<uint32_t>(t * 48);
  ropeGpuEmuAsyncCopy(&s[0], &source[0], 16); // group 0, not committed
  ropeGpuEmuAsyncWait(0);
  bool ok = isNanPattern(s, 4);
  ropeGpuEmuAsyncCommit();
  ropeGpuEmuAsyncCopy(&s[4], &source[4], 8);           // group 1
  ropeGpuEmuAsyncCopyPartial(&s[6], &source[6], 8, 4); // group 1, zero-fill
  ropeGpuEmuAsyncCommit();
  ropeGpuEmuAsyncCommit(); // group 2: empty
  ropeGpuEmuAsyncCopy(&s[8], &source[8], 4); // group 3
  ropeGpuEmuAsyncCommit();
  ropeGpuEmuAsyncWait(2); // completes groups 0 and 1
  for (int i = 0; i < 7; ++i)
    ok = ok && load(&s[i]) == source[i];
  ok = ok && load(&s[7]) == 0 && isNanPattern(&s[8], 1);
  ropeGpuEmuAsyncWait(0);
  ok = ok && load(&s[8]) == source[8];
  status[t] = ok;
}

bool cpAsyncGroups() {
  std::vector<int32_t> status(64, 0);
  launch(groupsKernel, status.data(), "cp_async_groups", {1, 1, 1},
         {64, 1, 1}, 64 * 48);
  for (int32_t s : status)
    if (!s)
      return wrong("cp-async-groups", "a wait completed the wrong copies");
  return true;
}

//===--- A grid on several host threads -----------------------------------===//

struct GridRecord {
  int64_t neighbour, lane, ids;
};

void gridKernel(void *p) {
  auto *out = static_cast<GridRecord *>(p);
  int64_t n = 24, t = linearThread(), block = linearBlock();
  int64_t *s = shared<int64_t>(0);
  store(&s[t], block * 1000 + t);
  ropeGpuEmuBarrier();
  GridRecord &record = out[block * n + t];
  record.neighbour = load(&s[(t + 1) % n]);
  record.lane = ropeGpuEmuLaneId();
  record.ids = ropeGpuEmuThreadId(0) + 10 * ropeGpuEmuThreadId(1) +
               100 * ropeGpuEmuThreadId(2) + 1000 * ropeGpuEmuBlockId(0) +
               10000 * ropeGpuEmuBlockId(1) + 100000 * ropeGpuEmuBlockId(2) +
               1000000 * (ropeGpuEmuBlockDim(2) + 10 * ropeGpuEmuGridDim(1));
}

bool gridParallel() {
  std::vector<GridRecord> out(30 * 24, GridRecord{-1, -1, -1});
  launch(gridKernel, out.data(), "grid", {5, 3, 2}, {4, 2, 3}, 24 * 8);
  for (int64_t block = 0; block < 30; ++block) {
    for (int64_t t = 0; t < 24; ++t) {
      const GridRecord &r = out[block * 24 + t];
      int64_t ids = t % 4 + 10 * (t / 4 % 2) + 100 * (t / 8) +
                    1000 * (block % 5) + 10000 * (block / 5 % 3) +
                    100000 * (block / 15) + 1000000 * (3 + 10 * 3);
      if (r.neighbour != block * 1000 + (t + 1) % 24 || r.lane != t ||
          r.ids != ids)
        return wrong("grid-parallel", "a thread's record differs");
    }
  }
  return true;
}

//===--- Negative scenarios (the emulator must report them) ---------------===//

void sharedOobKernel(void *) {
  int64_t t = linearThread(); // the buffer holds 31 of the 32 ints
  store(&shared<int32_t>(0)[t], static_cast<int32_t>(t));
}

void divergentBarrierKernel(void *) {
  if (linearThread() < 32)
    ropeGpuEmuBarrier();
}

void divergentSiteKernel(void *) {
  ropeGpuEmuBarrierSite(linearThread() < 32 ? 1 : 2);
}

void uninitialisedKernel(void *) {
  int64_t t = linearThread();
  int32_t *s = shared<int32_t>(0);
  if (t != 5)
    store(&s[t], 1);
  ropeGpuEmuBarrier();
  load(&s[(t + 1) % 32]);
}

void globalOobKernel(void *) {
  if (ropeGpuEmuBlockId(0) == 1 && linearThread() == 7)
    ropeGpuEmuOutOfBounds(1, 0, 16, 16);
}

void divergentShuffleKernel(void *) {
  if (ropeGpuEmuLaneId() < 16)
    ropeGpuEmuShuffle(1, 1, 32, 0, nullptr);
}

void shuffleModeKernel(void *) {
  ropeGpuEmuShuffle(1, 1, 32, ropeGpuEmuLaneId() % 2 ? 1 : 0, nullptr);
}

/// Width 32 in a block of 48 threads: its second warp has 16 lanes.
void wideShuffleKernel(void *) { ropeGpuEmuShuffle(1, 1, 32, 0, nullptr); }

void partialWarpMmaKernel(void *) {
  uint16_t a[8] = {}, b[4] = {};
  float c[4] = {}, d[4];
  ropeGpuEmuMmaSync(0, a, b, c, d);
}

void kernelErrorKernel(void *) {
  if (linearThread() == 3) {
    int64_t values[2] = {9, 8};
    ropeGpuEmuKernelError("index {0} is not below {1}", 2, values);
  }
}

/// Every block reads workgroup memory no thread wrote: whichever host
/// thread fails first stops the others.
void parallelErrorKernel(void *) {
  if (linearThread() == 0)
    load(shared<float>(4));
}

template <RopeGpuEmuKernel kernel, int64_t blocks, int64_t threads,
          int64_t sharedBytes>
bool negative() {
  launch(kernel, nullptr, "negative", {blocks, 1, 1}, {threads, 1, 1},
         sharedBytes);
  return true; // the emulator should not have returned
}

void failingLaunch() {
  launch(divergentBarrierKernel, nullptr, "failing", {1, 1, 1}, {64, 1, 1},
         0);
}

/// A failed launch inside ropeRuntimeCall returns its message there, and
/// the emulator works afterwards.
bool errorRecovery() {
  char message[512] = "";
  int status = ropeRuntimeCall(reinterpret_cast<void *>(&failingLaunch), 0,
                               nullptr, message, sizeof(message));
  if (status != 1 || !std::strstr(message, "divergent barrier"))
    return wrong("error-recovery", "no error from ropeRuntimeCall");
  std::printf("%s\n", message);
  return blockReduction();
}

//===--- Speed ------------------------------------------------------------===//

void barrierBenchmarkKernel(void *) {
  for (int i = 0; i < 100; ++i)
    ropeGpuEmuBarrier();
}

bool barrierBenchmark() {
  const int repeats = 10;
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    launch(barrierBenchmarkKernel, nullptr, "barrier_benchmark", {1, 1, 1},
           {1024, 1, 1}, 0);
    std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
  }
  // Each fiber is resumed 101 times (after each barrier and at its start)
  // and leaves 101 times: 2 switches per resumption.
  double switches = 2.0 * 1024 * 101;
  std::printf("barrier-benchmark: 1024 threads x 100 barriers: %.2f ms per "
              "launch (best of %d), %.3g context switches/s\n",
              best * 1e3, repeats, switches / best);
  return true;
}

const Scenario kScenarios[] = {
    {"block-reduction", blockReduction},
    {"transpose-shared", transposeShared},
    {"shuffle-xor", [] { return shuffleScenario("shuffle-xor", 0); }},
    {"shuffle-down", [] { return shuffleScenario("shuffle-down", 1); }},
    {"shuffle-up", [] { return shuffleScenario("shuffle-up", 2); }},
    {"shuffle-idx", [] { return shuffleScenario("shuffle-idx", 3); }},
    {"mma-f16", [] { return mmaScenario("mma-f16", 0, -1); }},
    {"mma-bf16", [] { return mmaScenario("mma-bf16", 1, -1); }},
    {"mma-tf32", [] { return mmaScenario("mma-tf32", 2, -1); }},
    {"ldmatrix", [] { return ldmatrixScenario("ldmatrix", 0); }},
    {"ldmatrix-trans", [] { return ldmatrixScenario("ldmatrix-trans", 1); }},
    {"cp-async-double-buffer",
     [] { return doubleBuffer("cp-async-double-buffer", true, false); }},
    {"cp-async-groups", cpAsyncGroups},
    {"grid-parallel", gridParallel},
    {"error-recovery", errorRecovery},
    {"barrier-benchmark", barrierBenchmark},
    // Negative: each must end with the emulator's error (exit 1).
    {"missing-barrier", missingBarrier},
    {"missing-wait", [] { return doubleBuffer("missing_wait", false, false); }},
    {"missing-wait-stale",
     [] { return doubleBuffer("missing-wait-stale", false, true); }},
    {"mma-wrong-fragment",
     [] { return mmaScenario("mma-wrong-fragment", 0, 5); }},
    {"shared-oob", negative<sharedOobKernel, 1, 32, 31 * 4>},
    {"divergent-barrier", negative<divergentBarrierKernel, 1, 64, 0>},
    {"divergent-barrier-site", negative<divergentSiteKernel, 1, 64, 0>},
    {"uninitialised-read", negative<uninitialisedKernel, 1, 32, 128>},
    {"global-oob", negative<globalOobKernel, 2, 32, 0>},
    {"divergent-shuffle", negative<divergentShuffleKernel, 1, 32, 0>},
    {"divergent-shuffle-mode", negative<shuffleModeKernel, 1, 32, 0>},
    {"shuffle-partial-warp", negative<wideShuffleKernel, 1, 48, 0>},
    {"mma-partial-warp", negative<partialWarpMmaKernel, 1, 48, 0>},
    {"kernel-error", negative<kernelErrorKernel, 1, 32, 0>},
    {"parallel-error", negative<parallelErrorKernel, 64, 64, 64>},
};

} // namespace

int main(int argc, char **argv) {
  return runScenario(argc, argv, kScenarios, "rope-gpu-emulator-test");
}
