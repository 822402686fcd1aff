/*===- rope-c/Compiler.h - compile rope modules in process -------*- C -*-===*\
|*                                                                            *|
|* rope-mlir's C API: parse a module, run one of our pipelines and compile    *|
|* the result for this machine, all inside the calling process. Either        *|
|* JIT-compiled through MLIR's ExecutionEngine (RopeJitModule) or written as  *|
|* a relocatable object for an ahead-of-time shared library (GPU bundles).    *|
|*                                                                            *|
|* Plain C types only, so that ctypes (rope_mlir's Python package) and any    *|
|* other FFI can call it. Strings this API returns as `char **` are           *|
|* heap-allocated: free them with ropeFreeString.                             *|
|*                                                                            *|
|* Diagnostics and signatures are JSON:                                       *|
|*   diagnostics: [{"severity": "error", "location": "file:3:7",              *|
|*                  "message": "...", "notes": [{"location", "message"}]}]    *|
|*   signatures:  [{"name": "rot", "inputs": [ARG...], "results": [ARG...]}]  *|
|*     ARG: {"name": "%x", "type": "tensor<?x4xf32>", "kind": "tensor",       *|
|*           "element": "f32", "shape": [null, 4]}                            *|
|*   where "kind" is "tensor", "memref" or "scalar", "shape" (ranked shaped   *|
|*   types only) has null for a dynamic extent and "name" is the argument's   *|
|*   SSA name in the source ("" where it has none).                           *|
|* A signature describes a public func.func as written, before lowering; the  *|
|* compiled code exposes it as `_mlir_ciface_<name>` (memref descriptors).    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ROPE_C_COMPILER_H
#define ROPE_C_COMPILER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROPE_CAPI_EXPORTED __attribute__((visibility("default")))

/// What to compile with.
typedef struct RopeCompileOptions {
  /// The pass pipeline, in MLIR's textual form: either a list of passes run
  /// on the module, e.g. "rope-lower-to-cpu{query-tile=32}", or a full
  /// "builtin.module(...)". It must end in the LLVM dialect. Required.
  const char *pipeline;
  /// LLVM's optimisation level, 0 to 3 (clang's -O0 to -O3; 2 is what the
  /// Python package uses by default).
  int optLevel;
  /// The name diagnostics give the source, e.g. its file ("<source>" if NULL).
  const char *sourceName;
} RopeCompileOptions;

/// A module compiled into this process. Its functions stay callable until
/// ropeJitDestroy.
typedef struct RopeJitModule RopeJitModule;

/// Parses `source` (`length` bytes), runs the pipeline, translates to LLVM
/// IR, optimises it for this machine's CPU and JIT-compiles every function.
/// Returns NULL on failure and then sets `*diagnostics` (when `diagnostics`
/// is not NULL) to the JSON list of what went wrong, with source locations.
/// Libraries the compiled code calls (the rope runtime, MLIR's C runner
/// utils, OpenMP) must already be loaded into the process with RTLD_GLOBAL.
ROPE_CAPI_EXPORTED RopeJitModule *
ropeJitCompile(const char *source, size_t length,
               const RopeCompileOptions *options, char **diagnostics);

/// The address of `name`'s C interface (`_mlir_ciface_<name>`), or NULL.
ROPE_CAPI_EXPORTED void *ropeJitLookup(const RopeJitModule *module,
                                       const char *name);

/// The address of `name`'s packed entry point, `_rope_packed_<name>(void
/// **args)`, or NULL: it calls the C interface with args[0], args[1], ...
/// (the result's descriptor first, then one per argument), for callers that
/// pass more arguments than ropeRuntimeCall does. Compiled objects
/// (ropeCompileToObject) export the same symbol.
ROPE_CAPI_EXPORTED void *ropeJitLookupPacked(const RopeJitModule *module,
                                             const char *name);

/// The signatures (JSON) of the module's public functions; owned by the
/// module.
ROPE_CAPI_EXPORTED const char *
ropeJitGetSignatures(const RopeJitModule *module);

/// Releases the compiled code and everything the module holds.
ROPE_CAPI_EXPORTED void ropeJitDestroy(RopeJitModule *module);

/// Ahead of time: the same compilation, written as a position-independent
/// object file for this machine's CPU to `outputPath` (link it into a shared
/// library). Returns 0 on success and sets `*signatures` (when not NULL);
/// returns 1 on failure and sets `*diagnostics` (when not NULL).
ROPE_CAPI_EXPORTED int ropeCompileToObject(const char *source, size_t length,
                                           const RopeCompileOptions *options,
                                           const char *outputPath,
                                           char **signatures,
                                           char **diagnostics);

/// Runs `options->pipeline` (any pipeline; empty runs none) on `source` and
/// sets `*output` to the resulting module in MLIR's custom assembly. Returns
/// 0 on success, 1 on failure. Either way `*diagnostics` (when not NULL) is
/// set: the errors of a failure, or the remarks and warnings the passes
/// emitted (a JSON array, often empty); free it with ropeFreeString.
ROPE_CAPI_EXPORTED int ropeRunPipeline(const char *source, size_t length,
                                       const RopeCompileOptions *options,
                                       char **output, char **diagnostics);

/// Frees a string this API returned through a `char **`.
ROPE_CAPI_EXPORTED void ropeFreeString(char *string);

#ifdef __cplusplus
}
#endif

#endif /* ROPE_C_COMPILER_H */
