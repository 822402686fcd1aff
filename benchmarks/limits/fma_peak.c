// The machine's FMA peak: every thread runs a register-resident loop of
// independent fused multiply-adds at the widest vector width the host has
// (built with -march=native; the vector type is 512 bits, which the
// compiler splits into two 256-bit halves where AVX-512 is missing), long
// enough for clocks to settle. benchmarks/run.py compiles it with the
// toolchain's clang and calls fma_peak_gflops through ctypes.

#include <omp.h>

typedef float v16 __attribute__((vector_size(64)));

// 12 independent accumulators: enough to cover the FMA latency (4 cycles)
// on two FMA ports, few enough to stay in registers with a and b.
#define ACCUMULATORS 12

static double thread_flops(long iterations, float seed) {
  v16 acc[ACCUMULATORS];
  v16 a = (v16){} + seed, b = (v16){} + 1.0f - seed;
  for (int i = 0; i < ACCUMULATORS; ++i)
    acc[i] = (v16){} + (float)i;
  for (long n = 0; n < iterations; ++n) {
#pragma clang loop unroll(full)
    for (int i = 0; i < ACCUMULATORS; ++i)
      acc[i] = acc[i] * a + b;
    // Keeps the compiler from folding the loop.
    __asm__ volatile("" : "+x"(a));
  }
  v16 sum = (v16){};
  for (int i = 0; i < ACCUMULATORS; ++i)
    sum += acc[i];
  volatile float sink = sum[0];
  (void)sink;
  return 2.0 * 16 * ACCUMULATORS * (double)iterations;
}

// GFLOP/s of `threads` threads, each running `iterations` steps.
double fma_peak_gflops(int threads, long iterations) {
  double flops = 0;
  double start = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
  flops += thread_flops(iterations, 0.999f);
  return flops / (omp_get_wtime() - start) / 1e9;
}
