// RUN: rope-opt %s --split-input-file --rope-raise | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-raise=report=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// Masks at S = 512, above the size at which masks used to be evaluated
// element by element: understood symbolically (the element as a function
// of i and j: a rule when it depends on the distance i − j alone), or kept
// as the mask operand when computed from anything else.
// REPORT-NOT: remark

// Causal by an index compare (`j > i` hides: −inf, else 0), at S = 512 and 2
// heads: 2·512² elements, 8× the most that were ever evaluated one by one.
// CHECK-LABEL: func.func @causal_by_compare
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal scale = 2.500000e-01 :
// CHECK-NOT: mask(
func.func @causal_by_compare(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.constant 0.0 : f32
    %r = arith.select %future, %ninf, %z : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x2x512x512xf32>, tensor<512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// torch.triu(full(−inf), diagonal=1): a select on `j − i >= 1` of a filled
// tensor; the most negative float instead of −inf hides too.
// CHECK-LABEL: func.func @triu_of_filled
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal scale = 2.500000e-01 :
// CHECK-NOT: mask(
func.func @triu_of_filled(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %lowest = arith.constant -3.40282347E+38 : f32
  %full_e = tensor.empty() : tensor<512x512xf32>
  %full = linalg.fill ins(%lowest : f32) outs(%full_e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%full : tensor<512x512xf32>) outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%src: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %d = arith.subi %j, %i : index
    %c1 = arith.constant 1 : index
    %above = arith.cmpi sge, %d, %c1 : index
    %z = arith.constant 0.0 : f32
    %r = arith.select %above, %src, %z : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x2x512x512xf32>, tensor<512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// A sliding window of 128 (Mistral), from i64 positions: hidden where
// j > i or i − j >= 128, the two conditions or-ed.
// CHECK-LABEL: func.func @sliding_window
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal window = 128 scale = 2.500000e-01 :
// CHECK-NOT: mask(
func.func @sliding_window(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %future = arith.cmpi sgt, %jj, %ii : i64
    %back = arith.subi %ii, %jj : i64
    %w = arith.constant 128 : i64
    %far = arith.cmpi sge, %back, %w : i64
    %hide = arith.ori %future, %far : i1
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.constant 0.0 : f32
    %r = arith.select %hide, %ninf, %z : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x2x512x512xf32>, tensor<512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// torch.where(tril, scores, −inf): the condition an i1 `j <= i` tensor.
// CHECK-LABEL: func.func @where_tril
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal scale = 2.500000e-01 :
// CHECK-NOT: mask(
func.func @where_tril(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<512x512xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sle, %j, %i : index
    linalg.yield %keep : i1
  } -> tensor<512x512xi1>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x2x512x512xf32>, tensor<512x512xi1>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: i1, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %ninf_s = arith.constant 0xFF800000 : f32
    %b = arith.select %mm, %a, %ninf_s : f32
    linalg.yield %b : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// A mask computed from an argument (a bias times 2) is no rule: the
// computed tensor itself becomes the mask operand, at any size.
// CHECK-LABEL: func.func @computed_bias_operand
// CHECK: %[[M:.+]] = linalg.generic
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} mask(%[[M]] : tensor<512x512xf32>) scale = 2.500000e-01 :
func.func @computed_bias_operand(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>, %bias: tensor<512x512xf32>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<512x512xf32>) outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%src: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %two = arith.constant 2.0 : f32
    %r = arith.mulf %src, %two : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x2x512x512xf32>, tensor<512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// HF's eager mask with a padding mask: visible where j <= i and the key is
// a real token (an i1 [1, 1, 1, S] argument): `causal` plus that key mask,
// not an S×S operand.
// CHECK-LABEL: func.func @causal_and_padding
// CHECK-SAME: %[[PAD:[^:]+]]: tensor<1x1x1x512xi1>
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} mask(%[[PAD]] : tensor<1x1x1x512xi1>) causal scale = 2.500000e-01 :
func.func @causal_and_padding(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>, %pad: tensor<1x1x1x512xi1>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, 0, 0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pad : tensor<1x1x1x512xi1>) outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%real: i1, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %past = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %past, %real : i1
    %z = arith.constant 0.0 : f32
    %lowest = arith.constant -3.40282347E+38 : f32
    %r = arith.select %keep, %z, %lowest : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x2x512x512xf32>, tensor<512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// The same with a flag that says where the padding is (true: hide the
// key): the flag becomes attention's key mask negated.
// CHECK-LABEL: func.func @causal_and_padding_hiding_where_true
// CHECK-SAME: %[[FLAG:[^:]+]]: tensor<1x1x1x512xi1>
// CHECK: %[[KEEP:.+]] = linalg.generic {{.*}} ins(%[[FLAG]] : tensor<1x1x1x512xi1>)
// CHECK: arith.xori
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} mask(%[[KEEP]] : tensor<1x1x1x512xi1>) causal scale = 2.500000e-01 :
func.func @causal_and_padding_hiding_where_true(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>, %flag: tensor<1x1x1x512xi1>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, 0, 0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%flag : tensor<1x1x1x512xi1>) outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%padded: i1, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %hide = arith.ori %future, %padded : i1
    %z = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %hide, %ninf, %z : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x2x512x512xf32>, tensor<512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// Near miss: the mask is read transposed ([j, i]), which is neither a rule
// nor a mask attention can take; reported with report=true.
// CHECK-LABEL: func.func @no_raise_transposed_mask
// CHECK-NOT: rope.attention
// REPORT: remark: rope-raise: attention not raised: the mask is not read as [B, H, Sq, Sk]
func.func @no_raise_transposed_mask(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.constant 0.0 : f32
    %r = arith.select %future, %ninf, %z : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m : tensor<1x2x512x512xf32>, tensor<512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}


// -----

// Sums of additive masks: HF's older spelling adds a causal mask and a
// padding bias (0 for a real key, the lowest f32 for a padding one). A key
// is hidden when either hides it: `causal` plus the [1, 1, 1, S] key mask.
// CHECK-LABEL: func.func @causal_plus_padding_bias
// CHECK-SAME: %[[PAD:[^:]+]]: tensor<1x1x1x512xi1>
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} mask(%[[PAD]] : tensor<1x1x1x512xi1>) causal scale = 2.500000e-01 :
func.func @causal_plus_padding_bias(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>, %pad: tensor<1x1x1x512xi1>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.constant 0.0 : f32
    %r = arith.select %future, %ninf, %z : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %pb_e = tensor.empty() : tensor<1x1x1x512xf32>
  %pb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pad : tensor<1x1x1x512xi1>) outs(%pb_e : tensor<1x1x1x512xf32>) {
  ^bb0(%real: i1, %out: f32):
    %z = arith.constant 0.0 : f32
    %lowest = arith.constant -3.40282347E+38 : f32
    %r = arith.select %real, %z, %lowest : f32
    linalg.yield %r : f32
  } -> tensor<1x1x1x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m, %pb : tensor<1x2x512x512xf32>, tensor<512x512xf32>, tensor<1x1x1x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %bb: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    %c = arith.addf %b, %bb : f32
    linalg.yield %c : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// A causal mask plus a bias argument (ALiBi-like, any values): the rule,
// and the bias as the additive mask operand.
// CHECK-LABEL: func.func @causal_plus_bias_operand
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<1x2x512x512xf32>
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} mask(%[[BIAS]] : tensor<1x2x512x512xf32>) causal scale = 2.500000e-01 :
func.func @causal_plus_bias_operand(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>, %bias: tensor<1x2x512x512xf32>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.constant 0.0 : f32
    %r = arith.select %future, %ninf, %z : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m, %bias : tensor<1x2x512x512xf32>, tensor<512x512xf32>, tensor<1x2x512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %bb: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    %c = arith.addf %b, %bb : f32
    linalg.yield %c : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}

// -----

// Near miss: a causal mask plus two masks that each need an operand (a
// bias and a padding bias); attention takes one mask operand.
// CHECK-LABEL: func.func @no_raise_two_mask_operands
// CHECK-NOT: rope.attention
// REPORT: remark: rope-raise: attention not raised: more than one of the added masks needs an operand
func.func @no_raise_two_mask_operands(%q: tensor<1x2x512x16xf32>, %k: tensor<1x2x512x16xf32>, %v: tensor<1x2x512x16xf32>, %bias: tensor<1x2x512x512xf32>, %pad: tensor<1x1x1x512xi1>) -> tensor<1x2x512x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x512xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x512x16xf32>) outs(%kt_e : tensor<1x2x16x512xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x512xf32> into tensor<2x16x512xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x512x512xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x512x16xf32>, tensor<2x16x512xf32>) outs(%s_f : tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 512, 512] : tensor<2x512x512xf32> into tensor<1x2x512x512xf32>
  %m_e = tensor.empty() : tensor<512x512xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<512x512xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.constant 0.0 : f32
    %r = arith.select %future, %ninf, %z : f32
    linalg.yield %r : f32
  } -> tensor<512x512xf32>
  %pb_e = tensor.empty() : tensor<1x1x1x512xf32>
  %pb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pad : tensor<1x1x1x512xi1>) outs(%pb_e : tensor<1x1x1x512xf32>) {
  ^bb0(%real: i1, %out: f32):
    %z = arith.constant 0.0 : f32
    %lowest = arith.constant -3.40282347E+38 : f32
    %r = arith.select %real, %z, %lowest : f32
    linalg.yield %r : f32
  } -> tensor<1x1x1x512xf32>
  %x_e = tensor.empty() : tensor<1x2x512x512xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %m, %pb, %bias : tensor<1x2x512x512xf32>, tensor<512x512xf32>, tensor<1x1x1x512xf32>, tensor<1x2x512x512xf32>) outs(%x_e : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %mm: f32, %pp: f32, %bb: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    %c = arith.addf %b, %pp : f32
    %d = arith.addf %c, %bb : f32
    linalg.yield %d : f32
  } -> tensor<1x2x512x512xf32>
  %p_e = tensor.empty() : tensor<1x2x512x512xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x512x512xf32>) outs(%p_e : tensor<1x2x512x512xf32>) -> tensor<1x2x512x512xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x512x512xf32> into tensor<2x512x512xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x512x16xf32> into tensor<2x512x16xf32>
  %o_e = tensor.empty() : tensor<2x512x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x512x512xf32>, tensor<2x512x16xf32>) outs(%o_f : tensor<2x512x16xf32>) -> tensor<2x512x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 512, 16] : tensor<2x512x16xf32> into tensor<1x2x512x16xf32>
  return %o4 : tensor<1x2x512x16xf32>
}


// REPORT-NOT: remark
