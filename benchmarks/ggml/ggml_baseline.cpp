// ggml_baseline: times ggml's CPU ROPE and FLASH_ATTN_EXT on the shapes of
// benchmarks/run.py, so that `make bench` puts llama.cpp's kernels beside
// ours in the same run, on the same machine and number of threads.
//
//   ggml_baseline THREADS rope LAYOUT S HQ HKV D
//       ROPE of Q [S, HQ, D] and K [S, HKV, D] (f32, ggml's token-major
//       layout), LAYOUT "half" (GGML_ROPE_TYPE_NEOX, Hugging Face's
//       rotate_half) or "interleaved" (mode 0, adjacent pairs)
//   ggml_baseline THREADS attention DTYPE HQ HKV SQ SK D CAUSAL
//       FLASH_ATTN_EXT of Q [SQ, HQ, D] (f32) against K and V [SK, HKV, D]
//       stored as DTYPE (f32 or f16), with a causal mask when CAUSAL is 1
//       (queries at the last SQ positions) and none otherwise; ROPE of Q
//       and K before it when SQ > 1 (prefill: llama.cpp rotates both; in
//       decode, the cache holds rotated keys and one query row is rotated)
//
// Prints the best of several timed graph computations, in seconds. Every
// tensor, the results included, is allocated once before the timing, as
// llama.cpp does: the graph writes into preallocated destinations.

#include <ggml-alloc.h>
#include <ggml-backend.h>
#include <ggml-cpu.h>
#include <ggml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: ggml_baseline THREADS rope half|interleaved S HQ HKV D\n"
               "       ggml_baseline THREADS attention f32|f16 HQ HKV SQ SK D "
               "CAUSAL\n");
  std::exit(2);
}

int64_t parse(const char *text) {
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (!*text || *end || value < 0)
    usage();
  return value;
}

/// A graph on the CPU backend with every tensor of its context allocated.
class TimedGraph {
public:
  explicit TimedGraph(int threads) {
    ggml_init_params params = {ggml_tensor_overhead() * 64 +
                                   ggml_graph_overhead(),
                               nullptr, /*no_alloc=*/true};
    ctx = ggml_init(params);
    backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, threads);
    graph = ggml_new_graph(ctx);
  }
  ~TimedGraph() {
    if (buffer)
      ggml_backend_buffer_free(buffer);
    ggml_backend_free(backend);
    ggml_free(ctx);
  }

  /// Allocates every tensor and fills the inputs: random normal floats,
  /// positions 0..n-1, masks by `fillMask`.
  template <typename MaskFn> void allocate(MaskFn fillMask) {
    buffer = ggml_backend_alloc_ctx_tensors(ctx, backend);
    std::mt19937 rng(0);
    std::normal_distribution<float> normal;
    for (ggml_tensor *t : inputs) {
      int64_t n = ggml_nelements(t);
      if (t->type == GGML_TYPE_I32) {
        std::vector<int32_t> positions(n);
        for (int64_t i = 0; i < n; ++i)
          positions[i] = static_cast<int32_t>(i);
        ggml_backend_tensor_set(t, positions.data(), 0, ggml_nbytes(t));
        continue;
      }
      std::vector<float> values(n);
      if (t == mask)
        fillMask(values);
      else
        for (float &v : values)
          v = normal(rng);
      if (t->type == GGML_TYPE_F32) {
        ggml_backend_tensor_set(t, values.data(), 0, ggml_nbytes(t));
      } else {
        std::vector<ggml_fp16_t> halves(n);
        ggml_fp32_to_fp16_row(values.data(), halves.data(), n);
        ggml_backend_tensor_set(t, halves.data(), 0, ggml_nbytes(t));
      }
    }
  }

  /// The best of `reps` computations after one warm-up, in seconds.
  double best(int reps) {
    ggml_backend_graph_compute(backend, graph);
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < reps; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (ggml_backend_graph_compute(backend, graph) != GGML_STATUS_SUCCESS) {
        std::fprintf(stderr, "ggml_backend_graph_compute failed\n");
        std::exit(1);
      }
      std::chrono::duration<double> took =
          std::chrono::steady_clock::now() - start;
      best = std::min(best, took.count());
    }
    return best;
  }

  ggml_tensor *input(ggml_type type, int64_t ne0, int64_t ne1 = 1,
                     int64_t ne2 = 1) {
    ggml_tensor *t = ggml_new_tensor_3d(ctx, type, ne0, ne1, ne2);
    inputs.push_back(t);
    return t;
  }

  ggml_context *ctx = nullptr;
  ggml_backend_t backend = nullptr;
  ggml_backend_buffer_t buffer = nullptr;
  ggml_cgraph *graph = nullptr;
  ggml_tensor *mask = nullptr;
  std::vector<ggml_tensor *> inputs;
};

/// ROPE of one [S, H, D] tensor: ggml's layout is D fastest, then heads,
/// then tokens; base 500000 as the benchmarks' Llama 3 spec.
ggml_tensor *rope(TimedGraph &g, ggml_tensor *x, ggml_tensor *positions,
                  int mode) {
  int64_t d = x->ne[0];
  return ggml_rope_ext(g.ctx, x, positions, nullptr, static_cast<int>(d), mode,
                       8192, 500000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
}

double timeRope(int threads, const std::string &layout, int64_t s, int64_t hq,
                int64_t hkv, int64_t d) {
  int mode = layout == "half" ? GGML_ROPE_TYPE_NEOX
             : layout == "interleaved"
                 ? 0 // ggml's default mode: adjacent pairs
                 : (usage(), 0);
  TimedGraph g(threads);
  ggml_tensor *q = g.input(GGML_TYPE_F32, d, hq, s);
  ggml_tensor *k = g.input(GGML_TYPE_F32, d, hkv, s);
  ggml_tensor *positions = g.input(GGML_TYPE_I32, s);
  ggml_build_forward_expand(g.graph, rope(g, q, positions, mode));
  ggml_build_forward_expand(g.graph, rope(g, k, positions, mode));
  g.allocate([](std::vector<float> &) {});
  return g.best(s <= 1024 ? 20 : 8);
}

double timeAttention(int threads, const std::string &dtype, int64_t hq,
                     int64_t hkv, int64_t sq, int64_t sk, int64_t d,
                     bool causal) {
  ggml_type kvType = dtype == "f32"   ? GGML_TYPE_F32
                     : dtype == "f16" ? GGML_TYPE_F16
                                      : (usage(), GGML_TYPE_F32);
  TimedGraph g(threads);
  ggml_tensor *q = g.input(GGML_TYPE_F32, d, hq, sq);
  ggml_tensor *k = g.input(kvType, d, hkv, sk);
  ggml_tensor *v = g.input(kvType, d, hkv, sk);
  int64_t padded = GGML_PAD(sq, GGML_KQ_MASK_PAD);
  g.mask = g.input(GGML_TYPE_F16, sk, padded);
  ggml_tensor *qPositions = g.input(GGML_TYPE_I32, sq);
  // Rotated as llama.cpp rotates them: Q always; K as it enters the cache,
  // which in decode is one row per step (not timed).
  ggml_tensor *qRot = rope(g, q, qPositions, GGML_ROPE_TYPE_NEOX);
  if (sq > 1) {
    ggml_tensor *kPositions = g.input(GGML_TYPE_I32, sk);
    // Rotated in f32, then stored in the cache's type.
    ggml_tensor *k32 = g.input(GGML_TYPE_F32, d, hkv, sk);
    ggml_tensor *kRot = rope(g, k32, kPositions, GGML_ROPE_TYPE_NEOX);
    ggml_build_forward_expand(g.graph, ggml_cpy(g.ctx, kRot, k));
  }
  // FLASH_ATTN_EXT takes [D, S, H]: tokens and heads swapped (views).
  ggml_tensor *out = ggml_flash_attn_ext(
      g.ctx, ggml_permute(g.ctx, qRot, 0, 2, 1, 3),
      ggml_permute(g.ctx, k, 0, 2, 1, 3), ggml_permute(g.ctx, v, 0, 2, 1, 3),
      g.mask, 1.0f / std::sqrt(static_cast<float>(d)), 0.0f, 0.0f);
  ggml_flash_attn_ext_set_prec(out, GGML_PREC_F32);
  ggml_build_forward_expand(g.graph, out);
  g.allocate([&](std::vector<float> &mask) {
    // Row i (a query at position sk - sq + i) sees keys 0..sk - sq + i.
    for (int64_t i = 0; i < padded; ++i)
      for (int64_t j = 0; j < sk; ++j)
        mask[i * sk + j] = !causal || j <= sk - sq + i
                               ? 0.0f
                               : -std::numeric_limits<float>::infinity();
  });
  int64_t work = hq * sq * sk;
  return g.best(work > (int64_t(1) << 26) ? 2 : 10);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    usage();
  int threads = static_cast<int>(parse(argv[1]));
  std::string what = argv[2];
  double seconds;
  if (what == "rope" && argc == 8)
    seconds = timeRope(threads, argv[3], parse(argv[4]), parse(argv[5]),
                       parse(argv[6]), parse(argv[7]));
  else if (what == "attention" && argc == 10)
    seconds = timeAttention(threads, argv[3], parse(argv[4]), parse(argv[5]),
                            parse(argv[6]), parse(argv[7]), parse(argv[8]),
                            parse(argv[9]) != 0);
  else
    usage();
  std::printf("%.9g\n", seconds);
  return 0;
}
