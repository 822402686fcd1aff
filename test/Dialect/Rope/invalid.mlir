// RUN: rope-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of RopeOps.cpp and RopeAttrs.cpp, plus the ODS
// type constraints and the attribute parse errors. An error in a scaling
// attribute nested in a spec is reported twice: by the scaling's verifier and
// by the spec's parser that failed to read the parameter.

//===----------------------------------------------------------------------===//
// Attribute parse errors
//===----------------------------------------------------------------------===//

func.func @spec_bool_not_true_or_false(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expected 'true' or 'false'}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'inverse' which is to be a `bool`}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<inverse = maybe>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @spec_unknown_layout(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expected ::mlir::rope::RotaryLayout to be one of: half, interleaved}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'layout'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<layout = diagonal>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @spec_unknown_parameter(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{duplicate or unknown struct parameter name: theta}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<theta = 10000.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// Real parameters take float literals only.
func.func @spec_integer_base(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+3 {{unexpected decimal integer literal for a floating point value}}
  // expected-note @+2 {{add a trailing dot to make the literal a float}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'base' which is to be a `double`}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 10000>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @scaling_missing_required_parameter(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{struct is missing required parameter: original_max_position_embeddings}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// A kind whose parameters are all required reports the missing one as a
// missing separator.
func.func @scaling_missing_required_parameter_all_required(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expected ','}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @scaling_not_a_scaling_attr(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{invalid kind of attribute specified}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.spec<>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @f64_list_without_brackets(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+3 {{expected '['}}
  // expected-error @+2 {{failed to parse Rope_FreqFactorsScalingAttr parameter 'factors'}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.freq_factors<factors = 1.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// #rope.spec verifier (RotarySpecAttr::verify)
//===----------------------------------------------------------------------===//

// -----

func.func @spec_base_not_positive(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects 'base' to be positive and finite, got -1.000000e+00}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = -1.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @spec_base_one(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects 'base' to be greater than 1 (the frequencies base^(-2i/r) decay from 1), got 1.0}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 1.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// Found by the red team: the frequencies of base < 1 grow to 1e40 radians
// per position, a rotation by noise.
func.func @spec_base_below_one(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects 'base' to be greater than 1 (the frequencies base^(-2i/r) decay from 1), got 1.000000e-40}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 1.0e-40>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @spec_dims_odd(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects 'dims' to be even and non-negative (0 means the whole head dim), got 7}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 7>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @spec_offset_negative(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects 'offset' to be non-negative, got -4}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, offset = -4>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @spec_attention_factor_not_positive(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects 'attention_factor' to be positive and finite, got 0.000000e+00}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 0.0>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// With explicit dims the spec itself checks the scaling's per-frequency list.
func.func @spec_dims_vs_freq_factors_length(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects 'factors' to have rotary_dims/2 = 4 entries, got 2}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, scaling = #rope.freq_factors<factors = [1.0, 2.0]>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @spec_dims_vs_longrope_length(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects 'short_factor' to have rotary_dims/2 = 2 entries, got 3}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 4, scaling = #rope.longrope<short_factor = [1.0, 1.0, 1.0], long_factor = [2.0, 2.0, 2.0], original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @spec_dims_vs_dynamic(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{dynamic scaling needs rotary dims > 2, got 2}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 2, scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// Spec against the head dim (RotarySpecAttr::verifyForHeadDim, on the op)
//===----------------------------------------------------------------------===//

// -----

func.func @head_dim_odd(%x: tensor<8x15xf32>, %p: tensor<8xi64>) -> tensor<8x15xf32> {
  // expected-error @+1 {{'rope.rotate' op rotary dims must be even and positive, got 15 (head dim 15)}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x15xf32>, tensor<8xi64>
  return %0 : tensor<8x15xf32>
}

// -----

func.func @rotary_dims_exceed_head_dim(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op rotary dims [12, 20) exceed the head dim 16}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, offset = 12>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @head_dim_vs_freq_factors_length(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op expects 'factors' to have rotary_dims/2 = 8 entries, got 2}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.freq_factors<factors = [1.0, 2.0]>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @head_dim_vs_longrope_length(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op expects 'short_factor' to have rotary_dims/2 = 8 entries, got 2}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [2.0, 2.0], original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @head_dim_vs_dynamic(%x: tensor<8x2xf32>, %p: tensor<8xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'rope.rotate' op dynamic scaling needs rotary dims > 2, got 2}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) : tensor<8x2xf32>, tensor<8xi64>
  return %0 : tensor<8x2xf32>
}

//===----------------------------------------------------------------------===//
// #rope.linear
//===----------------------------------------------------------------------===//

// -----

func.func @linear_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'factor' to be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.linear<factor = 0.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// #rope.dynamic
//===----------------------------------------------------------------------===//

// -----

func.func @dynamic_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'factor' to be positive and finite, got -2.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = -2.0, original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @dynamic_original_max(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'original_max_position_embeddings' to be positive, got 0}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// #rope.yarn
//===----------------------------------------------------------------------===//

// -----

func.func @yarn_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'factor' to be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 0.0, original_max_position_embeddings = 4096>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @yarn_beta_fast(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'beta_fast' to be positive and finite, got -3.200000e+01}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, beta_fast = -32.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @yarn_beta_slow(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'beta_slow' to be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, beta_slow = 0.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @yarn_original_max(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'original_max_position_embeddings' to be positive, got -1}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = -1>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @yarn_mscale(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'mscale' to be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, mscale = 0.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @yarn_mscale_all_dim(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'mscale_all_dim' to be positive and finite, got -1.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, mscale = 1.0, mscale_all_dim = -1.0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @yarn_truncate_not_bool(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+3 {{expected 'true' or 'false'}}
  // expected-error @+2 {{failed to parse Rope_YarnScalingAttr parameter 'truncate' which is to be a `bool`}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, truncate = 1>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// #rope.llama3
//===----------------------------------------------------------------------===//

// -----

func.func @llama3_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'factor' to be positive and finite, got -8.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.llama3<factor = -8.0, original_max_position_embeddings = 8192>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @llama3_low_freq_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'low_freq_factor' to be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.llama3<factor = 8.0, low_freq_factor = 0.0, original_max_position_embeddings = 8192>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @llama3_high_freq_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'high_freq_factor' to be positive and finite, got -4.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.llama3<factor = 8.0, high_freq_factor = -4.0, original_max_position_embeddings = 8192>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @llama3_high_not_above_low(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'high_freq_factor' (2.000000e+00) to be greater than 'low_freq_factor' (2.000000e+00)}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.llama3<factor = 8.0, low_freq_factor = 2.0, high_freq_factor = 2.0, original_max_position_embeddings = 8192>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @llama3_original_max(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'original_max_position_embeddings' to be positive, got 0}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 0>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// #rope.longrope
//===----------------------------------------------------------------------===//

// -----

func.func @longrope_short_factor_empty(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'short_factor' to be non-empty}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [], long_factor = [], original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @longrope_short_factor_entry(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects every entry of 'short_factor' to be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 0.0], long_factor = [1.0, 2.0], original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @longrope_long_factor_empty(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'long_factor' to be non-empty}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0], long_factor = [], original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @longrope_long_factor_entry(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects every entry of 'long_factor' to be positive and finite, got -2.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, -2.0], original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @longrope_factor(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'factor' to be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0], long_factor = [2.0], factor = 0.0, original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @longrope_lengths_differ(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'short_factor' and 'long_factor' to have the same length, got 2 and 3}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [2.0, 2.0, 2.0], original_max_position_embeddings = 16>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

// The attention factor divides by ln(original_max_position_embeddings).
func.func @longrope_original_max(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'original_max_position_embeddings' to be greater than 1, got 1}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0], long_factor = [2.0], original_max_position_embeddings = 1>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// #rope.freq_factors
//===----------------------------------------------------------------------===//

// -----

func.func @freq_factors_empty(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects 'factors' to be non-empty}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.freq_factors<factors = []>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @freq_factors_entry(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+2 {{expects every entry of 'factors' to be positive and finite, got -1.000000e+00}}
  // expected-error @+1 {{failed to parse Rope_RotarySpecAttr parameter 'scaling'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.freq_factors<factors = [1.0, -1.0]>>) : tensor<8x16xf32>, tensor<8xi64>
  return %0 : tensor<8x16xf32>
}

//===----------------------------------------------------------------------===//
// rope.rotate
//===----------------------------------------------------------------------===//

// -----

func.func @rotate_float_positions(%x: tensor<8x16xf32>, %p: tensor<8xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op operand #1 must be ranked tensor of 16-bit signless integer or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xf32>, tensor<8xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @rotate_i8_data(%x: tensor<8x16xi8>, %p: tensor<8xi64>) -> tensor<8x16xi8> {
  // expected-error @+1 {{'rope.rotate' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<8x16xi8>'}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x16xi8>, tensor<8xi64>
  return %0 : tensor<8x16xi8>
}

// -----

func.func @rotate_result_type_mismatch(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf16> {
  // expected-error @+1 {{'rope.rotate' op failed to verify that all of {input, result} have same type}}
  %0 = "rope.rotate"(%x, %p) <{spec = #rope.spec<>}> : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<8x16xf16>
  return %0 : tensor<8x16xf16>
}

// -----

func.func @rotate_missing_spec(%x: tensor<8x16xf32>, %p: tensor<8xi64>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op requires attribute 'spec'}}
  %0 = "rope.rotate"(%x, %p) : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @rotate_rank_1(%x: tensor<16xf32>, %p: tensor<1xi64>) -> tensor<16xf32> {
  // expected-error @+1 {{'rope.rotate' op expects an input of rank >= 2 (a sequence dim and a head dim), got rank 1}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<16xf32>, tensor<1xi64>
  return %0 : tensor<16xf32>
}

// -----

func.func @rotate_dynamic_head_dim(%x: tensor<8x?xf32>, %p: tensor<8xi64>) -> tensor<8x?xf32> {
  // expected-error @+1 {{'rope.rotate' op expects a static head dim (the last dim)}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<8x?xf32>, tensor<8xi64>
  return %0 : tensor<8x?xf32>
}

// -----

func.func @rotate_seq_dim_is_head_dim(%x: tensor<2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op expects seq_dim in [-3, 1] and not the head dim, got -1}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = -1 : tensor<2x8x16xf32>, tensor<8xi64>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rotate_batch_positions_with_seq_dim_0(%x: tensor<8x4x16xf32>, %p: tensor<8x8xi64>) -> tensor<8x4x16xf32> {
  // expected-error @+1 {{'rope.rotate' op expects per-batch positions ([B, S]) only when the sequence dim is not dim 0}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = 0 : tensor<8x4x16xf32>, tensor<8x8xi64>
  return %0 : tensor<8x4x16xf32>
}

// -----

func.func @rotate_positions_rank_3(%x: tensor<2x4x8x16xf32>, %p: tensor<2x4x8xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op expects positions of rank 1 ([S]) or 2 ([B, S]), got rank 3}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<2x4x8xi64>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @rotate_positions_sequence_length(%x: tensor<2x4x8x16xf32>, %p: tensor<4xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op expects positions to have 8 entries along the sequence, got 4}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<4xi64>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @rotate_positions_batch_extent(%x: tensor<2x4x8x16xf32>, %p: tensor<3x8xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rope.rotate' op expects positions to have batch extent 2, got 3}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<3x8xi64>
  return %0 : tensor<2x4x8x16xf32>
}

//===----------------------------------------------------------------------===//
// rope.rotate_with_tables
//===----------------------------------------------------------------------===//

func.func @rwt_rank_one(%x: tensor<16xf32>, %c: tensor<16xf32>, %s: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects an input of rank >= 2 (a sequence dim and a head dim), got rank 1}}
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<16xf32>, tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @rwt_dynamic_head(%x: tensor<8x?xf32>, %c: tensor<8x16xf32>, %s: tensor<8x16xf32>) -> tensor<8x?xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects a static head dim (the last dim)}}
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<8x?xf32>, tensor<8x16xf32>
  return %0 : tensor<8x?xf32>
}

// -----

func.func @rwt_seq_dim_head(%x: tensor<2x8x16xf32>, %c: tensor<8x16xf32>, %s: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects seq_dim in [-3, 1] and not the head dim, got 2}}
  %0 = rope.rotate_with_tables %x, %c, %s seq_dim = 2 : tensor<2x8x16xf32>, tensor<8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rwt_odd_dims(%x: tensor<2x8x16xf32>, %c: tensor<8x7xf32>, %s: tensor<8x7xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects even, positive rotary dims, got 7}}
  %0 = rope.rotate_with_tables %x, %c, %s dims = 7 : tensor<2x8x16xf32>, tensor<8x7xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rwt_negative_offset(%x: tensor<2x8x16xf32>, %c: tensor<8x8xf32>, %s: tensor<8x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects a non-negative offset, got -2}}
  %0 = rope.rotate_with_tables %x, %c, %s dims = 8 offset = -2 : tensor<2x8x16xf32>, tensor<8x8xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rwt_dims_past_head(%x: tensor<2x8x16xf32>, %c: tensor<8x8xf32>, %s: tensor<8x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects rotary dims [10, 18) within the head dim 16}}
  %0 = rope.rotate_with_tables %x, %c, %s dims = 8 offset = 10 : tensor<2x8x16xf32>, tensor<8x8xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rwt_table_width(%x: tensor<2x8x16xf32>, %c: tensor<8x12xf32>, %s: tensor<8x12xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects tables of width 16 (one coefficient per rotated element) or 8 (one per pair), got 12}}
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<2x8x16xf32>, tensor<8x12xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rwt_dynamic_table_width(%x: tensor<2x8x16xf32>, %c: tensor<8x?xf32>, %s: tensor<8x?xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects tables of width 16 (one coefficient per rotated element) or 8 (one per pair), got ?}}
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<2x8x16xf32>, tensor<8x?xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rwt_table_rank(%x: tensor<2x3x8x16xf32>, %c: tensor<2x2x2x8x16xf32>, %s: tensor<2x2x2x8x16xf32>) -> tensor<2x3x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects tables of rank 4 (broadcasting like the input), 2 ([S, w]) or 3 ([B, S, w], with the sequence not at dim 0), got rank 5}}
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<2x3x8x16xf32>, tensor<2x2x2x8x16xf32>
  return %0 : tensor<2x3x8x16xf32>
}

// -----

func.func @rwt_batch_rows_seq_zero(%x: tensor<8x3x4x16xf32>, %c: tensor<1x8x16xf32>, %s: tensor<1x8x16xf32>) -> tensor<8x3x4x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects tables of rank 4 (broadcasting like the input), 2 ([S, w]) or 3 ([B, S, w], with the sequence not at dim 0), got rank 3}}
  %0 = rope.rotate_with_tables %x, %c, %s seq_dim = 0 : tensor<8x3x4x16xf32>, tensor<1x8x16xf32>
  return %0 : tensor<8x3x4x16xf32>
}

// -----

func.func @rwt_table_extent(%x: tensor<2x4x8x16xf32>, %c: tensor<1x1x6x16xf32>, %s: tensor<1x1x6x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects table dim 2 to be 1 or the extent of input dim 2 (8), got 6}}
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<2x4x8x16xf32>, tensor<1x1x6x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @rwt_seq_rows_extent(%x: tensor<2x4x8x16xf32>, %c: tensor<9x8xf32>, %s: tensor<9x8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op expects table dim 0 to be 1 or the extent of input dim 2 (8), got 9}}
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<2x4x8x16xf32>, tensor<9x8xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @rwt_tables_differ(%x: tensor<2x8x16xf32>, %c: tensor<8x16xf32>, %s: tensor<8x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op failed to verify that all of {cos, sin} have same type}}
  %0 = "rope.rotate_with_tables"(%x, %c, %s) : (tensor<2x8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @rwt_integer_tables(%x: tensor<2x8x16xf32>, %c: tensor<8x16xi32>, %s: tensor<8x16xi32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'rope.rotate_with_tables' op operand #1 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<2x8x16xf32>, tensor<8x16xi32>
  return %0 : tensor<2x8x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// rope.table
//===----------------------------------------------------------------------===//

// -----

func.func @table_head_dim_not_positive(%p: tensor<8xi64>) {
  // expected-error @+1 {{'rope.table' op expects a positive head_dim and even, positive rotary dims, got head_dim 0 and rotary dims 0}}
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 0 : tensor<8xi64>
  return
}

// -----

func.func @table_spec_vs_head_dim(%p: tensor<8xi64>) {
  // expected-error @+1 {{'rope.table' op rotary dims [0, 32) exceed the head dim 16}}
  %c, %s = rope.table %p rotary(#rope.spec<dims = 32>) head_dim = 16 : tensor<8xi64>
  return
}

// -----

func.func @table_float_positions(%p: tensor<8xf32>) {
  // expected-error @+1 {{'rope.table' op operand #0 must be ranked tensor of 16-bit signless integer or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 16 : tensor<8xf32>
  return
}

// -----

func.func @table_result_types(%p: tensor<8xi64>) {
  // expected-error @+2 {{'rope.table' op inferred type(s) 'tensor<8x8xf32>', 'tensor<8x8xf32>' are incompatible with return type(s) of operation 'tensor<8x4xf32>', 'tensor<8x8xf32>'}}
  // expected-error @+1 {{'rope.table' op failed to infer returned types}}
  %c, %s = "rope.table"(%p) <{head_dim = 16 : i64, spec = #rope.spec<>}> : (tensor<8xi64>) -> (tensor<8x4xf32>, tensor<8x8xf32>)
  return
}

//===----------------------------------------------------------------------===//
// rope.attention
//===----------------------------------------------------------------------===//

// -----

func.func @attention_query_rank(%q: tensor<4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects query, key and value of rank 4 ([B, H, S, D])}}
  %0 = rope.attention %q, %k, %v : tensor<4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_key_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects key of rank 4 ([B, Hkv, Sk, D]), got rank 3}}
  %0 = rope.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_i8_data(%q: tensor<1x4x8x16xi8>, %k: tensor<1x4x8x16xi8>, %v: tensor<1x4x8x16xi8>) {
  // expected-error @+1 {{'rope.attention' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x4x8x16xi8>'}}
  %0 = rope.attention %q, %k, %v : tensor<1x4x8x16xi8>, tensor<1x4x8x16xi8>, tensor<1x4x8x16xi8>
  return
}

// -----

func.func @attention_element_types(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects query, key and value of one element type, got 'f32', 'f16', 'f32'}}
  %0 = rope.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<3x4x8x16xf32>, %v: tensor<?x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects query, key and value to share the batch extent}}
  %0 = rope.attention %q, %k, %v : tensor<2x4x8x16xf32>, tensor<3x4x8x16xf32>, tensor<?x4x8x16xf32>
  return
}

// -----

func.func @attention_dynamic_head_dim(%q: tensor<1x4x8x?xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects static query and key head dims}}
  %0 = rope.attention %q, %k, %v : tensor<1x4x8x?xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_head_dims_differ(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x32xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects query and key head dims to agree, got 16 and 32}}
  %0 = rope.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_dynamic_head_count(%q: tensor<1x?x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects static head counts}}
  %0 = rope.attention %q, %k, %v : tensor<1x?x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_kv_head_counts(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects key and value to have the same head count, got 4 and 2}}
  %0 = rope.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_gqa_not_multiple(%q: tensor<1x6x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects the query head count (6) to be a multiple of the key/value head count (4)}}
  %0 = rope.attention %q, %k, %v : tensor<1x6x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

// Query heads need a kv head; no heads at all is an empty attention
// (test/Dialect/Rope/ops.mlir).
func.func @attention_query_heads_without_kv_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x0x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rope.attention' op expects the query head count (4) to be a multiple of the key/value head count (0)}}
  %0 = rope.attention %q, %k, %k : tensor<1x4x8x16xf32>, tensor<1x0x8x16xf32>, tensor<1x0x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attention_kv_sequence_lengths(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x6x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects key and value to have the same sequence length, got 8 and 6}}
  %0 = rope.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x6x16xf32>
  return
}

// -----

func.func @attention_dynamic_value_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x?xf32>) {
  // expected-error @+1 {{'rope.attention' op expects a static value head dim}}
  %0 = rope.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x?xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects a positive finite scale, got -1.000000e+00}}
  %0 = rope.attention %q, %k, %v scale = -1.0 : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<8xi1>) {
  // expected-error @+1 {{'rope.attention' op expects a mask of rank 2 to 4 broadcastable to [B, Hq, Sq, Sk], got rank 1}}
  %0 = rope.attention %q, %k, %v mask(%m : tensor<8xi1>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_mask_i8(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<8x8xi8>) {
  // expected-error @+1 {{'rope.attention' op operand #3 must be ranked tensor of 1-bit signless integer or 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<8x8xi8>'}}
  %0 = rope.attention %q, %k, %v mask(%m : tensor<8x8xi8>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_mask_element_type(%q: tensor<1x4x8x16xbf16>, %k: tensor<1x4x8x16xbf16>, %v: tensor<1x4x8x16xbf16>, %m: tensor<8x8xf16>) {
  // expected-error @+1 {{'rope.attention' op expects an i1 mask, or an additive mask of f32 or the query element type, got 'f16'}}
  %0 = rope.attention %q, %k, %v mask(%m : tensor<8x8xf16>) : tensor<1x4x8x16xbf16>, tensor<1x4x8x16xbf16>, tensor<1x4x8x16xbf16>
  return
}

// -----

func.func @attention_mask_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<2x8x8xi1>) {
  // expected-error @+1 {{'rope.attention' op expects mask dim 0 to be 1 or 4, got 2}}
  %0 = rope.attention %q, %k, %v mask(%m : tensor<2x8x8xi1>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

// The custom form always has both; the generic form can give one.
func.func @attention_one_position_operand(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %qp: tensor<8xi64>) {
  // expected-error @+1 {{'rope.attention' op expects both query and key positions or neither}}
  %0 = "rope.attention"(%q, %k, %v, %qp) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<8xi64>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_query_positions(%q: tensor<1x4x1x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %qp: tensor<8xi64>, %kp: tensor<8xi64>) {
  // expected-error @+1 {{'rope.attention' op expects query positions to have 1 entries along the sequence, got 8}}
  %0 = rope.attention %q, %k, %v positions(%qp, %kp : tensor<8xi64>, tensor<8xi64>) : tensor<1x4x1x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_key_positions(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %qp: tensor<2x1xi64>, %kp: tensor<1x8xi64>) {
  // expected-error @+1 {{'rope.attention' op expects key positions to have batch extent 2, got 1}}
  %0 = rope.attention %q, %k, %v positions(%qp, %kp : tensor<2x1xi64>, tensor<1x8xi64>) : tensor<2x4x1x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @attention_float_positions(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %qp: tensor<8xf32>) {
  // expected-error @+1 {{'rope.attention' op operand #3 must be ranked tensor of 16-bit signless integer or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = rope.attention %q, %k, %v positions(%qp, %qp : tensor<8xf32>, tensor<8xf32>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_rotary_vs_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op rotary dims [8, 24) exceed the head dim 16}}
  %0 = rope.attention %q, %k, %v rotary(#rope.spec<offset = 8>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// rope.linear_attention
//===----------------------------------------------------------------------===//

// -----

func.func @linear_attention_value_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<4x8x16xf32>) {
  // expected-error @+1 {{'rope.linear_attention' op expects query, key and value of rank 4 ([B, H, S, D])}}
  %0 = rope.linear_attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<4x8x16xf32>
  return
}

// -----

func.func @linear_attention_key_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x4x4xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.linear_attention' op expects key of rank 4, got rank 5}}
  %0 = rope.linear_attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x4x4xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @linear_attention_element_types(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xbf16>) {
  // expected-error @+1 {{'rope.linear_attention' op expects query, key and value of one element type}}
  %0 = rope.linear_attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xbf16>
  return
}

// -----

func.func @linear_attention_query_key_shape(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'rope.linear_attention' op expects query and key of the same shape, dim 1 is 4 and 2}}
  %0 = rope.linear_attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @linear_attention_value_shape(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x6x16xf32>) {
  // expected-error @+1 {{'rope.linear_attention' op expects value to share [B, H, S] with query, dim 2 is 6 instead of 8}}
  %0 = rope.linear_attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x6x16xf32>
  return
}

// -----

func.func @linear_attention_dynamic_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x?xf32>) {
  // expected-error @+1 {{'rope.linear_attention' op expects static head dims}}
  %0 = rope.linear_attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x?xf32>
  return
}

// -----

func.func @linear_attention_positions(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %p: tensor<i64>) {
  // expected-error @+1 {{'rope.linear_attention' op expects positions of rank 1 ([S]) or 2 ([B, S]), got rank 0}}
  %0 = rope.linear_attention %q, %k, %v positions(%p : tensor<i64>) rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @linear_attention_rotary_vs_head_dim(%q: tensor<1x4x8x6xf32>, %k: tensor<1x4x8x6xf32>, %v: tensor<1x4x8x6xf32>) {
  // expected-error @+1 {{'rope.linear_attention' op rotary dims [0, 8) exceed the head dim 6}}
  %0 = rope.linear_attention %q, %k, %v rotary(#rope.spec<dims = 8>) : tensor<1x4x8x6xf32>, tensor<1x4x8x6xf32>, tensor<1x4x8x6xf32>
  return
}

//===----------------------------------------------------------------------===//
// rope.sinusoidal
//===----------------------------------------------------------------------===//

// -----

func.func @sinusoidal_result_rank(%p: tensor<8xi64>) {
  // expected-error @+1 {{'rope.sinusoidal' op expects a result of rank 2 (positions rank + 1), got rank 3}}
  %0 = rope.sinusoidal %p : tensor<8xi64> -> tensor<1x8x16xf32>
  return
}

// -----

func.func @sinusoidal_result_dim(%p: tensor<2x8xi64>) {
  // expected-error @+1 {{'rope.sinusoidal' op expects result dim 1 to match the positions, got 4 and 8}}
  %0 = rope.sinusoidal %p : tensor<2x8xi64> -> tensor<2x4x16xf32>
  return
}

// -----

func.func @sinusoidal_odd_dim(%p: tensor<8xi64>) {
  // expected-error @+1 {{'rope.sinusoidal' op expects a static, even, positive encoding dim, got 15}}
  %0 = rope.sinusoidal %p : tensor<8xi64> -> tensor<8x15xf32>
  return
}

// -----

func.func @sinusoidal_dynamic_dim(%p: tensor<8xi64>) {
  // expected-error @+1 {{'rope.sinusoidal' op expects a static, even, positive encoding dim, got ?}}
  %0 = rope.sinusoidal %p : tensor<8xi64> -> tensor<8x?xf32>
  return
}

// -----

func.func @sinusoidal_base(%p: tensor<8xi64>) {
  // expected-error @+1 {{'rope.sinusoidal' op expects a positive finite base, got 0.000000e+00}}
  %0 = rope.sinusoidal %p base = 0.0 : tensor<8xi64> -> tensor<8x16xf32>
  return
}

// -----

func.func @sinusoidal_integer_result(%p: tensor<8xi64>) {
  // expected-error @+1 {{'rope.sinusoidal' op result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<8x16xi32>'}}
  %0 = rope.sinusoidal %p : tensor<8xi64> -> tensor<8x16xi32>
  return
}

// -----

func.func @sinusoidal_float_positions(%p: tensor<8xf32>) {
  // expected-error @+1 {{'rope.sinusoidal' op operand #0 must be ranked tensor of 16-bit signless integer or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = rope.sinusoidal %p : tensor<8xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @attention_window_not_positive(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects a positive window, got 0}}
  %0 = rope.attention %q, %q, %q causal window = 0 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_window_without_causal(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects 'causal' with a window (query at p sees keys in (p - window, p])}}
  %0 = rope.attention %q, %q, %q window = 4 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_softcap_not_positive(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects a positive finite softcap, got -1}}
  %0 = rope.attention %q, %q, %q softcap = -1.0 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_sinks_shape(%q: tensor<1x2x8x16xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'rope.attention' op expects sinks of shape [2] (one logit per query head), got [3]}}
  %0 = rope.attention %q, %q, %q sinks(%s : tensor<3xf32>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_alibi_shape(%q: tensor<1x2x8x16xf32>, %a: tensor<2x1xf32>) {
  // expected-error @+1 {{'rope.attention' op expects ALiBi slopes of shape [Hq], got 'tensor<2x1xf32>'}}
  %0 = rope.attention %q, %q, %q alibi(%a : tensor<2x1xf32>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_bias_without_buckets(%q: tensor<1x2x8x16xf32>, %t: tensor<32x2xf32>) {
  // expected-error @+1 {{'rope.attention' op expects a relative bias table and its buckets together}}
  %0 = rope.attention %q, %q, %q relative_bias(%t : tensor<32x2xf32>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_buckets_without_bias(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects a relative bias table and its buckets together}}
  %0 = rope.attention %q, %q, %q buckets(#rope.buckets<num_buckets = 32, max_distance = 128>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_bias_table_shape(%q: tensor<1x2x8x16xf32>, %t: tensor<16x2xf32>) {
  // expected-error @+1 {{'rope.attention' op expects a relative bias table of shape [32, Hq] with dim 0 = 32, got 16}}
  %0 = rope.attention %q, %q, %q relative_bias(%t : tensor<16x2xf32>) buckets(#rope.buckets<num_buckets = 32, max_distance = 128>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @buckets_too_few_bidirectional() attributes {
  // expected-error @+1 {{expects 'num_buckets' in [4, 2^20] (bidirectional), got 3}}
  b = #rope.buckets<num_buckets = 3, max_distance = 128>} {
  return
}

// -----

func.func @buckets_too_few_unidirectional() attributes {
  // expected-error @+1 {{expects 'num_buckets' in [2, 2^20], got 1}}
  b = #rope.buckets<num_buckets = 1, max_distance = 128, bidirectional = false>} {
  return
}

// -----

func.func @buckets_max_distance() attributes {
  // expected-error @+1 {{expects 'max_distance' (8) to exceed the exact buckets per direction (8)}}
  b = #rope.buckets<num_buckets = 32, max_distance = 8>} {
  return
}

// -----

func.func @attention_tables_and_spec(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x16xf32>) {
  // The op holds one rotation: its text cannot give both.
  // expected-error @+1 {{expects either a rotary spec or rotary tables, not both}}
  %0 = rope.attention %q, %k, %k rotary(#rope.spec<>) rotary_tables(%c, %c, %c, %c : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_table_attrs_without_tables(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x16xf32>) {
  // expected-error @+1 {{expects rotary_layout, rotary_dims and rotary_offset only with rotary_tables}}
  %0 = rope.attention %q, %k, %k rotary_dims = 8 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

// The same rules on the op itself (its generic form): rotated dims without
// tables, tables without them, a spec with tables.
func.func @attention_pairs_without_tables(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects rotary_layout, rotary_dims and rotary_offset only with rotary_tables}}
  %0 = "rope.attention"(%q, %k, %k) <{rotary = #rope.pairs<dims = 8>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_tables_without_pairs(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects the rotated dims of its rotary tables (rotary = #rope.pairs<...>)}}
  %0 = "rope.attention"(%q, %k, %k, %c, %c, %c, %c) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1>}> : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_spec_with_tables(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects either a rotary spec or rotary tables, not both}}
  %0 = "rope.attention"(%q, %k, %k, %c, %c, %c, %c) <{rotary = #rope.spec<>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1>}> : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_rotary_not_a_rotation(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expects a rotary spec (#rope.spec<...>), got 1 : i64}}
  %0 = rope.attention %q, %k, %k rotary(1) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_tables_odd_dims(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x16xf32>) {
  // The rotated dims are a #rope.pairs, which checks them itself.
  // expected-error @+1 {{expects 'dims' to be even and non-negative (0 means the whole head dim), got 7}}
  %0 = rope.attention %q, %k, %k rotary_tables(%c, %c, %c, %c : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) rotary_dims = 7 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_tables_range(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x8xf32>) {
  // expected-error @+1 {{'rope.attention' op expects rotary dims [12, 20) within the head dim 16}}
  %0 = rope.attention %q, %k, %k rotary_tables(%c, %c, %c, %c : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) rotary_dims = 8 rotary_offset = 12 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_tables_cos_sin_types(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x16xf32>, %s: tensor<8x16xf16>) {
  // expected-error @+1 {{'rope.attention' op expects query cos and sin of one type, got 'tensor<8x16xf32>' and 'tensor<8x16xf16>'}}
  %0 = rope.attention %q, %k, %k rotary_tables(%c, %s, %c, %c : tensor<8x16xf32>, tensor<8x16xf16>, tensor<8x16xf32>, tensor<8x16xf32>) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_tables_width(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x12xf32>) {
  // expected-error @+1 {{'rope.attention' op expects query tables of width 16 (one coefficient per rotated element) or 8 (one per pair), got 12}}
  %0 = rope.attention %q, %k, %k rotary_tables(%c, %c, %c, %c : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_tables_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'rope.attention' op expects query tables of rank 4 (broadcasting like the input), 2 ([S, w]) or 3 ([B, S, w], with the sequence not at dim 0), got rank 1}}
  %0 = rope.attention %q, %k, %k rotary_tables(%c, %c, %c, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) rotary_dims = 16 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_tables_batch(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<8x16xf32>, %kt: tensor<3x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects key table dim 0 to be 1 or the extent of input dim 0 (1), got 3}}
  %0 = rope.attention %q, %k, %k rotary_tables(%c, %c, %kt, %kt : tensor<8x16xf32>, tensor<8x16xf32>, tensor<3x8x16xf32>, tensor<3x8x16xf32>) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_tables_broadcast_rows(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<1x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects query tables with one row per token (8), got 1}}
  %0 = rope.attention %q, %k, %k rotary_tables(%c, %c, %c, %c : tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_tables_per_head(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %c: tensor<1x4x8x16xf32>, %kt: tensor<1x1x8x16xf32>) {
  // expected-error @+1 {{'rope.attention' op expects query tables of rank 4 to broadcast over the heads (dim 1 a static 1), got 4}}
  %0 = rope.attention %q, %k, %k rotary_tables(%c, %c, %kt, %kt : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @online_query_rank(%q: tensor<1x2x8x16xf32>, %m: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects a query of rank 5 ([B, Hkv, G, Sq, D]), got rank 4}}
  %r:3 = rope.online_attention %q, %q, %q scale = 0.25 outs(%q, %m, %m : tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>
  return
}

// -----

func.func @online_element_types(%q: tensor<1x1x1x8x16xbf16>, %k: tensor<1x1x8x16xf16>, %acc: tensor<1x1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects key and value of one element type, and a query of that type or f32}}
  %r:3 = rope.online_attention %q, %k, %k scale = 0.25 outs(%acc, %m, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xbf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_two_outs(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects three outs (accumulator, max, sum), got 2}}
  %r:2 = rope.online_attention %q, %k, %k scale = 0.25 outs(%q, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_accumulator_shape(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %acc: tensor<1x1x1x8x8xf32>, %m: tensor<1x1x1x8xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects an accumulator of shape [B, Hkv, G, Sq, Dv] with dim 4 = 16, got 8}}
  %r:3 = rope.online_attention %q, %k, %k scale = 0.25 outs(%acc, %m, %m : tensor<1x1x1x8x8xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x8xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_scale(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects a positive finite scale, got 0}}
  %r:3 = rope.online_attention %q, %k, %k scale = 0.0 outs(%q, %m, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_mask_rank(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>, %mask: tensor<8x8xi1>) {
  // expected-error @+1 {{'rope.online_attention' op expects a mask of rank 5 ([B, Hkv, G, Sq, Sk], 1 to broadcast)}}
  %r:3 = rope.online_attention %q, %k, %k mask(%mask : tensor<8x8xi1>) scale = 0.25 outs(%q, %m, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_causal_without_positions(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects positions for causal, ALiBi or relative-bias attention}}
  %r:3 = rope.online_attention %q, %k, %k causal scale = 0.25 outs(%q, %m, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_rotary_without_key_tables(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>, %p: tensor<8xi64>) {
  // expected-error @+1 {{'rope.online_attention' op expects key cos/sin tables exactly when rotary, and query tables only then (without them the query is already rotated)}}
  %r:3 = rope.online_attention %q, %k, %k positions(%p, %p : tensor<8xi64>, tensor<8xi64>) rotary(#rope.pairs<>) scale = 0.25 outs(%q, %m, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_rotary_spec(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>, %p: tensor<8xi64>, %t: tensor<8x8xf32>) {
  // The online op rotates by tables only: its rotation names dims, never frequencies.
  // expected-error @+1 {{invalid kind of attribute specified}}
  %r:3 = rope.online_attention %q, %k, %k positions(%p, %p : tensor<8xi64>, tensor<8xi64>) rotary(#rope.spec<>) key_tables(%t, %t : tensor<8x8xf32>, tensor<8x8xf32>) scale = 0.25 outs(%q, %m, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_table_shape(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>, %p: tensor<8xi64>, %t: tensor<8x4xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects key cos of width 16 or 8, got 4}}
  %r:3 = rope.online_attention %q, %k, %k positions(%p, %p : tensor<8xi64>, tensor<8xi64>) rotary(#rope.pairs<>) key_tables(%t, %t : tensor<8x4xf32>, tensor<8x4xf32>) scale = 0.25 outs(%q, %m, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_table_rows(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>, %t: tensor<6x16xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects key cos of shape [S, w] with dim 0 = 8, got 6}}
  %r:3 = rope.online_attention %q, %k, %k rotary(#rope.pairs<>) key_tables(%t, %t : tensor<6x16xf32>, tensor<6x16xf32>) scale = 0.25 outs(%q, %m, %m : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return
}

// -----

func.func @online_alibi_shape(%q: tensor<1x1x2x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<1x1x2x8xf32>, %p: tensor<8xi64>, %a: tensor<2xf32>) {
  // expected-error @+1 {{'rope.online_attention' op expects ALiBi slopes of shape [Hkv, G], got 'tensor<2xf32>'}}
  %r:3 = rope.online_attention %q, %k, %k positions(%p, %p : tensor<8xi64>, tensor<8xi64>) scale = 0.25 alibi(%a : tensor<2xf32>) outs(%q, %m, %m : tensor<1x1x2x8x16xf32>, tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>)
      : tensor<1x1x2x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x2x8x16xf32>, tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>
  return
}

// -----

func.func @assert_placeholder_without_value(%ok: i1, %n: index) {
  // expected-error @+1 {{'rope.assert' op expects a value for each placeholder, {1} has none (1 values)}}
  rope.assert %ok, "got {0} and {1}" (%n : index)
  return
}
