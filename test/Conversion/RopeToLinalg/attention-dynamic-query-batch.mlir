// RUN: rope-opt %s --convert-rope-to-linalg | FileCheck %s

// rope.attention infers a static result batch when only the query's batch
// is dynamic (it takes the value's), while the lowering sizes the output from
// the query. Regression test: the pass used to leave invalid IR here
//   error: type of return operand 0 ('tensor<?x4x8x16xf32>') doesn't match
//   function result type ('tensor<2x4x8x16xf32>')
// the lowered value must be cast back to the op's result type.

// CHECK-LABEL: func.func @attention_dynamic_query_batch
// CHECK-NOT: rope.attention
// CHECK: %[[R:.+]] = tensor.cast %{{.+}} : tensor<?x4x8x16xf32> to tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[R]] : tensor<2x4x8x16xf32>
func.func @attention_dynamic_query_batch(%q: tensor<?x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %0 = rope.attention %q, %k, %v : tensor<?x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}
