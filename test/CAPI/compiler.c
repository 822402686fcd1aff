// RUN: rm -rf %t && mkdir -p %t && %rope_capi_test %t/kernel.o 2>&1 | FileCheck %s
//
// The C API (include/rope-c/Compiler.h) from C, as a host program uses it:
// JIT-compile a rotation and call its C interface, read the signatures,
// get diagnostics with locations for a bad module and a bad pipeline, run a
// pipeline to text, and write an object file.

#include "rope-c/Compiler.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// libRopeRuntime.so (include/rope/Runtime/HostAllocator.h, a C++ header):
// frees what compiled CPU code allocated.
void _mlir_memref_to_llvm_free(void *ptr);

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
} MemRef4DF32;

typedef struct {
  int64_t *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1DI64;

static const char kRotate[] =
    "func.func @kernel(%x: tensor<1x1x2x2xf32>, %pos: tensor<2xi64>)\n"
    "    -> tensor<1x1x2x2xf32> {\n"
    "  %r = rope.rotate %x, %pos rotary(#rope.spec<>)\n"
    "      : tensor<1x1x2x2xf32>, tensor<2xi64>\n"
    "  return %r : tensor<1x1x2x2xf32>\n"
    "}\n";

/// Compiles `source`, which must fail, and prints its diagnostics after
/// `label`; 0 (and a message on stderr) if it compiled.
static int printCompileError(const char *label, const char *source,
                             const RopeCompileOptions *options) {
  char *diagnostics = NULL;
  RopeJitModule *module =
      ropeJitCompile(source, strlen(source), options, &diagnostics);
  if (module) {
    fprintf(stderr, "%s: compiled, expected a failure\n", label);
    ropeJitDestroy(module);
    return 0;
  }
  printf("%s %s\n", label, diagnostics);
  ropeFreeString(diagnostics);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OBJECT-PATH\n", argv[0]);
    return 2;
  }
  RopeCompileOptions options = {"rope-lower-to-cpu", 2, "rotate.mlir"};
  char *diagnostics = NULL;
  RopeJitModule *module =
      ropeJitCompile(kRotate, strlen(kRotate), &options, &diagnostics);
  if (!module) {
    fprintf(stderr, "compile failed: %s\n", diagnostics);
    return 1;
  }
  // CHECK: SIGNATURES [{"inputs":[{"element":"f32","kind":"tensor","name":"%x","shape":[1,1,2,2],"type":"tensor<1x1x2x2xf32>"},{"element":"i64","kind":"tensor","name":"%pos"
  printf("SIGNATURES %s\n", ropeJitGetSignatures(module));

  // Head dim 2: one pair, theta = 1. Position 0 keeps (1, 0); position 1
  // rotates it by one radian to (cos 1, sin 1).
  float x[4] = {1, 0, 1, 0};
  int64_t positions[2] = {0, 1};
  MemRef4DF32 input = {x, x, 0, {1, 1, 2, 2}, {4, 4, 2, 1}};
  MemRef1DI64 pos = {positions, positions, 0, {2}, {1}};
  MemRef4DF32 result;
  void (*kernel)(MemRef4DF32 *, MemRef4DF32 *, MemRef1DI64 *) =
      (void (*)(MemRef4DF32 *, MemRef4DF32 *, MemRef1DI64 *))ropeJitLookup(
          module, "kernel");
  kernel(&result, &input, &pos);
  const float *out = result.aligned + result.offset;
  // CHECK: RESULT 1.0000 0.0000 0.5403 0.8415 (expected 0.5403 0.8415)
  printf("RESULT %.4f %.4f %.4f %.4f (expected %.4f %.4f)\n", out[0], out[1],
         out[2], out[3], cos(1.0), sin(1.0));
  // Compiled code's buffers come from the rope runtime (HostAllocator.h).
  _mlir_memref_to_llvm_free(result.allocated);
  // CHECK: MISSING (nil)
  printf("MISSING %p\n", ropeJitLookup(module, "nothing"));
  ropeJitDestroy(module);

  // CHECK: DIAGNOSTICS [{"location":"bad.mlir:2:3","message":"custom op 'rope.nothing' is unknown","notes":[],"severity":"error"}]
  static const char kBad[] = "func.func @f() {\n  rope.nothing\n  return\n}\n";
  RopeCompileOptions badOptions = {"rope-lower-to-cpu", 2, "bad.mlir"};
  if (!printCompileError("DIAGNOSTICS", kBad, &badOptions))
    return 1;

  // CHECK: PIPELINE {{.*}}invalid pass pipeline 'no-such-pass'
  RopeCompileOptions badPipeline = {"no-such-pass", 2, NULL};
  if (!printCompileError("PIPELINE", kRotate, &badPipeline))
    return 1;

  // CHECK: LOWERED {{.*}}linalg.generic
  RopeCompileOptions toLinalg = {"convert-rope-to-linalg", 0, NULL};
  char *text = NULL;
  if (ropeRunPipeline(kRotate, strlen(kRotate), &toLinalg, &text,
                      &diagnostics)) {
    fprintf(stderr, "run pipeline failed: %s\n", diagnostics);
    return 1;
  }
  printf("LOWERED %s\n", strstr(text, "linalg.generic") ? "linalg.generic" : text);
  ropeFreeString(text);
  // CHECK: REMARKS []
  printf("REMARKS %s\n", diagnostics);
  ropeFreeString(diagnostics);
  diagnostics = NULL;

  // CHECK: OBJECT written
  char *signatures = NULL;
  struct stat info;
  if (ropeCompileToObject(kRotate, strlen(kRotate), &options, argv[1],
                          &signatures, &diagnostics) ||
      stat(argv[1], &info) != 0 || info.st_size == 0) {
    fprintf(stderr, "object failed\n");
    return 1;
  }
  printf("OBJECT written\n");
  ropeFreeString(signatures);
  return 0;
}
