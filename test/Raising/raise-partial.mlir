// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s
// RUN: rope-opt %s --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --rope-raise -split-input-file | FileCheck %s
// The same frontends after elementwise fusion (ops merged into generics,
// reshapes moved past them) raise the same way.

// Partial rotary: a rotation of part of the head, joined with the elements
// passed through, becomes one rotation with `dims` (and `offset`).

// GPT-NeoX `rotary_pct = 0.5`: cat(rotate(x[..., :8]), x[..., 8:]).
// CHECK-LABEL: func.func @neox_partial
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<dims = 8>) : tensor<2x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @neox_partial(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.000000047e-03]> : tensor<4xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x4xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x4xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<4xf32>) outs(%e0 : tensor<8x4xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %cos = math.cos %emb : tensor<8x8xf32>
  %sin = math.sin %emb : tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<2x4x8x8xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x8xf32>) outs(%e1 : tensor<2x4x8x8xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x8xf32>) outs(%e1 : tensor<2x4x8x8xf32>) dimensions = [0, 1]
  %xr = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %xp = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x1 = tensor.extract_slice %xr[0, 0, 0, 0] [2, 4, 8, 4] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<2x4x8x4xf32>
  %x2 = tensor.extract_slice %xr[0, 0, 0, 4] [2, 4, 8, 4] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<2x4x8x4xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x4xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %a = arith.mulf %xr, %cb : tensor<2x4x8x8xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x8xf32>
  %emb2 = arith.addf %a, %b : tensor<2x4x8x8xf32>
  %r = tensor.concat dim(3) %emb2, %xp : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// The rotated dims last: cat(x[..., :8], rotate(x[..., 8:])) is a rotation
// with offset 8.
// CHECK-LABEL: func.func @rotated_dims_last
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<dims = 8, offset = 8>) : tensor<2x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @rotated_dims_last(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.000000047e-03]> : tensor<4xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x4xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x4xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<4xf32>) outs(%e0 : tensor<8x4xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %cos = math.cos %emb : tensor<8x8xf32>
  %sin = math.sin %emb : tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<2x4x8x8xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x8xf32>) outs(%e1 : tensor<2x4x8x8xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x8xf32>) outs(%e1 : tensor<2x4x8x8xf32>) dimensions = [0, 1]
  %xp = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %xr = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x1 = tensor.extract_slice %xr[0, 0, 0, 0] [2, 4, 8, 4] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<2x4x8x4xf32>
  %x2 = tensor.extract_slice %xr[0, 0, 0, 4] [2, 4, 8, 4] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<2x4x8x4xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x4xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %a = arith.mulf %xr, %cb : tensor<2x4x8x8xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x8xf32>
  %rot = arith.addf %a, %b : tensor<2x4x8x8xf32>
  %r = tensor.concat dim(3) %xp, %rot : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// GPT-J `rotary_dim = 8`: the interleaved rotation of x[..., :8] written
// back into x with an insert_slice.
// CHECK-LABEL: func.func @gptj_rotary_dim_insert_slice
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x8x2x16xf32>, %[[P:[^:]+]]: tensor<1x8xi64>)
// CHECK-NEXT: %[[P1:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1]] : tensor<1x8xi64> into tensor<8xi64>
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P1]] rotary(#rope.spec<dims = 8, layout = interleaved>) seq_dim = 1 : tensor<1x8x2x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @gptj_rotary_dim_insert_slice(%x: tensor<1x8x2x16xf32>, %pos: tensor<1x8xi64>) -> tensor<1x8x2x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.000000047e-03]> : tensor<4xf32>
  %pf = arith.sitofp %pos : tensor<1x8xi64> to tensor<1x8xf32>
  %e0 = tensor.empty() : tensor<1x8x4xf32>
  %pb = linalg.broadcast ins(%pf : tensor<1x8xf32>) outs(%e0 : tensor<1x8x4xf32>) dimensions = [2]
  %ib = linalg.broadcast ins(%inv : tensor<4xf32>) outs(%e0 : tensor<1x8x4xf32>) dimensions = [0, 1]
  %freqs = arith.mulf %pb, %ib : tensor<1x8x4xf32>
  %c = math.cos %freqs : tensor<1x8x4xf32>
  %s = math.sin %freqs : tensor<1x8x4xf32>
  %e1 = tensor.empty() : tensor<1x8x2x8xf32>
  // duplicate_interleave and [:, :, None, :] in one broadcasting generic.
  %cb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3 floordiv 2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x8x4xf32>) outs(%e1 : tensor<1x8x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x2x8xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3 floordiv 2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x8x4xf32>) outs(%e1 : tensor<1x8x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x2x8xf32>
  %xr = tensor.extract_slice %x[0, 0, 0, 0] [1, 8, 2, 8] [1, 1, 1, 1] : tensor<1x8x2x16xf32> to tensor<1x8x2x8xf32>
  %xe = tensor.extract_slice %xr[0, 0, 0, 0] [1, 8, 2, 4] [1, 1, 1, 2] : tensor<1x8x2x8xf32> to tensor<1x8x2x4xf32>
  %xo = tensor.extract_slice %xr[0, 0, 0, 1] [1, 8, 2, 4] [1, 1, 1, 2] : tensor<1x8x2x8xf32> to tensor<1x8x2x4xf32>
  %no = arith.negf %xo : tensor<1x8x2x4xf32>
  %no1 = tensor.expand_shape %no [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 4, 1] : tensor<1x8x2x4xf32> into tensor<1x8x2x4x1xf32>
  %xe1 = tensor.expand_shape %xe [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 4, 1] : tensor<1x8x2x4xf32> into tensor<1x8x2x4x1xf32>
  %st = tensor.concat dim(4) %no1, %xe1 : (tensor<1x8x2x4x1xf32>, tensor<1x8x2x4x1xf32>) -> tensor<1x8x2x4x2xf32>
  %rh = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : tensor<1x8x2x4x2xf32> into tensor<1x8x2x8xf32>
  %a = arith.mulf %xr, %cb : tensor<1x8x2x8xf32>
  %b = arith.mulf %rh, %sb : tensor<1x8x2x8xf32>
  %rot = arith.addf %a, %b : tensor<1x8x2x8xf32>
  %r = tensor.insert_slice %rot into %x[0, 0, 0, 0] [1, 8, 2, 8] [1, 1, 1, 1] : tensor<1x8x2x8xf32> into tensor<1x8x2x16xf32>
  return %r : tensor<1x8x2x16xf32>
}
