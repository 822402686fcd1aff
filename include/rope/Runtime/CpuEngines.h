//===- CpuEngines.h - matrix engines for compiled CPU code ------*- C++ -*-===//
//
// Code that --rope-lower-tile-products compiled calls these at the entry of
// each function whose products run on a matrix engine (AMX tiles, or AVX-512
// BF16 dot products), on the calling thread, before any of its instructions:
// the host must have the engine and, for the tiles, Linux must grant the
// process their state. An object built on one machine and loaded on another
// thus fails with a clear error, never SIGILL. Part of libRopeRuntime.so.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RUNTIME_CPUENGINES_H
#define ROPE_RUNTIME_CPUENGINES_H

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

/// Returns where the host has AVX-512 BF16 (vdpbf16ps) and the system keeps
/// the 512-bit registers' state; else reports through ropeRuntimeError and
/// does not return. ROPE_CPU_DOT_PRODUCTS=0 in the environment (read at the
/// first call) makes it act as on a host without them.
ROPE_RUNTIME_EXPORT void ropeRequireCpuDotProducts();
} // extern "C"

#endif // ROPE_RUNTIME_CPUENGINES_H
