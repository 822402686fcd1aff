//===- RuntimeErrors.h - how compiled code reports a failed check ---------===//
//
// Code compiled by rope-mlir checks, once per call, what the verifier could
// not check at compile time (dynamic extents that must agree, result sizes
// that must not wrap; see --rope-insert-runtime-checks). A failed check
// calls ropeRuntimeError, implemented by libRopeRuntime.so
// (lib/Runtime/RuntimeErrors.cpp), which every compiled library links.
// Nothing of the failing op has run, and it never resumes: the report goes
// to the host in the first of these ways that applies.
//
//  1. The call was made through ropeRuntimeCall on this thread: that call
//     returns 1 with the message (the Python package raises it as an
//     exception). Memory the function allocated before the check is lost.
//  2. The host installed a handler with ropeRuntimeSetErrorHandler: it gets
//     the message and must not return (it may longjmp, or end the
//     process); if it returns, the process aborts.
//  3. Otherwise the message goes to stderr and the process exits with
//     status 1 (mlir-runner with -shared-libs=libRopeRuntime.so).
//
// Checks run on the calling thread, before any parallel region of the op.
// The library depends on nothing but the C library.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RUNTIME_RUNTIMEERRORS_H
#define ROPE_RUNTIME_RUNTIMEERRORS_H

#include <cstddef>
#include <cstdint>

#ifdef _WIN32
#define ROPE_RUNTIME_EXPORT __declspec(dllexport)
#else
#define ROPE_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

extern "C" {
/// Called by compiled code when a check fails: `message` with each `{i}`
/// replaced by `values[i]` goes to the host as described above. Never
/// returns.
[[noreturn]] ROPE_RUNTIME_EXPORT void
ropeRuntimeError(const char *message, int64_t numValues, const int64_t *values);

/// A host's handler of failed checks; it must not return.
typedef void (*RopeRuntimeErrorHandler)(const char *message, void *userData);

/// Installs `handler` (null: none) for the whole process; returns the
/// previous one.
ROPE_RUNTIME_EXPORT RopeRuntimeErrorHandler
ropeRuntimeSetErrorHandler(RopeRuntimeErrorHandler handler, void *userData);

/// The most arguments ropeRuntimeCall passes.
enum { kRopeRuntimeMaxCallArgs = 32 };

/// Calls `function(args[0], ..., args[numArgs - 1])`, each argument a
/// pointer (as the `_mlir_ciface_` wrappers take memref descriptors and the
/// result's). Returns 0 when it returned, 1 when a check failed (the
/// message, cut to `capacity` bytes with its NUL, is in `message`), and -1
/// when `numArgs` is not in [0, kRopeRuntimeMaxCallArgs].
ROPE_RUNTIME_EXPORT int ropeRuntimeCall(void *function, int numArgs,
                                        void *const *args, char *message,
                                        size_t capacity);
} // extern "C"

#endif // ROPE_RUNTIME_RUNTIMEERRORS_H
