// RUN: rope-opt %s --rope-raise | FileCheck %s

// Attention over one key (prefill of a one-token prompt, Sq = Sk = 1), as
// torch-mlir writes PyTorch's SDPA: every reduction over the keys (Q·Kᵀ's
// contraction over D aside) runs over one element, and the softmax reads
// its max and sum at the keys' own index (identity maps: the shapes agree
// without a broadcast). A reduction over one element reads as its body,
// which the views step into; the matcher backs out to the op.

// CHECK-LABEL: func.func @one_key_safe_softmax
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x1x16xf32>, %[[K:.+]]: tensor<2x2x1x16xf32>, %[[V:.+]]: tensor<2x2x1x16xf32>)
// CHECK: %[[A:.+]] = rope.attention %[[Q]], %[[K]], %[[V]] scale = 2.500000e-01 : tensor<2x2x1x16xf32>, tensor<2x2x1x16xf32>, tensor<2x2x1x16xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: return %[[A]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#kept = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
func.func @one_key_safe_softmax(%q: tensor<2x2x1x16xf32>, %k: tensor<2x2x1x16xf32>, %v: tensor<2x2x1x16xf32>) -> tensor<2x2x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ninf64 = arith.constant 0xFFF0000000000000 : f64
  %true = arith.constant true
  %scale = arith.constant 5.000000e-01 : f32
  // Q and Kᵀ each scaled by D^(-1/4), as SDPA's math path does.
  %qe = tensor.empty() : tensor<2x2x1x16xf32>
  %qs = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<2x2x1x16xf32>) outs(%qe : tensor<2x2x1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  } -> tensor<2x2x1x16xf32>
  %kte = tensor.empty() : tensor<2x2x16x1xf32>
  %kt = linalg.transpose ins(%k : tensor<2x2x1x16xf32>) outs(%kte : tensor<2x2x16x1xf32>) permutation = [0, 1, 3, 2]
  %kts = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kt : tensor<2x2x16x1xf32>) outs(%kte : tensor<2x2x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  } -> tensor<2x2x16x1xf32>
  %q3 = tensor.collapse_shape %qs [[0, 1], [2], [3]] : tensor<2x2x1x16xf32> into tensor<4x1x16xf32>
  %k3 = tensor.collapse_shape %kts [[0, 1], [2], [3]] : tensor<2x2x16x1xf32> into tensor<4x16x1xf32>
  %se = tensor.empty() : tensor<4x1x1xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x1x1xf32>) -> tensor<4x1x1xf32>
  %s3 = linalg.batch_matmul ins(%q3, %k3 : tensor<4x1x16xf32>, tensor<4x16x1xf32>) outs(%sf : tensor<4x1x1xf32>) -> tensor<4x1x1xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 2, 1, 1] : tensor<4x1x1xf32> into tensor<2x2x1x1xf32>
  // The max over the one key (torch's max also yields its index), its sum
  // kept as a unit dim, the quotient read at identity maps.
  %me = tensor.empty() : tensor<2x2x1xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%me : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %ie = tensor.empty() : tensor<2x2x1xi64>
  %c0_i64 = arith.constant 0 : i64
  %if = linalg.fill ins(%c0_i64 : i64) outs(%ie : tensor<2x2x1xi64>) -> tensor<2x2x1xi64>
  %max:2 = linalg.generic {indexing_maps = [#id4, #rows, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : tensor<2x2x1x1xf32>) outs(%mf, %if : tensor<2x2x1xf32>, tensor<2x2x1xi64>) {
  ^bb0(%in: f32, %out: f32, %idx: i64):
    %m = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %i = arith.select %gt, %c0_i64, %idx : i64
    linalg.yield %m, %i : f32, i64
  } -> (tensor<2x2x1xf32>, tensor<2x2x1xi64>)
  %max4 = tensor.expand_shape %max#0 [[0], [1], [2, 3]] output_shape [2, 2, 1, 1] : tensor<2x2x1xf32> into tensor<2x2x1x1xf32>
  %pe = tensor.empty() : tensor<2x2x1x1xf32>
  %e = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %max4 : tensor<2x2x1x1xf32>, tensor<2x2x1x1xf32>) outs(%pe : tensor<2x2x1x1xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<2x2x1x1xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x2x1x1xf32>) -> tensor<2x2x1x1xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #kept], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%e : tensor<2x2x1x1xf32>) outs(%zf : tensor<2x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<2x2x1x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e, %sum : tensor<2x2x1x1xf32>, tensor<2x2x1x1xf32>) outs(%pe : tensor<2x2x1x1xf32>) {
  ^bb0(%in: f32, %t: f32, %out: f32):
    %d = arith.divf %in, %t : f32
    linalg.yield %d : f32
  } -> tensor<2x2x1x1xf32>
  // SDPA's guard: rows whose every key is −inf give zeros.
  %be = tensor.empty() : tensor<2x2x1x1xi1>
  %hidden = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x2x1x1xf32>) outs(%be : tensor<2x2x1x1xi1>) {
  ^bb0(%in: f32, %out: i1):
    %w = arith.extf %in : f32 to f64
    %c = arith.cmpf oeq, %w, %ninf64 : f64
    linalg.yield %c : i1
  } -> tensor<2x2x1x1xi1>
  %tf = linalg.fill ins(%true : i1) outs(%be : tensor<2x2x1x1xi1>) -> tensor<2x2x1x1xi1>
  %all = linalg.generic {indexing_maps = [#id4, #kept], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%hidden : tensor<2x2x1x1xi1>) outs(%tf : tensor<2x2x1x1xi1>) {
  ^bb0(%in: i1, %out: i1):
    %a = arith.andi %in, %out : i1
    linalg.yield %a : i1
  } -> tensor<2x2x1x1xi1>
  %guarded = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%all, %p : tensor<2x2x1x1xi1>, tensor<2x2x1x1xf32>) outs(%pe : tensor<2x2x1x1xf32>) {
  ^bb0(%h: i1, %in: f32, %out: f32):
    %r = arith.select %h, %zero, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x2x1x1xf32>
  %p3 = tensor.collapse_shape %guarded [[0, 1], [2], [3]] : tensor<2x2x1x1xf32> into tensor<4x1x1xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x1x16xf32> into tensor<4x1x16xf32>
  %oe = tensor.empty() : tensor<4x1x16xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<4x1x1xf32>, tensor<4x1x16xf32>) outs(%of : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 2, 1, 16] : tensor<4x1x16xf32> into tensor<2x2x1x16xf32>
  return %o : tensor<2x2x1x16xf32>
}
