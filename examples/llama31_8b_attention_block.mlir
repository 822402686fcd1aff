// One attention block of Llama-3.1-8B (config.json: hidden_size 4096,
// num_attention_heads 32, num_key_value_heads 8, head_dim 128, rope_theta
// 500000, rope_scaling llama3 with factor 8, low_freq_factor 1,
// high_freq_factor 4, original_max_position_embeddings 8192).
//
// hidden [1, S, 4096] -> Q/K/V projections (weights as nn.Linear stores them,
// [out, in]) -> heads -> RoPE + GQA 32/8 causal attention (rope.attention with
// the rotation inside) -> output projection -> [1, S, 4096].
//
// Run: make demo   (or: rope-opt --rope-lower-to-cpu examples/llama31_8b_attention_block.mlir)

#llama3 = #rope.spec<base = 500000.0,
                     scaling = #rope.llama3<factor = 8.0, low_freq_factor = 1.0,
                                            high_freq_factor = 4.0,
                                            original_max_position_embeddings = 8192>>

#proj = [affine_map<(s, o, i) -> (s, i)>,   // hidden [S, in]
         affine_map<(s, o, i) -> (o, i)>,   // weight [out, in]
         affine_map<(s, o, i) -> (s, o)>]   // result [S, out]

func.func @attention_block(%hidden: tensor<1x?x4096xf32>, %positions: tensor<?xi64>,
                           %wq: tensor<4096x4096xf32>, %wk: tensor<1024x4096xf32>,
                           %wv: tensor<1024x4096xf32>, %wo: tensor<4096x4096xf32>)
    -> tensor<1x?x4096xf32> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %hidden, %c1 : tensor<1x?x4096xf32>
  %x = tensor.collapse_shape %hidden [[0, 1], [2]] : tensor<1x?x4096xf32> into tensor<?x4096xf32>

  // Projections: [S, 4096] x [out, 4096]^T.
  %q0 = tensor.empty(%s) : tensor<?x4096xf32>
  %qz = linalg.fill ins(%zero : f32) outs(%q0 : tensor<?x4096xf32>) -> tensor<?x4096xf32>
  %q = linalg.matmul indexing_maps = #proj ins(%x, %wq : tensor<?x4096xf32>, tensor<4096x4096xf32>)
                     outs(%qz : tensor<?x4096xf32>) -> tensor<?x4096xf32>
  %k0 = tensor.empty(%s) : tensor<?x1024xf32>
  %kz = linalg.fill ins(%zero : f32) outs(%k0 : tensor<?x1024xf32>) -> tensor<?x1024xf32>
  %k = linalg.matmul indexing_maps = #proj ins(%x, %wk : tensor<?x4096xf32>, tensor<1024x4096xf32>)
                     outs(%kz : tensor<?x1024xf32>) -> tensor<?x1024xf32>
  %v = linalg.matmul indexing_maps = #proj ins(%x, %wv : tensor<?x4096xf32>, tensor<1024x4096xf32>)
                     outs(%kz : tensor<?x1024xf32>) -> tensor<?x1024xf32>

  // [S, H*D] -> [1, H, S, D].
  %q4 = tensor.expand_shape %q [[0, 1], [2, 3]] output_shape [1, %s, 32, 128]
      : tensor<?x4096xf32> into tensor<1x?x32x128xf32>
  %k4 = tensor.expand_shape %k [[0, 1], [2, 3]] output_shape [1, %s, 8, 128]
      : tensor<?x1024xf32> into tensor<1x?x8x128xf32>
  %v4 = tensor.expand_shape %v [[0, 1], [2, 3]] output_shape [1, %s, 8, 128]
      : tensor<?x1024xf32> into tensor<1x?x8x128xf32>
  %qt0 = tensor.empty(%s) : tensor<1x32x?x128xf32>
  %qh = linalg.transpose ins(%q4 : tensor<1x?x32x128xf32>) outs(%qt0 : tensor<1x32x?x128xf32>) permutation = [0, 2, 1, 3]
  %kt0 = tensor.empty(%s) : tensor<1x8x?x128xf32>
  %kh = linalg.transpose ins(%k4 : tensor<1x?x8x128xf32>) outs(%kt0 : tensor<1x8x?x128xf32>) permutation = [0, 2, 1, 3]
  %vh = linalg.transpose ins(%v4 : tensor<1x?x8x128xf32>) outs(%kt0 : tensor<1x8x?x128xf32>) permutation = [0, 2, 1, 3]

  // RoPE (llama3 scaling) on Q and K inside GQA causal attention.
  %attn = rope.attention %qh, %kh, %vh positions(%positions, %positions : tensor<?xi64>, tensor<?xi64>)
      rotary(#llama3) causal
      : tensor<1x32x?x128xf32>, tensor<1x8x?x128xf32>, tensor<1x8x?x128xf32>

  // [1, 32, S, 128] -> [S, 4096] -> output projection.
  %ot0 = tensor.empty(%s) : tensor<1x?x32x128xf32>
  %ot = linalg.transpose ins(%attn : tensor<1x32x?x128xf32>) outs(%ot0 : tensor<1x?x32x128xf32>) permutation = [0, 2, 1, 3]
  %o2 = tensor.collapse_shape %ot [[0, 1], [2, 3]] : tensor<1x?x32x128xf32> into tensor<?x4096xf32>
  %out = linalg.matmul indexing_maps = #proj ins(%o2, %wo : tensor<?x4096xf32>, tensor<4096x4096xf32>)
                       outs(%qz : tensor<?x4096xf32>) -> tensor<?x4096xf32>
  %out3 = tensor.expand_shape %out [[0, 1], [2]] output_shape [1, %s, 4096]
      : tensor<?x4096xf32> into tensor<1x?x4096xf32>
  return %out3 : tensor<1x?x4096xf32>
}
