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
// Near miss of GQA: kv heads repeated by tiling (query head h reads kv head
// h mod Hkv), which is not GQA's grouping. Attention reads the repeated
// K and V as 4 heads of their own (the tiling stays, materialised), never
// the 2 kv heads as groups.
// CHECK-LABEL: func.func @tiled_kv_heads_not_grouped
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}} : tensor<1x2x8x16xf32>) outs(%{{.+}} : tensor<1x2x2x8x16xf32>)
// CHECK: rope.attention
// CHECK-SAME: : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @tiled_kv_heads_not_grouped(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
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

// -----

// torch-mlir's tosa export of causal attention: Kᵀ by tosa.transpose,
// tosa.matmul on [B·H, S, D] reshapes, the scale a tosa.mul by a constant,
// the causal mask a tosa.select of −inf where the iota difference j − i
// (narrowed to i32 and back) is ≥ 1, the softmax as reduce_max / sub / exp /
// reduce_sum / reciprocal / mul, the output a tosa.reshape to [B, H, S, D].
// CHECK-LABEL: func.func @tosa_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>)
// CHECK: %[[O:.+]] = rope.attention %[[Q]], %[[K]], %[[V]] causal scale = 1.250000e-01 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @tosa_causal(%arg0: tensor<1x2x8x16xf32>, %arg1: tensor<1x2x8x16xf32>, %arg2: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = "tosa.const"() <{values = dense<0xFF800000> : tensor<8x8xf32>}> : () -> tensor<8x8xf32>
  %1 = tosa.const_shape  {values = dense<[2, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %2 = tosa.const_shape  {values = dense<[2, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %3 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %4 = tosa.const_shape  {values = dense<[1, 2, 8, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %5 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %6 = "tosa.const"() <{values = dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %7 = tosa.const_shape  {values = dense<[1, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %8 = tosa.const_shape  {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %9 = tosa.const_shape  {values = dense<[1, 1, 8, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %10 = tosa.const_shape  {values = dense<[2, 8, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %11 = tosa.const_shape  {values = dense<[1, 2, 8, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %12 = "tosa.const"() <{values = dense<1.250000e-01> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %13 = "tosa.const"() <{values = dense<1> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %14 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %15 = tosa.transpose %arg1 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
  %16 = tosa.reshape %arg0, %1 : (tensor<1x2x8x16xf32>, !tosa.shape<3>) -> tensor<2x8x16xf32>
  %17 = tosa.reshape %15, %2 : (tensor<1x2x16x8xf32>, !tosa.shape<3>) -> tensor<2x16x8xf32>
  %18 = tosa.matmul %16, %17, %3, %3 : (tensor<2x8x16xf32>, tensor<2x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x8xf32>
  %19 = tosa.reshape %18, %4 : (tensor<2x8x8xf32>, !tosa.shape<4>) -> tensor<1x2x8x8xf32>
  %20 = tosa.mul %19, %12, %5 : (tensor<1x2x8x8xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x2x8x8xf32>
  %21 = tosa.reshape %6, %7 : (tensor<8xi64>, !tosa.shape<2>) -> tensor<1x8xi64>
  %22 = tosa.reshape %6, %8 : (tensor<8xi64>, !tosa.shape<2>) -> tensor<8x1xi64>
  %23 = tosa.cast %22 : (tensor<8x1xi64>) -> tensor<8x1xi32>
  %24 = tosa.cast %21 : (tensor<1x8xi64>) -> tensor<1x8xi32>
  %25 = tosa.sub %24, %23 : (tensor<1x8xi32>, tensor<8x1xi32>) -> tensor<8x8xi32>
  %26 = tosa.cast %25 : (tensor<8x8xi32>) -> tensor<8x8xi64>
  %27 = tosa.greater_equal %26, %13 : (tensor<8x8xi64>, tensor<1x1xi64>) -> tensor<8x8xi1>
  %28 = tosa.select %27, %0, %14 : (tensor<8x8xi1>, tensor<8x8xf32>, tensor<1x1xf32>) -> tensor<8x8xf32>
  %29 = tosa.reshape %28, %9 : (tensor<8x8xf32>, !tosa.shape<4>) -> tensor<1x1x8x8xf32>
  %30 = tosa.add %20, %29 : (tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x2x8x8xf32>
  %31 = tosa.reduce_max %30 {axis = 3 : i32} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x1xf32>
  %32 = tosa.sub %30, %31 : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x8xf32>
  %33 = tosa.exp %32 : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %34 = tosa.reduce_sum %33 {axis = 3 : i32} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x1xf32>
  %35 = tosa.reciprocal %34 : (tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %36 = tosa.mul %33, %35, %5 : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>, tensor<1xi8>) -> tensor<1x2x8x8xf32>
  %37 = tosa.reshape %36, %10 : (tensor<1x2x8x8xf32>, !tosa.shape<3>) -> tensor<2x8x8xf32>
  %v3 = tosa.reshape %arg2, %1 : (tensor<1x2x8x16xf32>, !tosa.shape<3>) -> tensor<2x8x16xf32>
  %38 = tosa.matmul %37, %v3, %3, %3 : (tensor<2x8x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x16xf32>
  %39 = tosa.reshape %38, %11 : (tensor<2x8x16xf32>, !tosa.shape<4>) -> tensor<1x2x8x16xf32>
  return %39 : tensor<1x2x8x16xf32>
}

// -----

// The softmax's sum reduces over the queries (axis 1), not the keys: not
// attention, left unchanged.
// CHECK-LABEL: func.func @no_raise_tosa_sum_over_queries
// CHECK-NOT: rope.attention
// CHECK: tosa.reduce_sum %{{.+}} {axis = 1 : i32}
func.func @no_raise_tosa_sum_over_queries(%arg0: tensor<1x2x8x16xf32>, %arg1: tensor<1x2x8x16xf32>, %arg2: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %1 = tosa.const_shape  {values = dense<[2, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %2 = tosa.const_shape  {values = dense<[2, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %3 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %5 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %11 = tosa.const_shape  {values = dense<[1, 2, 8, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %15 = tosa.transpose %arg1 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
  %16 = tosa.reshape %arg0, %1 : (tensor<1x2x8x16xf32>, !tosa.shape<3>) -> tensor<2x8x16xf32>
  %17 = tosa.reshape %15, %2 : (tensor<1x2x16x8xf32>, !tosa.shape<3>) -> tensor<2x16x8xf32>
  %18 = tosa.matmul %16, %17, %3, %3 : (tensor<2x8x16xf32>, tensor<2x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x8xf32>
  %33 = tosa.exp %18 : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %34 = tosa.reduce_sum %33 {axis = 1 : i32} : (tensor<2x8x8xf32>) -> tensor<2x1x8xf32>
  %35 = tosa.reciprocal %34 : (tensor<2x1x8xf32>) -> tensor<2x1x8xf32>
  %36 = tosa.mul %33, %35, %5 : (tensor<2x8x8xf32>, tensor<2x1x8xf32>, tensor<1xi8>) -> tensor<2x8x8xf32>
  %v3 = tosa.reshape %arg2, %1 : (tensor<1x2x8x16xf32>, !tosa.shape<3>) -> tensor<2x8x16xf32>
  %38 = tosa.matmul %36, %v3, %3, %3 : (tensor<2x8x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x16xf32>
  %39 = tosa.reshape %38, %11 : (tensor<2x8x16xf32>, !tosa.shape<4>) -> tensor<1x2x8x16xf32>
  return %39 : tensor<1x2x8x16xf32>
}

// -----

// One head, unbatched: Kᵀ by linalg.transpose, 2-D linalg.matmul for Q·Kᵀ
// and P·V, the scale by a divide, a `triu` constant of −inf above the
// diagonal (torch.triu(full(-inf), 1), folded by the export) added, and
// linalg.softmax. Q, K and V become [1, 1, S, D] views and the result is
// collapsed back to [S, D].
// CHECK-LABEL: func.func @unbatched_triu_constant
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<4x16xf32>, %[[K:[^:]+]]: tensor<4x16xf32>, %[[V:[^:]+]]: tensor<4x16xf32>)
// CHECK-DAG: %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 16]
// CHECK-DAG: %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 16]
// CHECK-DAG: %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 16]
// CHECK: %[[O:.+]] = rope.attention %[[Q4]], %[[K4]], %[[V4]] causal scale = 2.500000e-01 : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>
// CHECK: %[[O2:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1, 2], [3]] : tensor<1x1x4x16xf32> into tensor<4x16xf32>
// CHECK-NEXT: return %[[O2]]
func.func @unbatched_triu_constant(%q: tensor<4x16xf32>, %k: tensor<4x16xf32>, %v: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %kt_e = tensor.empty() : tensor<16x4xf32>
  %kt = linalg.transpose ins(%k : tensor<4x16xf32>) outs(%kt_e : tensor<16x4xf32>) permutation = [1, 0]
  %s_e = tensor.empty() : tensor<4x4xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<4x16xf32>, tensor<16x4xf32>) outs(%s_f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %four = arith.constant 4.0 : f32
  %triu = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %x_e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %triu : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x_e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.divf %in, %four : f32
    %a = arith.addf %d, %m : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %p_e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%p_e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_e = tensor.empty() : tensor<4x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x16xf32>) outs(%o_f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %o : tensor<4x16xf32>
}

// -----

// A boolean mask that hides where true (masked_fill(mask, -inf)) and is an
// argument, not a causal rule: attention's mask (true = may attend) is its
// negation.
// CHECK-LABEL: func.func @boolean_mask_hiding_where_true
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x1x8x8xi1>)
// CHECK: %[[NOT:.+]] = linalg.generic
// CHECK-SAME: ins(%[[M]] : tensor<1x1x8x8xi1>)
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: arith.xori %{{.+}}, %[[TRUE]] : i1
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} mask(%[[NOT]] : tensor<1x1x8x8xi1>) scale = 2.500000e-01 :
func.func @boolean_mask_hiding_where_true(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %hide: tensor<1x1x8x8xi1>) -> tensor<1x2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %scale = arith.constant 0.25 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %x_e = tensor.empty() : tensor<1x2x8x8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %hide : tensor<1x2x8x8xf32>, tensor<1x1x8x8xi1>) outs(%x_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %h: i1, %out: f32):
    %sc = arith.mulf %in, %scale : f32
    %sel = arith.select %h, %ninf, %sc : f32
    linalg.yield %sel : f32
  } -> tensor<1x2x8x8xf32>
  %p_e = tensor.empty() : tensor<1x2x8x8xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x8x8xf32>) outs(%p_e : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}

// -----

// The same HF eager attention on a batch of 2: the batched products run over
// b·4 + h, and repeat_kv's collapse and expand read kv head
// (n mod 4) floordiv 2 of sequence n floordiv 4, which the matcher compares
// with the canonical (b, h floordiv 2) at each n: GQA is kept.
// CHECK-LABEL: func.func @eager_gqa_causal_batch2
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x2x8x16xf32>, %[[V:[^:]+]]: tensor<2x2x8x16xf32>)
// CHECK: %[[O:.+]] = rope.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
// CHECK-NEXT: return %[[O]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#bcmask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
func.func @eager_gqa_causal_batch2(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %kr_e5 = tensor.empty() : tensor<2x2x2x8x16xf32>
  %kr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x2x8x16xf32>) outs(%kr_e5 : tensor<2x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x8x16xf32>
  %kr = tensor.collapse_shape %kr_b [[0], [1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<2x4x8x16xf32>
  %vr_e5 = tensor.empty() : tensor<2x2x2x8x16xf32>
  %vr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<2x2x8x16xf32>) outs(%vr_e5 : tensor<2x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x8x16xf32>
  %vr = tensor.collapse_shape %vr_b [[0], [1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<2x4x8x16xf32>
  %kt_e = tensor.empty() : tensor<2x4x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<2x4x8x16xf32>) outs(%kt_e : tensor<2x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
  %s_e = tensor.empty() : tensor<8x8x8xf32>
  %s_z = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%s_z : f32) outs(%s_e : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<8x8x16xf32>, tensor<8x16x8xf32>) outs(%s_f : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<2x4x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<2x4x8x8xf32>) outs(%sc_e : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<2x4x8x8xf32>
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
  %x_e = tensor.empty() : tensor<2x4x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #bcmask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %cm : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%x_e : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.addf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<2x4x8x8xf32>
  %p_mi = tensor.empty() : tensor<2x4x8xf32>
  %p_ninf = arith.constant 0xFF800000 : f32
  %p_m0 = linalg.fill ins(%p_ninf : f32) outs(%p_mi : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %p_ai = tensor.empty() : tensor<2x4x8xi64>
  %p_c0 = arith.constant 0 : i64
  %p_a0 = linalg.fill ins(%p_c0 : i64) outs(%p_ai : tensor<2x4x8xi64>) -> tensor<2x4x8xi64>
  %p_mx:2 = linalg.generic {indexing_maps = [#id4, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8x8xf32>) outs(%p_m0, %p_a0 : tensor<2x4x8xf32>, tensor<2x4x8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %ix = linalg.index 3 : index
    %ii = arith.index_cast %ix : index to i64
    %mm = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %out_1 : i64
    linalg.yield %mm, %sel : f32, i64
  } -> (tensor<2x4x8xf32>, tensor<2x4x8xi64>)
  %p_mk = tensor.expand_shape %p_mx#0 [[0], [1], [2, 3]] output_shape [2, 4, 8, 1] : tensor<2x4x8xf32> into tensor<2x4x8x1xf32>
  %p_e4 = tensor.empty() : tensor<2x4x8x8xf32>
  %p_sub = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %p_mk : tensor<2x4x8x8xf32>, tensor<2x4x8x1xf32>) outs(%p_e4 : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<2x4x8x8xf32>
  %p_exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_sub : tensor<2x4x8x8xf32>) outs(%p_e4 : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<2x4x8x8xf32>
  %p_si = tensor.empty() : tensor<2x4x8x1xf32>
  %p_zero = arith.constant 0.0 : f32
  %p_s0 = linalg.fill ins(%p_zero : f32) outs(%p_si : tensor<2x4x8x1xf32>) -> tensor<2x4x8x1xf32>
  %p_sum = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p_exp : tensor<2x4x8x8xf32>) outs(%p_s0 : tensor<2x4x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %out : f32
    linalg.yield %d : f32
  } -> tensor<2x4x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p_exp, %p_sum : tensor<2x4x8x8xf32>, tensor<2x4x8x1xf32>) outs(%p_e4 : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<2x4x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
  %v3 = tensor.collapse_shape %vr_b [[0, 1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<8x8x16xf32>
  %o_e = tensor.empty() : tensor<8x8x16xf32>
  %o_z = arith.constant 0.0 : f32
  %o_f = linalg.fill ins(%o_z : f32) outs(%o_e : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<8x8x8xf32>, tensor<8x8x16xf32>) outs(%o_f : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
  return %o4 : tensor<2x4x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// Differential attention (DiffLlama): V is split into two halves of its kv
// heads, each repeated back to the kv heads (`v.repeat(1, 2, 1, 1)`) and
// then by repeat_kv to the query heads. The attention reads V's first head
// for every query head: V is the repeat's [1, 2, 8, 16] (two kv heads, the
// same values), not the one-head half it broadcasts, which has too few.
// CHECK-LABEL: func.func @differential_value_half
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>)
// CHECK: %[[HALF:.+]] = tensor.extract_slice %[[V]][0, 0, 0, 0] [1, 1, 8, 16] [1, 1, 1, 1]
// CHECK: %[[REP:.+]] = linalg.generic {{.*}} ins(%[[HALF]] : tensor<1x1x8x16xf32>) outs(%{{.*}} : tensor<1x2x8x16xf32>)
// CHECK: rope.attention %[[Q]], %[[K]], %[[REP]] scale = 2.500000e-01 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
func.func @differential_value_half(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %kr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %kr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x8x16xf32>) outs(%kr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %kr = tensor.collapse_shape %kr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  // V's first half (one kv head), repeated back to two.
  %half = tensor.extract_slice %v[0, 0, 0, 0] [1, 1, 8, 16] [1, 1, 1, 1] : tensor<1x2x8x16xf32> to tensor<1x1x8x16xf32>
  %rep_e = tensor.empty() : tensor<1x2x8x16xf32>
  %rep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%half : tensor<1x1x8x16xf32>) outs(%rep_e : tensor<1x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x16xf32>
  %vr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %vr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%rep : tensor<1x2x8x16xf32>) outs(%vr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %vr = tensor.collapse_shape %vr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %kt_e = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x16xf32>) outs(%kt_e : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %s_e = tensor.empty() : tensor<4x8x8xf32>
  %zero = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%s_f : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x4x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x4x8x8xf32>) outs(%sc_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8x8xf32>
  %p_e = tensor.empty() : tensor<1x4x8x8xf32>
  %p = linalg.softmax dimension(3) ins(%sc : tensor<1x4x8x8xf32>) outs(%p_e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %vr [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %o_e = tensor.empty() : tensor<4x8x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%o_f : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
  return %o4 : tensor<1x4x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// A mask over the kv heads (Doge's dynamic mask, one row of biases per kv
// head) repeated with K and V to the query heads by repeat_kv: no tensor
// reads it as [B, Hq, Sq, Sk], so the raise gathers it there (at kv head
// h floordiv 2) for the attention's mask operand.
// CHECK-LABEL: func.func @kv_head_mask_gathered
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>, %[[M:[^:]+]]: tensor<1x2x8x8xf32>)
// CHECK: %[[G:.+]] = linalg.generic {indexing_maps = [#[[READ:.+]], #{{.+}}], {{.*}} ins(%[[M]] : tensor<1x2x8x8xf32>) outs(%{{.*}} : tensor<1x4x8x8xf32>)
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] mask(%[[G]] : tensor<1x4x8x8xf32>) scale = 2.500000e-01
func.func @kv_head_mask_gathered(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x2x8x8xf32>) -> tensor<1x4x8x16xf32> {
  %kr_e5 = tensor.empty() : tensor<1x2x2x8x16xf32>
  %kr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x8x16xf32>) outs(%kr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %kr = tensor.collapse_shape %kr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %vr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x8x16xf32>) outs(%kr_e5 : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %vr = tensor.collapse_shape %vr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  // The mask's repeat to the query heads, as repeat_kv spells it.
  %mr_e5 = tensor.empty() : tensor<1x2x2x8x8xf32>
  %mr_b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%m : tensor<1x2x8x8xf32>) outs(%mr_e5 : tensor<1x2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x8xf32>
  %mr = tensor.collapse_shape %mr_b [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<1x4x8x8xf32>
  %kt_e = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x16xf32>) outs(%kt_e : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %s_e = tensor.empty() : tensor<4x8x8xf32>
  %zero = arith.constant 0.0 : f32
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%s_f : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x4x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %mr : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) outs(%sc_e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    %e = arith.addf %d, %bias : f32
    linalg.yield %e : f32
  } -> tensor<1x4x8x8xf32>
  %p_e = tensor.empty() : tensor<1x4x8x8xf32>
  %p = linalg.softmax dimension(3) ins(%sc : tensor<1x4x8x8xf32>) outs(%p_e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %vr [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %o_e = tensor.empty() : tensor<4x8x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%o_f : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
  return %o4 : tensor<1x4x8x16xf32>
}
