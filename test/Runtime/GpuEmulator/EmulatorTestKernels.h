//===- EmulatorTestKernels.h - helpers of the emulator's test kernels -*- C++ -*-===//
//
// What the hand-written kernels of rope-gpu-emulator-test and
// rope-gpu-emulator-hopper-test share: workgroup-memory accesses through
// ropeGpuEmuSharedAccess (as generated code makes them), thread and block
// ids, the launch, and the failure message of a scenario.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TEST_RUNTIME_GPUEMULATOR_EMULATORTESTKERNELS_H
#define ROPE_TEST_RUNTIME_GPUEMULATOR_EMULATORTESTKERNELS_H

#include "rope/Runtime/GpuEmulator.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "rope/Runtime/RuntimeErrors.h"

namespace {

//===--- Kernel-side helpers -----------------------------------------------===//

template <typename T> T load(const T *address) {
  ropeGpuEmuSharedAccess(address, sizeof(T), 0);
  return *address;
}
template <typename T> void store(T *address, T value) {
  ropeGpuEmuSharedAccess(address, sizeof(T), 1);
  *address = value;
}
template <typename T> T *shared(int64_t byteOffset) {
  return static_cast<T *>(ropeGpuEmuShared(byteOffset));
}
inline int64_t linearThread() {
  return ropeGpuEmuThreadId(0) +
         ropeGpuEmuBlockDim(0) *
             (ropeGpuEmuThreadId(1) +
              ropeGpuEmuBlockDim(1) * ropeGpuEmuThreadId(2));
}
inline int64_t linearBlock() {
  return ropeGpuEmuBlockId(0) +
         ropeGpuEmuGridDim(0) *
             (ropeGpuEmuBlockId(1) + ropeGpuEmuGridDim(1) * ropeGpuEmuBlockId(2));
}

struct Dims {
  int64_t x, y, z;
};
inline void launch(RopeGpuEmuKernel kernel, void *env, const char *name, Dims grid,
            Dims block, int64_t sharedBytes) {
  ropeGpuEmuLaunch(kernel, env, name, grid.x, grid.y, grid.z, block.x, block.y,
                   block.z, sharedBytes);
}

inline bool wrong(const char *scenario, const char *detail) {
  std::printf("%s: wrong data: %s\n", scenario, detail);
  return false;
}

/// A scenario of a test driver: true when its result is right.
struct Scenario {
  const char *name;
  bool (*run)();
};

[[noreturn]] inline void printAndExit(const char *message, void *) {
  std::printf("%s\n", message);
  std::fflush(stdout);
  std::exit(1);
}

/// The driver's main: runs the scenario named by argv[1], prints
/// "NAME: ok" (exit 0) or what went wrong (exit 1); an emulator error is
/// printed and exits 1.
template <std::size_t N>
int runScenario(int argc, char **argv, const Scenario (&scenarios)[N],
                const char *tool) {
  ropeRuntimeSetErrorHandler(printAndExit, nullptr);
  for (const Scenario &scenario : scenarios) {
    if (argc != 2 || std::strcmp(argv[1], scenario.name) != 0)
      continue;
    bool ok = scenario.run();
    if (ok)
      std::printf("%s: ok\n", scenario.name);
    std::fflush(stdout);
    return ok ? 0 : 1;
  }
  std::fprintf(stderr, "usage: %s SCENARIO; scenarios:", tool);
  for (const Scenario &scenario : scenarios)
    std::fprintf(stderr, " %s", scenario.name);
  std::fprintf(stderr, "\n");
  return 2;
}

} // namespace

#endif // ROPE_TEST_RUNTIME_GPUEMULATOR_EMULATORTESTKERNELS_H
