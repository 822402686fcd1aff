// The machine's AMX peak for bf16: every thread runs a tile-resident loop
// of independent tdpbf16ps (16 × 16 f32 accumulators += 16 × 32 bf16 times
// 32 × 16 bf16, 16,384 FLOP each), long enough for clocks to settle; no
// tile is loaded inside the loop, so this is the engine's own rate, the
// ceiling of every bf16 kernel on the machine. benchmarks/run.py compiles
// it with the toolchain's clang (-mamx-tile -mamx-bf16) and calls
// amx_peak_gflops through ctypes; on a host without AMX it returns -1.

#include <omp.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <immintrin.h>

// Linux hands out the tile data state only on request (arch_prctl,
// since 5.16); without it the first tile instruction faults.
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

// The tile configuration: palette 1, tiles 0-3 16 × 16 f32 accumulators,
// 4-5 16 × 32 bf16 (64 bytes a row), 6-7 the same.
struct tile_config {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t bytes_per_row[16];
  uint8_t rows[16];
};

static int host_has_amx_bf16(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("amx-bf16") && __builtin_cpu_supports("amx-tile");
}

__attribute__((target("amx-tile,amx-bf16"))) static double
thread_flops(long iterations) {
  struct tile_config config;
  memset(&config, 0, sizeof config);
  config.palette = 1;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = 16;
    config.bytes_per_row[t] = 64;
  }
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_zero(6);
  _tile_zero(7);
  // Four independent accumulators cover tdpbf16ps's latency (about 4 × its
  // 16-cycle issue interval on Sapphire Rapids).
  for (long n = 0; n < iterations; ++n) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  float sink[16 * 16];
  _tile_stored(0, sink, 64);
  _tile_release();
  volatile float keep = sink[0];
  (void)keep;
  return 4.0 * 2 * 16 * 16 * 32 * (double)iterations;
}

// GFLOP/s of `threads` threads, each running `iterations` steps of four
// tile products; -1 where the host has no AMX-BF16 or Linux refuses the
// tile data state.
double amx_peak_gflops(int threads, long iterations) {
  if (!host_has_amx_bf16() ||
      syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
    return -1;
  double flops = 0;
  double start = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
  flops += thread_flops(iterations);
  return flops / (omp_get_wtime() - start) / 1e9;
}
