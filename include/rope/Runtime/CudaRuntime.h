//===- CudaRuntime.h - the mgpu* host API on the CUDA driver ----*- C++ -*-===//
//
// The functions that MLIR's gpu-to-llvm lowering calls from host code
// (`gpu.launch_func`, `gpu.alloc`, `gpu.memcpy`, ...), implemented on the
// CUDA driver API by lib/Runtime/CudaRuntime.cpp. Debian's MLIR ships no
// libmlir_cuda_runtime.so; code lowered by `--rope-lower-to-nvvm` links
// libRopeCudaRuntime.so instead (or loads it into mlir-runner with
// -shared-libs).
//
// The signatures are the ABI that gpu-to-llvm emits in LLVM 22. Every call
// runs in the primary context of the default device (device 0, or the one
// chosen with mgpuSetDefaultDevice). A failing driver call prints the call,
// the driver's error name and message to stderr; allocation and module
// loading failures abort, since lowered code has no way to check them.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RUNTIME_CUDARUNTIME_H
#define ROPE_RUNTIME_CUDARUNTIME_H

#include <cstddef>
#include <cstdint>

#ifdef _WIN32
#define ROPE_RUNTIME_EXPORT __declspec(dllexport)
#else
#define ROPE_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

extern "C" {
// Modules and kernels (a cubin, fatbin or PTX image embedded by gpu.binary).
ROPE_RUNTIME_EXPORT void *mgpuModuleLoad(void *data, std::size_t sizeBytes);
ROPE_RUNTIME_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel);
ROPE_RUNTIME_EXPORT void mgpuModuleUnload(void *module);
ROPE_RUNTIME_EXPORT void *mgpuModuleGetFunction(void *module, const char *name);
ROPE_RUNTIME_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                          intptr_t gridY, intptr_t gridZ,
                                          intptr_t blockX, intptr_t blockY,
                                          intptr_t blockZ, int32_t smem,
                                          void *stream, void **params,
                                          void **extra, std::size_t paramsCount);

// Streams and events.
ROPE_RUNTIME_EXPORT void *mgpuStreamCreate();
ROPE_RUNTIME_EXPORT void mgpuStreamDestroy(void *stream);
ROPE_RUNTIME_EXPORT void mgpuStreamSynchronize(void *stream);
ROPE_RUNTIME_EXPORT void mgpuStreamWaitEvent(void *stream, void *event);
ROPE_RUNTIME_EXPORT void *mgpuEventCreate();
ROPE_RUNTIME_EXPORT void mgpuEventDestroy(void *event);
ROPE_RUNTIME_EXPORT void mgpuEventSynchronize(void *event);
ROPE_RUNTIME_EXPORT void mgpuEventRecord(void *event, void *stream);

// Memory. `stream` may be null (the legacy default stream). Device blocks
// allocated on a stream are kept when freed, for the next allocation of the
// same size (rounded up to 512 bytes): on the same stream, or, for a block
// freed without a stream, on any stream after an event recorded at the free
// on the legacy stream. A call that repeats an earlier one then allocates
// nothing from the driver.
ROPE_RUNTIME_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                       bool isHostShared);
ROPE_RUNTIME_EXPORT void mgpuMemFree(void *ptr, void *stream);
ROPE_RUNTIME_EXPORT void mgpuMemcpy(void *dst, void *src, std::size_t sizeBytes,
                                    void *stream);
ROPE_RUNTIME_EXPORT void mgpuMemset32(void *dst, unsigned int value,
                                      std::size_t count, void *stream);
ROPE_RUNTIME_EXPORT void mgpuMemset16(void *dst, unsigned short value,
                                      std::size_t count, void *stream);
/// Page-locks and maps the buffer of a ranked memref descriptor (`rank`,
/// pointer to the descriptor) so kernels can read and write it.
ROPE_RUNTIME_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                                   int64_t elementSizeBytes);
ROPE_RUNTIME_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                                     void *descriptor,
                                                     int64_t elementSizeBytes);
ROPE_RUNTIME_EXPORT void mgpuSetDefaultDevice(int32_t device);

// Not part of MLIR's ABI: for hosts that drive compiled code (the Python
// package, the benchmark). Number of devices that answer (0 when there is no
// driver or no device), and the name of the default device.
ROPE_RUNTIME_EXPORT int32_t ropeCudaDeviceCount();
ROPE_RUNTIME_EXPORT const char *ropeCudaDeviceName();
/// Copies with the legacy stream and waits: host <-> device buffers.
ROPE_RUNTIME_EXPORT void ropeCudaCopyToDevice(void *dst, const void *src,
                                              std::size_t sizeBytes);
ROPE_RUNTIME_EXPORT void ropeCudaCopyToHost(void *dst, const void *src,
                                            std::size_t sizeBytes);
ROPE_RUNTIME_EXPORT void ropeCudaSynchronize();
/// The first driver error since the last call (0: none), and clears it.
ROPE_RUNTIME_EXPORT int32_t ropeCudaTakeError();
/// Gives the idle blocks mgpuMemFree kept back to the driver's pool.
ROPE_RUNTIME_EXPORT void ropeCudaReleaseCache();
}

#endif // ROPE_RUNTIME_CUDARUNTIME_H
