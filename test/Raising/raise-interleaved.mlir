// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s
// RUN: rope-opt %s --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --rope-raise -split-input-file | FileCheck %s
// The same frontends after elementwise fusion (ops merged into generics,
// reshapes moved past them) raise the same way.

// Interleaved layout (GPT-J/RoFormer `rotate_every_two`): pairs (2i, 2i+1),
//   x·cos + stack(−x[..., 1::2], x[..., ::2], -1).flatten(-2)·sin,
// with cos/sin repeated per pair (`repeat_interleave(t, 2, -1)`).

// GPT-J: even/odd elements by stride-2 slices, stacked along a new dim and
// collapsed; the tables repeated after cos/sin. [B, S, H, D] with
// per-sequence positions [B, S].
// CHECK-LABEL: func.func @gptj_strided_slices
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x4x16xf32>, %[[P:[^:]+]]: tensor<2x8xi32>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<layout = interleaved>) seq_dim = 1 : tensor<2x8x4x16xf32>, tensor<2x8xi32>
// CHECK-NEXT: return %[[R]]
func.func @gptj_strided_slices(%x: tensor<2x8x4x16xf32>, %pos: tensor<2x8xi32>) -> tensor<2x8x4x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<2x8xi32> to tensor<2x8xf32>
  %e0 = tensor.empty() : tensor<2x8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<2x8xf32>) outs(%e0 : tensor<2x8x8xf32>) dimensions = [2]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<2x8x8xf32>) dimensions = [0, 1]
  %freqs = arith.mulf %ib, %pb : tensor<2x8x8xf32>
  %c = math.cos %freqs : tensor<2x8x8xf32>
  %s = math.sin %freqs : tensor<2x8x8xf32>
  // repeat_interleave(t, 2, -1)
  %c3 = tensor.expand_shape %c [[0], [1], [2, 3]] output_shape [2, 8, 8, 1] : tensor<2x8x8xf32> into tensor<2x8x8x1xf32>
  %s3 = tensor.expand_shape %s [[0], [1], [2, 3]] output_shape [2, 8, 8, 1] : tensor<2x8x8xf32> into tensor<2x8x8x1xf32>
  %c2 = tensor.concat dim(3) %c3, %c3 : (tensor<2x8x8x1xf32>, tensor<2x8x8x1xf32>) -> tensor<2x8x8x2xf32>
  %s2 = tensor.concat dim(3) %s3, %s3 : (tensor<2x8x8x1xf32>, tensor<2x8x8x1xf32>) -> tensor<2x8x8x2xf32>
  %cd = tensor.collapse_shape %c2 [[0], [1], [2, 3]] : tensor<2x8x8x2xf32> into tensor<2x8x16xf32>
  %sd = tensor.collapse_shape %s2 [[0], [1], [2, 3]] : tensor<2x8x8x2xf32> into tensor<2x8x16xf32>
  %e1 = tensor.empty() : tensor<2x8x4x16xf32>
  %cb = linalg.broadcast ins(%cd : tensor<2x8x16xf32>) outs(%e1 : tensor<2x8x4x16xf32>) dimensions = [2]
  %sb = linalg.broadcast ins(%sd : tensor<2x8x16xf32>) outs(%e1 : tensor<2x8x4x16xf32>) dimensions = [2]
  // rotate_every_two: stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)
  %xe = tensor.extract_slice %x[0, 0, 0, 0] [2, 8, 4, 8] [1, 1, 1, 2] : tensor<2x8x4x16xf32> to tensor<2x8x4x8xf32>
  %xo = tensor.extract_slice %x[0, 0, 0, 1] [2, 8, 4, 8] [1, 1, 1, 2] : tensor<2x8x4x16xf32> to tensor<2x8x4x8xf32>
  %no = arith.negf %xo : tensor<2x8x4x8xf32>
  %no1 = tensor.expand_shape %no [[0], [1], [2], [3, 4]] output_shape [2, 8, 4, 8, 1] : tensor<2x8x4x8xf32> into tensor<2x8x4x8x1xf32>
  %xe1 = tensor.expand_shape %xe [[0], [1], [2], [3, 4]] output_shape [2, 8, 4, 8, 1] : tensor<2x8x4x8xf32> into tensor<2x8x4x8x1xf32>
  %st = tensor.concat dim(4) %no1, %xe1 : (tensor<2x8x4x8x1xf32>, tensor<2x8x4x8x1xf32>) -> tensor<2x8x4x8x2xf32>
  %rot = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : tensor<2x8x4x8x2xf32> into tensor<2x8x4x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x8x4x16xf32>
  %b = arith.mulf %rot, %sb : tensor<2x8x4x16xf32>
  %r = arith.addf %a, %b : tensor<2x8x4x16xf32>
  return %r : tensor<2x8x4x16xf32>
}

// -----

// The pairs by a [..., 8, 2] reshape and rank-reducing unit slices; the
// angles repeated before cos/sin by a generic reading freqs[s, j floordiv 2].
// CHECK-LABEL: func.func @pair_reshape
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<layout = interleaved>) : tensor<1x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @pair_reshape(%x: tensor<1x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<1x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %emb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 2)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%freqs : tensor<8x8xf32>) outs(%e1 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<1x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e2 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e2 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %pairs = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [1, 4, 8, 8, 2] : tensor<1x4x8x16xf32> into tensor<1x4x8x8x2xf32>
  %xe = tensor.extract_slice %pairs[0, 0, 0, 0, 0] [1, 4, 8, 8, 1] [1, 1, 1, 1, 1] : tensor<1x4x8x8x2xf32> to tensor<1x4x8x8xf32>
  %xo = tensor.extract_slice %pairs[0, 0, 0, 0, 1] [1, 4, 8, 8, 1] [1, 1, 1, 1, 1] : tensor<1x4x8x8x2xf32> to tensor<1x4x8x8xf32>
  %no = arith.negf %xo : tensor<1x4x8x8xf32>
  %no1 = tensor.expand_shape %no [[0], [1], [2], [3, 4]] output_shape [1, 4, 8, 8, 1] : tensor<1x4x8x8xf32> into tensor<1x4x8x8x1xf32>
  %xe1 = tensor.expand_shape %xe [[0], [1], [2], [3, 4]] output_shape [1, 4, 8, 8, 1] : tensor<1x4x8x8xf32> into tensor<1x4x8x8x1xf32>
  %st = tensor.concat dim(4) %no1, %xe1 : (tensor<1x4x8x8x1xf32>, tensor<1x4x8x8x1xf32>) -> tensor<1x4x8x8x2xf32>
  %rot = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : tensor<1x4x8x8x2xf32> into tensor<1x4x8x16xf32>
  %a = arith.mulf %cb, %x : tensor<1x4x8x16xf32>
  %b = arith.mulf %sb, %rot : tensor<1x4x8x16xf32>
  %r = arith.addf %b, %a : tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

// x·cos − rotate_every_two(x)·sin: the inverse interleaved rotation.
// CHECK-LABEL: func.func @inverse_interleaved
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<layout = interleaved, inverse = true>)
// CHECK-NOT: tensor.collapse_shape
func.func @inverse_interleaved(%x: tensor<1x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<1x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %f3 = tensor.expand_shape %freqs [[0], [1, 2]] output_shape [8, 8, 1] : tensor<8x8xf32> into tensor<8x8x1xf32>
  %f2 = tensor.concat dim(2) %f3, %f3 : (tensor<8x8x1xf32>, tensor<8x8x1xf32>) -> tensor<8x8x2xf32>
  %emb = tensor.collapse_shape %f2 [[0], [1, 2]] : tensor<8x8x2xf32> into tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<1x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e2 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e2 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %xe = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 2] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %xo = tensor.extract_slice %x[0, 0, 0, 1] [1, 4, 8, 8] [1, 1, 1, 2] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %no = arith.negf %xo : tensor<1x4x8x8xf32>
  %no1 = tensor.expand_shape %no [[0], [1], [2], [3, 4]] output_shape [1, 4, 8, 8, 1] : tensor<1x4x8x8xf32> into tensor<1x4x8x8x1xf32>
  %xe1 = tensor.expand_shape %xe [[0], [1], [2], [3, 4]] output_shape [1, 4, 8, 8, 1] : tensor<1x4x8x8xf32> into tensor<1x4x8x8x1xf32>
  %st = tensor.concat dim(4) %no1, %xe1 : (tensor<1x4x8x8x1xf32>, tensor<1x4x8x8x1xf32>) -> tensor<1x4x8x8x2xf32>
  %rot = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : tensor<1x4x8x8x2xf32> into tensor<1x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<1x4x8x16xf32>
  %b = arith.mulf %rot, %sb : tensor<1x4x8x16xf32>
  %r = arith.subf %a, %b : tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}
