// The machine's bf16 peak without AMX: every thread runs a register-resident
// loop of independent AVX-512 BF16 dot products (vdpbf16ps: 16 f32 lanes
// each += two bf16 products, 64 FLOP an instruction), long enough for clocks
// to settle; the ceiling of the bf16 kernels on a host whose matrix engine
// is this (AMD Zen 4 and later; Intel since Cooper Lake, where AMX is the
// larger one). benchmarks/run.py compiles it with the toolchain's clang and
// calls dot_bf16_peak_gflops through ctypes; on a host without AVX-512 BF16
// it returns -1.

#include <omp.h>

#include <immintrin.h>

// 12 independent accumulators: enough to cover the latency (5-6 cycles) on
// up to two ports, few enough to stay in registers with the two inputs.
#define ACCUMULATORS 12

static int host_has_dot_bf16(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512f");
}

__attribute__((target("avx512f,avx512bf16"))) static double
thread_flops(long iterations) {
  __m512 acc[ACCUMULATORS];
  __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80); // 1.0
  __m512bh b = (__m512bh)_mm512_set1_epi16(0x3c00); // 2^-7
  for (int i = 0; i < ACCUMULATORS; ++i)
    acc[i] = _mm512_set1_ps((float)i);
  for (long n = 0; n < iterations; ++n) {
#pragma clang loop unroll(full)
    for (int i = 0; i < ACCUMULATORS; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
    // Keeps the compiler from folding the loop.
    __asm__ volatile("" : "+v"(a));
  }
  __m512 sum = _mm512_setzero_ps();
  for (int i = 0; i < ACCUMULATORS; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  volatile float sink = _mm512_reduce_add_ps(sum);
  (void)sink;
  return 64.0 * ACCUMULATORS * (double)iterations;
}

// GFLOP/s of `threads` threads, each running `iterations` steps; -1 on a
// host without AVX-512 BF16.
double dot_bf16_peak_gflops(int threads, long iterations) {
  if (!host_has_dot_bf16())
    return -1;
  double flops = 0;
  double start = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
  flops += thread_flops(iterations);
  return flops / (omp_get_wtime() - start) / 1e9;
}
