// RUN: rope-opt %s -split-input-file | rope-opt -split-input-file | FileCheck %s
// RUN: rope-opt %s -split-input-file --mlir-print-op-generic | rope-opt -split-input-file | FileCheck %s

// Round trip of every rope op and every attribute form, through the custom
// and through the generic printed form. Parameters equal to their defaults
// are elided from the printed form.

//===----------------------------------------------------------------------===//
// rope.rotate
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @rotate_bhsd
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8x16xf32>, %[[P:.+]]: tensor<8xi64>)
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @rotate_bhsd(%x: tensor<2x4x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<8xi64>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// seq_dim = -2 is the default and is elided.
// CHECK-LABEL: func.func @rotate_default_seq_dim_elided
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) : tensor<2x8x16xf32>, tensor<8xi32>
// CHECK-NOT: seq_dim
func.func @rotate_default_seq_dim_elided(%x: tensor<2x8x16xf32>, %p: tensor<8xi32>) -> tensor<2x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = -2 : tensor<2x8x16xf32>, tensor<8xi32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// [B, S, H, D] with the sequence at dim 1.
// CHECK-LABEL: func.func @rotate_bshd_seq_dim
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) seq_dim = 1 : tensor<2x8x4x16xf32>, tensor<8xi64>
func.func @rotate_bshd_seq_dim(%x: tensor<2x8x4x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = 1 : tensor<2x8x4x16xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @rotate_negative_seq_dim
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) seq_dim = -3 : tensor<2x8x4x16xf32>, tensor<8xi64>
func.func @rotate_negative_seq_dim(%x: tensor<2x8x4x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = -3 : tensor<2x8x4x16xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4x16xf32>
}

// -----

// Per-sequence positions [B, S].
// CHECK-LABEL: func.func @rotate_batch_positions
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8x16xf32>, %[[P:.+]]: tensor<2x8xi32>)
// CHECK: rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<2x8xi32>
func.func @rotate_batch_positions(%x: tensor<2x4x8x16xf32>, %p: tensor<2x8xi32>) -> tensor<2x4x8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<2x8xi32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @rotate_dynamic_dims
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) : tensor<?x32x?x128xf32>, tensor<?xi64>
func.func @rotate_dynamic_dims(%x: tensor<?x32x?x128xf32>, %p: tensor<?xi64>) -> tensor<?x32x?x128xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<?x32x?x128xf32>, tensor<?xi64>
  return %0 : tensor<?x32x?x128xf32>
}

// -----

// CHECK-LABEL: func.func @rotate_dynamic_batch_positions
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) seq_dim = 1 : tensor<?x?x8x64xf32>, tensor<?x?xi64>
func.func @rotate_dynamic_batch_positions(%x: tensor<?x?x8x64xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x8x64xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = 1 : tensor<?x?x8x64xf32>, tensor<?x?xi64>
  return %0 : tensor<?x?x8x64xf32>
}

// -----

// CHECK-LABEL: func.func @rotate_f16
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) : tensor<8x16xf16>, tensor<8xi16>
func.func @rotate_f16(%x: tensor<8x16xf16>, %p: tensor<8xi16>) -> tensor<8x16xf16> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf16>, tensor<8xi16>
  return %0 : tensor<8x16xf16>
}

// -----

// CHECK-LABEL: func.func @rotate_bf16
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) seq_dim = 1 : tensor<1x8x4x16xbf16>, tensor<8xi64>
func.func @rotate_bf16(%x: tensor<1x8x4x16xbf16>, %p: tensor<8xi64>) -> tensor<1x8x4x16xbf16> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = 1 : tensor<1x8x4x16xbf16>, tensor<8xi64>
  return %0 : tensor<1x8x4x16xbf16>
}

//===----------------------------------------------------------------------===//
// #rope.spec parameters
//===----------------------------------------------------------------------===//

// -----

// Every parameter spelled out at its default prints as the empty spec.
// CHECK-LABEL: func.func @spec_defaults_elided
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) :
func.func @spec_defaults_elided(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 10000.0, dims = 0, offset = 0, layout = half, inverse = false>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @spec_base
// CHECK: rotary(#rope.spec<base = 5.000000e+05>)
func.func @spec_base(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// A base that is not short in decimal keeps all its digits.
// CHECK-LABEL: func.func @spec_base_exact
// CHECK: rotary(#rope.spec<base = 123456.789>)
func.func @spec_base_exact(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 123456.789>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @spec_dims
// CHECK: rotary(#rope.spec<dims = 8>)
func.func @spec_dims(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @spec_offset
// CHECK: rotary(#rope.spec<dims = 8, offset = 4>)
func.func @spec_offset(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<offset = 4, dims = 8>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @spec_layout_interleaved
// CHECK: rotary(#rope.spec<layout = interleaved>)
func.func @spec_layout_interleaved(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<layout = interleaved>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @spec_attention_factor
// CHECK: rotary(#rope.spec<attention_factor = 1.500000e+00>)
func.func @spec_attention_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 1.5>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// An explicit attention factor of 1 is not the default (absent = derived
// from the scaling) and is kept.
// CHECK-LABEL: func.func @spec_attention_factor_one_kept
// CHECK: rotary(#rope.spec<attention_factor = 1.000000e+00>)
func.func @spec_attention_factor_one_kept(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 1.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @spec_inverse
// CHECK: rotary(#rope.spec<inverse = true>)
func.func @spec_inverse(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<inverse = true>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// All parameters, given out of order, print in declaration order.
// CHECK-LABEL: func.func @spec_all_parameters
// CHECK: rotary(#rope.spec<base = 5.000000e+05, dims = 8, offset = 4, layout = interleaved, scaling = #rope.linear<factor = 2.000000e+00>, attention_factor = 1.500000e+00, inverse = true>) seq_dim = 1
func.func @spec_all_parameters(%x: tensor<2x8x4x16xf32>, %p: tensor<2x8xi64>) -> tensor<2x8x4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<inverse = true, attention_factor = 1.5, layout = interleaved, scaling = #rope.linear<factor = 2.0>, offset = 4, dims = 8, base = 500000.0>) seq_dim = 1 : tensor<2x8x4x16xf32>, tensor<2x8xi64>
  return %0 : tensor<2x8x4x16xf32>
}

//===----------------------------------------------------------------------===//
// Scaling attributes
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @scaling_linear
// CHECK: rotary(#rope.spec<scaling = #rope.linear<factor = 4.000000e+00>>)
func.func @scaling_linear(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.linear<factor = 4.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @scaling_dynamic
// CHECK: rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.000000e+00, original_max_position_embeddings = 2048>>)
func.func @scaling_dynamic(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<original_max_position_embeddings = 2048, factor = 2.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @scaling_yarn_minimal
// CHECK: rotary(#rope.spec<scaling = #rope.yarn<factor = 4.000000e+00, original_max_position_embeddings = 4096>>)
func.func @scaling_yarn_minimal(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// beta_fast = 32, beta_slow = 1 and truncate = true are the defaults.
// CHECK-LABEL: func.func @scaling_yarn_defaults_elided
// CHECK: rotary(#rope.spec<scaling = #rope.yarn<factor = 4.000000e+00, original_max_position_embeddings = 4096>>)
func.func @scaling_yarn_defaults_elided(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, beta_fast = 32.0, beta_slow = 1.0, truncate = true>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @scaling_yarn_mscale
// CHECK: rotary(#rope.spec<scaling = #rope.yarn<factor = 4.000000e+01, original_max_position_embeddings = 4096, mscale = 1.000000e+00, mscale_all_dim = 1.000000e+00>>)
func.func @scaling_yarn_mscale(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 40.0, original_max_position_embeddings = 4096, mscale = 1.0, mscale_all_dim = 1.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @scaling_yarn_mscale_only
// CHECK: rotary(#rope.spec<scaling = #rope.yarn<factor = 4.000000e+00, original_max_position_embeddings = 4096, mscale = 7.070000e-01>>)
func.func @scaling_yarn_mscale_only(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, mscale = 0.707>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @scaling_yarn_all
// CHECK: rotary(#rope.spec<scaling = #rope.yarn<factor = 1.600000e+01, original_max_position_embeddings = 4096, beta_fast = 6.400000e+01, beta_slow = 2.000000e+00, mscale = 7.070000e-01, mscale_all_dim = 1.000000e+00, truncate = false>>)
func.func @scaling_yarn_all(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<truncate = false, mscale_all_dim = 1.0, mscale = 0.707, beta_slow = 2.0, beta_fast = 64.0, original_max_position_embeddings = 4096, factor = 16.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// low_freq_factor = 1 and high_freq_factor = 4 are the defaults.
// CHECK-LABEL: func.func @scaling_llama3
// CHECK: rotary(#rope.spec<base = 5.000000e+05, scaling = #rope.llama3<factor = 8.000000e+00, original_max_position_embeddings = 8192>>)
func.func @scaling_llama3(%x: tensor<8x128xf32>, %p: tensor<8xi64>) -> tensor<8x128xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192>>) : tensor<8x128xf32>, tensor<8xi64>
  return %0 : tensor<8x128xf32>
}

// -----

// CHECK-LABEL: func.func @scaling_llama3_all
// CHECK: rotary(#rope.spec<scaling = #rope.llama3<factor = 3.200000e+01, low_freq_factor = 2.000000e+00, high_freq_factor = 8.000000e+00, original_max_position_embeddings = 8192>>)
func.func @scaling_llama3_all(%x: tensor<8x128xf32>, %p: tensor<8xi64>) -> tensor<8x128xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.llama3<factor = 32.0, low_freq_factor = 2.0, high_freq_factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<8x128xf32>, tensor<8xi64>
  return %0 : tensor<8x128xf32>
}

// -----

// factor = 1 is the default.
// CHECK-LABEL: func.func @scaling_longrope
// CHECK: rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.000000e+00, 1.000000e+00, 1.500000e+00, 2.000000e+00], long_factor = [1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00], original_max_position_embeddings = 4096>>)
func.func @scaling_longrope(%x: tensor<8x8xf32>, %p: tensor<8xi64>) -> tensor<8x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0, 1.5, 2.0], long_factor = [1.0, 2.0, 4.0, 8.0], factor = 1.0, original_max_position_embeddings = 4096>>) : tensor<8x8xf32>, tensor<8xi64>
  return %0 : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @scaling_longrope_factor
// CHECK: rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.000000e+00, 1.100000e+00], long_factor = [2.000000e+00, 3.300000e+00], factor = 3.200000e+01, original_max_position_embeddings = 4096>>)
func.func @scaling_longrope_factor(%x: tensor<8x4xf32>, %p: tensor<8xi64>) -> tensor<8x4xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.1], long_factor = [2.0, 3.3], factor = 32.0, original_max_position_embeddings = 4096>>) : tensor<8x4xf32>, tensor<8xi64>
  return %0 : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @scaling_freq_factors
// CHECK: rotary(#rope.spec<dims = 8, scaling = #rope.freq_factors<factors = [1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00]>>)
func.func @scaling_freq_factors(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, scaling = #rope.freq_factors<factors = [1.0, 2.0, 4.0, 8.0]>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// rope.rotate_with_tables
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @rotate_with_tables_hf
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x?x64xf32>, %[[C:.+]]: tensor<1x1x?x64xf32>, %[[S:.+]]: tensor<1x1x?x64xf32>)
// CHECK: rope.rotate_with_tables %[[X]], %[[C]], %[[S]] : tensor<1x4x?x64xf32>, tensor<1x1x?x64xf32>
func.func @rotate_with_tables_hf(%x: tensor<1x4x?x64xf32>, %c: tensor<1x1x?x64xf32>, %s: tensor<1x1x?x64xf32>) -> tensor<1x4x?x64xf32> {
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<1x4x?x64xf32>, tensor<1x1x?x64xf32>
  return %0 : tensor<1x4x?x64xf32>
}

// -----

// Every attribute away from its default; bf16 tables for f16 data.
// CHECK-LABEL: func.func @rotate_with_tables_all_attributes
// CHECK: rope.rotate_with_tables %{{.+}}, %{{.+}}, %{{.+}} layout<interleaved> dims = 8 offset = 6 seq_dim = 1 : tensor<2x?x3x20xf16>, tensor<2x?x4xbf16>
func.func @rotate_with_tables_all_attributes(%x: tensor<2x?x3x20xf16>, %c: tensor<2x?x4xbf16>, %s: tensor<2x?x4xbf16>) -> tensor<2x?x3x20xf16> {
  %0 = rope.rotate_with_tables %x, %c, %s layout<interleaved> dims = 8 offset = 6 seq_dim = 1 : tensor<2x?x3x20xf16>, tensor<2x?x4xbf16>
  return %0 : tensor<2x?x3x20xf16>
}

// -----

// [S, r] tables along the default sequence dim.
// CHECK-LABEL: func.func @rotate_with_tables_seq_rows
// CHECK: rope.rotate_with_tables %{{.+}}, %{{.+}}, %{{.+}} dims = 32 : tensor<2x4x8x64xf32>, tensor<8x32xf32>
func.func @rotate_with_tables_seq_rows(%x: tensor<2x4x8x64xf32>, %c: tensor<8x32xf32>, %s: tensor<8x32xf32>) -> tensor<2x4x8x64xf32> {
  %0 = rope.rotate_with_tables %x, %c, %s dims = 32 : tensor<2x4x8x64xf32>, tensor<8x32xf32>
  return %0 : tensor<2x4x8x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// rope.table
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @table
// CHECK-SAME: (%[[P:.+]]: tensor<8xi64>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK: %[[COS:.+]], %[[SIN:.+]] = rope.table %[[P]] rotary(#rope.spec<>) head_dim = 16 : tensor<8xi64>
// CHECK-NEXT: return %[[COS]], %[[SIN]]
func.func @table(%p: tensor<8xi64>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 16 : tensor<8xi64>
  return %c, %s : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// The results are named after what they hold.
// CHECK-LABEL: func.func @table_result_names
// CHECK: %cos, %sin = rope.table
func.func @table_result_names(%p: tensor<8xi64>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0:2 = rope.table %p rotary(#rope.spec<>) head_dim = 16 : tensor<8xi64>
  return %0#0, %0#1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// [B, S] positions, partial rotary: the tables are [B, S, dims/2].
// CHECK-LABEL: func.func @table_batch_partial
// CHECK-SAME: -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>)
// CHECK: rope.table %{{.+}} rotary(#rope.spec<dims = 8, inverse = true>) head_dim = 64 : tensor<2x8xi32>
func.func @table_batch_partial(%p: tensor<2x8xi32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<dims = 8, inverse = true>) head_dim = 64 : tensor<2x8xi32>
  return %c, %s : tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

// -----

// CHECK-LABEL: func.func @table_dynamic
// CHECK-SAME: -> (tensor<?x64xf32>, tensor<?x64xf32>)
// CHECK: rope.table %{{.+}} rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.000000e+00, original_max_position_embeddings = 2048>>) head_dim = 128 : tensor<?xi16>
func.func @table_dynamic(%p: tensor<?xi16>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 2048>>) head_dim = 128 : tensor<?xi16>
  return %c, %s : tensor<?x64xf32>, tensor<?x64xf32>
}

//===----------------------------------------------------------------------===//
// rope.attention
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8x16xf32>, %[[K:.+]]: tensor<2x4x8x16xf32>, %[[V:.+]]: tensor<2x4x8x32xf32>)
// CHECK: %[[O:.+]] = rope.attention %[[Q]], %[[K]], %[[V]] : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x32xf32>
// CHECK-NEXT: return %[[O]] : tensor<2x4x8x32xf32>
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x32xf32>) -> tensor<2x4x8x32xf32> {
  %0 = rope.attention %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x32xf32>
  return %0 : tensor<2x4x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_mask_i1_rank2
// CHECK-SAME: %[[M:[^:]+]]: tensor<8x8xi1>
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<8x8xi1>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @attention_mask_i1_rank2(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<1x4x8x16xf32> {
  %0 = rope.attention %q, %k, %v mask(%m : tensor<8x8xi1>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// A rank-3 additive mask [H, Sq, Sk] in the data element type.
// CHECK-LABEL: func.func @attention_mask_f16_rank3
// CHECK: mask(%{{.+}} : tensor<4x8x8xf16>) : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
func.func @attention_mask_f16_rank3(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %m: tensor<4x8x8xf16>) -> tensor<1x4x8x16xf16> {
  %0 = rope.attention %q, %k, %v mask(%m : tensor<4x8x8xf16>) : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return %0 : tensor<1x4x8x16xf16>
}

// -----

// A rank-4 additive f32 mask with broadcast (unit) dims, on bf16 data.
// CHECK-LABEL: func.func @attention_mask_f32_rank4
// CHECK: mask(%{{.+}} : tensor<2x1x8x8xf32>) : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>
func.func @attention_mask_f32_rank4(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x8x16xbf16>, %v: tensor<2x4x8x16xbf16>, %m: tensor<2x1x8x8xf32>) -> tensor<2x4x8x16xbf16> {
  %0 = rope.attention %q, %k, %v mask(%m : tensor<2x1x8x8xf32>) : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>
  return %0 : tensor<2x4x8x16xbf16>
}

// -----

// Q and K rotated inside by given tables: HF's per-element [1, 1, S, r]
// for Q, a per-pair [B, S, r/2] for K, partial and interleaved.
// CHECK-LABEL: func.func @attention_rotary_tables
// CHECK-SAME: %[[QC:[^:]+]]: tensor<1x1x8x8xf16>, %[[QS:[^:]+]]: tensor<1x1x8x8xf16>, %[[KC:[^:]+]]: tensor<2x8x4xf32>, %[[KS:[^:]+]]: tensor<2x8x4xf32>
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} rotary_tables(%[[QC]], %[[QS]], %[[KC]], %[[KS]] : tensor<1x1x8x8xf16>, tensor<1x1x8x8xf16>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) rotary_layout<interleaved> rotary_dims = 8 rotary_offset = 4 causal : tensor<2x4x8x16xf16>
func.func @attention_rotary_tables(%q: tensor<2x4x8x16xf16>, %k: tensor<2x2x8x16xf16>, %v: tensor<2x2x8x16xf16>, %qc: tensor<1x1x8x8xf16>, %qs: tensor<1x1x8x8xf16>, %kc: tensor<2x8x4xf32>, %ks: tensor<2x8x4xf32>) -> tensor<2x4x8x16xf16> {
  %0 = rope.attention %q, %k, %v rotary_tables(%qc, %qs, %kc, %ks : tensor<1x1x8x8xf16>, tensor<1x1x8x8xf16>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) rotary_layout<interleaved> rotary_dims = 8 rotary_offset = 4 causal : tensor<2x4x8x16xf16>, tensor<2x2x8x16xf16>, tensor<2x2x8x16xf16>
  return %0 : tensor<2x4x8x16xf16>
}

// -----

// CHECK-LABEL: func.func @attention_positions
// CHECK-SAME: %[[QP:[^:]+]]: tensor<1xi64>, %[[KP:[^:]+]]: tensor<8xi64>
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} positions(%[[QP]], %[[KP]] : tensor<1xi64>, tensor<8xi64>) : tensor<1x4x1x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @attention_positions(%q: tensor<1x4x1x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %qp: tensor<1xi64>, %kp: tensor<8xi64>) -> tensor<1x4x1x16xf32> {
  %0 = rope.attention %q, %k, %v positions(%qp, %kp : tensor<1xi64>, tensor<8xi64>) : tensor<1x4x1x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x1x16xf32>
}

// -----

// CHECK-LABEL: func.func @attention_rotary
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} rotary(#rope.spec<base = 5.000000e+05>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @attention_rotary(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %0 = rope.attention %q, %k, %v rotary(#rope.spec<base = 500000.0>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @attention_causal
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} causal : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @attention_causal(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %0 = rope.attention %q, %k, %v causal : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @attention_scale
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} scale = 1.250000e-01 : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @attention_scale(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %0 = rope.attention %q, %k, %v scale = 0.125 : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// Grouped-query attention: 8 query heads over 2 kv heads.
// CHECK-LABEL: func.func @attention_gqa
// CHECK: %[[O:.+]] = rope.attention %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x8x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
// CHECK-NEXT: return %[[O]] : tensor<1x8x8x16xf32>
func.func @attention_gqa(%q: tensor<1x8x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %0 = rope.attention %q, %k, %v : tensor<1x8x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x8x8x16xf32>
}

// -----

// Multi-query attention: one kv head.
// CHECK-LABEL: func.func @attention_mqa
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x8x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>
func.func @attention_mqa(%q: tensor<1x8x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %0 = rope.attention %q, %k, %v : tensor<1x8x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>
  return %0 : tensor<1x8x8x16xf32>
}

// -----

// Dynamic batch and sequence lengths (decode: Sq != Sk).
// CHECK-LABEL: func.func @attention_dynamic
// CHECK: %[[O:.+]] = rope.attention %{{.+}}, %{{.+}}, %{{.+}} positions(%{{.+}}, %{{.+}} : tensor<?x?xi64>, tensor<?x?xi64>) causal : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>
// CHECK-NEXT: return %[[O]] : tensor<?x4x?x16xf32>
func.func @attention_dynamic(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %qp: tensor<?x?xi64>, %kp: tensor<?x?xi64>) -> tensor<?x4x?x16xf32> {
  %0 = rope.attention %q, %k, %v positions(%qp, %kp : tensor<?x?xi64>, tensor<?x?xi64>) causal : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}

// -----

// Everything at once; the optional groups print in their fixed order.
// CHECK-LABEL: func.func @attention_all
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x1x1x8xi1>, %[[QP:[^:]+]]: tensor<1x1xi32>, %[[KP:[^:]+]]: tensor<1x8xi32>
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<1x1x1x8xi1>) positions(%[[QP]], %[[KP]] : tensor<1x1xi32>, tensor<1x8xi32>) rotary(#rope.spec<dims = 8, layout = interleaved>) causal scale = 2.500000e-01 : tensor<1x8x1x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>
func.func @attention_all(%q: tensor<1x8x1x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %m: tensor<1x1x1x8xi1>, %qp: tensor<1x1xi32>, %kp: tensor<1x8xi32>) -> tensor<1x8x1x16xf16> {
  %0 = rope.attention %q, %k, %v mask(%m : tensor<1x1x1x8xi1>) positions(%qp, %kp : tensor<1x1xi32>, tensor<1x8xi32>) rotary(#rope.spec<dims = 8, layout = interleaved>) causal scale = 0.25 : tensor<1x8x1x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>
  return %0 : tensor<1x8x1x16xf16>
}

//===----------------------------------------------------------------------===//
// rope.linear_attention
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @linear_attention
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x8x16xf32>, %[[K:.+]]: tensor<1x4x8x16xf32>, %[[V:.+]]: tensor<1x4x8x32xf32>)
// CHECK: %[[O:.+]] = rope.linear_attention %[[Q]], %[[K]], %[[V]] : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x32xf32>
// CHECK-NEXT: return %[[O]] : tensor<1x4x8x32xf32>
func.func @linear_attention(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x32xf32>) -> tensor<1x4x8x32xf32> {
  %0 = rope.linear_attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x32xf32>
  return %0 : tensor<1x4x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @linear_attention_rotary
// CHECK: rope.linear_attention %{{.+}}, %{{.+}}, %{{.+}} rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @linear_attention_rotary(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %0 = rope.linear_attention %q, %k, %v rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @linear_attention_rotary_positions
// CHECK-SAME: %[[P:[^:]+]]: tensor<2x8xi64>
// CHECK: rope.linear_attention %{{.+}}, %{{.+}}, %{{.+}} positions(%[[P]] : tensor<2x8xi64>) rotary(#rope.spec<layout = interleaved>) : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
func.func @linear_attention_rotary_positions(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %p: tensor<2x8xi64>) -> tensor<2x4x8x16xf32> {
  %0 = rope.linear_attention %q, %k, %v positions(%p : tensor<2x8xi64>) rotary(#rope.spec<layout = interleaved>) : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @linear_attention_causal
// CHECK: rope.linear_attention %{{.+}}, %{{.+}}, %{{.+}} causal : tensor<1x4x8x16xbf16>, tensor<1x4x8x16xbf16>, tensor<1x4x8x16xbf16>
func.func @linear_attention_causal(%q: tensor<1x4x8x16xbf16>, %k: tensor<1x4x8x16xbf16>, %v: tensor<1x4x8x16xbf16>) -> tensor<1x4x8x16xbf16> {
  %0 = rope.linear_attention %q, %k, %v causal : tensor<1x4x8x16xbf16>, tensor<1x4x8x16xbf16>, tensor<1x4x8x16xbf16>
  return %0 : tensor<1x4x8x16xbf16>
}

// -----

// CHECK-LABEL: func.func @linear_attention_all_dynamic
// CHECK: %[[O:.+]] = rope.linear_attention %{{.+}}, %{{.+}}, %{{.+}} positions(%{{.+}} : tensor<?xi32>) rotary(#rope.spec<base = 1.000000e+02>) causal : tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16>, tensor<?x4x?x8xf16>
// CHECK-NEXT: return %[[O]] : tensor<?x4x?x8xf16>
func.func @linear_attention_all_dynamic(%q: tensor<?x4x?x16xf16>, %k: tensor<?x4x?x16xf16>, %v: tensor<?x4x?x8xf16>, %p: tensor<?xi32>) -> tensor<?x4x?x8xf16> {
  %0 = rope.linear_attention %q, %k, %v positions(%p : tensor<?xi32>) rotary(#rope.spec<base = 100.0>) causal : tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16>, tensor<?x4x?x8xf16>
  return %0 : tensor<?x4x?x8xf16>
}

//===----------------------------------------------------------------------===//
// rope.sinusoidal
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @sinusoidal
// CHECK-SAME: (%[[P:.+]]: tensor<8xi64>)
// CHECK: %[[E:.+]] = rope.sinusoidal %[[P]] : tensor<8xi64> -> tensor<8x16xf32>
// CHECK-NEXT: return %[[E]]
func.func @sinusoidal(%p: tensor<8xi64>) -> tensor<8x16xf32> {
  %0 = rope.sinusoidal %p : tensor<8xi64> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @sinusoidal_base
// CHECK: rope.sinusoidal %{{.+}} base = 1.000000e+02 : tensor<2x8xi32> -> tensor<2x8x16xf16>
func.func @sinusoidal_base(%p: tensor<2x8xi32>) -> tensor<2x8x16xf16> {
  %0 = rope.sinusoidal %p base = 100.0 : tensor<2x8xi32> -> tensor<2x8x16xf16>
  return %0 : tensor<2x8x16xf16>
}

// -----

// base = 10000 is the default and is elided.
// CHECK-LABEL: func.func @sinusoidal_default_base_elided
// CHECK: rope.sinusoidal %{{.+}} : tensor<?xi16> -> tensor<?x32xbf16>
// CHECK-NOT: base
func.func @sinusoidal_default_base_elided(%p: tensor<?xi16>) -> tensor<?x32xbf16> {
  %0 = rope.sinusoidal %p base = 10000.0 : tensor<?xi16> -> tensor<?x32xbf16>
  return %0 : tensor<?x32xbf16>
}

// -----

// Attention with every option: sliding window, soft-cap, sinks, ALiBi and a
// T5 relative bias with its buckets (bidirectional = true is the default).
// CHECK-LABEL: func.func @attention_all_options
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} causal window = 128 softcap = 5.000000e+01
// CHECK-SAME: sinks(%{{.+}} : tensor<8xf32>) alibi(%{{.+}} : tensor<8xbf16>) relative_bias(%{{.+}} : tensor<32x8xf16>)
// CHECK-SAME: buckets(#rope.buckets<num_buckets = 32, max_distance = 128>)
func.func @attention_all_options(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>,
                                 %s: tensor<8xf32>, %a: tensor<8xbf16>, %t: tensor<32x8xf16>) -> tensor<1x8x?x64xf16> {
  %0 = rope.attention %q, %k, %v causal window = 128 softcap = 50.0 sinks(%s : tensor<8xf32>) alibi(%a : tensor<8xbf16>)
         relative_bias(%t : tensor<32x8xf16>) buckets(#rope.buckets<num_buckets = 32, max_distance = 128, bidirectional = true>)
         : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>
  return %0 : tensor<1x8x?x64xf16>
}

// -----

// The online form: state in the outs, tables for Q and K, dynamic tiles.
// CHECK-LABEL: func.func @online_attention
// CHECK: %{{.+}}:3 = rope.online_attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<1x1x1x?x?xi1>)
// CHECK-SAME: positions(%{{.+}}, %{{.+}} : tensor<?xi64>, tensor<2x?xi32>) rotary(#rope.pairs<dims = 8>)
// CHECK-SAME: query_tables(%{{.+}}, %{{.+}} : tensor<?x4xf32>, tensor<?x4xf32>) key_tables(%{{.+}}, %{{.+}} : tensor<2x?x4xf32>, tensor<2x?x4xf32>)
// CHECK-SAME: causal scale = 1.250000e-01 relative_bias(%{{.+}} : tensor<8x2x4xf32>) buckets(#rope.buckets<num_buckets = 8, max_distance = 16, bidirectional = false>)
// CHECK-SAME: outs(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x2x4x?x16xf32>, tensor<2x2x4x?xf32>, tensor<2x2x4x?xf32>)
func.func @online_attention(%q: tensor<2x2x4x?x16xbf16>, %k: tensor<2x2x?x16xbf16>, %v: tensor<2x2x?x16xbf16>,
                            %m: tensor<1x1x1x?x?xi1>, %qp: tensor<?xi64>, %kp: tensor<2x?xi32>,
                            %qc: tensor<?x4xf32>, %qs: tensor<?x4xf32>, %kc: tensor<2x?x4xf32>, %ks: tensor<2x?x4xf32>,
                            %t: tensor<8x2x4xf32>,
                            %acc: tensor<2x2x4x?x16xf32>, %mx: tensor<2x2x4x?xf32>, %l: tensor<2x2x4x?xf32>)
    -> (tensor<2x2x4x?x16xf32>, tensor<2x2x4x?xf32>, tensor<2x2x4x?xf32>) {
  %r:3 = rope.online_attention %q, %k, %v mask(%m : tensor<1x1x1x?x?xi1>)
      positions(%qp, %kp : tensor<?xi64>, tensor<2x?xi32>) rotary(#rope.pairs<dims = 8>)
      query_tables(%qc, %qs : tensor<?x4xf32>, tensor<?x4xf32>) key_tables(%kc, %ks : tensor<2x?x4xf32>, tensor<2x?x4xf32>)
      causal scale = 0.125
      relative_bias(%t : tensor<8x2x4xf32>) buckets(#rope.buckets<num_buckets = 8, max_distance = 16, bidirectional = false>)
      outs(%acc, %mx, %l : tensor<2x2x4x?x16xf32>, tensor<2x2x4x?xf32>, tensor<2x2x4x?xf32>)
      : tensor<2x2x4x?x16xbf16>, tensor<2x2x?x16xbf16>, tensor<2x2x?x16xbf16>
      -> tensor<2x2x4x?x16xf32>, tensor<2x2x4x?xf32>, tensor<2x2x4x?xf32>
  return %r#0, %r#1, %r#2 : tensor<2x2x4x?x16xf32>, tensor<2x2x4x?xf32>, tensor<2x2x4x?xf32>
}

// -----

// Empty dims are valid, no heads at all included (Hq = Hkv = 0); the
// result is empty, or zeros for queries that see no key.
// CHECK-LABEL: func.func @attention_empty_dims
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x0x4x8xf32>, tensor<1x0x5x8xf32>, tensor<1x0x5x8xf32>
// CHECK: rope.attention %{{.+}}, %{{.+}}, %{{.+}} causal : tensor<1x2x4x0xf32>, tensor<1x2x5x0xf32>, tensor<1x2x5x8xf32>
func.func @attention_empty_dims(%q: tensor<1x0x4x8xf32>, %k: tensor<1x0x5x8xf32>, %q0: tensor<1x2x4x0xf32>, %k0: tensor<1x2x5x0xf32>, %v: tensor<1x2x5x8xf32>) -> (tensor<1x0x4x8xf32>, tensor<1x2x4x8xf32>) {
  %0 = rope.attention %q, %k, %k : tensor<1x0x4x8xf32>, tensor<1x0x5x8xf32>, tensor<1x0x5x8xf32>
  %1 = rope.attention %q0, %k0, %v causal : tensor<1x2x4x0xf32>, tensor<1x2x5x0xf32>, tensor<1x2x5x8xf32>
  return %0, %1 : tensor<1x0x4x8xf32>, tensor<1x2x4x8xf32>
}
