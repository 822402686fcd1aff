// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s

// The verifier of rope.sinusoidal accepts a result whose extents are static
// where the positions' are dynamic (or the other way round); the lowering
// sizes the encoding from the positions. Regression test: the pass used to
// leave invalid IR here
//   error: type of return operand 0 ('tensor<8x16xf32>') doesn't match
//   function result type ('tensor<?x16xf32>')
// the lowered value must be cast back to the op's result type.

// CHECK-LABEL: func.func @sinusoidal_dynamic_result_static_positions
// CHECK: %[[R:.+]] = tensor.cast %{{.+}} : tensor<8x16xf32> to tensor<?x16xf32>
// CHECK-NEXT: return %[[R]] : tensor<?x16xf32>
func.func @sinusoidal_dynamic_result_static_positions(%p: tensor<8xi64>) -> tensor<?x16xf32> {
  %0 = rope.sinusoidal %p : tensor<8xi64> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// CHECK-LABEL: func.func @sinusoidal_static_result_dynamic_positions
// CHECK: %[[R:.+]] = tensor.cast %{{.+}} : tensor<?x16xf32> to tensor<8x16xf32>
// CHECK-NEXT: return %[[R]] : tensor<8x16xf32>
func.func @sinusoidal_static_result_dynamic_positions(%p: tensor<?xi64>) -> tensor<8x16xf32> {
  %0 = rope.sinusoidal %p : tensor<?xi64> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
