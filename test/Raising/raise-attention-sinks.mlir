// RUN: rope-opt %s --split-input-file --rope-raise | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-raise=report=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// Attention sinks as gpt-oss and Flint export them: one learned logit per
// query head joins each row's softmax (`cat([scores, sinks], -1)`), and the
// probabilities of the keys are the leading columns of the result (the
// sink's dropped by `[..., :-1]`). rope.attention takes them as its sinks
// operand. gpt-oss shifts the concatenated logits by their row max before
// a softmax that shifts them again; a softmax does not change.

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#head = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// CHECK-LABEL: func.func @sinks_static
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} scale = 2.500000e-01 sinks(%arg3 : tensor<2xf32>) :
// CHECK-NOT: linalg.softmax
func.func @sinks_static(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %sinks: tensor<2xf32>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%sc_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  // sinks.reshape(1, -1, 1, 1).expand(1, 2, 8, 1)
  %sk1 = tensor.expand_shape %sinks [[0, 1, 2, 3]] output_shape [1, 2, 1, 1] : tensor<2xf32> into tensor<1x2x1x1xf32>
  %sk_e = tensor.empty() : tensor<1x2x8x1xf32>
  %sk = linalg.generic {indexing_maps = [#head, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sk1 : tensor<1x2x1x1xf32>) outs(%sk_e : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x1xf32>
  %cat = tensor.concat dim(3) %sc, %sk : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x9xf32>
  // combined - combined.max(-1, keepdim=True)
  %ninf = arith.constant 0xFF800000 : f32
  %m_e = tensor.empty() : tensor<1x2x8xf32>
  %m_f = linalg.fill ins(%ninf : f32) outs(%m_e : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %m = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%cat : tensor<1x2x8x9xf32>) outs(%m_f : tensor<1x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %mx = arith.maximumf %in, %out : f32
    linalg.yield %mx : f32
  } -> tensor<1x2x8xf32>
  %m4 = tensor.expand_shape %m [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
  %x_e = tensor.empty() : tensor<1x2x8x9xf32>
  %x = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cat, %m4 : tensor<1x2x8x9xf32>, tensor<1x2x8x1xf32>) outs(%x_e : tensor<1x2x8x9xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x9xf32>
  %p_e = tensor.empty() : tensor<1x2x8x9xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x8x9xf32>) outs(%p_e : tensor<1x2x8x9xf32>) -> tensor<1x2x8x9xf32>
  %kept = tensor.extract_slice %p[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x9xf32> to tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %kept [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// A decode step over a cache of dynamic length n: the softmax spelled out
// over n + 1 logits, the keys' columns taken by torch-mlir's slice with
// its clamped start min(n + 1, 0) = 0; the sinks a [1, 2, 1, 1] view of
// the per-head logits, gathered back to [2].
// CHECK-LABEL: func.func @sinks_decode_dynamic
// CHECK: %[[S:.+]] = linalg.generic
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} scale = 2.500000e-01 sinks(%[[S]] : tensor<2xf32>) :
func.func @sinks_decode_dynamic(%q: tensor<1x2x1x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %sinks: tensor<1x2x1x1xf32>) -> tensor<1x2x1x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %kt_e = tensor.empty(%n) : tensor<1x2x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x?x16xf32>) outs(%kt_e : tensor<1x2x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x1x16xf32> into tensor<2x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x?xf32> into tensor<2x16x?xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty(%n) : tensor<2x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x1x?xf32>) -> tensor<2x1x?xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x1x16xf32>, tensor<2x16x?xf32>) outs(%s_f : tensor<2x1x?xf32>) -> tensor<2x1x?xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 1, %n] : tensor<2x1x?xf32> into tensor<1x2x1x?xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty(%n) : tensor<1x2x1x?xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x1x?xf32>) outs(%sc_e : tensor<1x2x1x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x1x?xf32>
  %cat = tensor.concat dim(3) %sc, %sinks : (tensor<1x2x1x?xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x1x?xf32>
  %end = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%n]
  %ninf = arith.constant 0xFF800000 : f32
  %m_e = tensor.empty() : tensor<1x2x1x1xf32>
  %m_f = linalg.fill ins(%ninf : f32) outs(%m_e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %m = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%cat : tensor<1x2x1x?xf32>) outs(%m_f : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %mx = arith.maximumf %in, %out : f32
    linalg.yield %mx : f32
  } -> tensor<1x2x1x1xf32>
  %x_e = tensor.empty(%end) : tensor<1x2x1x?xf32>
  %x = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cat, %m : tensor<1x2x1x?xf32>, tensor<1x2x1x1xf32>) outs(%x_e : tensor<1x2x1x?xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x1x?xf32>
  %e = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x1x?xf32>) outs(%x_e : tensor<1x2x1x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = math.exp %in : f32
    linalg.yield %d : f32
  } -> tensor<1x2x1x?xf32>
  %l_f = linalg.fill ins(%zero : f32) outs(%m_e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %l = linalg.generic {indexing_maps = [#id4, #rowk], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%e : tensor<1x2x1x?xf32>) outs(%l_f : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<1x2x1x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e, %l : tensor<1x2x1x?xf32>, tensor<1x2x1x1xf32>) outs(%x_e : tensor<1x2x1x?xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x1x?xf32>
  // probs[..., :-1] as torch-mlir clamps it.
  %c0_i64 = arith.constant 0 : i64
  %cm1 = arith.constant -1 : index
  %end64 = arith.index_cast %end : index to i64
  %start64 = arith.minsi %end64, %c0_i64 : i64
  %start = arith.index_cast %start64 : i64 to index
  %last = arith.addi %end, %cm1 : index
  %negative = arith.cmpi slt, %last, %c0 : index
  %guarded = arith.select %negative, %cm1, %last : index
  %stop = arith.minsi %guarded, %end : index
  %length = arith.subi %stop, %start : index
  %size = arith.maxsi %length, %c0 : index
  %kept = tensor.extract_slice %p[0, 0, 0, %start] [1, 2, 1, %size] [1, 1, 1, 1] : tensor<1x2x1x?xf32> to tensor<1x2x1x?xf32>
  %p3 = tensor.collapse_shape %kept [[0, 1], [2], [3]] : tensor<1x2x1x?xf32> into tensor<2x1x?xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x?x16xf32> into tensor<2x?x16xf32>
  %o_e = tensor.empty() : tensor<2x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x1x16xf32>) -> tensor<2x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x1x?xf32>, tensor<2x?x16xf32>) outs(%o_f : tensor<2x1x16xf32>) -> tensor<2x1x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 1, 16] : tensor<2x1x16xf32> into tensor<1x2x1x16xf32>
  return %o4 : tensor<1x2x1x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// A column of logits that varies with the query is not a sink: not raised,
// reported.
// CHECK-LABEL: func.func @no_raise_sinks_per_row
// CHECK-NOT: rope.attention
// REPORT: remark: rope-raise: attention not raised: the sink logits are not one per query head
func.func @no_raise_sinks_per_row(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %sinks: tensor<1x2x8x1xf32>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%sc_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  %cat = tensor.concat dim(3) %sc, %sinks : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x9xf32>
  // combined - combined.max(-1, keepdim=True)
  %ninf = arith.constant 0xFF800000 : f32
  %m_e = tensor.empty() : tensor<1x2x8xf32>
  %m_f = linalg.fill ins(%ninf : f32) outs(%m_e : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %m = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%cat : tensor<1x2x8x9xf32>) outs(%m_f : tensor<1x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %mx = arith.maximumf %in, %out : f32
    linalg.yield %mx : f32
  } -> tensor<1x2x8xf32>
  %m4 = tensor.expand_shape %m [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
  %x_e = tensor.empty() : tensor<1x2x8x9xf32>
  %x = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cat, %m4 : tensor<1x2x8x9xf32>, tensor<1x2x8x1xf32>) outs(%x_e : tensor<1x2x8x9xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x9xf32>
  %p_e = tensor.empty() : tensor<1x2x8x9xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x8x9xf32>) outs(%p_e : tensor<1x2x8x9xf32>) -> tensor<1x2x8x9xf32>
  %kept = tensor.extract_slice %p[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x9xf32> to tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %kept [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rowk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#head = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// The sink's column kept and multiplied with a ninth row of V: not
// attention over K's eight keys with a sink; not raised, reported.
// CHECK-LABEL: func.func @no_raise_sink_column_kept
// CHECK-NOT: rope.attention
// REPORT: remark: rope-raise: attention not raised: K and V are of different lengths
func.func @no_raise_sink_column_kept(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x9x16xf32>, %sinks: tensor<2xf32>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x16xf32>) outs(%kt_e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x8x8xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%s_f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%sc_e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x8xf32>
  // sinks.reshape(1, -1, 1, 1).expand(1, 2, 8, 1)
  %sk1 = tensor.expand_shape %sinks [[0, 1, 2, 3]] output_shape [1, 2, 1, 1] : tensor<2xf32> into tensor<1x2x1x1xf32>
  %sk_e = tensor.empty() : tensor<1x2x8x1xf32>
  %sk = linalg.generic {indexing_maps = [#head, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sk1 : tensor<1x2x1x1xf32>) outs(%sk_e : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x1xf32>
  %cat = tensor.concat dim(3) %sc, %sk : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x9xf32>
  // combined - combined.max(-1, keepdim=True)
  %ninf = arith.constant 0xFF800000 : f32
  %m_e = tensor.empty() : tensor<1x2x8xf32>
  %m_f = linalg.fill ins(%ninf : f32) outs(%m_e : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %m = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%cat : tensor<1x2x8x9xf32>) outs(%m_f : tensor<1x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %mx = arith.maximumf %in, %out : f32
    linalg.yield %mx : f32
  } -> tensor<1x2x8xf32>
  %m4 = tensor.expand_shape %m [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
  %x_e = tensor.empty() : tensor<1x2x8x9xf32>
  %x = linalg.generic {indexing_maps = [#id4, #rowk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cat, %m4 : tensor<1x2x8x9xf32>, tensor<1x2x8x1xf32>) outs(%x_e : tensor<1x2x8x9xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x9xf32>
  %p_e = tensor.empty() : tensor<1x2x8x9xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x8x9xf32>) outs(%p_e : tensor<1x2x8x9xf32>) -> tensor<1x2x8x9xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x9xf32> into tensor<2x8x9xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x9x16xf32> into tensor<2x9x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x9xf32>, tensor<2x9x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}


// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// A softmax over nine keys whose last column is dropped before the product
// with V: no sink joins the rows (the ninth is a key's), so it is not
// attention over the eight kept; not raised, reported.
// CHECK-LABEL: func.func @no_raise_key_column_dropped
// CHECK-NOT: rope.attention
// REPORT: remark: rope-raise: attention not raised: K and V are of different lengths
func.func @no_raise_key_column_dropped(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x9x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %kt_e = tensor.empty() : tensor<1x2x16x9xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x9x16xf32>) outs(%kt_e : tensor<1x2x16x9xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x9xf32> into tensor<2x16x9xf32>
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<2x8x9xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<2x8x9xf32>) -> tensor<2x8x9xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x9xf32>) outs(%s_f : tensor<2x8x9xf32>) -> tensor<2x8x9xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 9] : tensor<2x8x9xf32> into tensor<1x2x8x9xf32>
  %sc_c = arith.constant 0.25 : f32
  %sc_e = tensor.empty() : tensor<1x2x8x9xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x9xf32>) outs(%sc_e : tensor<1x2x8x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %sc_c : f32
    linalg.yield %d : f32
  } -> tensor<1x2x8x9xf32>
  %p_e = tensor.empty() : tensor<1x2x8x9xf32>
  %p = linalg.softmax dimension(3) ins(%sc : tensor<1x2x8x9xf32>) outs(%p_e : tensor<1x2x8x9xf32>) -> tensor<1x2x8x9xf32>
  %kept = tensor.extract_slice %p[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x9xf32> to tensor<1x2x8x8xf32>
  %p3 = tensor.collapse_shape %kept [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %o_e = tensor.empty() : tensor<2x8x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%o_f : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : tensor<2x8x16xf32> into tensor<1x2x8x16xf32>
  return %o4 : tensor<1x2x8x16xf32>
}
