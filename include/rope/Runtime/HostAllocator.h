//===- HostAllocator.h - the buffers that compiled CPU code allocates ----===//
//
// Code lowered by --rope-lower-to-cpu (option cache-allocations, on by
// default) allocates and frees its buffers through MLIR's generic
// allocation functions, which libRopeRuntime.so implements here. Large
// buffers (1 MiB and up: an attention's accumulator, a rotated Q, a
// frontend graph's intermediates) are kept when freed and handed out again
// to a later allocation of about the same size, instead of going back to
// the C library: a fresh large block comes from mmap, and the kernel then
// clears each of its pages on first touch, which cost 15% of a prefill
// attention call (S = 2048) on a 2-core Xeon. Smaller buffers go straight to
// malloc/free.
//
// A host frees what compiled code returns (a result it allocated) with
// _mlir_memref_to_llvm_free, never with free(): the block may belong to the
// cache. The large blocks it holds, handed out or idle, stay within the most
// the program has had handed out at once (or 1 GiB where that is less): a
// long prompt's temporaries outgrow any fixed limit (2 GiB a call for a
// frontend graph's prefill of S = 8192, which ran 20% slower with 1 GiB
// kept), and the program's peak memory stays what it would be without the
// cache (idle blocks go back to the C library, largest first, before a new
// peak). Where ROPE_HOST_CACHE_MIB is set (read once per process), it
// bounds the idle blocks instead, in MiB; 0 turns caching off. Thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RUNTIME_HOSTALLOCATOR_H
#define ROPE_RUNTIME_HOSTALLOCATOR_H

#include "rope/Runtime/RuntimeErrors.h"

#include <cstddef>
#include <cstdint>

extern "C" {

/// `size` bytes, 16-byte aligned (malloc's alignment); the lowering aligns
/// further by over-allocating.
ROPE_RUNTIME_EXPORT void *_mlir_memref_to_llvm_alloc(uint64_t size);

/// `size` bytes aligned to `alignment` (a power of two).
ROPE_RUNTIME_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                             uint64_t size);

/// Frees a block from either function above (null: nothing), keeping a
/// large one for reuse while the cache has room.
ROPE_RUNTIME_EXPORT void _mlir_memref_to_llvm_free(void *ptr);

/// Bytes of idle blocks the cache holds.
ROPE_RUNTIME_EXPORT size_t ropeHostCachedBytes(void);

/// Returns every idle block to the C library.
ROPE_RUNTIME_EXPORT void ropeHostReleaseCachedMemory(void);

} // extern "C"

#endif // ROPE_RUNTIME_HOSTALLOCATOR_H
