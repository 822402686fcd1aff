// RUN: rope-opt %s --rope-raise | FileCheck %s

// A head count of 2^63 - 1 (a fuzzer's mutant; every extent empty since the
// lengths are 0): the kv head counts tried are the divisors of the heads,
// found by trial up to a bound, and the batch·head index is compared at
// two periods of its divisors, not at each of its 2^63 - 1 values; the
// raise once spent hours here.
// CHECK-LABEL: func.func @causal_by_compare
// CHECK: rope.attention %arg0, %arg1, %arg2 scale = 1.000000e+00 : tensor<1x9223372036854775807x0x16xf32>
func.func @causal_by_compare(%q: tensor<1x9223372036854775807x0x16xf32>, %k: tensor<1x9223372036854775807x0x16xf32>, %v: tensor<1x9223372036854775807x0x16xf32>) -> tensor<1x9223372036854775807x0x16xf32> {
  %kt_e = tensor.empty() : tensor<1x9223372036854775807x16x0xf32>
  %kt = linalg.transpose ins(%k : tensor<1x9223372036854775807x0x16xf32>) outs(%kt_e : tensor<1x9223372036854775807x16x0xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x9223372036854775807x0x16xf32> into tensor<9223372036854775807x0x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x9223372036854775807x16x0xf32> into tensor<9223372036854775807x16x0xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<9223372036854775807x0x0xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<9223372036854775807x0x0xf32>) -> tensor<9223372036854775807x0x0xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<9223372036854775807x0x16xf32>, tensor<9223372036854775807x16x0xf32>) outs(%s_f : tensor<9223372036854775807x0x0xf32>) -> tensor<9223372036854775807x0x0xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<9223372036854775807x0x0xf32> into tensor<1x9223372036854775807x0x0xf32>
  %m_e = tensor.empty() : tensor<0x0xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<0x0xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.constant 3.4e+38 : f32
    %r = arith.select %future, %ninf, %z : f32
    linalg.yield %r : f32
  } -> tensor<0x0xf32>
  %x_e = tensor.empty() : tensor<1x9223372036854775807x0x0xf32>
  %scale = arith.constant 1.0 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x9223372036854775807x0x0xf32>, tensor<0x0xf32>) outs(%x_e : tensor<1x9223372036854775807x0x0xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x9223372036854775807x0x0xf32>
  %p_e = tensor.empty() : tensor<1x9223372036854775807x0x0xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x9223372036854775807x0x0xf32>) outs(%p_e : tensor<1x9223372036854775807x0x0xf32>) -> tensor<1x9223372036854775807x0x0xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x9223372036854775807x0x0xf32> into tensor<9223372036854775807x0x0xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x9223372036854775807x0x16xf32> into tensor<9223372036854775807x0x16xf32>
  %o_e = tensor.empty() : tensor<9223372036854775807x0x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<9223372036854775807x0x16xf32>) -> tensor<9223372036854775807x0x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<9223372036854775807x0x0xf32>, tensor<9223372036854775807x0x16xf32>) outs(%o_f : tensor<9223372036854775807x0x16xf32>) -> tensor<9223372036854775807x0x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<9223372036854775807x0x16xf32> into tensor<1x9223372036854775807x0x16xf32>
  return %o4 : tensor<1x9223372036854775807x0x16xf32>
}
