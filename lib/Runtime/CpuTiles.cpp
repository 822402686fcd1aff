//===- CpuTiles.cpp - AMX tiles for compiled CPU code ---------------------===//

#include "rope/Runtime/CpuTiles.h"

#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <sys/syscall.h>
#include <unistd.h>

namespace {
/// CPUID leaf 7's feature bits for AMX (EDX of subleaf 0: AMX-BF16 bit 22,
/// AMX-TILE bit 24; EAX of subleaf 1: AMX-FP16 bit 21).
struct TileFeatures {
  bool tile = false, bf16 = false, fp16 = false;
};

TileFeatures hostTiles() {
  TileFeatures features;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return features;
  features.tile = edx & (1u << 24);
  features.bf16 = edx & (1u << 22);
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
    features.fp16 = eax & (1u << 21);
  return features;
}

/// Whether Linux grants this process the tile data state; asked once.
bool tileDataGranted() {
  static const bool granted = [] {
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
}
/// The host's tiles, or none where ROPE_CPU_TILES=0 says to act as if it
/// had none (what an object built here meets on a machine without them).
TileFeatures usableTiles() {
  const char *setting = std::getenv("ROPE_CPU_TILES");
  if (setting && std::strcmp(setting, "0") == 0)
    return TileFeatures{};
  return hostTiles();
}
} // namespace

extern "C" void ropeRequireCpuTiles(int8_t needsFp16) {
  static const TileFeatures features = usableTiles();
  if (!features.tile || !features.bf16 || (needsFp16 && !features.fp16))
    ropeRuntimeError(needsFp16 ? "this function was compiled for AMX tiles "
                                 "(amx-tile, amx-fp16), which the host CPU "
                                 "lacks; compile it for this host"
                               : "this function was compiled for AMX tiles "
                                 "(amx-tile, amx-bf16), which the host CPU "
                                 "lacks; compile it for this host",
                     0, nullptr);
  if (!tileDataGranted())
    ropeRuntimeError("this function uses AMX tiles, and Linux refused the "
                     "process their state (arch_prctl(ARCH_REQ_XCOMP_PERM, "
                     "XFEATURE_XTILEDATA)); compile it with "
                     "cpu-features=host,-amx-bf16,-amx-fp16",
                     0, nullptr);
}
