// Lowered by abi.test: attention with RoPE folded in, and a dynamic-NTK
// rotation (a host read of a computed scalar: staging copies).
func.func @attention(%q: tensor<1x4x16x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %p: tensor<16xi64>) -> tensor<1x4x16x32xf16> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<>) : tensor<1x4x16x32xf16>, tensor<16xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<>) : tensor<1x2x16x32xf16>, tensor<16xi64>
  %o = rope.attention %qr, %kr, %v causal : tensor<1x4x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return %o : tensor<1x4x16x32xf16>
}

func.func @rotate_ntk(%x: tensor<1x2x?x16xf32>, %p: tensor<?xi64>) -> tensor<1x2x?x16xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 4.0, original_max_position_embeddings = 64>>) : tensor<1x2x?x16xf32>, tensor<?xi64>
  return %r : tensor<1x2x?x16xf32>
}
