//===- CpuEngines.cpp - matrix engines for compiled CPU code --------------===//
//
// The C library only (no C++ runtime: a function-local static with a
// dynamic initializer would need libstdc++'s guards); what is found is kept
// in an atomic, and finding it twice is harmless.
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/CpuEngines.h"

#include <atomic>
#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <sys/syscall.h>
#include <unistd.h>

namespace {
/// What a host offers, as bits of one int (0: not looked at yet).
enum EngineState : int {
  kChecked = 1,
  kTiles = 2,        // AMX-TILE and AMX-BF16
  kFp16 = 4,         // AMX-FP16
  kGranted = 8,      // Linux gave this process the tile data state
  kDotProducts = 16, // AVX-512 F and BF16, with the OS keeping zmm state
};

std::atomic<int> engineState{0};

/// Whether environment variable `name` is "0": act as on a host without
/// the engine it names (what an object built here meets on such a machine).
bool maskedOff(const char *name) {
  const char *setting = std::getenv(name);
  return setting && std::strcmp(setting, "0") == 0;
}

/// Whether the OS saves the AVX-512 state (XCR0's SSE, AVX, opmask, and
/// upper-zmm bits), without which the instructions fault.
bool systemKeepsZmm() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27)))
    return false; // no OSXSAVE
  unsigned low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  constexpr unsigned kZmmState = 0xe6;
  return (low & kZmmState) == kZmmState;
}

/// CPUID leaf 7's feature bits: EDX of subleaf 0 for AMX (AMX-BF16 bit 22,
/// AMX-TILE bit 24), EBX for AVX512F (bit 16); EAX of subleaf 1 for
/// AMX-FP16 (bit 21) and AVX512_BF16 (bit 5).
int findEngineState() {
  int state = kChecked;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return state;
  bool tiles = (edx & (1u << 24)) && (edx & (1u << 22));
  bool avx512f = ebx & (1u << 16);
  unsigned subleaf1 = 0;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
    subleaf1 = eax;
  if (!maskedOff("ROPE_CPU_TILES") && tiles) {
    state |= kTiles;
    if (subleaf1 & (1u << 21))
      state |= kFp16;
    // Linux hands the tile data state out on request only (since 5.16).
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    if (syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0)
      state |= kGranted;
  }
  if (!maskedOff("ROPE_CPU_DOT_PRODUCTS") && avx512f &&
      (subleaf1 & (1u << 5)) && systemKeepsZmm())
    state |= kDotProducts;
  return state;
}

int hostEngines() {
  int state = engineState.load(std::memory_order_acquire);
  if (!state) {
    state = findEngineState();
    engineState.store(state, std::memory_order_release);
  }
  return state;
}
} // namespace

extern "C" void ropeRequireCpuTiles(int8_t needsFp16) {
  int state = hostEngines();
  if (!(state & kTiles) || (needsFp16 && !(state & kFp16)))
    ropeRuntimeError(needsFp16 ? "this function was compiled for AMX tiles "
                                 "(amx-tile, amx-fp16), which the host CPU "
                                 "lacks; compile it for this host"
                               : "this function was compiled for AMX tiles "
                                 "(amx-tile, amx-bf16), which the host CPU "
                                 "lacks; compile it for this host",
                     0, nullptr);
  if (!(state & kGranted))
    ropeRuntimeError("this function uses AMX tiles, and Linux refused the "
                     "process their state (arch_prctl(ARCH_REQ_XCOMP_PERM, "
                     "XFEATURE_XTILEDATA)); compile it with "
                     "cpu-features=host,-amx-bf16,-amx-fp16",
                     0, nullptr);
}

extern "C" void ropeRequireCpuDotProducts() {
  if (!(hostEngines() & kDotProducts))
    ropeRuntimeError("this function was compiled for AVX-512 BF16 dot "
                     "products (avx512f, avx512bf16), which the host CPU "
                     "lacks; compile it for this host",
                     0, nullptr);
}
