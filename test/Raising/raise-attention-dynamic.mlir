// RUN: rope-opt %s --split-input-file --rope-raise | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-raise=report=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// Attention at a dynamic sequence length S, in the spellings torch-mlir
// writes for it: every size is a `tensor.dim`, an `index_cast` of it or a
// `select` guarding a `view`'s inferred size against a negative value;
// repeat_kv and broadcasts are generics that `tensor.extract` at the loop
// indices, with `select(size == 1, 0, i)` guards; views of computed shapes
// are `tensor.reshape`. Sizes followed back to `tensor.dim %q, 2` are one
// size, so the guards never fire and the gathers are views.
// GQA 4/2 with the causal mask from an index compare, K and V computed
// from Q's argument, so every length is one size: the rule, and K and V read before the repeat ([1, 2, S, 16]).
// CHECK-LABEL: func.func @dynamic_gqa_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x?x16xf32>)
// CHECK: %[[K:.+]] = linalg.generic
// CHECK: %[[V:.+]] = linalg.generic
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @dynamic_gqa_causal(%q: tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c2 : tensor<1x4x?x16xf32>
  %k_s = tensor.extract_slice %q[0, 0, 0, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x4x?x16xf32> to tensor<1x2x?x16xf32>
  %k_e = tensor.empty(%n) : tensor<1x2x?x16xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k_s : tensor<1x2x?x16xf32>) outs(%k_e : tensor<1x2x?x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 2.0 : f32
    %r = arith.addf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x?x16xf32>
  %v_s = tensor.extract_slice %q[0, 2, 0, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x4x?x16xf32> to tensor<1x2x?x16xf32>
  %v_e = tensor.empty(%n) : tensor<1x2x?x16xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v_s : tensor<1x2x?x16xf32>) outs(%v_e : tensor<1x2x?x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 1.0 : f32
    %r = arith.addf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x?x16xf32>
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %q, %c2 : tensor<1x4x?x16xf32>
  %s64 = arith.index_cast %s : index to i64
  %c0_i64 = arith.constant 0 : i64
  %neg = arith.cmpi slt, %s64, %c0_i64 : i64
  %one = arith.constant 1 : i64
  // torch-mlir's `view(..., -1, ...)`: the inferred size is S (S >= 0).
  %view64 = arith.select %neg, %one, %s64 : i64
  %view = arith.index_cast %view64 : i64 to index
  %ks = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %kx = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %vx = tensor.expand_shape %v [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %rep_e = tensor.empty(%s) : tensor<1x2x2x?x16xf32>
  %krep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %view, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %kx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %vrep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %view, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %vx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%s) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%s, %s) : tensor<4x?x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x?x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  // The scores viewed as [1, 4, S, S] by tensor.reshape of a computed shape.
  %c1_i64 = arith.constant 1 : i64
  %c4_i64 = arith.constant 4 : i64
  %shape4 = tensor.from_elements %c1_i64, %c4_i64, %view64, %view64 : tensor<4xi64>
  %sc4 = tensor.reshape %sc(%shape4) : (tensor<4x?x?xf32>, tensor<4xi64>) -> tensor<1x4x?x?xf32>
  // The causal mask from two aranges at the dynamic length.
  %m_e = tensor.empty(%view, %view) : tensor<?x?xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %future, %ninf, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %x_e = tensor.empty(%view, %view) : tensor<1x4x?x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4, %m : tensor<1x4x?x?xf32>, tensor<?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x4x?x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x?x?xf32> into tensor<4x?x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty(%s) : tensor<4x?x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x?x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, %s, 16] : tensor<4x?x16xf32> into tensor<1x4x?x16xf32>
  return %o4 : tensor<1x4x?x16xf32>
}

// -----

// The repeat's guard tests a size that is not the loop's (an argument): a
// real broadcast when it is 1, so the gather is not a view. Attention is
// still raised, reading the repeated K and V, whose length is the loop's.
// CHECK-LABEL: func.func @guard_on_another_size
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal scale = 2.500000e-01 : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>
func.func @guard_on_another_size(%q: tensor<1x4x?x16xf32>, %other: index) -> tensor<1x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c2 : tensor<1x4x?x16xf32>
  %k_s = tensor.extract_slice %q[0, 0, 0, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x4x?x16xf32> to tensor<1x2x?x16xf32>
  %k_e = tensor.empty(%n) : tensor<1x2x?x16xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k_s : tensor<1x2x?x16xf32>) outs(%k_e : tensor<1x2x?x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 2.0 : f32
    %r = arith.addf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x?x16xf32>
  %v_s = tensor.extract_slice %q[0, 2, 0, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x4x?x16xf32> to tensor<1x2x?x16xf32>
  %v_e = tensor.empty(%n) : tensor<1x2x?x16xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v_s : tensor<1x2x?x16xf32>) outs(%v_e : tensor<1x2x?x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 1.0 : f32
    %r = arith.addf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x2x?x16xf32>
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %q, %c2 : tensor<1x4x?x16xf32>
  %s64 = arith.index_cast %s : index to i64
  %c0_i64 = arith.constant 0 : i64
  %neg = arith.cmpi slt, %s64, %c0_i64 : i64
  %one = arith.constant 1 : i64
  // torch-mlir's `view(..., -1, ...)`: the inferred size is S (S >= 0).
  %view64 = arith.select %neg, %one, %s64 : i64
  %view = arith.index_cast %view64 : i64 to index
  %ks = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %kx = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %vx = tensor.expand_shape %v [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %rep_e = tensor.empty(%s) : tensor<1x2x2x?x16xf32>
  %krep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %other, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %kx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %vrep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %other, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %vx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%s) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%s, %s) : tensor<4x?x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x?x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  // The scores viewed as [1, 4, S, S] by tensor.reshape of a computed shape.
  %c1_i64 = arith.constant 1 : i64
  %c4_i64 = arith.constant 4 : i64
  %shape4 = tensor.from_elements %c1_i64, %c4_i64, %view64, %view64 : tensor<4xi64>
  %sc4 = tensor.reshape %sc(%shape4) : (tensor<4x?x?xf32>, tensor<4xi64>) -> tensor<1x4x?x?xf32>
  // The causal mask from two aranges at the dynamic length.
  %m_e = tensor.empty(%view, %view) : tensor<?x?xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %future, %ninf, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %x_e = tensor.empty(%view, %view) : tensor<1x4x?x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4, %m : tensor<1x4x?x?xf32>, tensor<?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x4x?x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x?x?xf32> into tensor<4x?x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty(%s) : tensor<4x?x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x?x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, %s, 16] : tensor<4x?x16xf32> into tensor<1x4x?x16xf32>
  return %o4 : tensor<1x4x?x16xf32>
}

// -----

// K and V are arguments of their own dynamic length, read by the repeat at
// Q's indices (a view: the guard is the loop's size), and the causal mask is
// over Q's length. The parts of a graph split around an op take Q's and K's
// rows this way, with nothing in the program relating the two lengths: the
// rule holds over Sq = Sk, which the attention checks at run time.
// CHECK-LABEL: func.func @raise_argument_lengths_checked
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x4x?x16xf32>, %[[K:[^:]*]]: tensor<1x2x?x16xf32>
// CHECK-DAG: %[[SQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<1x4x?x16xf32>
// CHECK-DAG: %[[SK:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<1x2x?x16xf32>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[SQ]], %[[SK]] : index
// CHECK: rope.assert %[[EQ]], "{{.*}}: error: rope-raise: the attention's mask was read as a rule over equal query and key lengths, got {0} queries and {1} keys"(%[[SQ]], %[[SK]] : index, index)
// CHECK: rope.attention %[[Q]], %[[K]], %{{.*}} causal
func.func @raise_argument_lengths_checked(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %q, %c2 : tensor<1x4x?x16xf32>
  %s64 = arith.index_cast %s : index to i64
  %c0_i64 = arith.constant 0 : i64
  %neg = arith.cmpi slt, %s64, %c0_i64 : i64
  %one = arith.constant 1 : i64
  // torch-mlir's `view(..., -1, ...)`: the inferred size is S (S >= 0).
  %view64 = arith.select %neg, %one, %s64 : i64
  %view = arith.index_cast %view64 : i64 to index
  %ks = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %kx = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %vx = tensor.expand_shape %v [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %rep_e = tensor.empty(%s) : tensor<1x2x2x?x16xf32>
  %krep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %view, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %kx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %vrep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %view, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %vx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%s) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%s, %s) : tensor<4x?x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x?x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  // The scores viewed as [1, 4, S, S] by tensor.reshape of a computed shape.
  %c1_i64 = arith.constant 1 : i64
  %c4_i64 = arith.constant 4 : i64
  %shape4 = tensor.from_elements %c1_i64, %c4_i64, %view64, %view64 : tensor<4xi64>
  %sc4 = tensor.reshape %sc(%shape4) : (tensor<4x?x?xf32>, tensor<4xi64>) -> tensor<1x4x?x?xf32>
  // The causal mask from two aranges at the dynamic length.
  %m_e = tensor.empty(%view, %view) : tensor<?x?xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %future, %ninf, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %x_e = tensor.empty(%view, %view) : tensor<1x4x?x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4, %m : tensor<1x4x?x?xf32>, tensor<?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x4x?x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x?x?xf32> into tensor<4x?x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty(%s) : tensor<4x?x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x?x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, %s, 16] : tensor<4x?x16xf32> into tensor<1x4x?x16xf32>
  return %o4 : tensor<1x4x?x16xf32>
}

// -----

// Q, K and V are head slices of one fused tensor: each is its slice (the
// fused tensor is larger than any of them), and their lengths are one size.
// CHECK-LABEL: func.func @fused_qkv_heads
// CHECK: %[[Q:.+]] = tensor.extract_slice
// CHECK: %[[K:.+]] = tensor.extract_slice
// CHECK: %[[V:.+]] = tensor.extract_slice
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
func.func @fused_qkv_heads(%qkv: tensor<1x8x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %qkv, %c2 : tensor<1x8x?x16xf32>
  %q = tensor.extract_slice %qkv[0, 0, 0, 0] [1, 4, %n, 16] [1, 1, 1, 1] : tensor<1x8x?x16xf32> to tensor<1x4x?x16xf32>
  %k = tensor.extract_slice %qkv[0, 4, 0, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x8x?x16xf32> to tensor<1x2x?x16xf32>
  %v = tensor.extract_slice %qkv[0, 6, 0, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x8x?x16xf32> to tensor<1x2x?x16xf32>
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %q, %c2 : tensor<1x4x?x16xf32>
  %s64 = arith.index_cast %s : index to i64
  %c0_i64 = arith.constant 0 : i64
  %neg = arith.cmpi slt, %s64, %c0_i64 : i64
  %one = arith.constant 1 : i64
  // torch-mlir's `view(..., -1, ...)`: the inferred size is S (S >= 0).
  %view64 = arith.select %neg, %one, %s64 : i64
  %view = arith.index_cast %view64 : i64 to index
  %ks = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %kx = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %vx = tensor.expand_shape %v [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %rep_e = tensor.empty(%s) : tensor<1x2x2x?x16xf32>
  %krep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %view, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %kx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %vrep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %view, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %vx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%s) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%s, %s) : tensor<4x?x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x?x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  // The scores viewed as [1, 4, S, S] by tensor.reshape of a computed shape.
  %c1_i64 = arith.constant 1 : i64
  %c4_i64 = arith.constant 4 : i64
  %shape4 = tensor.from_elements %c1_i64, %c4_i64, %view64, %view64 : tensor<4xi64>
  %sc4 = tensor.reshape %sc(%shape4) : (tensor<4x?x?xf32>, tensor<4xi64>) -> tensor<1x4x?x?xf32>
  // The causal mask from two aranges at the dynamic length.
  %m_e = tensor.empty(%view, %view) : tensor<?x?xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %future, %ninf, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %x_e = tensor.empty(%view, %view) : tensor<1x4x?x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4, %m : tensor<1x4x?x?xf32>, tensor<?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x4x?x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x?x?xf32> into tensor<4x?x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty(%s) : tensor<4x?x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x?x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, %s, 16] : tensor<4x?x16xf32> into tensor<1x4x?x16xf32>
  return %o4 : tensor<1x4x?x16xf32>
}

// -----

// Near miss: the queries are the first %rows rows of the tensor whose slices
// are K and V. Q is its slice, not the whole tensor (which would attend
// with every row), and its length is not known to be K's.
// CHECK-LABEL: func.func @no_raise_sliced_queries
// CHECK-NOT: rope.attention
// REPORT: remark: rope-raise: attention not raised: the query and key lengths are dynamic and not known to be equal
func.func @no_raise_sliced_queries(%src: tensor<1x4x?x16xf32>, %rows: index) -> tensor<1x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %src, %c2 : tensor<1x4x?x16xf32>
  %q = tensor.extract_slice %src[0, 0, 0, 0] [1, 4, %rows, 16] [1, 1, 1, 1] : tensor<1x4x?x16xf32> to tensor<1x4x?x16xf32>
  %k = tensor.extract_slice %src[0, 0, 0, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x4x?x16xf32> to tensor<1x2x?x16xf32>
  %v = tensor.extract_slice %src[0, 2, 0, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x4x?x16xf32> to tensor<1x2x?x16xf32>
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %q, %c2 : tensor<1x4x?x16xf32>
  %s64 = arith.index_cast %s : index to i64
  %c0_i64 = arith.constant 0 : i64
  %neg = arith.cmpi slt, %s64, %c0_i64 : i64
  %one = arith.constant 1 : i64
  // torch-mlir's `view(..., -1, ...)`: the inferred size is S (S >= 0).
  %view64 = arith.select %neg, %one, %s64 : i64
  %view = arith.index_cast %view64 : i64 to index
  %ks = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %kx = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %vx = tensor.expand_shape %v [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %ks, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %rep_e = tensor.empty(%s) : tensor<1x2x2x?x16xf32>
  %krep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %view, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %kx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %vrep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %view, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %vx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%s) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%s, %s) : tensor<4x?x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x?x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  // The scores viewed as [1, 4, S, S] by tensor.reshape of a computed shape.
  %c1_i64 = arith.constant 1 : i64
  %c4_i64 = arith.constant 4 : i64
  %shape4 = tensor.from_elements %c1_i64, %c4_i64, %view64, %view64 : tensor<4xi64>
  %sc4 = tensor.reshape %sc(%shape4) : (tensor<4x?x?xf32>, tensor<4xi64>) -> tensor<1x4x?x?xf32>
  // The causal mask from two aranges at the dynamic length.
  %m_e = tensor.empty(%view, %view) : tensor<?x?xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %future, %ninf, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %x_e = tensor.empty(%view, %view) : tensor<1x4x?x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4, %m : tensor<1x4x?x?xf32>, tensor<?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x4x?x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x?x?xf32>) outs(%x_e : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x?x?xf32> into tensor<4x?x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty(%s) : tensor<4x?x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x?x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, %s, 16] : tensor<4x?x16xf32> into tensor<1x4x?x16xf32>
  return %o4 : tensor<1x4x?x16xf32>
}

// REPORT-NOT: remark

// -----

// A decode step over a cache: one query, K and V of a dynamic length, no
// mask. With no mask the two lengths need not be one: raised.
// CHECK-LABEL: func.func @decode_step_no_mask
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x1x16xf32>, %[[K:[^:]+]]: tensor<1x4x?x16xf32>, %[[V:[^:]+]]: tensor<1x4x?x16xf32>)
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] scale = 2.500000e-01 : tensor<1x4x1x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @decode_step_no_mask(%q: tensor<1x4x1x16xf32>, %k: tensor<1x4x?x16xf32>, %v: tensor<1x4x?x16xf32>) -> tensor<1x4x1x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %k, %c2 : tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%n) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x1x16xf32> into tensor<4x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%n) : tensor<4x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x1x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [1, 4, 1, %n] : tensor<4x1x?xf32> into tensor<1x4x1x?xf32>
  %x_e = tensor.empty(%n) : tensor<1x4x1x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4 : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    linalg.yield %a : f32
  } -> tensor<1x4x1x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) -> tensor<1x4x1x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x1x?xf32> into tensor<4x1x?xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty() : tensor<4x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x1x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 1, 16] : tensor<4x1x16xf32> into tensor<1x4x1x16xf32>
  return %o4 : tensor<1x4x1x16xf32>
}

// -----

// The same step under a mask the model computed from the cache's positions
// (an argument here, [1, 1, 1, Sk], added to the scores): no rule can be
// read from it, and an operand holds at any lengths: raised with the mask.
// CHECK-LABEL: func.func @decode_step_mask_operand
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x1x16xf32>, %[[K:[^:]+]]: tensor<1x4x?x16xf32>, %[[V:[^:]+]]: tensor<1x4x?x16xf32>, %[[M:[^:]+]]: tensor<1x1x1x?xf32>)
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<1x1x1x?xf32>) scale = 2.500000e-01
// CHECK-NOT: linalg.batch_matmul
func.func @decode_step_mask_operand(%q: tensor<1x4x1x16xf32>, %k: tensor<1x4x?x16xf32>, %v: tensor<1x4x?x16xf32>, %m: tensor<1x1x1x?xf32>) -> tensor<1x4x1x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %k, %c2 : tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%n) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x1x16xf32> into tensor<4x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%n) : tensor<4x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x1x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [1, 4, 1, %n] : tensor<4x1x?xf32> into tensor<1x4x1x?xf32>
  %x_e = tensor.empty(%n) : tensor<1x4x1x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4, %m : tensor<1x4x1x?xf32>, tensor<1x1x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %mm : f32
    linalg.yield %b : f32
  } -> tensor<1x4x1x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) -> tensor<1x4x1x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x1x?xf32> into tensor<4x1x?xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty() : tensor<4x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x1x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 1, 16] : tensor<4x1x16xf32> into tensor<1x4x1x16xf32>
  return %o4 : tensor<1x4x1x16xf32>
}

// -----

// bf16 Q, K and V widened to f32 before an attention computed in f32 (what
// PyTorch's SDPA does with a bf16 model): raised with the operands widened
// (exactly), the attention in f32 as the export computes it. Q and K are
// read through their casts (as the scores are), V where the product reads it.
// CHECK-LABEL: func.func @decode_step_bf16_widened
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x1x16xbf16>, %[[K:[^:]+]]: tensor<1x4x?x16xbf16>, %[[V:[^:]+]]: tensor<1x4x?x16xbf16>)
// CHECK-DAG: %[[QW:.+]] = arith.extf %[[Q]] : tensor<1x4x1x16xbf16> to tensor<1x4x1x16xf32>
// CHECK-DAG: %[[KW:.+]] = arith.extf %[[K]] : tensor<1x4x?x16xbf16> to tensor<1x4x?x16xf32>
// CHECK-DAG: %[[VW:.+]] = linalg.generic {{.+}} ins(%[[V]] : tensor<1x4x?x16xbf16>)
// CHECK: rope.attention %[[QW]], %[[KW]], %[[VW]] scale = 2.500000e-01 : tensor<1x4x1x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @decode_step_bf16_widened(%qb: tensor<1x4x1x16xbf16>, %kb: tensor<1x4x?x16xbf16>, %vb: tensor<1x4x?x16xbf16>) -> tensor<1x4x1x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %kb, %c2 : tensor<1x4x?x16xbf16>
  %qe = tensor.empty() : tensor<1x4x1x16xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qb : tensor<1x4x1x16xbf16>) outs(%qe : tensor<1x4x1x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<1x4x1x16xf32>
  %ke = tensor.empty(%n) : tensor<1x4x?x16xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%kb : tensor<1x4x?x16xbf16>) outs(%ke : tensor<1x4x?x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<1x4x?x16xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%vb : tensor<1x4x?x16xbf16>) outs(%ke : tensor<1x4x?x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%n) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x1x16xf32> into tensor<4x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%n) : tensor<4x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x1x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [1, 4, 1, %n] : tensor<4x1x?xf32> into tensor<1x4x1x?xf32>
  %x_e = tensor.empty(%n) : tensor<1x4x1x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4 : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    linalg.yield %a : f32
  } -> tensor<1x4x1x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) -> tensor<1x4x1x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x1x?xf32> into tensor<4x1x?xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty() : tensor<4x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x1x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 1, 16] : tensor<4x1x16xf32> into tensor<1x4x1x16xf32>
  return %o4 : tensor<1x4x1x16xf32>
}

// -----

// A decode step of GQA 4/2 over a cache: K and V are the cache (one fused
// [K, V] argument here) with the new key concatenated, so their length is
// the cache's + 1, which torch-mlir spells twice: through i64
// (index_cast, addi 1, index_cast) for the repeat's loops and as an
// affine.apply for its broadcast guard. Both are the same size: the repeat
// is read through and the attention gets the 2 kv heads.
// CHECK-LABEL: func.func @decode_gqa_concat_cache
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x1x16xf32>, %[[C:[^:]+]]: tensor<2x1x2x?x16xf32>, %[[KN:[^:]+]]: tensor<1x2x1x16xf32>, %[[VN:[^:]+]]: tensor<1x2x1x16xf32>)
// CHECK-DAG: %[[K:.+]] = tensor.concat dim(2) %{{.+}}, %[[KN]]
// CHECK-DAG: %[[V:.+]] = tensor.concat dim(2) %{{.+}}, %[[VN]]
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] scale = 2.500000e-01 : tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @decode_gqa_concat_cache(%q: tensor<1x4x1x16xf32>, %cache: tensor<2x1x2x?x16xf32>, %kn: tensor<1x2x1x16xf32>, %vn: tensor<1x2x1x16xf32>) -> tensor<1x4x1x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %cache, %c3 : tensor<2x1x2x?x16xf32>
  %kc = tensor.extract_slice %cache[0, 0, 0, 0, 0] [1, 1, 2, %n, 16] [1, 1, 1, 1, 1] : tensor<2x1x2x?x16xf32> to tensor<1x2x?x16xf32>
  %vc = tensor.extract_slice %cache[1, 0, 0, 0, 0] [1, 1, 2, %n, 16] [1, 1, 1, 1, 1] : tensor<2x1x2x?x16xf32> to tensor<1x2x?x16xf32>
  %k = tensor.concat dim(2) %kc, %kn : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  %v = tensor.concat dim(2) %vc, %vn : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  // The length through i64, as the repeat's loops have it.
  %n64 = arith.index_cast %n : index to i64
  %one64 = arith.constant 1 : i64
  %len64 = arith.addi %n64, %one64 : i64
  %len = arith.index_cast %len64 : i64 to index
  // The length as the broadcast guard has it.
  %guard = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%n]
  %kx = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %guard, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %vx = tensor.expand_shape %v [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %guard, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %rep_e = tensor.empty(%len) : tensor<1x2x2x?x16xf32>
  %krep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %guard, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %kx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %vrep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %guard, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %vx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%len) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x1x16xf32> into tensor<4x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%len) : tensor<4x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x1x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [1, 4, 1, %len] : tensor<4x1x?xf32> into tensor<1x4x1x?xf32>
  %x_e = tensor.empty(%len) : tensor<1x4x1x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4 : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    linalg.yield %a : f32
  } -> tensor<1x4x1x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) -> tensor<1x4x1x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x1x?xf32> into tensor<4x1x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty() : tensor<4x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x1x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 1, 16] : tensor<4x1x16xf32> into tensor<1x4x1x16xf32>
  return %o4 : tensor<1x4x1x16xf32>
}

// -----

// The same step with K and V caches of their own (Hugging Face's layout):
// the repeats' loops run to K's length, and V's guard tests V's own length,
// which nothing here shows to be K's. The guard is still read as the
// identity (rope.attention's keys and values must be one length, checked at
// run time), so V is read through its repeat as well: 2 kv heads.
// CHECK-LABEL: func.func @decode_gqa_separate_caches
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x1x16xf32>, %[[KC:[^:]+]]: tensor<1x2x?x16xf32>, %[[VC:[^:]+]]: tensor<1x2x?x16xf32>, %[[KN:[^:]+]]: tensor<1x2x1x16xf32>, %[[VN:[^:]+]]: tensor<1x2x1x16xf32>)
// CHECK-DAG: %[[K:.+]] = tensor.concat dim(2) %[[KC]], %[[KN]]
// CHECK-DAG: %[[V:.+]] = tensor.concat dim(2) %[[VC]], %[[VN]]
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] scale = 2.500000e-01 : tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @decode_gqa_separate_caches(%q: tensor<1x4x1x16xf32>, %kc: tensor<1x2x?x16xf32>, %vc: tensor<1x2x?x16xf32>, %kn: tensor<1x2x1x16xf32>, %vn: tensor<1x2x1x16xf32>) -> tensor<1x4x1x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %kc, %c2 : tensor<1x2x?x16xf32>
  %nv = tensor.dim %vc, %c2 : tensor<1x2x?x16xf32>
  %k = tensor.concat dim(2) %kc, %kn : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  %v = tensor.concat dim(2) %vc, %vn : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  // The length through i64, as the repeat's loops have it.
  %n64 = arith.index_cast %n : index to i64
  %one64 = arith.constant 1 : i64
  %len64 = arith.addi %n64, %one64 : i64
  %len = arith.index_cast %len64 : i64 to index
  // The length as the broadcast guard has it.
  %guard = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%n]
  %vguard = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%nv]
  %kx = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %guard, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %vx = tensor.expand_shape %v [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, %vguard, 16] : tensor<1x2x?x16xf32> into tensor<1x2x1x?x16xf32>
  %rep_e = tensor.empty(%len) : tensor<1x2x2x?x16xf32>
  %krep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %guard, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %kx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %vrep = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%rep_e : tensor<1x2x2x?x16xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 3 : index
    %d = linalg.index 4 : index
    %unit = arith.cmpi eq, %vguard, %c1 : index
    %ii = arith.select %unit, %c0, %i : index
    %x = tensor.extract %vx[%c0, %h, %c0, %ii, %d] : tensor<1x2x1x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x2x?x16xf32>
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<1x2x2x?x16xf32> into tensor<1x4x?x16xf32>
  %kt_e = tensor.empty(%len) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<1x4x?x16xf32>) outs(%kt_e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x1x16xf32> into tensor<4x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %s_e = tensor.empty(%len) : tensor<4x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<4x1x16xf32>, tensor<4x16x?xf32>) outs(%s_f : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [1, 4, 1, %len] : tensor<4x1x?xf32> into tensor<1x4x1x?xf32>
  %x_e = tensor.empty(%len) : tensor<1x4x1x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4 : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    linalg.yield %a : f32
  } -> tensor<1x4x1x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x1x?xf32>) outs(%x_e : tensor<1x4x1x?xf32>) -> tensor<1x4x1x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x1x?xf32> into tensor<4x1x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %o_e = tensor.empty() : tensor<4x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<4x1x?xf32>, tensor<4x?x16xf32>) outs(%o_f : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 1, 16] : tensor<4x1x16xf32> into tensor<1x4x1x16xf32>
  return %o4 : tensor<1x4x1x16xf32>
}
