//===- CpuTiles.h - AMX tiles for compiled CPU code -------------*- C++ -*-===//
//
// Code that --rope-lower-tile-products compiled calls this at the entry of
// each function that uses AMX tiles, on the calling thread, before any tile
// instruction: the host must have the tiles and Linux must grant the
// process their state. Part of libRopeRuntime.so.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RUNTIME_CPUTILES_H
#define ROPE_RUNTIME_CPUTILES_H

#include "rope/Runtime/RuntimeErrors.h"

#include <cstdint>

extern "C" {
/// Returns where the host has AMX tiles for bf16 (and, if `needsFp16`, for
/// f16) and Linux grants this process the tile data state (asked once, by
/// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); else reports
/// through ropeRuntimeError, naming what is missing, and does not return.
/// ROPE_CPU_TILES=0 in the environment (read at the first call) makes it
/// act as on a host without the tiles.
ROPE_RUNTIME_EXPORT void ropeRequireCpuTiles(int8_t needsFp16);
} // extern "C"

#endif // ROPE_RUNTIME_CPUTILES_H
