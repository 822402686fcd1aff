// RUN: rope-opt %s --split-input-file --rope-raise | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-raise=report=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// Attention at a dynamic batch B (and length S), as torch-mlir writes it
// when Dynamo hands it a symbolic batch (`generate` with several prompts):
// the products run over the collapsed B·H, whose batch torch-mlir spells
// back out as (B·4) / 4 in the expand_shape after each product. The
// batch·head index n then splits as (n floordiv 4, n mod 4) at any B, and
// GQA's repeat reads kv head (n mod 4) floordiv 2, compared with the read
// of K over two periods of n (every n, not a static count of them).

// Prefill: Q, K and V head slices of one tensor, GQA 4/2 through a
// broadcast and a collapse, the causal mask from two aranges.
// CHECK-LABEL: func.func @dynamic_batch_gqa_causal
// CHECK: %[[Q:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0, 0]
// CHECK: %[[K:.+]] = tensor.extract_slice %{{.+}}[0, 4, 0, 0]
// CHECK: %[[V:.+]] = tensor.extract_slice %{{.+}}[0, 6, 0, 0]
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @dynamic_batch_gqa_causal(%qkv: tensor<?x8x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : tensor<?x8x?x16xf32>
  %s = tensor.dim %qkv, %c2 : tensor<?x8x?x16xf32>
  %q = tensor.extract_slice %qkv[0, 0, 0, 0] [%b, 4, %s, 16] [1, 1, 1, 1] : tensor<?x8x?x16xf32> to tensor<?x4x?x16xf32>
  %k = tensor.extract_slice %qkv[0, 4, 0, 0] [%b, 2, %s, 16] [1, 1, 1, 1] : tensor<?x8x?x16xf32> to tensor<?x2x?x16xf32>
  %v = tensor.extract_slice %qkv[0, 6, 0, 0] [%b, 2, %s, 16] [1, 1, 1, 1] : tensor<?x8x?x16xf32> to tensor<?x2x?x16xf32>
  %rep_e = tensor.empty(%b, %s) : tensor<?x2x2x?x16xf32>
  %krep = linalg.broadcast ins(%k : tensor<?x2x?x16xf32>) outs(%rep_e : tensor<?x2x2x?x16xf32>) dimensions = [2]
  %vrep = linalg.broadcast ins(%v : tensor<?x2x?x16xf32>) outs(%rep_e : tensor<?x2x2x?x16xf32>) dimensions = [2]
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<?x2x2x?x16xf32> into tensor<?x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<?x2x2x?x16xf32> into tensor<?x4x?x16xf32>
  %kt_e = tensor.empty(%b, %s) : tensor<?x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<?x4x?x16xf32>) outs(%kt_e : tensor<?x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<?x4x?x16xf32> into tensor<?x?x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<?x4x16x?xf32> into tensor<?x16x?xf32>
  %bh = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%b]
  %s_e = tensor.empty(%bh, %s, %s) : tensor<?x?x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<?x?x16xf32>, tensor<?x16x?xf32>) outs(%s_f : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %b1 = arith.divsi %bh, %c4 : index
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [%b1, 4, %s, %s] : tensor<?x?x?xf32> into tensor<?x4x?x?xf32>
  %m_e = tensor.empty(%s, %s) : tensor<?x?xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m_e : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %future, %ninf, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %x_e = tensor.empty(%b1, %s, %s) : tensor<?x4x?x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4, %m : tensor<?x4x?x?xf32>, tensor<?x?xf32>) outs(%x_e : tensor<?x4x?x?xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %r = arith.addf %a, %mm : f32
    linalg.yield %r : f32
  } -> tensor<?x4x?x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<?x4x?x?xf32>) outs(%x_e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<?x4x?x?xf32> into tensor<?x?x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<?x4x?x16xf32> into tensor<?x?x16xf32>
  %o_e = tensor.empty(%bh, %s) : tensor<?x?x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<?x?x?xf32>, tensor<?x?x16xf32>) outs(%o_f : tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %bh2 = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%b1]
  %b2 = arith.divsi %bh2, %c4 : index
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [%b2, 4, %s, 16] : tensor<?x?x16xf32> into tensor<?x4x?x16xf32>
  return %o4 : tensor<?x4x?x16xf32>
}

// -----

// Decode: one query per sequence against a cache whose batch is an
// argument's own dynamic dim (no size in the program relates it to Q's:
// rope.attention's run-time check does), with HF's padding mask
// [B, 1, 1, Sk] added: the mask is the operand.
// CHECK-LABEL: func.func @dynamic_batch_decode
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x4x1x16xf32>, %[[K:[^:]+]]: tensor<?x2x?x16xf32>, %[[V:[^:]+]]: tensor<?x2x?x16xf32>, %[[M:[^:]+]]: tensor<?x1x1x?xf32>)
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<?x1x1x?xf32>) scale = 2.500000e-01 : tensor<?x4x1x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @dynamic_batch_decode(%q: tensor<?x4x1x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %mask: tensor<?x1x1x?xf32>) -> tensor<?x4x1x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %q, %c0 : tensor<?x4x1x16xf32>
  %bk = tensor.dim %k, %c0 : tensor<?x2x?x16xf32>
  %sk = tensor.dim %k, %c2 : tensor<?x2x?x16xf32>
  %rep_e = tensor.empty(%bk, %sk) : tensor<?x2x2x?x16xf32>
  %krep = linalg.broadcast ins(%k : tensor<?x2x?x16xf32>) outs(%rep_e : tensor<?x2x2x?x16xf32>) dimensions = [2]
  %vrep = linalg.broadcast ins(%v : tensor<?x2x?x16xf32>) outs(%rep_e : tensor<?x2x2x?x16xf32>) dimensions = [2]
  %k4 = tensor.collapse_shape %krep [[0], [1, 2], [3], [4]] : tensor<?x2x2x?x16xf32> into tensor<?x4x?x16xf32>
  %v4 = tensor.collapse_shape %vrep [[0], [1, 2], [3], [4]] : tensor<?x2x2x?x16xf32> into tensor<?x4x?x16xf32>
  %kt_e = tensor.empty(%bk, %sk) : tensor<?x4x16x?xf32>
  %kt = linalg.transpose ins(%k4 : tensor<?x4x?x16xf32>) outs(%kt_e : tensor<?x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<?x4x1x16xf32> into tensor<?x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<?x4x16x?xf32> into tensor<?x16x?xf32>
  %bh = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%b]
  %s_e = tensor.empty(%bh, %sk) : tensor<?x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<?x1x?xf32>) -> tensor<?x1x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<?x1x16xf32>, tensor<?x16x?xf32>) outs(%s_f : tensor<?x1x?xf32>) -> tensor<?x1x?xf32>
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [%b, 4, 1, %sk] : tensor<?x1x?xf32> into tensor<?x4x1x?xf32>
  %x_e = tensor.empty(%b, %sk) : tensor<?x4x1x?xf32>
  %scale = arith.constant 0.25 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc4, %mask : tensor<?x4x1x?xf32>, tensor<?x1x1x?xf32>) outs(%x_e : tensor<?x4x1x?xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %r = arith.addf %a, %mm : f32
    linalg.yield %r : f32
  } -> tensor<?x4x1x?xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<?x4x1x?xf32>) outs(%x_e : tensor<?x4x1x?xf32>) -> tensor<?x4x1x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<?x4x1x?xf32> into tensor<?x1x?xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<?x4x?x16xf32> into tensor<?x?x16xf32>
  %o_e = tensor.empty(%bh) : tensor<?x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<?x1x16xf32>) -> tensor<?x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<?x1x?xf32>, tensor<?x?x16xf32>) outs(%o_f : tensor<?x1x16xf32>) -> tensor<?x1x16xf32>
  %b2 = arith.divsi %bh, %c4 : index
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [%b2, 4, 1, 16] : tensor<?x1x16xf32> into tensor<?x4x1x16xf32>
  return %o4 : tensor<?x4x1x16xf32>
}

// -----

// Near miss: the output's batch is an index argument, which nothing says
// is Q's: rope.attention's result would be Q's batch.
// CHECK-LABEL: func.func @no_raise_batch_not_queries
// CHECK-NOT: rope.attention
// REPORT: remark: rope-raise: attention not raised: the batch is dynamic and not known to be Q's
func.func @no_raise_batch_not_queries(%q: tensor<?x4x1x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %n: index) -> tensor<?x4x1x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %q, %c0 : tensor<?x4x1x16xf32>
  %bk = tensor.dim %k, %c0 : tensor<?x4x?x16xf32>
  %sk = tensor.dim %k, %c2 : tensor<?x4x?x16xf32>
  %kt_e = tensor.empty(%bk, %sk) : tensor<?x4x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x4x?x16xf32>) outs(%kt_e : tensor<?x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<?x4x1x16xf32> into tensor<?x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<?x4x16x?xf32> into tensor<?x16x?xf32>
  %bh = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%b]
  %s_e = tensor.empty(%bh, %sk) : tensor<?x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<?x1x?xf32>) -> tensor<?x1x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<?x1x16xf32>, tensor<?x16x?xf32>) outs(%s_f : tensor<?x1x?xf32>) -> tensor<?x1x?xf32>
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [%b, 4, 1, %sk] : tensor<?x1x?xf32> into tensor<?x4x1x?xf32>
  %x_e = tensor.empty(%b, %sk) : tensor<?x4x1x?xf32>
  %p = linalg.softmax dimension(3) ins(%sc4 : tensor<?x4x1x?xf32>) outs(%x_e : tensor<?x4x1x?xf32>) -> tensor<?x4x1x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<?x4x1x?xf32> into tensor<?x1x?xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<?x4x?x16xf32> into tensor<?x?x16xf32>
  %o_e = tensor.empty(%bh) : tensor<?x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<?x1x16xf32>) -> tensor<?x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<?x1x?xf32>, tensor<?x?x16xf32>) outs(%o_f : tensor<?x1x16xf32>) -> tensor<?x1x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [%n, 4, 1, 16] : tensor<?x1x16xf32> into tensor<?x4x1x16xf32>
  return %o4 : tensor<?x4x1x16xf32>
}

// -----

// Near miss: the head count is dynamic (JetMoE's heads, inferred from the
// dims of a tensor that crossed a graph break, under dynamic=True): the
// batch·head index cannot be split into a batch and a head.
// CHECK-LABEL: func.func @no_raise_dynamic_heads
// CHECK-NOT: rope.attention
// REPORT: remark: rope-raise: attention not raised: the head count or the head dim is dynamic
func.func @no_raise_dynamic_heads(%q: tensor<1x?x1x16xf32>, %k: tensor<1x?x?x16xf32>, %v: tensor<1x?x?x16xf32>) -> tensor<1x?x1x16xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %h = tensor.dim %q, %c1 : tensor<1x?x1x16xf32>
  %sk = tensor.dim %k, %c2 : tensor<1x?x?x16xf32>
  %kt_e = tensor.empty(%h, %sk) : tensor<1x?x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<1x?x?x16xf32>) outs(%kt_e : tensor<1x?x16x?xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x?x1x16xf32> into tensor<?x1x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x?x16x?xf32> into tensor<?x16x?xf32>
  %s_e = tensor.empty(%h, %sk) : tensor<?x1x?xf32>
  %s_f = linalg.fill ins(%zero : f32) outs(%s_e : tensor<?x1x?xf32>) -> tensor<?x1x?xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<?x1x16xf32>, tensor<?x16x?xf32>) outs(%s_f : tensor<?x1x?xf32>) -> tensor<?x1x?xf32>
  %sc4 = tensor.expand_shape %sc [[0, 1], [2], [3]] output_shape [1, %h, 1, %sk] : tensor<?x1x?xf32> into tensor<1x?x1x?xf32>
  %x_e = tensor.empty(%h, %sk) : tensor<1x?x1x?xf32>
  %p = linalg.softmax dimension(3) ins(%sc4 : tensor<1x?x1x?xf32>) outs(%x_e : tensor<1x?x1x?xf32>) -> tensor<1x?x1x?xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x?x1x?xf32> into tensor<?x1x?xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x?x?x16xf32> into tensor<?x?x16xf32>
  %o_e = tensor.empty(%h) : tensor<?x1x16xf32>
  %o_f = linalg.fill ins(%zero : f32) outs(%o_e : tensor<?x1x16xf32>) -> tensor<?x1x16xf32>
  %o = linalg.batch_matmul ins(%p3, %v3 : tensor<?x1x?xf32>, tensor<?x?x16xf32>) outs(%o_f : tensor<?x1x16xf32>) -> tensor<?x1x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, %h, 1, 16] : tensor<?x1x16xf32> into tensor<1x?x1x16xf32>
  return %o4 : tensor<1x?x1x16xf32>
}
