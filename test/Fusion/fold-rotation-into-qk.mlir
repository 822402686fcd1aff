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
// its own largest position, attention would see the joint one. The
// rotations go in as their own tables (one rope.table each).
// CHECK-LABEL: func.func @fold_dynamic_different_positions_as_tables
// CHECK-SAME: %[[QP:[^:]+]]: tensor<1xi64>, %[[KP:[^:]+]]: tensor<8xi64>
// CHECK-NOT: rope.rotate
// CHECK-DAG: %[[QC:[^ ,]+]], %[[QS:[^ ]+]] = rope.table %[[QP]] rotary(#rope.spec<scaling = #rope.longrope<
// CHECK-DAG: %[[KC:[^ ,]+]], %[[KS:[^ ]+]] = rope.table %[[KP]] rotary(#rope.spec<scaling = #rope.longrope<
// CHECK: rope.attention %{{.+}} rotary_tables(%[[QC]], %[[QS]], %[[KC]], %[[KS]] : tensor<1x8xf32>, tensor<1x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) :
// CHECK-NOT: rope.rotate
func.func @fold_dynamic_different_positions_as_tables(%q: tensor<1x2x1x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %qp: tensor<1xi64>, %kp: tensor<8xi64>) -> tensor<1x2x1x16xf32> {
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

// Causal with default positions, which the rotation's need not match (a
// frontend's mask built from an iota, its rotation from position ids): the
// rotation goes in as its table (one, shared), the mask keeps its positions.
// CHECK-LABEL: func.func @fold_causal_default_positions_as_tables
// CHECK-NOT: rope.rotate
// CHECK: %[[C:[^ ,]+]], %[[S:[^ ]+]] = rope.table
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} rotary_tables(%[[C]], %[[S]], %[[C]], %[[S]] : {{.*}}) causal :
func.func @fold_causal_default_positions_as_tables(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %o = rope.attention %qr, %kr, %v causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// The same, with Q's and K's positions two identical reshapes of the
// position ids (as frontends export them, one per rotation): still one
// shared table.
// CHECK-LABEL: func.func @fold_causal_equal_positions_one_table
// CHECK: %[[C:[^ ,]+]], %[[S:[^ ]+]] = rope.table
// CHECK-NOT: rope.table
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} rotary_tables(%[[C]], %[[S]], %[[C]], %[[S]] : {{.*}}) causal :
func.func @fold_causal_equal_positions_one_table(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %ids: tensor<1x8xi64>) -> tensor<1x2x8x16xf32> {
  %pq = tensor.collapse_shape %ids [[0, 1]] : tensor<1x8xi64> into tensor<8xi64>
  %pk = tensor.collapse_shape %ids [[0, 1]] : tensor<1x8xi64> into tensor<8xi64>
  %qr = rope.rotate %q, %pq rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %pk rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %o = rope.attention %qr, %kr, %v causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Attention positions that differ from the rotation positions: the
// rotation goes in as its table, the attention keeps its positions.
// CHECK-LABEL: func.func @fold_other_positions_as_tables
// CHECK-SAME: %[[P:[^:]+]]: tensor<8xi64>, %[[R:[^:]+]]: tensor<8xi64>
// CHECK-NOT: rope.rotate
// CHECK: %[[C:[^ ,]+]], %[[S:[^ ]+]] = rope.table %[[P]]
// CHECK: rope.attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} positions(%[[R]], %[[R]] : {{.*}}) rotary_tables(%[[C]], %[[S]], %[[C]], %[[S]] : {{.*}}) causal :
func.func @fold_other_positions_as_tables(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>, %r: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
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

// -----

// A frontend's rotation by tables (HF: [1, 1, S, D] per element, shared by
// Q and K) folds too: attention takes the tables and rotates on load. The
// causal mask keeps its default positions; the tables are read by row.
// CHECK-LABEL: func.func @fold_table_rotations
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>, %[[C:[^:]+]]: tensor<1x1x8x16xf32>, %[[S:[^:]+]]: tensor<1x1x8x16xf32>)
// CHECK-NOT: rope.rotate_with_tables
// CHECK: %[[O:.+]] = rope.attention %[[Q]], %[[K]], %[[V]] rotary_tables(%[[C]], %[[S]], %[[C]], %[[S]] : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>) causal scale = 2.500000e-01 :
// CHECK-NEXT: return %[[O]]
func.func @fold_table_rotations(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %c: tensor<1x1x8x16xf32>, %s: tensor<1x1x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %qr = rope.rotate_with_tables %q, %c, %s : tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>
  %kr = rope.rotate_with_tables %k, %c, %s : tensor<1x2x8x16xf32>, tensor<1x1x8x16xf32>
  %o = rope.attention %qr, %kr, %v causal scale = 0.25 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// Partial interleaved rotation by per-pair tables (GPT-J's cache gathered
// as [B, S, r/2]), with different tables for a decode query and its keys.
// CHECK-LABEL: func.func @fold_table_rotations_partial_interleaved
// CHECK-NOT: rope.rotate_with_tables
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} rotary_tables(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x9x4xf32>, tensor<2x9x4xf32>) rotary_layout<interleaved> rotary_dims = 8 rotary_offset = 2 :
func.func @fold_table_rotations_partial_interleaved(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x9x16xf32>, %v: tensor<2x4x9x16xf32>, %qc: tensor<2x1x4xf32>, %qs: tensor<2x1x4xf32>, %kc: tensor<2x9x4xf32>, %ks: tensor<2x9x4xf32>) -> tensor<2x4x1x16xf32> {
  %qr = rope.rotate_with_tables %q, %qc, %qs layout<interleaved> dims = 8 offset = 2 : tensor<2x4x1x16xf32>, tensor<2x1x4xf32>
  %kr = rope.rotate_with_tables %k, %kc, %ks layout<interleaved> dims = 8 offset = 2 : tensor<2x4x9x16xf32>, tensor<2x9x4xf32>
  %o = rope.attention %qr, %kr, %v : tensor<2x4x1x16xf32>, tensor<2x4x9x16xf32>, tensor<2x4x9x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

// Q and K rotate different dims: left alone.
// CHECK-LABEL: func.func @no_fold_table_rotations_different_dims
// CHECK-COUNT-2: rope.rotate_with_tables
// CHECK: rope.attention
// CHECK-NOT: rotary_tables
func.func @no_fold_table_rotations_different_dims(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %c: tensor<8x8xf32>, %s: tensor<8x8xf32>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate_with_tables %q, %c, %s dims = 8 : tensor<1x2x8x16xf32>, tensor<8x8xf32>
  %kr = rope.rotate_with_tables %k, %c, %s dims = 8 offset = 8 : tensor<1x2x8x16xf32>, tensor<8x8xf32>
  %o = rope.attention %qr, %kr, %v : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Tables that differ by head, or one row for every token: attention reads
// one table row per token for all heads, so these stay outside.
// CHECK-LABEL: func.func @no_fold_table_rotations_per_head
// CHECK-COUNT-2: rope.rotate_with_tables
// CHECK: rope.attention
// CHECK-NOT: rotary_tables
func.func @no_fold_table_rotations_per_head(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %c: tensor<1x2x8x16xf32>, %s: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate_with_tables %q, %c, %s : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %kr = rope.rotate_with_tables %k, %c, %s : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %o = rope.attention %qr, %kr, %v : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @no_fold_table_rotations_broadcast_rows
// CHECK-COUNT-2: rope.rotate_with_tables
// CHECK: rope.attention
// CHECK-NOT: rotary_tables
func.func @no_fold_table_rotations_broadcast_rows(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %c: tensor<1x16xf32>, %s: tensor<1x16xf32>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate_with_tables %q, %c, %s : tensor<1x2x8x16xf32>, tensor<1x16xf32>
  %kr = rope.rotate_with_tables %k, %c, %s : tensor<1x2x8x16xf32>, tensor<1x16xf32>
  %o = rope.attention %qr, %kr, %v : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// GPT-J rotates Q and K as [B, S, H, D] and transposes them into attention's
// layout: the rotation moves after the transpose (its rank-4 tables
// transposed alike) and then folds.
// CHECK-LABEL: func.func @fold_table_rotations_through_transpose
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x2x16xf32>, %[[K:[^:]+]]: tensor<1x8x2x16xf32>, %{{[^:]+}}: tensor<1x2x8x16xf32>, %[[C:[^:]+]]: tensor<1x8x1x8xf32>, %[[S:[^:]+]]: tensor<1x8x1x8xf32>)
// CHECK-NOT: rope.rotate_with_tables
// CHECK-DAG: %[[QT:.+]] = linalg.transpose ins(%[[Q]] : tensor<1x8x2x16xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK-DAG: %[[CT:.+]] = linalg.transpose ins(%[[C]] : tensor<1x8x1x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK: rope.attention %[[QT]], %{{.+}}, %{{.+}} rotary_tables(%[[CT]], %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) rotary_layout<interleaved> rotary_dims = 8 causal :
func.func @fold_table_rotations_through_transpose(%q: tensor<1x8x2x16xf32>, %k: tensor<1x8x2x16xf32>, %v: tensor<1x2x8x16xf32>, %c: tensor<1x8x1x8xf32>, %s: tensor<1x8x1x8xf32>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate_with_tables %q, %c, %s layout<interleaved> dims = 8 : tensor<1x8x2x16xf32>, tensor<1x8x1x8xf32>
  %kr = rope.rotate_with_tables %k, %c, %s layout<interleaved> dims = 8 : tensor<1x8x2x16xf32>, tensor<1x8x1x8xf32>
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %qt = linalg.transpose ins(%qr : tensor<1x8x2x16xf32>) outs(%e : tensor<1x2x8x16xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%kr : tensor<1x8x2x16xf32>) outs(%e : tensor<1x2x8x16xf32>) permutation = [0, 2, 1, 3]
  %o = rope.attention %qt, %kt, %v causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// The same with tosa.transpose (torch-mlir's tosa export of GPT-J): the
// rotation moves after it alike.
// CHECK-LABEL: func.func @fold_table_rotations_through_tosa_transpose
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x2x16xf32>, %[[K:[^:]+]]: tensor<1x8x2x16xf32>, %{{[^:]+}}: tensor<1x2x8x16xf32>, %[[C:[^:]+]]: tensor<1x8x1x8xf32>, %[[S:[^:]+]]: tensor<1x8x1x8xf32>)
// CHECK-NOT: rope.rotate_with_tables
// CHECK-DAG: %[[QT:.+]] = linalg.transpose ins(%[[Q]] : tensor<1x8x2x16xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK-DAG: %[[CT:.+]] = linalg.transpose ins(%[[C]] : tensor<1x8x1x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK: rope.attention %[[QT]], %{{.+}}, %{{.+}} rotary_tables(%[[CT]], %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) rotary_layout<interleaved> rotary_dims = 8 causal :
func.func @fold_table_rotations_through_tosa_transpose(%q: tensor<1x8x2x16xf32>, %k: tensor<1x8x2x16xf32>, %v: tensor<1x2x8x16xf32>, %c: tensor<1x8x1x8xf32>, %s: tensor<1x8x1x8xf32>) -> tensor<1x2x8x16xf32> {
  %qr = rope.rotate_with_tables %q, %c, %s layout<interleaved> dims = 8 : tensor<1x8x2x16xf32>, tensor<1x8x1x8xf32>
  %kr = rope.rotate_with_tables %k, %c, %s layout<interleaved> dims = 8 : tensor<1x8x2x16xf32>, tensor<1x8x1x8xf32>
  %qt = tosa.transpose %qr {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x8x2x16xf32>) -> tensor<1x2x8x16xf32>
  %kt = tosa.transpose %kr {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x8x2x16xf32>) -> tensor<1x2x8x16xf32>
  %o = rope.attention %qt, %kt, %v causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Rotated Q and K meeting in a plain batch matmul (no attention): the
// product reads the un-rotated tensors as pairs ([.., 2, h]) and rotates
// them in its body with each side's table; no rotated tensor is left.
// CHECK-LABEL: func.func @fold_into_product
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NOT: rope.rotate
// CHECK-DAG: %[[QP:.+]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 2, 8, 2, 8]
// CHECK-DAG: %[[KP:.+]] = tensor.expand_shape %[[K]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 2, 8, 2, 8]
// CHECK-DAG: %[[C:[^ ,]+]], %[[S:[^ ]+]] = rope.table %[[P]] rotary(#rope.spec<base = 5.000000e+05>) head_dim = 16
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[QP]], %[[QP]], %[[C]], %[[S]], %[[C]], %[[S]], %[[KP]], %[[KP]], %[[C]], %[[S]], %[[C]], %[[S]] :
// CHECK-NOT: linalg.batch_matmul
func.func @fold_into_product(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x8xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<base = 500000.0>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<base = 500000.0>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x2x8x16xf32>) outs(%e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %s : tensor<2x8x8xf32>
}

// -----

// Partial rotary (GPT-NeoX: the first 8 of 16 dims): the pass-through
// dims [8, 16) are a product of slices into the init, the rotated pairs a
// second product accumulating into the first.
// CHECK-LABEL: func.func @fold_into_product_partial
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NOT: rope.rotate
// CHECK: %[[C:[^ ,]+]], %[[S:[^ ]+]] = rope.table %[[P]] rotary(#rope.spec<dims = 8>) head_dim = 16
// CHECK-DAG: %[[QT:.+]] = tensor.extract_slice %[[Q]][0, 0, 0, 8] [1, 2, 8, 8] [1, 1, 1, 1]
// CHECK-DAG: %[[KT:.+]] = tensor.extract_slice %[[K]][0, 0, 0, 8] [1, 2, 8, 8] [1, 1, 1, 1]
// CHECK: %[[PASS:.+]] = linalg.generic {{.*}} ins(%[[QT]], %[[KT]] :
// CHECK: %[[QR:.+]] = tensor.extract_slice %[[Q]][0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1]
// CHECK: %[[QP:.+]] = tensor.expand_shape %[[QR]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 2, 8, 2, 4]
// CHECK: %[[KR:.+]] = tensor.extract_slice %[[K]][0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1]
// CHECK: %[[KP:.+]] = tensor.expand_shape %[[KR]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 2, 8, 2, 4]
// CHECK: linalg.generic {{.*}} ins(%[[QP]], %[[QP]], %[[C]], %[[S]], %[[C]], %[[S]], %[[KP]], %[[KP]], %[[C]], %[[S]], %[[C]], %[[S]] : {{.*}} outs(%[[PASS]] :
// CHECK-NOT: linalg.batch_matmul
func.func @fold_into_product_partial(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x8xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<dims = 8>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<dims = 8>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x2x8x16xf32>) outs(%e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %s : tensor<2x8x8xf32>
}

// -----

// Rotations by a frontend's tables (HF's per-element cos/sin, [1, 1, S, r],
// 8 dims at offset 4 so pass-through dims lie on both sides): the tables
// are sliced per pair member ([.., 0:4] for the first, [.., 4:8] for the
// second) and read at the pair; the pass-through dims [0, 4) and [12, 16)
// are two products of slices.
// CHECK-LABEL: func.func @fold_table_rotations_into_product
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[C:[^:]+]]: tensor<1x1x8x8xf32>, %[[S:[^:]+]]: tensor<1x1x8x8xf32>)
// CHECK-NOT: rope.rotate_with_tables
// CHECK: %[[LO:.+]] = linalg.generic
// CHECK: %[[HI:.+]] = linalg.generic {{.*}} outs(%[[LO]] :
// CHECK-DAG: %[[C0:.+]] = tensor.extract_slice %[[C]][0, 0, 0, 0] [1, 1, 8, 4] [1, 1, 1, 1]
// CHECK-DAG: %[[C1:.+]] = tensor.extract_slice %[[C]][0, 0, 0, 4] [1, 1, 8, 4] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[HI]] :
// CHECK-NOT: linalg.batch_matmul
func.func @fold_table_rotations_into_product(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<1x1x8x8xf32>, %s: tensor<1x1x8x8xf32>) -> tensor<2x8x8xf32> {
  %qr = rope.rotate_with_tables %q, %c, %s dims = 8 offset = 4 : tensor<1x2x8x16xf32>, tensor<1x1x8x8xf32>
  %kr = rope.rotate_with_tables %k, %c, %s dims = 8 offset = 4 : tensor<1x2x8x16xf32>, tensor<1x1x8x8xf32>
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x2x8x16xf32>) outs(%e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sc = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %sc : tensor<2x8x8xf32>
}

// -----

// Near misses for the product: Q and K paired differently, or rotating
// different dims. Left alone.
// CHECK-LABEL: func.func @no_fold_into_product_layouts
// CHECK-COUNT-2: rope.rotate
// CHECK: linalg.batch_matmul
func.func @no_fold_into_product_layouts(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x8xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<layout = interleaved>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x2x8x16xf32>) outs(%e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %s : tensor<2x8x8xf32>
}

// CHECK-LABEL: func.func @no_fold_into_product_different_dims
// CHECK-COUNT-2: rope.rotate
// CHECK: linalg.batch_matmul
func.func @no_fold_into_product_different_dims(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x8xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<dims = 8>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<dims = 8, offset = 8>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x2x8x16xf32>) outs(%e : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : tensor<1x2x8x16xf32> into tensor<2x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%f : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %s : tensor<2x8x8xf32>
}
