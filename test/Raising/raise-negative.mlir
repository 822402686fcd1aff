// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s --check-prefixes=CHECK,STRICT
// RUN: rope-opt %s --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --rope-raise -split-input-file | FileCheck %s
// The second run: no rotation appears after elementwise fusion either.

// Near misses of a rotation, and the limitations: all left unchanged.

// cat(x1, −x2) instead of cat(−x2, x1): each element meets itself, not its
// partner.
// CHECK-LABEL: func.func @swapped_concatenation
// CHECK-NOT: rope.rotate
// CHECK: tensor.concat dim(3)
// STRICT: %[[R:.+]] = arith.addf
// STRICT-NEXT: return %[[R]]
func.func @swapped_concatenation(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %x1, %n2 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// cat(−x2, −x1): the signs of a rotation differ between the members.
// CHECK-LABEL: func.func @both_halves_negated
// CHECK-NOT: rope.rotate
// CHECK: tensor.concat dim(3)
// STRICT: %[[R:.+]] = arith.addf
// STRICT-NEXT: return %[[R]]
func.func @both_halves_negated(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n1 = arith.negf %x1 : tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %n1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// The second half taken from offset 7: x[j + 7] is not the partner of x[j].
// CHECK-LABEL: func.func @partner_off_by_one
// CHECK-NOT: rope.rotate
// CHECK: tensor.concat dim(3)
// STRICT: %[[R:.+]] = arith.addf
// STRICT-NEXT: return %[[R]]
func.func @partner_off_by_one(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 7] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// x·cos + rotate_half(y)·sin mixes two tensors.
// CHECK-LABEL: func.func @partner_of_another_tensor
// CHECK-NOT: rope.rotate
// CHECK: tensor.concat dim(3)
// STRICT: %[[R:.+]] = arith.addf
// STRICT-NEXT: return %[[R]]
func.func @partner_of_another_tensor(%x: tensor<2x4x8x16xf32>, %y: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %y[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %y[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// Interleaved near miss: stack(x_even, −x_odd) puts each element of a pair
// in its own place.
// CHECK-LABEL: func.func @interleaved_stack_swapped
// CHECK-NOT: rope.rotate
// CHECK: tensor.collapse_shape
// STRICT: %[[R:.+]] = arith.addf
// STRICT-NEXT: return %[[R]]
func.func @interleaved_stack_swapped(%x: tensor<1x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<1x4x8x16xf32> {
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
  %st = tensor.concat dim(4) %xe1, %no1 : (tensor<1x4x8x8x1xf32>, tensor<1x4x8x8x1xf32>) -> tensor<1x4x8x8x2xf32>
  %rot = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : tensor<1x4x8x8x2xf32> into tensor<1x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<1x4x8x16xf32>
  %b = arith.mulf %rot, %sb : tensor<1x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

// Partial-rotary near miss: the pass-through dims come from another tensor.
// The rotation of x[..., :8] is raised on its own; the concatenation stays.
// CHECK-LABEL: func.func @partial_pass_through_of_another_tensor
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[Y:[^:]+]]: tensor<2x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK: %[[XR:.+]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [2, 4, 8, 8]
// CHECK: %[[YP:.+]] = tensor.extract_slice %[[Y]][0, 0, 0, 8] [2, 4, 8, 8]
// CHECK: %[[ROT:.+]] = rope.rotate %[[XR]], %[[P]] rotary(#rope.spec<>) : tensor<2x4x8x8xf32>, tensor<8xi64>
// CHECK: %[[R:.+]] = tensor.concat dim(3) %[[ROT]], %[[YP]]
// CHECK-NEXT: return %[[R]]
func.func @partial_pass_through_of_another_tensor(%x: tensor<2x4x8x16xf32>, %y: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
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
  %yp = tensor.extract_slice %y[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x1 = tensor.extract_slice %xr[0, 0, 0, 0] [2, 4, 8, 4] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<2x4x8x4xf32>
  %x2 = tensor.extract_slice %xr[0, 0, 0, 4] [2, 4, 8, 4] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<2x4x8x4xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x4xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %a = arith.mulf %xr, %cb : tensor<2x4x8x8xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x8xf32>
  %rot = arith.addf %a, %b : tensor<2x4x8x8xf32>
  %r = tensor.concat dim(3) %rot, %yp : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// TOSA near miss: the negation on the second operand of the concatenation,
// cat(x1, −x2).
// CHECK-LABEL: func.func @tosa_swapped_concatenation
// CHECK-NOT: rope.rotate
// CHECK: tosa.concat
// STRICT: %[[R:.+]] = tosa.add
// STRICT-NEXT: return %[[R]]
func.func @tosa_swapped_concatenation(%x: tensor<1x4x8x16xf32>, %pos: tensor<8xi32>) -> tensor<1x4x8x16xf32> {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %inv = "tosa.const"() {values = dense<[[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]]> : tensor<1x8xf32>} : () -> tensor<1x8xf32>
  %s81 = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s4 = tosa.const_shape {values = dense<[1, 1, 8, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %pf = tosa.cast %pos : (tensor<8xi32>) -> tensor<8xf32>
  %p2 = tosa.reshape %pf, %s81 : (tensor<8xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %freqs = tosa.mul %p2, %inv, %shift : (tensor<8x1xf32>, tensor<1x8xf32>, tensor<1xi8>) -> tensor<8x8xf32>
  %emb = tosa.concat %freqs, %freqs {axis = 1 : i32} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = tosa.cos %emb : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %sin = tosa.sin %emb : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %cos4 = tosa.reshape %cos, %s4 : (tensor<8x16xf32>, !tosa.shape<4>) -> tensor<1x1x8x16xf32>
  %sin4 = tosa.reshape %sin, %s4 : (tensor<8x16xf32>, !tosa.shape<4>) -> tensor<1x1x8x16xf32>
  %start1 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %start2 = tosa.const_shape {values = dense<[0, 0, 0, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 8, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x1 = tosa.slice %x, %start1, %size : (tensor<1x4x8x16xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x8x8xf32>
  %x2 = tosa.slice %x, %start2, %size : (tensor<1x4x8x16xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x8x8xf32>
  %n2 = tosa.negate %x2, %zp, %zp : (tensor<1x4x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8x8xf32>
  %rh = tosa.concat %x1, %n2 {axis = 3 : i32} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x16xf32>
  %a = tosa.mul %x, %cos4, %shift : (tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1xi8>) -> tensor<1x4x8x16xf32>
  %b = tosa.mul %rh, %sin4, %shift : (tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1xi8>) -> tensor<1x4x8x16xf32>
  %r = tosa.add %a, %b : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}
