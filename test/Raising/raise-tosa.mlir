// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s
// RUN: rope-opt %s --pass-pipeline='builtin.module(tosa-to-linalg-pipeline,func.func(tosa-to-tensor,tosa-to-arith),linalg-fuse-elementwise-ops,rope-raise)' -split-input-file | FileCheck %s
// The second run raises the same functions after the upstream TOSA lowering
// (slices, concatenations as insert_slice chains, reshapes, fused generics).

// TOSA spellings: tosa.slice/negate/concat for the partner, tosa.mul (with
// its zero shift) and tosa.add with implicit broadcasting, tables from
// tosa.cast of the positions times a tosa.const, tosa.cos/tosa.sin, and
// tosa.reshape/tosa.tile for the broadcasts and repetitions.

// Half layout; i32 positions reshaped to [S, 1] times inv_freq [1, h].
// CHECK-LABEL: func.func @tosa_half
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi32>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<8xi32>
// CHECK-NEXT: return %[[R]]
func.func @tosa_half(%x: tensor<1x4x8x16xf32>, %pos: tensor<8xi32>) -> tensor<1x4x8x16xf32> {
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
  %rh = tosa.concat %n2, %x1 {axis = 3 : i32} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x16xf32>
  %a = tosa.mul %cos4, %x, %shift : (tensor<1x1x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1xi8>) -> tensor<1x4x8x16xf32>
  %b = tosa.mul %rh, %sin4, %shift : (tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1xi8>) -> tensor<1x4x8x16xf32>
  %r = tosa.add %a, %b : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

// Interleaved layout: pairs by a reshape to [..., 8, 2] and unit slices,
// stacked back by a concatenation and a reshape; the angles repeated per
// pair by reshape + tosa.tile.
// CHECK-LABEL: func.func @tosa_interleaved
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi32>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<layout = interleaved>) : tensor<2x4x8x16xf32>, tensor<8xi32>
// CHECK-NEXT: return %[[R]]
func.func @tosa_interleaved(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi32>) -> tensor<2x4x8x16xf32> {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %inv = "tosa.const"() {values = dense<[[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]]> : tensor<1x8xf32>} : () -> tensor<1x8xf32>
  %s81 = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s881 = tosa.const_shape {values = dense<[8, 8, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %m112 = tosa.const_shape {values = dense<[1, 1, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s816 = tosa.const_shape {values = dense<[8, 16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s4 = tosa.const_shape {values = dense<[1, 1, 8, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s5 = tosa.const_shape {values = dense<[2, 4, 8, 8, 2]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %sx = tosa.const_shape {values = dense<[2, 4, 8, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %pf = tosa.cast %pos : (tensor<8xi32>) -> tensor<8xf32>
  %p2 = tosa.reshape %pf, %s81 : (tensor<8xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %freqs = tosa.mul %inv, %p2, %shift : (tensor<1x8xf32>, tensor<8x1xf32>, tensor<1xi8>) -> tensor<8x8xf32>
  %f3 = tosa.reshape %freqs, %s881 : (tensor<8x8xf32>, !tosa.shape<3>) -> tensor<8x8x1xf32>
  %f2 = tosa.tile %f3, %m112 : (tensor<8x8x1xf32>, !tosa.shape<3>) -> tensor<8x8x2xf32>
  %emb = tosa.reshape %f2, %s816 : (tensor<8x8x2xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %cos = tosa.cos %emb : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %sin = tosa.sin %emb : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %cos4 = tosa.reshape %cos, %s4 : (tensor<8x16xf32>, !tosa.shape<4>) -> tensor<1x1x8x16xf32>
  %sin4 = tosa.reshape %sin, %s4 : (tensor<8x16xf32>, !tosa.shape<4>) -> tensor<1x1x8x16xf32>
  %pairs = tosa.reshape %x, %s5 : (tensor<2x4x8x16xf32>, !tosa.shape<5>) -> tensor<2x4x8x8x2xf32>
  %start0 = tosa.const_shape {values = dense<[0, 0, 0, 0, 0]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %start1 = tosa.const_shape {values = dense<[0, 0, 0, 0, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %size = tosa.const_shape {values = dense<[2, 4, 8, 8, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %xe = tosa.slice %pairs, %start0, %size : (tensor<2x4x8x8x2xf32>, !tosa.shape<5>, !tosa.shape<5>) -> tensor<2x4x8x8x1xf32>
  %xo = tosa.slice %pairs, %start1, %size : (tensor<2x4x8x8x2xf32>, !tosa.shape<5>, !tosa.shape<5>) -> tensor<2x4x8x8x1xf32>
  %no = tosa.negate %xo, %zp, %zp : (tensor<2x4x8x8x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x8x8x1xf32>
  %st = tosa.concat %no, %xe {axis = 4 : i32} : (tensor<2x4x8x8x1xf32>, tensor<2x4x8x8x1xf32>) -> tensor<2x4x8x8x2xf32>
  %rot = tosa.reshape %st, %sx : (tensor<2x4x8x8x2xf32>, !tosa.shape<4>) -> tensor<2x4x8x16xf32>
  %a = tosa.mul %x, %cos4, %shift : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1xi8>) -> tensor<2x4x8x16xf32>
  %b = tosa.mul %sin4, %rot, %shift : (tensor<1x1x8x16xf32>, tensor<2x4x8x16xf32>, tensor<1xi8>) -> tensor<2x4x8x16xf32>
  %r = tosa.add %b, %a : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// Partial rotary (half layout on the first 8 of 16 dims) with tosa.slice for
// the rotated and pass-through parts and tosa.concat to join them; per-
// sequence positions [B, S], inverse rotation by tosa.sub.
// CHECK-LABEL: func.func @tosa_partial_inverse
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[P:[^:]+]]: tensor<2x8xi32>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<dims = 8, inverse = true>) : tensor<2x4x8x16xf32>, tensor<2x8xi32>
// CHECK-NEXT: return %[[R]]
func.func @tosa_partial_inverse(%x: tensor<2x4x8x16xf32>, %pos: tensor<2x8xi32>) -> tensor<2x4x8x16xf32> {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %inv = "tosa.const"() {values = dense<[[[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.000000047e-03]]]> : tensor<1x1x4xf32>} : () -> tensor<1x1x4xf32>
  %s281 = tosa.const_shape {values = dense<[2, 8, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[2, 1, 8, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %pf = tosa.cast %pos : (tensor<2x8xi32>) -> tensor<2x8xf32>
  %p3 = tosa.reshape %pf, %s281 : (tensor<2x8xf32>, !tosa.shape<3>) -> tensor<2x8x1xf32>
  %freqs = tosa.mul %p3, %inv, %shift : (tensor<2x8x1xf32>, tensor<1x1x4xf32>, tensor<1xi8>) -> tensor<2x8x4xf32>
  %emb = tosa.concat %freqs, %freqs {axis = 2 : i32} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x8xf32>
  %cos = tosa.cos %emb : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sin = tosa.sin %emb : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %cos4 = tosa.reshape %cos, %s4 : (tensor<2x8x8xf32>, !tosa.shape<4>) -> tensor<2x1x8x8xf32>
  %sin4 = tosa.reshape %sin, %s4 : (tensor<2x8x8xf32>, !tosa.shape<4>) -> tensor<2x1x8x8xf32>
  %z4 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %o4 = tosa.const_shape {values = dense<[0, 0, 0, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %o8 = tosa.const_shape {values = dense<[0, 0, 0, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %n8 = tosa.const_shape {values = dense<[2, 4, 8, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %n4 = tosa.const_shape {values = dense<[2, 4, 8, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %xr = tosa.slice %x, %z4, %n8 : (tensor<2x4x8x16xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x4x8x8xf32>
  %xp = tosa.slice %x, %o8, %n8 : (tensor<2x4x8x16xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x4x8x8xf32>
  %x1 = tosa.slice %xr, %z4, %n4 : (tensor<2x4x8x8xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x4x8x4xf32>
  %x2 = tosa.slice %xr, %o4, %n4 : (tensor<2x4x8x8xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x4x8x4xf32>
  %n2 = tosa.negate %x2, %zp, %zp : (tensor<2x4x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x8x4xf32>
  %rh = tosa.concat %n2, %x1 {axis = 3 : i32} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %a = tosa.mul %xr, %cos4, %shift : (tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32>, tensor<1xi8>) -> tensor<2x4x8x8xf32>
  %b = tosa.mul %rh, %sin4, %shift : (tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32>, tensor<1xi8>) -> tensor<2x4x8x8xf32>
  %rot = tosa.sub %a, %b : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %r = tosa.concat %rot, %xp {axis = 3 : i32} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}
