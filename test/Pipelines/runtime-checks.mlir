// RUN: rope-opt %s --rope-lower-to-cpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s
// RUN: rope-opt %s --rope-lower-to-cpu | not mlir-runner -e main_rotate -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=ROTATE
// RUN: rope-opt %s --rope-lower-to-cpu=runtime-checks=0 | FileCheck %s --check-prefix=UNCHECKED

// Compiled code checks the shape relations of dynamic extents once per call.
// Under mlir-runner (with libRopeRuntime.so among the shared libs) a failed
// check prints the op's diagnostic with the extents found and exits with
// status 1, before the op runs: the call with 32 keys but 5 values never
// reaches its attention, and nothing after it is printed.

func.func private @printMemrefF32(tensor<*xf32>)

func.func private @attend(%q: tensor<1x1x?x4xf32>, %k: tensor<1x1x?x4xf32>, %v: tensor<1x1x?x4xf32>) -> tensor<1x1x?x4xf32> {
  %o = rope.attention %q, %k, %v : tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>
  return %o : tensor<1x1x?x4xf32>
}

func.func @main() {
  %q = arith.constant dense<1.0> : tensor<1x1x1x4xf32>
  %k32 = arith.constant dense<0.5> : tensor<1x1x32x4xf32>
  %v32 = arith.constant dense<2.0> : tensor<1x1x32x4xf32>
  %v5 = arith.constant dense<3.0> : tensor<1x1x5x4xf32>
  %qd = tensor.cast %q : tensor<1x1x1x4xf32> to tensor<1x1x?x4xf32>
  %kd = tensor.cast %k32 : tensor<1x1x32x4xf32> to tensor<1x1x?x4xf32>
  %vd = tensor.cast %v32 : tensor<1x1x32x4xf32> to tensor<1x1x?x4xf32>
  %v5d = tensor.cast %v5 : tensor<1x1x5x4xf32> to tensor<1x1x?x4xf32>

  // Equal key and value counts: runs (every value is 2).
  %good = call @attend(%qd, %kd, %vd) : (tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<1x1x?x4xf32>
  %g = tensor.cast %good : tensor<1x1x?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%g) : (tensor<*xf32>) -> ()

  // 32 keys, 5 values.
  %bad = call @attend(%qd, %kd, %v5d) : (tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<1x1x?x4xf32>
  %b = tensor.cast %bad : tensor<1x1x?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%b) : (tensor<*xf32>) -> ()
  return
}

// CHECK: rank = 4 offset = 0 sizes = [1, 1, 1, 4]
// CHECK-NEXT: [2,   2,   2,   2]
// CHECK: runtime-checks.mlir:14:8: error: 'rope.attention' op expects key and value to have the same sequence length, got 32 and 5
// CHECK-NOT: rank = 4

// 16 sequence rows, 10 positions.
func.func private @rotate(%x: tensor<1x1x?x4xf32>, %p: tensor<?xi64>) -> tensor<1x1x?x4xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<1x1x?x4xf32>, tensor<?xi64>
  return %r : tensor<1x1x?x4xf32>
}

func.func @main_rotate() {
  %x = arith.constant dense<1.0> : tensor<1x1x16x4xf32>
  %p = arith.constant dense<7> : tensor<10xi64>
  %xd = tensor.cast %x : tensor<1x1x16x4xf32> to tensor<1x1x?x4xf32>
  %pd = tensor.cast %p : tensor<10xi64> to tensor<?xi64>
  %r = call @rotate(%xd, %pd) : (tensor<1x1x?x4xf32>, tensor<?xi64>) -> tensor<1x1x?x4xf32>
  %u = tensor.cast %r : tensor<1x1x?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// ROTATE: runtime-checks.mlir:[[# @LINE - 15]]:8: error: 'rope.rotate' op expects positions to have 16 entries along the sequence, got 10
// ROTATE-NOT: rank =

// Without checks, nothing calls the runtime.
// UNCHECKED-NOT: ropeRuntimeError
