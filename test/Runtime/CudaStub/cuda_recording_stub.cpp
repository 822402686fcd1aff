//===- cuda_recording_stub.cpp - a libcuda.so.1 that records its calls ----===//
//
// A stand-in for the NVIDIA driver, so that compiled GPU modules and
// libRopeCudaRuntime.so run their host side on a machine without a GPU
// (LD_LIBRARY_PATH=<this folder>): every driver function the runtime uses
// succeeds, device memory is host memory (so copies and memsets do what
// they say), kernels are not run, and each call is counted by name.
// ropeCudaStubCount(name) reads a count, ropeCudaStubReset() clears them:
// the tests of a call's driver work (launches, allocations, copies,
// synchronisations) are made of these.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

std::mutex countsMutex;
/// Never destroyed: modules are unloaded (and call the driver) from global
/// destructors that may run after this library's.
std::map<std::string, int64_t> &counts() {
  static auto *table = new std::map<std::string, int64_t>();
  return *table;
}

/// Counts one call of `name` and succeeds.
CUresult record(const char *name) {
  std::lock_guard<std::mutex> lock(countsMutex);
  ++counts()[name];
  return CUDA_SUCCESS;
}

/// Handles that are never dereferenced: distinct non-null values.
template <typename Handle> Handle fakeHandle(uintptr_t tag) {
  return reinterpret_cast<Handle>(tag * 64);
}
/// A new handle per creation (streams, events, modules), so that a caller
/// mixing two of them up would be told apart.
template <typename Handle> Handle newHandle() {
  static std::atomic<uintptr_t> next{1000};
  return fakeHandle<Handle>(next++);
}

void *allocate(size_t bytes) {
  void *memory = nullptr;
  if (posix_memalign(&memory, 256, bytes ? bytes : 1) != 0)
    return nullptr;
  return memory;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int64_t
ropeCudaStubCount(const char *name) {
  std::lock_guard<std::mutex> lock(countsMutex);
  auto found = counts().find(name);
  return found == counts().end() ? 0 : found->second;
}

__attribute__((visibility("default"))) void ropeCudaStubReset() {
  std::lock_guard<std::mutex> lock(countsMutex);
  counts().clear();
}

CUresult cuInit(unsigned int) { return record("cuInit"); }
CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return record("cuDeviceGetCount");
}
CUresult cuDeviceGet(CUdevice *device, int) {
  *device = 0;
  return record("cuDeviceGet");
}
CUresult cuDeviceGetName(char *name, int length, CUdevice) {
  std::strncpy(name, "rope-mlir recording stub", length);
  if (length > 0)
    name[length - 1] = '\0';
  return record("cuDeviceGetName");
}
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice) {
  *value = attribute == CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED ? 1 : 0;
  return record("cuDeviceGetAttribute");
}
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice) {
  *pool = fakeHandle<CUmemoryPool>(1);
  return record("cuDeviceGetDefaultMemPool");
}
CUresult cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute, void *) {
  return record("cuMemPoolSetAttribute");
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  *context = fakeHandle<CUcontext>(2);
  return record("cuDevicePrimaryCtxRetain");
}
CUresult cuCtxPushCurrent(CUcontext) { return record("cuCtxPushCurrent"); }
CUresult cuCtxPopCurrent(CUcontext *context) {
  *context = fakeHandle<CUcontext>(2);
  return record("cuCtxPopCurrent");
}
CUresult cuCtxSynchronize() { return record("cuCtxSynchronize"); }
CUresult cuGetErrorName(CUresult, const char **name) {
  *name = "CUDA_SUCCESS";
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult, const char **text) {
  *text = "no error (recording stub)";
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *) {
  *module = newHandle<CUmodule>();
  return record("cuModuleLoadData");
}
CUresult cuModuleLoadDataEx(CUmodule *module, const void *, unsigned int,
                            CUjit_option *, void **) {
  *module = newHandle<CUmodule>();
  return record("cuModuleLoadDataEx");
}
CUresult cuModuleUnload(CUmodule) { return record("cuModuleUnload"); }
CUresult cuModuleGetFunction(CUfunction *function, CUmodule, const char *) {
  *function = fakeHandle<CUfunction>(4);
  return record("cuModuleGetFunction");
}
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  return record("cuFuncSetAttribute");
}
CUresult cuLaunchKernel(CUfunction, unsigned int, unsigned int, unsigned int,
                        unsigned int, unsigned int, unsigned int, unsigned int,
                        CUstream, void **, void **) {
  return record("cuLaunchKernel");
}

CUresult cuStreamCreate(CUstream *stream, unsigned int) {
  *stream = newHandle<CUstream>();
  return record("cuStreamCreate");
}
CUresult cuStreamDestroy(CUstream) { return record("cuStreamDestroy"); }
CUresult cuStreamSynchronize(CUstream) {
  return record("cuStreamSynchronize");
}
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int) {
  return record("cuStreamWaitEvent");
}
CUresult cuEventCreate(CUevent *event, unsigned int) {
  *event = newHandle<CUevent>();
  return record("cuEventCreate");
}
CUresult cuEventDestroy(CUevent) { return record("cuEventDestroy"); }
CUresult cuEventRecord(CUevent, CUstream) { return record("cuEventRecord"); }
CUresult cuEventSynchronize(CUevent) { return record("cuEventSynchronize"); }

CUresult cuMemAlloc(CUdeviceptr *ptr, size_t bytes) {
  *ptr = reinterpret_cast<CUdeviceptr>(allocate(bytes));
  return record("cuMemAlloc");
}
CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream) {
  *ptr = reinterpret_cast<CUdeviceptr>(allocate(bytes));
  return record("cuMemAllocAsync");
}
CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned int) {
  *ptr = reinterpret_cast<CUdeviceptr>(allocate(bytes));
  return record("cuMemAllocManaged");
}
CUresult cuMemFree(CUdeviceptr ptr) {
  std::free(reinterpret_cast<void *>(ptr));
  return record("cuMemFree");
}
CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream) {
  std::free(reinterpret_cast<void *>(ptr));
  return record("cuMemFreeAsync");
}
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                               CUdeviceptr) {
  // Every buffer here comes from "the pool" (cuMemFreeAsync frees any).
  if (attribute == CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE)
    *static_cast<CUmemoryPool *>(data) = fakeHandle<CUmemoryPool>(1);
  return record("cuPointerGetAttribute");
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream) {
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
               bytes);
  return record("cuMemcpyAsync");
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return record("cuMemcpyHtoD");
}
CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  std::memcpy(dst, reinterpret_cast<void *>(src), bytes);
  return record("cuMemcpyDtoH");
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count,
                          CUstream) {
  auto *words = reinterpret_cast<unsigned int *>(dst);
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return record("cuMemsetD32Async");
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          CUstream) {
  auto *halves = reinterpret_cast<unsigned short *>(dst);
  for (size_t i = 0; i < count; ++i)
    halves[i] = value;
  return record("cuMemsetD16Async");
}
CUresult cuMemHostRegister(void *, size_t, unsigned int) {
  return record("cuMemHostRegister");
}
CUresult cuMemHostUnregister(void *) { return record("cuMemHostUnregister"); }

} // extern "C"
