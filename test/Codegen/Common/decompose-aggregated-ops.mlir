// RUN: rope-opt %s --rope-decompose-aggregated-ops | FileCheck %s

// linalg.softmax over the last dim becomes its decomposition: the row max
// (init −inf), exp(x − max), the row sum (init 0) and the division, all
// linalg on tensors.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK-NOT: linalg.softmax
func.func @softmax(%x: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %e = tensor.empty() : tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %p : tensor<2x8x8xf32>
}

// Other linalg ops are left alone.
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.matmul
func.func @matmul(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// A KV cache with the new key appended: an empty tensor of the summed
// length and one insert_slice per operand, at offsets 0 and the cache's
// length.
// CHECK-LABEL: func.func @concat_cache
// CHECK-SAME:    (%[[CACHE:[^:]+]]: tensor<1x8x?x128xf32>, %[[NEW:[^:]+]]: tensor<1x8x1x128xf32>)
// CHECK-NOT:     tensor.concat
// CHECK:         %[[N:.+]] = tensor.dim %[[CACHE]], %{{.+}}
// CHECK:         %[[E:.+]] = tensor.empty(%{{.+}}) : tensor<1x8x?x128xf32>
// CHECK:         %[[A:.+]] = tensor.insert_slice %[[CACHE]] into %[[E]][0, 0, 0, 0] [1, 8, %[[N]], 128] [1, 1, 1, 1]
// CHECK:         tensor.insert_slice %[[NEW]] into %[[A]][0, 0, %[[N]], 0] [1, 8, 1, 128] [1, 1, 1, 1]
func.func @concat_cache(%cache: tensor<1x8x?x128xf32>, %new: tensor<1x8x1x128xf32>) -> tensor<1x8x?x128xf32> {
  %r = tensor.concat dim(2) %cache, %new : (tensor<1x8x?x128xf32>, tensor<1x8x1x128xf32>) -> tensor<1x8x?x128xf32>
  return %r : tensor<1x8x?x128xf32>
}
