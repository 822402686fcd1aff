// RUN: rope-opt %s --rope-fold-rotation-into-qk -split-input-file | FileCheck %s

// Rotated Q and K feeding attention: the rotation moves into the attention;
// no rotated tensor is left.
// CHECK-LABEL: func.func @fold_prefill
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x16x32xf32>, %[[K:[^:]+]]: tensor<1x2x16x32xf32>, %[[V:[^:]+]]: tensor<1x2x16x32xf32>, %[[P:[^:]+]]: tensor<16xi64>)
// CHECK-NOT: rope.rotate
// CHECK: %[[O:.+]] = rope.attention %[[Q]], %[[K]], %[[V]] positions(%[[P]], %[[P]] : tensor<16xi64>, tensor<16xi64>) rotary(#rope.spec<base = 5.000000e+05>) causal :
// CHECK-NOT: rope.rotate
// CHECK: return %[[O]]
func.func @fold_prefill(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %p: tensor<16xi64>) -> tensor<1x8x16x32xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<base = 500000.0>) : tensor<1x8x16x32xf32>, tensor<16xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<base = 500000.0>) : tensor<1x2x16x32xf32>, tensor<16xi64>
  %o = rope.attention %qr, %kr, %v positions(%p, %p : tensor<16xi64>, tensor<16xi64>) causal : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}

// -----

// Decode against an un-rotated KV cache: the new query at its position, the
// cached keys rotated on load at theirs. Non-causal attention without
// positions takes the rotation positions.
// CHECK-LABEL: func.func @fold_decode_unrotated_cache
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x1x16xf32>, %[[K:[^:]+]]: tensor<1x4x?x16xf32>, %[[V:[^:]+]]: tensor<1x4x?x16xf32>, %[[QP:[^:]+]]: tensor<1xi64>, %[[KP:[^:]+]]: tensor<?xi64>)
// CHECK-NOT: rope.rotate
// CHECK: rope.attention %[[Q]], %[[K]], %[[V]] positions(%[[QP]], %[[KP]] : tensor<1xi64>, tensor<?xi64>) rotary(#rope.spec<dims = 8, layout = interleaved, scaling = #rope.llama3<factor = 8.000000e+00, original_max_position_embeddings = 8192>>) :
func.func @fold_decode_unrotated_cache(%q: tensor<1x4x1x16xf32>, %k: tensor<1x4x?x16xf32>, %v: tensor<1x4x?x16xf32>, %qp: tensor<1xi64>, %kp: tensor<?xi64>) -> tensor<1x4x1x16xf32> {
  %qr = rope.rotate %q, %qp rotary(#rope.spec<dims = 8, layout = interleaved, scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<1x4x1x16xf32>, tensor<1xi64>
  %kr = rope.rotate %k, %kp rotary(#rope.spec<dims = 8, layout = interleaved, scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<1x4x?x16xf32>, tensor<?xi64>
  %o = rope.attention %qr, %kr, %v : tensor<1x4x1x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>
  return %o : tensor<1x4x1x16xf32>
}

// -----

// Length-dependent frequencies with shared positions: folds.
// CHECK-LABEL: func.func @fold_dynamic_shared_positions
// CHECK-NOT: rope.rotate
// CHECK: rope.attention {{.*}} rotary(#rope.spec<scaling = #rope.dynamic<
func.func @fold_dynamic_shared_positions(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 4>>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 4>>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %o = rope.attention %qr, %kr, %v : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Length-dependent frequencies over different positions: each rotation sees
// its own largest position, attention would see the joint one. Left alone.
// CHECK-LABEL: func.func @no_fold_dynamic_different_positions
// CHECK-COUNT-2: rope.rotate
// CHECK: rope.attention
// CHECK-NOT: rotary
func.func @no_fold_dynamic_different_positions(%q: tensor<1x2x1x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %qp: tensor<1xi64>, %kp: tensor<8xi64>) -> tensor<1x2x1x16xf32> {
  %qr = rope.rotate %q, %qp rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], long_factor = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], original_max_position_embeddings = 4>>) : tensor<1x2x1x16xf32>, tensor<1xi64>
  %kr = rope.rotate %k, %kp rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], long_factor = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], original_max_position_embeddings = 4>>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %o = rope.attention %qr, %kr, %v : tensor<1x2x1x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x1x16xf32>
}

// -----

// Q and K rotated with different specs: left alone.
// CHECK-LABEL: func.func @no_fold_different_specs
// CHECK-COUNT-2: rope.rotate
// CHECK-NOT: rotary(#rope.spec<base
func.func @no_fold_different_specs(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<base = 500000.0>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %o = rope.attention %qr, %kr, %v : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Causal with default positions, which the rotation's need not match: left
// alone.
// CHECK-LABEL: func.func @no_fold_causal_default_positions
// CHECK-COUNT-2: rope.rotate
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} causal
func.func @no_fold_causal_default_positions(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %o = rope.attention %qr, %kr, %v causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Attention positions that differ from the rotation positions: left alone.
// CHECK-LABEL: func.func @no_fold_other_positions
// CHECK-COUNT-2: rope.rotate
func.func @no_fold_other_positions(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>, %r: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %o = rope.attention %qr, %kr, %v positions(%r, %r : tensor<8xi64>, tensor<8xi64>) causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// The sequence dim of [B, S, H, D] is not attention's: left alone.
// CHECK-LABEL: func.func @no_fold_other_sequence_dim
// CHECK-COUNT-2: rope.rotate
func.func @no_fold_other_sequence_dim(%q: tensor<1x8x8x16xf32>, %k: tensor<1x8x8x16xf32>, %v: tensor<1x8x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x8x8x16xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<>) seq_dim = 1 : tensor<1x8x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<>) seq_dim = 1 : tensor<1x8x8x16xf32>, tensor<8xi64>
  %o = rope.attention %qr, %kr, %v : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}
