// RUN: rope-opt %s --rope-lower-to-cpu | FileCheck %s --check-prefix=IR
// RUN: rope-opt %s --rope-lower-to-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s

// --rope-lower-to-cpu takes rope ops on tensors all the way to the LLVM
// dialect: nothing of rope, linalg or tensor is left.

// IR-NOT: rope.
// IR-NOT: linalg.
// IR-NOT: tensor.
// IR: llvm.func @main()
// IR-NOT: rope.
// IR-NOT: linalg.
// IR-NOT: tensor.

// The same module runs under mlir-runner. Expected values were computed
// independently in Python (math.cos / math.sin, f64) from the formulas of
// rope.rotate (docs/Dialects/RopeDialect.md), D = 4, base 10000, so inv_freq = [1, 0.01]:
//   half pairs (0, 2), (1, 3); interleaved pairs (0, 1), (2, 3);
//   a' = a·cos(p·f) − b·sin(p·f), b' = b·cos(p·f) + a·sin(p·f)
// and printed with '%g' (6 significant digits, as printMemrefF32 prints).
//   for x, p in zip(X, P):
//     for i, (ia, ib) in enumerate(pairs):
//       phi = p * 10000.0 ** (-2 * i / 4)
//       out[ia] = x[ia] * cos(phi) - x[ib] * sin(phi)
//       out[ib] = x[ib] * cos(phi) + x[ia] * sin(phi)
// Position 0 leaves its row unchanged; position 1000 exercises the range
// reduction of the phase.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0],
                             [1.0, 2.0, 3.0, 4.0],
                             [0.5, -1.0, 2.0, 0.25]]> : tensor<3x4xf32>
  %p = arith.constant dense<[0, 1, 1000]> : tensor<3xi64>

  %half = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<3x4xf32>, tensor<3xi64>
  %h = tensor.cast %half : tensor<3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%h) : (tensor<*xf32>) -> ()

  %inter = rope.rotate %x, %p rotary(#rope.spec<layout = interleaved>) : tensor<3x4xf32>, tensor<3xi64>
  %i = tensor.cast %inter : tensor<3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%i) : (tensor<*xf32>) -> ()
  return
}

// CHECK: rank = 2 offset = 0 sizes = [3, 4] strides = [4, 1]
// CHECK-NEXT: [1,   2,   3,   4],
// CHECK-NEXT: [-1.98411,   1.9599,   2.46238,   4.0198],
// CHECK-NEXT: [-1.37257,   0.975077,   1.5382,   0.334253]]

// CHECK: rank = 2 offset = 0 sizes = [3, 4] strides = [4, 1]
// CHECK-NEXT: [1,   2,   3,   4],
// CHECK-NEXT: [-1.14264,   1.92208,   2.95985,   4.0298],
// CHECK-NEXT: [1.10807,   -0.148939,   -1.54214,   -1.29781]]
