// RUN: rope-opt %s -canonicalize -split-input-file | FileCheck %s

// The rotation algebra (rope.rotate in docs/Dialects/RopeDialect.md): R_0 = I, R_p R_q = R_{p+q},
// R_p^T = R_{-p}, valid for a fixed frequency set and attention factor 1.

//===----------------------------------------------------------------------===//
// R_0 = I
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @fold_zero_positions
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x16xf32>)
// CHECK-NOT: rope.rotate
// CHECK: return %[[X]]
func.func @fold_zero_positions(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %p = arith.constant dense<0> : tensor<8xi64>
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x8x16xf32>, tensor<8xi64>
  return %0 : tensor<2x8x16xf32>
}

// -----

// Per-sequence zero positions, inverse direction, partial rotary: still R_0.
// CHECK-LABEL: func.func @fold_zero_batch_positions_inverse
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x16xf16>)
// CHECK-NOT: rope.rotate
// CHECK: return %[[X]]
func.func @fold_zero_batch_positions_inverse(%x: tensor<2x8x16xf16>) -> tensor<2x8x16xf16> {
  %p = arith.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]]> : tensor<2x8xi32>
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, inverse = true>) : tensor<2x8x16xf16>, tensor<2x8xi32>
  return %0 : tensor<2x8x16xf16>
}

// -----

// Frequencies that depend on the positions do not matter at p = 0.
// CHECK-LABEL: func.func @fold_zero_positions_dynamic_scaling
// CHECK-NOT: rope.rotate
func.func @fold_zero_positions_dynamic_scaling(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %p = arith.constant dense<0> : tensor<8xi64>
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_fold_nonzero_positions
// CHECK: %[[P:.+]] = arith.constant dense<[0, 1, 0, 0, 0, 0, 0, 0]> : tensor<8xi64>
// CHECK: rope.rotate %{{.+}}, %[[P]]
func.func @no_fold_nonzero_positions(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %p = arith.constant dense<[0, 1, 0, 0, 0, 0, 0, 0]> : tensor<8xi64>
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// m = 2 scales even at p = 0.
// CHECK-LABEL: func.func @no_fold_zero_positions_attention_factor
// CHECK: %[[P:.+]] = arith.constant dense<0> : tensor<8xi64>
// CHECK: %[[R:.+]] = rope.rotate %{{.+}}, %[[P]] rotary(#rope.spec<attention_factor = 2.000000e+00>)
// CHECK: return %[[R]]
func.func @no_fold_zero_positions_attention_factor(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %p = arith.constant dense<0> : tensor<8xi64>
  %0 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 2.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// YaRN with factor 4 implies m = 0.1 ln 4 + 1 != 1.
// CHECK-LABEL: func.func @no_fold_zero_positions_yarn_attention_factor
// CHECK: %[[R:.+]] = rope.rotate
// CHECK: return %[[R]]
func.func @no_fold_zero_positions_yarn_attention_factor(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %p = arith.constant dense<0> : tensor<8xi64>
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// An explicit m = 1 overrides the scaling's: the rotation folds.
// CHECK-LABEL: func.func @fold_zero_positions_yarn_unit_attention_factor
// CHECK-NOT: rope.rotate
func.func @fold_zero_positions_yarn_unit_attention_factor(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %p = arith.constant dense<0> : tensor<8xi64>
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 16>, attention_factor = 1.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// R_p R_q = R_{p+q}
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @compose_same_spec
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[P:[^:]+]]: tensor<8xi32>, %[[Q:[^:]+]]: tensor<8xi32>)
// CHECK-DAG: %[[P64:.+]] = arith.extsi %[[P]] : tensor<8xi32> to tensor<8xi64>
// CHECK-DAG: %[[Q64:.+]] = arith.extsi %[[Q]] : tensor<8xi32> to tensor<8xi64>
// CHECK: %[[PQ:.+]] = arith.addi %[[P64]], %[[Q64]] overflow<nsw> : tensor<8xi64>
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[PQ]] rotary(#rope.spec<>){{( seq_dim = [0-9]+)?}} : tensor<2x8x16xf32>, tensor<8xi64>
// CHECK-NOT: rope.rotate
// CHECK: return %[[R]]
func.func @compose_same_spec(%x: tensor<2x8x16xf32>, %p: tensor<8xi32>, %q: tensor<8xi32>) -> tensor<2x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<2x8x16xf32>, tensor<8xi32>
  return %1 : tensor<2x8x16xf32>
}

// -----

// Two inverse rotations add up as well.
// CHECK-LABEL: func.func @compose_both_inverse
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[P:[^:]+]]: tensor<2x8xi32>, %[[Q:[^:]+]]: tensor<2x8xi32>)
// CHECK-DAG: %[[P64:.+]] = arith.extsi %[[P]] : tensor<2x8xi32> to tensor<2x8xi64>
// CHECK-DAG: %[[Q64:.+]] = arith.extsi %[[Q]] : tensor<2x8xi32> to tensor<2x8xi64>
// CHECK: %[[PQ:.+]] = arith.addi %[[P64]], %[[Q64]] overflow<nsw> : tensor<2x8xi64>
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[PQ]] rotary(#rope.spec<layout = interleaved, inverse = true>){{( seq_dim = [0-9]+)?}} : tensor<2x8x16xf32>, tensor<2x8xi64>
// CHECK-NOT: rope.rotate
// CHECK: return %[[R]]
func.func @compose_both_inverse(%x: tensor<2x8x16xf32>, %p: tensor<2x8xi32>, %q: tensor<2x8xi32>) -> tensor<2x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<layout = interleaved, inverse = true>) : tensor<2x8x16xf32>, tensor<2x8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<layout = interleaved, inverse = true>) : tensor<2x8x16xf32>, tensor<2x8xi32>
  return %1 : tensor<2x8x16xf32>
}

// -----

// Linear scaling does not depend on the positions: rotations still compose.
// CHECK-LABEL: func.func @compose_linear_scaling
// CHECK: arith.addi
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<scaling = #rope.linear<factor = 2.000000e+00>>)
// CHECK-NOT: rope.rotate
func.func @compose_linear_scaling(%x: tensor<8x16xf32>, %p: tensor<8xi32>, %q: tensor<8xi32>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.linear<factor = 2.0>>) : tensor<8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<scaling = #rope.linear<factor = 2.0>>) : tensor<8x16xf32>, tensor<8xi32>
  return %1 : tensor<8x16xf32>
}

// -----

// seq_dim = 1 and seq_dim = -2 name the same dim of a rank-3 input.
// CHECK-LABEL: func.func @compose_equivalent_seq_dims
// CHECK: arith.addi
// CHECK: rope.rotate
// CHECK-NOT: rope.rotate
func.func @compose_equivalent_seq_dims(%x: tensor<2x8x16xf32>, %p: tensor<8xi32>, %q: tensor<8xi32>) -> tensor<2x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = 1 : tensor<2x8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<2x8x16xf32>, tensor<8xi32>
  return %1 : tensor<2x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @compose_chain_of_three
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8x16xf32>, %[[P:[^:]+]]: tensor<8xi32>, %[[Q:[^:]+]]: tensor<8xi32>, %[[S:[^:]+]]: tensor<8xi32>)
// CHECK-DAG: %[[P64:.+]] = arith.extsi %[[P]]
// CHECK-DAG: %[[Q64:.+]] = arith.extsi %[[Q]]
// CHECK-DAG: %[[S64:.+]] = arith.extsi %[[S]]
// CHECK-DAG: %[[PQ:.+]] = arith.addi %[[P64]], %[[Q64]] overflow<nsw>
// CHECK: %[[PQS:.+]] = arith.addi %[[PQ]], %[[S64]] overflow<nsw>
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[PQS]]
// CHECK-NOT: rope.rotate
// CHECK: return %[[R]]
func.func @compose_chain_of_three(%x: tensor<8x16xf32>, %p: tensor<8xi32>, %q: tensor<8xi32>, %s: tensor<8xi32>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi32>
  %2 = rope.rotate %1, %s rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi32>
  return %2 : tensor<8x16xf32>
}

// -----

// The composed positions never wrap (found by the red team: i16 positions
// 32767 and 1 composed in i16 rotated by -32768): narrow positions add in
// i64, so 32767 + 1 rotates by 32768.
// CHECK-LABEL: func.func @compose_i16_at_its_limit
// CHECK: %[[S:.+]] = arith.constant dense<32768> : tensor<8xi64>
// CHECK: %[[R:.+]] = rope.rotate %{{.+}}, %[[S]] rotary(#rope.spec<>){{( seq_dim = [0-9]+)?}} : tensor<8x16xf32>, tensor<8xi64>
// CHECK-NOT: rope.rotate
// CHECK: return %[[R]]
func.func @compose_i16_at_its_limit(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %p = arith.constant dense<32767> : tensor<8xi16>
  %q = arith.constant dense<1> : tensor<8xi16>
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi16>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi16>
  return %1 : tensor<8x16xf32>
}

// -----

// i32: 2^31 - 1 + 1 and -2^31 - 1 (an inverse rotation subtracts).
// CHECK-LABEL: func.func @compose_i32_at_its_limits
// CHECK-DAG: arith.constant dense<2147483648> : tensor<8xi64>
// CHECK-DAG: arith.constant dense<-2147483649> : tensor<8xi64>
func.func @compose_i32_at_its_limits(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %max = arith.constant dense<2147483647> : tensor<8xi32>
  %min = arith.constant dense<-2147483648> : tensor<8xi32>
  %one = arith.constant dense<1> : tensor<8xi32>
  %0 = rope.rotate %x, %max rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %one rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi32>
  %2 = rope.rotate %x, %min rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi32>
  %3 = rope.rotate %2, %one rotary(#rope.spec<inverse = true>) : tensor<8x16xf32>, tensor<8xi32>
  return %1, %3 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Two i64 arguments may sum past 2^63 - 1: the rotations stay apart.
// CHECK-LABEL: func.func @no_compose_i64_arguments
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>)
// CHECK: %[[B:.+]] = rope.rotate %[[A]], %{{.+}} rotary(#rope.spec<>)
// CHECK: return %[[B]]
func.func @no_compose_i64_arguments(%x: tensor<8x16xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// i64 constants at the edge: 2^63 - 1 + 1 wraps, so no composition.
// CHECK-LABEL: func.func @no_compose_i64_past_its_limit
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate
// CHECK: %[[B:.+]] = rope.rotate %[[A]]
// CHECK: return %[[B]]
func.func @no_compose_i64_past_its_limit(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %p = arith.constant dense<9223372036854775807> : tensor<8xi64>
  %q = arith.constant dense<1> : tensor<8xi64>
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// i64 positions that are sign-extended i32 (and constants within 63 bits)
// sum without wrapping: they compose, and mixed position types too.
// CHECK-LABEL: func.func @compose_i64_from_narrow
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8x16xf32>, %[[P:[^:]+]]: tensor<8xi32>, %[[Q:[^:]+]]: tensor<8xi16>)
// CHECK-DAG: %[[C:.+]] = arith.constant dense<1152921504606846975> : tensor<8xi64>
// CHECK-DAG: %[[P64:.+]] = arith.extsi %[[P]] : tensor<8xi32> to tensor<8xi64>
// CHECK-DAG: %[[Q64:.+]] = arith.extsi %[[Q]] : tensor<8xi16> to tensor<8xi64>
// CHECK-DAG: %[[S:.+]] = arith.addi %[[P64]], %[[C]] overflow<nsw> : tensor<8xi64>
// CHECK: %[[T:.+]] = arith.addi %[[S]], %[[Q64]] overflow<nsw> : tensor<8xi64>
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[T]]
// CHECK-NOT: rope.rotate
// CHECK: return %[[R]]
func.func @compose_i64_from_narrow(%x: tensor<8x16xf32>, %p32: tensor<8xi32>, %q: tensor<8xi16>) -> tensor<8x16xf32> {
  %p = arith.extsi %p32 : tensor<8xi32> to tensor<8xi64>
  %c = arith.constant dense<1152921504606846975> : tensor<8xi64>
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %c rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  %2 = rope.rotate %1, %q rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi16>
  return %2 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// R_p^T = R_{-p}
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @cancel_rotate_then_inverse
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NOT: rope.rotate
// CHECK-NOT: arith.subi
// CHECK: return %[[X]]
func.func @cancel_rotate_then_inverse(%x: tensor<2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0>) : tensor<2x8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %p rotary(#rope.spec<base = 500000.0, inverse = true>) : tensor<2x8x16xf32>, tensor<8xi64>
  return %1 : tensor<2x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @cancel_inverse_then_rotate
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8x16xbf16>, %[[P:[^:]+]]: tensor<8xi32>)
// CHECK-NOT: rope.rotate
// CHECK: return %[[X]]
func.func @cancel_inverse_then_rotate(%x: tensor<8x16xbf16>, %p: tensor<8xi32>) -> tensor<8x16xbf16> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, offset = 4, inverse = true>) : tensor<8x16xbf16>, tensor<8xi32>
  %1 = rope.rotate %0, %p rotary(#rope.spec<dims = 8, offset = 4>) : tensor<8x16xbf16>, tensor<8xi32>
  return %1 : tensor<8x16xbf16>
}

// -----

// R_{-q} R_p = R_{p-q}, expressed in the inner rotation's direction.
// CHECK-LABEL: func.func @rotate_then_inverse_other_positions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[P:[^:]+]]: tensor<8xi32>, %[[Q:[^:]+]]: tensor<8xi32>)
// CHECK-DAG: %[[P64:.+]] = arith.extsi %[[P]]
// CHECK-DAG: %[[Q64:.+]] = arith.extsi %[[Q]]
// CHECK: %[[D:.+]] = arith.subi %[[P64]], %[[Q64]] overflow<nsw> : tensor<8xi64>
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[D]] rotary(#rope.spec<>){{( seq_dim = [0-9]+)?}} : tensor<2x8x16xf32>, tensor<8xi64>
// CHECK-NOT: rope.rotate
// CHECK: return %[[R]]
func.func @rotate_then_inverse_other_positions(%x: tensor<2x8x16xf32>, %p: tensor<8xi32>, %q: tensor<8xi32>) -> tensor<2x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<inverse = true>) : tensor<2x8x16xf32>, tensor<8xi32>
  return %1 : tensor<2x8x16xf32>
}

// -----

// R_q R_p^T = R_{-(p-q)}: subtract, keep the inner (inverse) direction.
// CHECK-LABEL: func.func @inverse_then_rotate_other_positions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8x16xf32>, %[[P:[^:]+]]: tensor<8xi32>, %[[Q:[^:]+]]: tensor<8xi32>)
// CHECK-DAG: %[[P64:.+]] = arith.extsi %[[P]]
// CHECK-DAG: %[[Q64:.+]] = arith.extsi %[[Q]]
// CHECK: %[[D:.+]] = arith.subi %[[P64]], %[[Q64]] overflow<nsw> : tensor<8xi64>
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[D]] rotary(#rope.spec<inverse = true>)
// CHECK-NOT: rope.rotate
// CHECK: return %[[R]]
func.func @inverse_then_rotate_other_positions(%x: tensor<8x16xf32>, %p: tensor<8xi32>, %q: tensor<8xi32>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<inverse = true>) : tensor<8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi32>
  return %1 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// No composition
//===----------------------------------------------------------------------===//

// -----

// Different bases: different frequency sets.
// CHECK-LABEL: func.func @no_compose_different_specs
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>)
// CHECK: %[[B:.+]] = rope.rotate %[[A]], %{{.+}} rotary(#rope.spec<base = 5.000000e+05>)
// CHECK: return %[[B]]
func.func @no_compose_different_specs(%x: tensor<8x16xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %q rotary(#rope.spec<base = 500000.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// Different layouts: the pairs differ, even at the same positions.
// CHECK-LABEL: func.func @no_cancel_different_layouts
// CHECK: %[[A:.+]] = rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>)
// CHECK: %[[B:.+]] = rope.rotate %[[A]], %{{.+}} rotary(#rope.spec<layout = interleaved, inverse = true>)
// CHECK: return %[[B]]
func.func @no_cancel_different_layouts(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %p rotary(#rope.spec<layout = interleaved, inverse = true>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// Dynamic NTK scaling: the frequencies of R_p and R_q depend on p and q.
// CHECK-LABEL: func.func @no_compose_dynamic_scaling
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<scaling = #rope.dynamic
// CHECK: %[[B:.+]] = rope.rotate %[[A]], %{{.+}} rotary(#rope.spec<scaling = #rope.dynamic
// CHECK: return %[[B]]
func.func @no_compose_dynamic_scaling(%x: tensor<8x16xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %q rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// Dynamic scaling does not cancel either, even at the same positions.
// CHECK-LABEL: func.func @no_cancel_dynamic_scaling
// CHECK: %[[A:.+]] = rope.rotate
// CHECK: %[[B:.+]] = rope.rotate %[[A]]
// CHECK: return %[[B]]
func.func @no_cancel_dynamic_scaling(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>, inverse = true>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// LongRoPE switches factor lists with the largest position.
// CHECK-LABEL: func.func @no_compose_longrope
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<scaling = #rope.longrope
// CHECK: %[[B:.+]] = rope.rotate %[[A]], %{{.+}} rotary(#rope.spec<scaling = #rope.longrope
// CHECK: return %[[B]]
func.func @no_compose_longrope(%x: tensor<8x4xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>) -> tensor<8x4xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [2.0, 4.0], original_max_position_embeddings = 16>>) : tensor<8x4xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %q rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [2.0, 4.0], original_max_position_embeddings = 16>>) : tensor<8x4xf32>, tensor<8xi64>
  return %1 : tensor<8x4xf32>
}

// -----

// m R_p m R_q = m^2 R_{p+q}, not m R_{p+q}.
// CHECK-LABEL: func.func @no_compose_attention_factor
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<attention_factor = 1.500000e+00>)
// CHECK: %[[B:.+]] = rope.rotate %[[A]], %{{.+}} rotary(#rope.spec<attention_factor = 1.500000e+00>)
// CHECK: return %[[B]]
func.func @no_compose_attention_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 1.5>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %q rotary(#rope.spec<attention_factor = 1.5>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// m R_p followed by its inverse is m^2 I, not I.
// CHECK-LABEL: func.func @no_cancel_attention_factor
// CHECK: %[[A:.+]] = rope.rotate
// CHECK: %[[B:.+]] = rope.rotate %[[A]]
// CHECK: return %[[B]]
func.func @no_cancel_attention_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 1.5>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %p rotary(#rope.spec<attention_factor = 1.5, inverse = true>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// The inner rotation is used elsewhere: composing would duplicate work.
// CHECK-LABEL: func.func @no_compose_inner_has_other_use
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate
// CHECK: %[[B:.+]] = rope.rotate %[[A]]
// CHECK: return %[[A]], %[[B]]
func.func @no_compose_inner_has_other_use(%x: tensor<8x16xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_cancel_inner_has_other_use
// CHECK: %[[A:.+]] = rope.rotate
// CHECK: %[[B:.+]] = rope.rotate %[[A]]
// CHECK: return %[[A]], %[[B]]
func.func @no_cancel_inner_has_other_use(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %p rotary(#rope.spec<inverse = true>) : tensor<8x16xf32>, tensor<8xi64>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Positions of different element types cannot be added.
// CHECK-LABEL: func.func @no_compose_position_types_differ
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>){{( seq_dim = [0-9]+)?}} : tensor<8x16xf32>, tensor<8xi32>
// CHECK: %[[B:.+]] = rope.rotate %[[A]], %{{.+}} rotary(#rope.spec<>){{( seq_dim = [0-9]+)?}} : tensor<8x16xf32>, tensor<8xi64>
// CHECK: return %[[B]]
func.func @no_compose_position_types_differ(%x: tensor<8x16xf32>, %p: tensor<8xi32>, %q: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x16xf32>
}

// -----

// The two rotations run along different sequence dims.
// CHECK-LABEL: func.func @no_compose_seq_dims_differ
// CHECK-NOT: arith.addi
// CHECK: %[[A:.+]] = rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) seq_dim = 0
// CHECK: %[[B:.+]] = rope.rotate %[[A]], %{{.+}} rotary(#rope.spec<>){{( seq_dim = [0-9]+)?}} :
// CHECK: return %[[B]]
func.func @no_compose_seq_dims_differ(%x: tensor<8x8x16xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>) -> tensor<8x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = 0 : tensor<8x8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) : tensor<8x8x16xf32>, tensor<8xi64>
  return %1 : tensor<8x8x16xf32>
}

// -----

// Two tables with the same positions, spec and head dim become one (Q and K
// rotated alike share their cos/sin).
// CHECK-LABEL: func.func @share_identical_tables
// CHECK-SAME: (%[[P:.+]]: tensor<8xi64>)
// CHECK: %[[COS:.+]], %[[SIN:.+]] = rope.table %[[P]]
// CHECK-NOT: rope.table
// CHECK: return %[[COS]], %[[SIN]], %[[COS]], %[[SIN]]
func.func @share_identical_tables(%p: tensor<8xi64>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %c0, %s0 = rope.table %p rotary(#rope.spec<base = 500000.0>) head_dim = 16 : tensor<8xi64>
  %c1, %s1 = rope.table %p rotary(#rope.spec<base = 500000.0>) head_dim = 16 : tensor<8xi64>
  return %c0, %s0, %c1, %s1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A table of positions cast to a less static type (a loop's 64-key tile
// seen as tensor<?xi64>) is the table of the static positions, cast back.
// CHECK-LABEL: func.func @table_of_static_positions
// CHECK-SAME: (%[[P:.+]]: tensor<64xi64>)
// CHECK: %[[COS:.+]], %[[SIN:.+]] = rope.table %[[P]] rotary(#rope.spec<>) head_dim = 16 : tensor<64xi64>
// CHECK: %[[C:.+]] = tensor.cast %[[COS]] : tensor<64x8xf32> to tensor<?x8xf32>
// CHECK: %[[S:.+]] = tensor.cast %[[SIN]] : tensor<64x8xf32> to tensor<?x8xf32>
// CHECK: return %[[C]], %[[S]]
func.func @table_of_static_positions(%p: tensor<64xi64>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %d = tensor.cast %p : tensor<64xi64> to tensor<?xi64>
  %c, %s = rope.table %d rotary(#rope.spec<>) head_dim = 16 : tensor<?xi64>
  return %c, %s : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Tables of different specs stay apart.
// CHECK-LABEL: func.func @keep_different_tables
// CHECK-COUNT-2: rope.table
func.func @keep_different_tables(%p: tensor<8xi64>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %c0, %s0 = rope.table %p rotary(#rope.spec<base = 500000.0>) head_dim = 16 : tensor<8xi64>
  %c1, %s1 = rope.table %p rotary(#rope.spec<>) head_dim = 16 : tensor<8xi64>
  return %c0, %c1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// seq_dim is spelled non-negative, so equal rotations compare equal and
// compose.
// CHECK-LABEL: func.func @normalize_seq_dim
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x8x16xf32>, %[[P:.+]]: tensor<8xi32>, %[[Q:.+]]: tensor<8xi32>)
// CHECK-DAG: %[[P64:.+]] = arith.extsi %[[P]]
// CHECK-DAG: %[[Q64:.+]] = arith.extsi %[[Q]]
// CHECK: %[[SUM:.+]] = arith.addi %[[P64]], %[[Q64]] overflow<nsw>
// CHECK: rope.rotate %[[X]], %[[SUM]] rotary(#rope.spec<>) seq_dim = 2 :
// CHECK-NOT: rope.rotate
func.func @normalize_seq_dim(%x: tensor<1x2x8x16xf32>, %p: tensor<8xi32>, %q: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi32>
  %1 = rope.rotate %0, %q rotary(#rope.spec<>) seq_dim = 2 : tensor<1x2x8x16xf32>, tensor<8xi32>
  return %1 : tensor<1x2x8x16xf32>
}

// -----

// Tables from rope.table: the rotation is rope.rotate with the table's
// frequencies over the op's dims, offset and layout.
// CHECK-LABEL: func.func @rotate_with_computed_tables
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x16xf32>, %[[P:.+]]: tensor<8xi64>)
// CHECK-NOT: rope.table
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<base = 5.000000e+05, dims = 8, offset = 4, layout = interleaved, attention_factor = 2.000000e+00>) seq_dim = 1 : tensor<2x8x16xf32>, tensor<8xi64>
// CHECK: return %[[R]]
func.func @rotate_with_computed_tables(%x: tensor<2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x16xf32> {
  %c, %s = rope.table %p rotary(#rope.spec<base = 500000.0, attention_factor = 2.0>) head_dim = 8 : tensor<8xi64>
  %0 = rope.rotate_with_tables %x, %c, %s layout<interleaved> dims = 8 offset = 4 : tensor<2x8x16xf32>, tensor<8x4xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// Per-batch positions [B, S]: tables [B, S, h] against [B, S, D].
// CHECK-LABEL: func.func @rotate_with_computed_batch_tables
// CHECK-SAME: (%[[X:.+]]: tensor<2x?x16xf32>, %[[P:.+]]: tensor<2x?xi32>)
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) seq_dim = 1 : tensor<2x?x16xf32>, tensor<2x?xi32>
// CHECK: return %[[R]]
func.func @rotate_with_computed_batch_tables(%x: tensor<2x?x16xf32>, %p: tensor<2x?xi32>) -> tensor<2x?x16xf32> {
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 16 : tensor<2x?xi32>
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<2x?x16xf32>, tensor<2x?x8xf32>
  return %0 : tensor<2x?x16xf32>
}

// -----

// Near misses stay: cos and sin of different tables; a table for 8 rotary
// dims read as per-element coefficients of 4; one position broadcast to
// every row (rope.rotate has no broadcasting positions).
// CHECK-LABEL: func.func @rotate_with_tables_kept
// CHECK-COUNT-3: rope.rotate_with_tables
// CHECK-NOT: rope.rotate
func.func @rotate_with_tables_kept(%x: tensor<2x8x16xf32>, %p: tensor<8xi64>, %q: tensor<1xi64>)
    -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %c0, %s0 = rope.table %p rotary(#rope.spec<>) head_dim = 16 : tensor<8xi64>
  %c1, %s1 = rope.table %p rotary(#rope.spec<base = 100.0>) head_dim = 16 : tensor<8xi64>
  %0 = rope.rotate_with_tables %x, %c0, %s1 : tensor<2x8x16xf32>, tensor<8x8xf32>
  %c2, %s2 = rope.table %p rotary(#rope.spec<dims = 8>) head_dim = 16 : tensor<8xi64>
  %1 = rope.rotate_with_tables %x, %c2, %s2 dims = 4 : tensor<2x8x16xf32>, tensor<8x4xf32>
  %c3, %s3 = rope.table %q rotary(#rope.spec<>) head_dim = 16 : tensor<1xi64>
  %2 = rope.rotate_with_tables %x, %c3, %s3 : tensor<2x8x16xf32>, tensor<1x8xf32>
  return %0, %1, %2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// -----

// A runtime check that always holds is dropped; one that may fail stays.
// CHECK-LABEL: func.func @assert_true
// CHECK-SAME: (%[[OK:.+]]: i1, %[[N:.+]]: index)
// CHECK-NEXT: rope.assert %[[OK]], "kept {0}"(%[[N]] : index)
// CHECK-NEXT: return
func.func @assert_true(%ok: i1, %n: index) {
  %true = arith.constant true
  rope.assert %true, "dropped {0}" (%n : index)
  rope.assert %ok, "kept {0}" (%n : index)
  return
}
