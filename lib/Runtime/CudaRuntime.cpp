//===- CudaRuntime.cpp - the mgpu* host API on the CUDA driver ------------===//
//
// See include/rope/Runtime/CudaRuntime.h for the contract. Written against
// the driver API only (cuda.h, libcuda.so.1), so the library runs wherever an
// NVIDIA driver is installed, without the CUDA runtime or LLVM.
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/CudaRuntime.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

/// First error of the process that lowered code could not see (sticky until
/// read by ropeCudaTakeError); hosts check it after a call.
std::atomic<int> stickyError{CUDA_SUCCESS};

/// Reports a failed driver call; returns true on success.
bool check(CUresult result, const char *call, const char *where) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = "unknown CUDA error";
  const char *message = "";
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &message);
  std::fprintf(stderr, "rope-cuda-runtime: %s failed in %s: %s (%s)\n", call,
               where, name, message);
  int expected = CUDA_SUCCESS;
  stickyError.compare_exchange_strong(expected, static_cast<int>(result));
  return false;
}

#define ROPE_CUDA_CHECK(call) check((call), #call, __func__)

/// Failures after which the lowered code cannot go on (a null module,
/// function or buffer would only fault later, far from the cause).
[[noreturn]] void fatal(const char *what) {
  std::fprintf(stderr, "rope-cuda-runtime: fatal: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

int32_t defaultDevice = 0;
/// Whether the device has stream-ordered memory pools (cuMemAllocAsync).
bool poolsSupported = false;

/// The primary context of the default device, retained once per process.
CUcontext primaryContext() {
  static std::once_flag once;
  static CUcontext context = nullptr;
  std::call_once(once, [] {
    CUdevice device;
    if (!ROPE_CUDA_CHECK(cuInit(0)) ||
        !ROPE_CUDA_CHECK(cuDeviceGet(&device, defaultDevice)) ||
        !ROPE_CUDA_CHECK(cuDevicePrimaryCtxRetain(&context, device))) {
      context = nullptr;
      return;
    }
    int pools = 0;
    cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                         device);
    poolsSupported = pools != 0;
    CUmemoryPool pool;
    if (poolsSupported &&
        cuDeviceGetDefaultMemPool(&pool, device) == CUDA_SUCCESS) {
      // Keep freed temporaries in the pool between calls instead of handing
      // them back to the driver at every synchronisation (attention's
      // scores are GiBs; re-mapping them each call costs more than the call).
      cuuint64_t keepAll = ~cuuint64_t(0);
      ROPE_CUDA_CHECK(cuMemPoolSetAttribute(
          pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll));
    }
  });
  return context;
}

/// Makes the primary context current on this thread for the scope of one
/// API call (MLIR may call from any thread, e.g. OpenMP workers).
struct ScopedContext {
  ScopedContext() {
    CUcontext context = primaryContext();
    if (!context)
      fatal("no usable CUDA device (is the NVIDIA driver loaded and a GPU "
            "visible?)");
    pushed = ROPE_CUDA_CHECK(cuCtxPushCurrent(context));
  }
  ~ScopedContext() {
    CUcontext popped;
    // At process exit (module unload from global destructors) the driver
    // may already be shut down; nothing is left to restore then.
    if (!pushed)
      return;
    CUresult result = cuCtxPopCurrent(&popped);
    if (result != CUDA_ERROR_DEINITIALIZED)
      check(result, "cuCtxPopCurrent", "ScopedContext");
  }
  bool pushed = false;
};

CUstream asStream(void *stream) { return static_cast<CUstream>(stream); }
CUdeviceptr asDevicePtr(const void *ptr) {
  return reinterpret_cast<CUdeviceptr>(ptr);
}

/// The bytes a strided memref descriptor spans from its first element, and
/// that first element's address. Descriptor: {allocated, aligned, offset,
/// sizes[rank], strides[rank]}, all 64-bit.
struct MemRefSpan {
  char *begin;
  size_t bytes;
};
MemRefSpan memrefSpan(int64_t rank, void *descriptor, int64_t elementSize) {
  auto *fields = static_cast<int64_t *>(descriptor);
  auto *aligned = reinterpret_cast<char *>(fields[1]);
  int64_t offset = fields[2];
  const int64_t *sizes = fields + 3;
  const int64_t *strides = sizes + rank;
  int64_t lastIndex = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0)
      return {aligned + offset * elementSize, 0};
    lastIndex += (sizes[d] - 1) * strides[d];
  }
  return {aligned + offset * elementSize,
          static_cast<size_t>((lastIndex + 1) * elementSize)};
}

/// The device blocks that lowered functions allocate on a stream, kept
/// when they are freed for the next allocation of the same size class: a
/// steady-state call (the same shapes again) then makes no allocation or
/// free driver call. A block freed on a stream is reused on that stream
/// (stream order makes that safe). One freed without a stream (a result
/// the host is done with) is reused on a stream after an event recorded on
/// the legacy stream at the free, which completes after the work of every
/// blocking stream before it, as the pool's own cuMemFreeAsync on the
/// legacy stream would have ordered it. Blocks are the pool's
/// (cuMemAllocAsync); at most kLimitBytes are kept idle, the rest go back
/// to the pool, and all of them when an allocation fails. Shared by the
/// threads of the process.
class DeviceCache {
public:
  static constexpr uint64_t kGranule = 512;
  static constexpr uint64_t kLimitBytes = uint64_t(2) << 30;
  static uint64_t roundedSize(uint64_t bytes) {
    return (bytes + kGranule - 1) / kGranule * kGranule;
  }

  /// An idle block of `bytes`' size class that `stream` may use, or null;
  /// `stream` is made to wait for its free where that was on the host.
  void *take(uint64_t bytes, void *stream) {
    std::lock_guard<std::mutex> lock(mutex);
    for (void *from : {stream, static_cast<void *>(nullptr)}) {
      auto found = idle.find({from, roundedSize(bytes)});
      if (found == idle.end() || found->second.empty())
        continue;
      Idle block = found->second.back();
      found->second.pop_back();
      idleBytes -= roundedSize(bytes);
      if (block.freed) {
        ScopedContext scope;
        ROPE_CUDA_CHECK(
            cuStreamWaitEvent(static_cast<CUstream>(stream), block.freed, 0));
        events.push_back(block.freed);
      }
      return block.pointer;
    }
    return nullptr;
  }
  /// Records a new block of the pool as the cache's.
  void adopt(void *block, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    owned[block] = roundedSize(bytes);
  }
  /// Keeps `block` if it is the cache's (true); past the limit it is
  /// forgotten, for the caller to free (false).
  bool give(void *block, void *stream) {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = owned.find(block);
    if (found == owned.end())
      return false;
    uint64_t size = found->second;
    if (idleBytes + size > kLimitBytes) {
      owned.erase(found);
      return false;
    }
    Idle entry{block, nullptr};
    if (!stream) {
      ScopedContext scope;
      if (events.empty()) {
        CUevent event = nullptr;
        if (!ROPE_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING))) {
          owned.erase(found);
          return false;
        }
        events.push_back(event);
      }
      entry.freed = events.back();
      events.pop_back();
      ROPE_CUDA_CHECK(cuEventRecord(entry.freed, nullptr));
    }
    idle[{stream, size}].push_back(entry);
    idleBytes += size;
    return true;
  }
  /// Forgets the idle blocks that `select(stream)` picks and returns them,
  /// for the caller to free.
  template <typename Select> std::vector<void *> release(Select select) {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<void *> blocks;
    for (auto it = idle.begin(); it != idle.end();) {
      if (!select(it->first.first)) {
        ++it;
        continue;
      }
      for (Idle &entry : it->second) {
        blocks.push_back(entry.pointer);
        owned.erase(entry.pointer);
        idleBytes -= it->first.second;
        if (entry.freed)
          events.push_back(entry.freed);
      }
      it = idle.erase(it);
    }
    return blocks;
  }

private:
  struct Idle {
    void *pointer;
    CUevent freed; // recorded at a free on the host, else null
  };
  std::mutex mutex;
  std::map<std::pair<void *, uint64_t>, std::vector<Idle>> idle;
  std::unordered_map<void *, uint64_t> owned;
  std::vector<CUevent> events; // recorded ones are in `idle`
  uint64_t idleBytes = 0;
};

/// The kernels looked up so far, by module and name: lowered code asks for
/// a kernel before every launch, and a driver call each time is what a
/// steady-state call would otherwise spend. The name is a constant of the
/// lowered code, so its address is the key. Never destroyed: modules are
/// unloaded from global destructors.
struct FunctionTable {
  std::mutex mutex;
  /// The name is kept to check a hit: a caller may reuse a name buffer.
  std::map<std::pair<void *, const char *>, std::pair<std::string, CUfunction>>
      functions;
};
FunctionTable &functionTable() {
  static FunctionTable *table = new FunctionTable();
  return *table;
}

DeviceCache &deviceCache() {
  // Never destroyed: lowered code may free from global destructors.
  static DeviceCache *cache = new DeviceCache();
  return *cache;
}

} // namespace

extern "C" {

void *mgpuModuleLoad(void *data, size_t /*sizeBytes*/) {
  ScopedContext scope;
  CUmodule module = nullptr;
  if (!ROPE_CUDA_CHECK(cuModuleLoadData(&module, data)))
    fatal("cannot load the GPU module (is the cubin for this GPU's "
          "architecture? see --rope-lower-to-nvvm chip=)");
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  ScopedContext scope;
  CUmodule module = nullptr;
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  if (!ROPE_CUDA_CHECK(cuModuleLoadDataEx(&module, data, 1, options, values)))
    fatal("cannot JIT-compile the GPU module's PTX");
  return module;
}

void mgpuModuleUnload(void *module) {
  {
    FunctionTable &table = functionTable();
    std::lock_guard<std::mutex> lock(table.mutex);
    auto &functions = table.functions;
    for (auto it = functions.begin(); it != functions.end();)
      it = it->first.first == module ? functions.erase(it) : std::next(it);
  }
  // Called from global destructors; the driver may have shut down already
  // (which unloaded every module), so a failure to enter the context is not
  // reported.
  CUcontext context = primaryContext(), popped;
  if (!context || cuCtxPushCurrent(context) != CUDA_SUCCESS)
    return;
  CUresult result = cuModuleUnload(static_cast<CUmodule>(module));
  if (result != CUDA_ERROR_DEINITIALIZED)
    check(result, "cuModuleUnload", __func__);
  cuCtxPopCurrent(&popped);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  FunctionTable &table = functionTable();
  {
    std::lock_guard<std::mutex> lock(table.mutex);
    auto found = table.functions.find({module, name});
    if (found != table.functions.end() && found->second.first == name)
      return found->second.second;
  }
  ScopedContext scope;
  CUfunction function = nullptr;
  if (!ROPE_CUDA_CHECK(
          cuModuleGetFunction(&function, static_cast<CUmodule>(module), name)))
    fatal("kernel missing from the GPU module");
  std::lock_guard<std::mutex> lock(table.mutex);
  table.functions[{module, name}] = {name, function};
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  ScopedContext scope;
  auto kernel = static_cast<CUfunction>(function);
  // Dynamic shared memory above the 48 KiB default needs an opt-in per kernel.
  if (smem > 48 * 1024)
    ROPE_CUDA_CHECK(cuFuncSetAttribute(
        kernel, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
  ROPE_CUDA_CHECK(cuLaunchKernel(kernel, gridX, gridY, gridZ, blockX, blockY,
                                 blockZ, smem, asStream(stream), params, extra));
}

// Every call of a lowered function creates a stream, orders its work on it,
// synchronises and destroys it. Creating and destroying a stream costs more
// than a small kernel, so each thread keeps one and hands it out again: the
// function has synchronised it before it destroys it, so a later call finds
// it idle. (A thread's calls run one after another; other threads get their
// own.)
namespace {
thread_local CUstream threadStream = nullptr;
thread_local bool threadStreamInUse = false;
} // namespace

void *mgpuStreamCreate() {
  if (threadStream && !threadStreamInUse) {
    threadStreamInUse = true;
    return threadStream;
  }
  ScopedContext scope;
  CUstream stream = nullptr;
  // A blocking stream: its work waits for earlier work on the legacy stream,
  // where hosts (our Python side, PyTorch) put their inputs' copies.
  if (!ROPE_CUDA_CHECK(cuStreamCreate(&stream, CU_STREAM_DEFAULT)))
    return nullptr;
  if (!threadStream) {
    threadStream = stream;
    threadStreamInUse = true;
  }
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  if (stream && asStream(stream) == threadStream) {
    threadStreamInUse = false;
    return;
  }
  ScopedContext scope;
  for (void *block :
       deviceCache().release([&](void *from) { return from == stream; }))
    ROPE_CUDA_CHECK(cuMemFreeAsync(asDevicePtr(block), asStream(stream)));
  ROPE_CUDA_CHECK(cuStreamDestroy(asStream(stream)));
}

void mgpuStreamSynchronize(void *stream) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuStreamSynchronize(asStream(stream)));
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(
      cuStreamWaitEvent(asStream(stream), static_cast<CUevent>(event), 0));
}

void *mgpuEventCreate() {
  ScopedContext scope;
  CUevent event = nullptr;
  ROPE_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

void mgpuEventDestroy(void *event) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuEventDestroy(static_cast<CUevent>(event)));
}

void mgpuEventSynchronize(void *event) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuEventSynchronize(static_cast<CUevent>(event)));
}

void mgpuEventRecord(void *event, void *stream) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuEventRecord(static_cast<CUevent>(event), asStream(stream)));
}

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared) {
  if (sizeBytes == 0)
    return nullptr;
  bool cacheable = stream && !isHostShared;
  if (cacheable)
    if (void *cached = deviceCache().take(sizeBytes, stream))
      return cached;
  ScopedContext scope;
  CUdeviceptr ptr = 0;
  bool ok;
  if (isHostShared)
    ok = ROPE_CUDA_CHECK(
        cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL));
  else if (stream && poolsSupported) {
    // Stream-ordered: a block the cache cannot give comes from the pool;
    // when the pool is out of memory, the cache's idle blocks go back to it
    // first.
    uint64_t rounded = DeviceCache::roundedSize(sizeBytes);
    ok = cuMemAllocAsync(&ptr, rounded, asStream(stream)) == CUDA_SUCCESS;
    if (!ok) {
      ropeCudaReleaseCache();
      ok = ROPE_CUDA_CHECK(cuMemAllocAsync(&ptr, rounded, asStream(stream)));
    }
  } else
    ok = ROPE_CUDA_CHECK(cuMemAlloc(&ptr, sizeBytes));
  if (!ok)
    fatal("GPU memory allocation failed");
  if (cacheable && poolsSupported)
    deviceCache().adopt(reinterpret_cast<void *>(ptr), sizeBytes);
  return reinterpret_cast<void *>(ptr);
}

void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  // A block of the cache stays for the next allocation of its size, with no
  // driver call (DeviceCache says where it may be reused).
  if (deviceCache().give(ptr, stream))
    return;
  ScopedContext scope;
  // Buffers come from two allocators: a memory pool (stream-ordered, what
  // lowered functions allocate and may hand to the caller) or cuMemAlloc
  // (hosts, stream-less calls). Each is freed by its own call.
  CUmemoryPool pool = nullptr;
  bool fromPool =
      cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                            asDevicePtr(ptr)) == CUDA_SUCCESS &&
      pool != nullptr;
  if (fromPool)
    ROPE_CUDA_CHECK(cuMemFreeAsync(asDevicePtr(ptr), asStream(stream)));
  else
    ROPE_CUDA_CHECK(cuMemFree(asDevicePtr(ptr)));
}

void ropeCudaReleaseCache() {
  std::vector<void *> blocks =
      deviceCache().release([](void *) { return true; });
  if (blocks.empty())
    return;
  ScopedContext scope;
  for (void *block : blocks)
    ROPE_CUDA_CHECK(cuMemFreeAsync(asDevicePtr(block), nullptr));
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuMemcpyAsync(asDevicePtr(dst), asDevicePtr(src), sizeBytes,
                                asStream(stream)));
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(
      cuMemsetD32Async(asDevicePtr(dst), value, count, asStream(stream)));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(
      cuMemsetD16Async(asDevicePtr(dst), value, count, asStream(stream)));
}

void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes) {
  MemRefSpan span = memrefSpan(rank, descriptor, elementSizeBytes);
  if (span.bytes == 0)
    return;
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuMemHostRegister(span.begin, span.bytes,
                                    CU_MEMHOSTREGISTER_PORTABLE |
                                        CU_MEMHOSTREGISTER_DEVICEMAP));
}

void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes) {
  MemRefSpan span = memrefSpan(rank, descriptor, elementSizeBytes);
  if (span.bytes == 0)
    return;
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuMemHostUnregister(span.begin));
}

void mgpuSetDefaultDevice(int32_t device) { defaultDevice = device; }

int32_t ropeCudaDeviceCount() {
  // Quietly: no driver or no device is an answer here, not an error.
  if (cuInit(0) != CUDA_SUCCESS)
    return 0;
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_SUCCESS)
    return 0;
  return count;
}

const char *ropeCudaDeviceName() {
  static char name[256] = "";
  CUdevice device;
  if (ropeCudaDeviceCount() > defaultDevice &&
      cuDeviceGet(&device, defaultDevice) == CUDA_SUCCESS)
    cuDeviceGetName(name, sizeof(name), device);
  return name;
}

void ropeCudaCopyToDevice(void *dst, const void *src, size_t sizeBytes) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuMemcpyHtoD(asDevicePtr(dst), src, sizeBytes));
  // A copy from pageable memory may return before the data has landed.
  ROPE_CUDA_CHECK(cuStreamSynchronize(nullptr));
}

void ropeCudaCopyToHost(void *dst, const void *src, size_t sizeBytes) {
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuMemcpyDtoH(dst, asDevicePtr(src), sizeBytes));
}

void ropeCudaSynchronize() {
  ScopedContext scope;
  ROPE_CUDA_CHECK(cuCtxSynchronize());
}

int32_t ropeCudaTakeError() { return stickyError.exchange(CUDA_SUCCESS); }

} // extern "C"
