// RUN: rope-opt %s -split-input-file -verify-diagnostics

// A rotary spec is sized by the head dim, so keys must have a static one like
// the queries (a dynamic key head dim once reached the lowering and produced
// invalid IR; it is now a verifier error).

func.func @attention_rotary_dynamic_key_head_dim(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x?xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{expects static query and key head dims}}
  %0 = rope.attention %q, %k, %v rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<1x2x8x?xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @linear_attention_rotary_dynamic_key_head_dim(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x?xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{expects static head dims}}
  %0 = rope.linear_attention %q, %k, %v rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<1x2x8x?xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}
