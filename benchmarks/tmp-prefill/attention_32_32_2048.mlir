
func.func @attention(%q: tensor<1x32x2048x128xf32>, %k: tensor<1x32x2048x128xf32>, %v: tensor<1x32x2048x128xf32>, %p: tensor<2048xi64>) -> tensor<1x32x2048x128xf32> {
  %qr = rope.rotate %q, %p rotary(#rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<1x32x2048x128xf32>, tensor<2048xi64>
  %kr = rope.rotate %k, %p rotary(#rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<1x32x2048x128xf32>, tensor<2048xi64>
  %o = rope.attention %qr, %kr, %v positions(%p, %p : tensor<2048xi64>, tensor<2048xi64>) causal : tensor<1x32x2048x128xf32>, tensor<1x32x2048x128xf32>, tensor<1x32x2048x128xf32>
  return %o : tensor<1x32x2048x128xf32>
}