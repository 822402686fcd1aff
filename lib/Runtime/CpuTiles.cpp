//===- CpuTiles.cpp - AMX tiles for compiled CPU code ---------------------===//
//
// The C library only (no C++ runtime: a function-local static with a
// dynamic initializer would need libstdc++'s guards); what is found is kept
// in an atomic, and finding it twice is harmless.
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/CpuTiles.h"

#include <atomic>
#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <sys/syscall.h>
#include <unistd.h>

namespace {
/// What a host offers, as bits of one int (0: not looked at yet).
enum TileState : int {
  kChecked = 1,
  kTiles = 2,   // AMX-TILE and AMX-BF16
  kFp16 = 4,    // AMX-FP16
  kGranted = 8, // Linux gave this process the tile data state
};

std::atomic<int> tileState{0};

/// CPUID leaf 7's feature bits for AMX (EDX of subleaf 0: AMX-BF16 bit 22,
/// AMX-TILE bit 24; EAX of subleaf 1: AMX-FP16 bit 21); none where
/// ROPE_CPU_TILES=0 says to act as on a host without them (what an object
/// built here meets on such a machine).
int findTileState() {
  int state = kChecked;
  const char *setting = std::getenv("ROPE_CPU_TILES");
  if (setting && std::strcmp(setting, "0") == 0)
    return state;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return state;
  if ((edx & (1u << 24)) && (edx & (1u << 22)))
    state |= kTiles;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 21)))
    state |= kFp16;
  // Linux hands the tile data state out on request only (since 5.16).
  constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if ((state & kTiles) &&
      syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0)
    state |= kGranted;
  return state;
}
} // namespace

extern "C" void ropeRequireCpuTiles(int8_t needsFp16) {
  int state = tileState.load(std::memory_order_acquire);
  if (!state) {
    state = findTileState();
    tileState.store(state, std::memory_order_release);
  }
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
