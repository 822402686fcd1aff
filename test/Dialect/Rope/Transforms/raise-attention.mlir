// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// HF eager attention (Llama): repeat_kv (5-D broadcast + collapse), Kᵀ by
// linalg.transpose, batched Q·Kᵀ, the scale after the product, the causal
// mask built from iota comparisons with finfo.min, softmax as max (with
// torch's argmax) / subtract / exp / sum / divide, batched P·V.
// CHECK-LABEL: func.func @eager_gqa_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>)
// CHECK: %[[O:.+]] = rope.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @eager_gqa_causal(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %kr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %kr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x8x16xf32>) outs(%kr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %kr = tensor.collapse_shape %kr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %vr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %vr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x8x16xf32>) outs(%vr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %vr = tensor.collapse_shape %vr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %kt_e = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x16xf32>) outs(%kt_e : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %s_e = tensor.empty() : tensor<4x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%s_f : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x4x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x4x8x8xf32>) outs(%sc_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %cm_ie = tensor.empty() : tensor<8xi64>
  %cm_io = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%cm_ie : tensor<8xi64>) {
  ^bb0(%out: i64):
    %ix = linalg.index 0 : index
    %ii = arith.index_cast %ix : index to i64
    linalg.yield %ii : i64
  } -> tensor<8xi64>
  %cm_r = tensor.expand_shape %cm_io [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %cm_c = tensor.expand_shape %cm_io [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
  %cm_be = tensor.empty() : tensor<8x8xi1>
  %cm_hide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_c, %cm_r : tensor<1x8xi64>, tensor<8x1xi64>) outs(%cm_be : tensor<8x8xi1>) {
  ^bb0(%j: i64, %i: i64, %out: i1):
    %future = arith.cmpi sgt, %j, %i : i64
    linalg.yield %future : i1
  } -> tensor<8x8xi1>
  %cm_min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %cm_zero = arith.constant dense<0.0> : tensor<f32>
  %cm_fe = tensor.empty() : tensor<8x8xf32>
  %cm_m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_hide, %cm_min, %cm_zero : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%cm_fe : tensor<8x8xf32>) {
  ^bb0(%h: i1, %lo: f32, %z: f32, %out: f32):
    %sv = arith.select %h, %lo, %z : f32
    linalg.yield %sv : f32
  } -> tensor<8x8xf32>
  %cm = tensor.expand_shape %cm_m [[0, 1, 2], [3]] output_shape [1, 1, 8, 8] : tensor<8x8xf32> into tensor<1x1x8x8xf32>
  %x_e = tensor.empty() : tensor<1x4x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %cm : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%x_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.addf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x4x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %p_ai = tensor.empty() : tensor<1x4x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x4x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x4x8x8xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_si = tensor.empty() : tensor<1x4x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x4x8x8xf32>) outs(%p_s0 : tensor<1x4x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %vr_b [[0, 1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<4x8x16xf32>
  %o_e = tensor.empty() : tensor<4x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%o_f : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
  return %o4 : tensor<1x4x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// SDPA's decomposition: √scale on Q and on Kᵀ before the product.
// CHECK-LABEL: func.func @scale_on_operands
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal scale = 2.500000e-01 :
// CHECK-NOT: linalg.batch_matmul
func.func @scale_on_operands(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %qs_c = arith.constant 0.5 : f32
  %qs_e = tensor.empty() : tensor<1x2x8x16xf32>
  %qs = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<1x2x8x16xf32>) outs(%qs_e : tensor<1x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %qs_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x16xf32>
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %kts_c = arith.constant 0.5 : f32
  %kts_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kts = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kt : tensor<1x2x16x8xf32>) outs(%kts_e : tensor<1x2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %kts_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x16x8xf32>
  %q3 = tensor.collapse_shape %qs [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kts [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %cm_ie = tensor.empty() : tensor<8xi64>
  %cm_io = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%cm_ie : tensor<8xi64>) {
  ^bb0(%out: i64):
    %ix = linalg.index 0 : index
    %ii = arith.index_cast %ix : index to i64
    linalg.yield %ii : i64
  } -> tensor<8xi64>
  %cm_r = tensor.expand_shape %cm_io [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %cm_c = tensor.expand_shape %cm_io [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
  %cm_be = tensor.empty() : tensor<8x8xi1>
  %cm_hide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_c, %cm_r : tensor<1x8xi64>, tensor<8x1xi64>) outs(%cm_be : tensor<8x8xi1>) {
  ^bb0(%j: i64, %i: i64, %out: i1):
    %future = arith.cmpi sgt, %j, %i : i64
    linalg.yield %future : i1
  } -> tensor<8x8xi1>
  %cm_min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %cm_zero = arith.constant dense<0.0> : tensor<f32>
  %cm_fe = tensor.empty() : tensor<8x8xf32>
  %cm_m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_hide, %cm_min, %cm_zero : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%cm_fe : tensor<8x8xf32>) {
  ^bb0(%h: i1, %lo: f32, %z: f32, %out: f32):
    %sv = arith.select %h, %lo, %z : f32
    linalg.yield %sv : f32
  } -> tensor<8x8xf32>
  %cm = tensor.expand_shape %cm_m [[0, 1, 2], [3]] output_shape [1, 1, 8, 8] : tensor<8x8xf32> into tensor<1x1x8x8xf32>
  %x_e = tensor.empty() : tensor<1x2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %cm : tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>) outs(%x_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.addf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x2x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %p_ai = tensor.empty() : tensor<1x2x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x2x8xi64>) -> tensor<1x2x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x2x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x2x8xf32>, tensor<1x2x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x2x8xf32>, tensor<1x2x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x2x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x2x8x8xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_si = tensor.empty() : tensor<1x2x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x2x8x8xf32>) outs(%p_s0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// The scale as a division, and a mask that is a function argument: kept as
// attention's additive mask.
// CHECK-LABEL: func.func @divided_scale_mask_operand
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x1x8x8xf32>
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} mask(%[[M]] : tensor<1x1x8x8xf32>) scale = 2.500000e-01 :
// CHECK-NOT: linalg.batch_matmul
func.func @divided_scale_mask_operand(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %mask: tensor<1x1x8x8xf32>) -> tensor<1x4x8x16xf32> {
  %kr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %kr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x8x16xf32>) outs(%kr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %kr = tensor.collapse_shape %kr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %vr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %vr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x8x16xf32>) outs(%vr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %vr = tensor.collapse_shape %vr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %kt_e = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x16xf32>) outs(%kt_e : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %s_e = tensor.empty() : tensor<4x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%s_f : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %sc_c = arith.constant 4.0 : f32
  %sc_e = tensor.empty() : tensor<1x4x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x4x8x8xf32>) outs(%sc_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %x_e = tensor.empty() : tensor<1x4x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %mask : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%x_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.addf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x4x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %p_ai = tensor.empty() : tensor<1x4x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x4x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x4x8x8xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_si = tensor.empty() : tensor<1x4x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x4x8x8xf32>) outs(%p_s0 : tensor<1x4x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %vr_b [[0, 1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<4x8x16xf32>
  %o_e = tensor.empty() : tensor<4x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%o_f : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
  return %o4 : tensor<1x4x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// Gemma 2: logits soft-capped (divide, tanh, multiply) before a sliding
// window mask (future keys and keys 3 or more back hidden).
// CHECK-LABEL: func.func @softcap_window
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal window = 3 softcap = 5.000000e+01 scale = 2.500000e-01 :
// CHECK-NOT: linalg.batch_matmul
func.func @softcap_window(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %kr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %kr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x8x16xf32>) outs(%kr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %kr = tensor.collapse_shape %kr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %vr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %vr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x8x16xf32>) outs(%vr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %vr = tensor.collapse_shape %vr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %kt_e = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x16xf32>) outs(%kt_e : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %s_e = tensor.empty() : tensor<4x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%s_f : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x4x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x4x8x8xf32>) outs(%sc_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %cap_in_c = arith.constant 50.0 : f32
  %cap_in_e = tensor.empty() : tensor<1x4x8x8xf32>
  %cap_in = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc : tensor<1x4x8x8xf32>) outs(%cap_in_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %cap_in_c : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %cap_t = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cap_in : tensor<1x4x8x8xf32>) outs(%cap_in_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.tanh %in : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %cap_c = arith.constant 50.0 : f32
  %cap_e = tensor.empty() : tensor<1x4x8x8xf32>
  %cap = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cap_t : tensor<1x4x8x8xf32>) outs(%cap_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %cap_c : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %cm_ie = tensor.empty() : tensor<8xi64>
  %cm_io = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%cm_ie : tensor<8xi64>) {
  ^bb0(%out: i64):
    %ix = linalg.index 0 : index
    %ii = arith.index_cast %ix : index to i64
    linalg.yield %ii : i64
  } -> tensor<8xi64>
  %cm_r = tensor.expand_shape %cm_io [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %cm_c = tensor.expand_shape %cm_io [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
  %cm_be = tensor.empty() : tensor<8x8xi1>
  %cm_hide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_c, %cm_r : tensor<1x8xi64>, tensor<8x1xi64>) outs(%cm_be : tensor<8x8xi1>) {
  ^bb0(%j: i64, %i: i64, %out: i1):
    %future = arith.cmpi sgt, %j, %i : i64
    %dist = arith.subi %i, %j : i64
    %w = arith.constant 3 : i64
    %far = arith.cmpi sge, %dist, %w : i64
    %hh = arith.ori %future, %far : i1
    linalg.yield %hh : i1
  } -> tensor<8x8xi1>
  %cm_min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %cm_zero = arith.constant dense<0.0> : tensor<f32>
  %cm_fe = tensor.empty() : tensor<8x8xf32>
  %cm_m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_hide, %cm_min, %cm_zero : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%cm_fe : tensor<8x8xf32>) {
  ^bb0(%h: i1, %lo: f32, %z: f32, %out: f32):
    %sv = arith.select %h, %lo, %z : f32
    linalg.yield %sv : f32
  } -> tensor<8x8xf32>
  %cm = tensor.expand_shape %cm_m [[0, 1, 2], [3]] output_shape [1, 1, 8, 8] : tensor<8x8xf32> into tensor<1x1x8x8xf32>
  %x_e = tensor.empty() : tensor<1x4x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cap, %cm : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%x_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.addf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x4x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %p_ai = tensor.empty() : tensor<1x4x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x4x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x4x8x8xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_si = tensor.empty() : tensor<1x4x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x4x8x8xf32>) outs(%p_s0 : tensor<1x4x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %vr_b [[0, 1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<4x8x16xf32>
  %o_e = tensor.empty() : tensor<4x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%o_f : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
  return %o4 : tensor<1x4x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// Batch 2 (the batched products run over b·H + h), no mask.
// CHECK-LABEL: func.func @batched_unmasked
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} scale = 2.500000e-01 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @batched_unmasked(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<2x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x2x8x16xf32>) outs(%kt_e : tensor<2x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x2x16x8xf32> into tensor<4x16x8xf32>
  %s_e = tensor.empty() : tensor<4x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%s_f : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 2, 8, 8] : tensor<4x8x8xf32> into tensor<2x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<2x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<2x2x8x8xf32>) outs(%sc_e : tensor<2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<2x2x8x8xf32>
  %p_mi = tensor.empty() : tensor<2x2x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  %p_ai = tensor.empty() : tensor<2x2x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<2x2x8xi64>) -> tensor<2x2x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sc : tensor<2x2x8x8xf32>) outs(%p_m0, %p_a0 : tensor<2x2x8xf32>, tensor<2x2x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<2x2x8xf32>, tensor<2x2x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [2, 2, 8, 1] : tensor<2x2x8xf32> into tensor<2x2x8x1xf32>
  %p_e4 = tensor.empty() : tensor<2x2x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %p_mk : tensor<2x2x8x8xf32>, tensor<2x2x8x1xf32>) outs(%p_e4 : tensor<2x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<2x2x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<2x2x8x8xf32>) outs(%p_e4 : tensor<2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<2x2x8x8xf32>
  %p_si = tensor.empty() : tensor<2x2x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<2x2x8x1xf32>) -> tensor<2x2x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<2x2x8x8xf32>) outs(%p_s0 : tensor<2x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<2x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<2x2x8x8xf32>, tensor<2x2x8x1xf32>) outs(%p_e4 : tensor<2x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<2x2x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x2x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %o_e = tensor.empty() : tensor<4x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%o_f : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 2, 8, 16] : tensor<4x8x16xf32> into tensor<2x2x8x16xf32>
  return %o4 : tensor<2x2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// The softmax as linalg.softmax along the keys.
// CHECK-LABEL: func.func @linalg_softmax
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal scale = 2.500000e-01 :
// CHECK-NOT: linalg.softmax
func.func @linalg_softmax(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%sc_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %cm_ie = tensor.empty() : tensor<8xi64>
  %cm_io = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%cm_ie : tensor<8xi64>) {
  ^bb0(%out: i64):
    %ix = linalg.index 0 : index
    %ii = arith.index_cast %ix : index to i64
    linalg.yield %ii : i64
  } -> tensor<8xi64>
  %cm_r = tensor.expand_shape %cm_io [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %cm_c = tensor.expand_shape %cm_io [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
  %cm_be = tensor.empty() : tensor<8x8xi1>
  %cm_hide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_c, %cm_r : tensor<1x8xi64>, tensor<8x1xi64>) outs(%cm_be : tensor<8x8xi1>) {
  ^bb0(%j: i64, %i: i64, %out: i1):
    %future = arith.cmpi sgt, %j, %i : i64
    linalg.yield %future : i1
  } -> tensor<8x8xi1>
  %cm_min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %cm_zero = arith.constant dense<0.0> : tensor<f32>
  %cm_fe = tensor.empty() : tensor<8x8xf32>
  %cm_m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_hide, %cm_min, %cm_zero : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%cm_fe : tensor<8x8xf32>) {
  ^bb0(%h: i1, %lo: f32, %z: f32, %out: f32):
    %sv = arith.select %h, %lo, %z : f32
    linalg.yield %sv : f32
  } -> tensor<8x8xf32>
  %cm = tensor.expand_shape %cm_m [[0, 1, 2], [3]] output_shape [1, 1, 8, 8] : tensor<8x8xf32> into tensor<1x1x8x8xf32>
  %x_e = tensor.empty() : tensor<1x2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %cm : tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>) outs(%x_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.addf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_e = tensor.empty() : tensor<1x2x8x8xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x8x8xf32>) outs(%p_e : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// torch.where(mask, scores, -inf) with a boolean mask argument: attention's
// i1 mask (true = may attend).
// CHECK-LABEL: func.func @boolean_mask_operand
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x1x8x8xi1>
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} mask(%[[M]] : tensor<1x1x8x8xi1>) scale = 2.500000e-01 :
func.func @boolean_mask_operand(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %bmask: tensor<1x1x8x8xi1>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%sc_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %x_ninf = arith.constant 0xFF800000 : f32
  %x_e = tensor.empty() : tensor<1x2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %bmask : tensor<1x2x8x8xf32>, tensor<1x1x8x8xi1>) outs(%x_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %c: i1, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %d = arith.select %c, %in, %ninf : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x2x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %p_ai = tensor.empty() : tensor<1x2x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x2x8xi64>) -> tensor<1x2x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x2x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x2x8xf32>, tensor<1x2x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x2x8xf32>, tensor<1x2x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x2x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x2x8x8xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_si = tensor.empty() : tensor<1x2x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x2x8x8xf32>) outs(%p_s0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// masked_fill(j > i, -inf) with the condition from iota comparisons: causal.
// CHECK-LABEL: func.func @boolean_causal_masked_fill
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal scale = 2.500000e-01 :
// CHECK-NOT: arith.select
func.func @boolean_causal_masked_fill(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%sc_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %cm_ie = tensor.empty() : tensor<8xi64>
  %cm_io = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%cm_ie : tensor<8xi64>) {
  ^bb0(%out: i64):
    %ix = linalg.index 0 : index
    %ii = arith.index_cast %ix : index to i64
    linalg.yield %ii : i64
  } -> tensor<8xi64>
  %cm_r = tensor.expand_shape %cm_io [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %cm_c = tensor.expand_shape %cm_io [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
  %cm_be = tensor.empty() : tensor<8x8xi1>
  %cm_hide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_c, %cm_r : tensor<1x8xi64>, tensor<8x1xi64>) outs(%cm_be : tensor<8x8xi1>) {
  ^bb0(%j: i64, %i: i64, %out: i1):
    %future = arith.cmpi sgt, %j, %i : i64
    linalg.yield %future : i1
  } -> tensor<8x8xi1>
  %cm_min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %cm_zero = arith.constant dense<0.0> : tensor<f32>
  %cm_fe = tensor.empty() : tensor<8x8xf32>
  %cm_m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_hide, %cm_min, %cm_zero : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%cm_fe : tensor<8x8xf32>) {
  ^bb0(%h: i1, %lo: f32, %z: f32, %out: f32):
    %sv = arith.select %h, %lo, %z : f32
    linalg.yield %sv : f32
  } -> tensor<8x8xf32>
  %cm = tensor.expand_shape %cm_m [[0, 1, 2], [3]] output_shape [1, 1, 8, 8] : tensor<8x8xf32> into tensor<1x1x8x8xf32>
  %x_ninf = arith.constant 0xFF800000 : f32
  %x_e = tensor.empty() : tensor<1x2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %cm_hide : tensor<1x2x8x8xf32>, tensor<8x8xi1>) outs(%x_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %c: i1, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %d = arith.select %c, %ninf, %in : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x2x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %p_ai = tensor.empty() : tensor<1x2x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x2x8xi64>) -> tensor<1x2x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x2x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x2x8xf32>, tensor<1x2x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x2x8xf32>, tensor<1x2x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x2x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x2x8x8xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_si = tensor.empty() : tensor<1x2x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x2x8x8xf32>) outs(%p_s0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// Near miss: kv heads repeated by tiling (query head h reads kv head
// h mod Hkv), which is not GQA's grouping. Left alone.
// CHECK-LABEL: func.func @no_raise_tiled_kv_heads
// CHECK-NOT: rope.attention
// CHECK-COUNT-2: linalg.batch_matmul
func.func @no_raise_tiled_kv_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %kr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %kr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x8x16xf32>) outs(%kr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %kr = tensor.collapse_shape %kr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %vr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %vr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x8x16xf32>) outs(%vr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %vr = tensor.collapse_shape %vr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %kt_e = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x16xf32>) outs(%kt_e : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %s_e = tensor.empty() : tensor<4x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%s_f : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x4x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x4x8x8xf32>) outs(%sc_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %cm_ie = tensor.empty() : tensor<8xi64>
  %cm_io = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%cm_ie : tensor<8xi64>) {
  ^bb0(%out: i64):
    %ix = linalg.index 0 : index
    %ii = arith.index_cast %ix : index to i64
    linalg.yield %ii : i64
  } -> tensor<8xi64>
  %cm_r = tensor.expand_shape %cm_io [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %cm_c = tensor.expand_shape %cm_io [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
  %cm_be = tensor.empty() : tensor<8x8xi1>
  %cm_hide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_c, %cm_r : tensor<1x8xi64>, tensor<8x1xi64>) outs(%cm_be : tensor<8x8xi1>) {
  ^bb0(%j: i64, %i: i64, %out: i1):
    %future = arith.cmpi sgt, %j, %i : i64
    linalg.yield %future : i1
  } -> tensor<8x8xi1>
  %cm_min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %cm_zero = arith.constant dense<0.0> : tensor<f32>
  %cm_fe = tensor.empty() : tensor<8x8xf32>
  %cm_m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_hide, %cm_min, %cm_zero : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%cm_fe : tensor<8x8xf32>) {
  ^bb0(%h: i1, %lo: f32, %z: f32, %out: f32):
    %sv = arith.select %h, %lo, %z : f32
    linalg.yield %sv : f32
  } -> tensor<8x8xf32>
  %cm = tensor.expand_shape %cm_m [[0, 1, 2], [3]] output_shape [1, 1, 8, 8] : tensor<8x8xf32> into tensor<1x1x8x8xf32>
  %x_e = tensor.empty() : tensor<1x4x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %cm : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%x_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.addf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x4x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %p_ai = tensor.empty() : tensor<1x4x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x4x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x4x8x8xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_si = tensor.empty() : tensor<1x4x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x4x8x8xf32>) outs(%p_s0 : tensor<1x4x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%p_e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %vr_b [[0, 1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<4x8x16xf32>
  %o_e = tensor.empty() : tensor<4x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%o_f : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
  return %o4 : tensor<1x4x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// Near miss: exp(x − max) without the division by the row sum. Left alone.
// CHECK-LABEL: func.func @no_raise_unnormalised
// CHECK-NOT: rope.attention
// CHECK-COUNT-2: linalg.batch_matmul
func.func @no_raise_unnormalised(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%sc_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %cm_ie = tensor.empty() : tensor<8xi64>
  %cm_io = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%cm_ie : tensor<8xi64>) {
  ^bb0(%out: i64):
    %ix = linalg.index 0 : index
    %ii = arith.index_cast %ix : index to i64
    linalg.yield %ii : i64
  } -> tensor<8xi64>
  %cm_r = tensor.expand_shape %cm_io [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %cm_c = tensor.expand_shape %cm_io [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
  %cm_be = tensor.empty() : tensor<8x8xi1>
  %cm_hide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_c, %cm_r : tensor<1x8xi64>, tensor<8x1xi64>) outs(%cm_be : tensor<8x8xi1>) {
  ^bb0(%j: i64, %i: i64, %out: i1):
    %future = arith.cmpi sgt, %j, %i : i64
    linalg.yield %future : i1
  } -> tensor<8x8xi1>
  %cm_min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %cm_zero = arith.constant dense<0.0> : tensor<f32>
  %cm_fe = tensor.empty() : tensor<8x8xf32>
  %cm_m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cm_hide, %cm_min, %cm_zero : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%cm_fe : tensor<8x8xf32>) {
  ^bb0(%h: i1, %lo: f32, %z: f32, %out: f32):
    %sv = arith.select %h, %lo, %z : f32
    linalg.yield %sv : f32
  } -> tensor<8x8xf32>
  %cm = tensor.expand_shape %cm_m [[0, 1, 2], [3]] output_shape [1, 1, 8, 8] : tensor<8x8xf32> into tensor<1x1x8x8xf32>
  %x_e = tensor.empty() : tensor<1x2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %cm : tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>) outs(%x_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.addf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x2x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %p_ai = tensor.empty() : tensor<1x2x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x2x8xi64>) -> tensor<1x2x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x2x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x2x8xf32>, tensor<1x2x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x2x8xf32>, tensor<1x2x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x2x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x2x8x8xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_si = tensor.empty() : tensor<1x2x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x2x8x8xf32>) outs(%p_s0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %p_exp [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// Near miss: the row sum runs over the queries, not the keys. Left alone.
// CHECK-LABEL: func.func @no_raise_softmax_over_queries
// CHECK-NOT: rope.attention
func.func @no_raise_softmax_over_queries(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%sc_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_mi = tensor.empty() : tensor<1x2x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %p_ai = tensor.empty() : tensor<1x2x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<1x2x8xi64>) -> tensor<1x2x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sc : tensor<1x2x8x8xf32>) outs(%p_m0, %p_a0 : tensor<1x2x8xf32>, tensor<1x2x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<1x2x8xf32>, tensor<1x2x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
  %p_e4 = tensor.empty() : tensor<1x2x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %p_mk : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<1x2x8x8xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p_si = tensor.empty() : tensor<1x2x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<1x2x8x8xf32>) outs(%p_s0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%p_e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}
