// RUN: rope-opt %s --convert-rope-to-linalg | FileCheck %s

// After the conversion no rope op (nor attribute) is left, whatever mix of
// ops, scalings and shapes the module holds.

// CHECK-NOT: rope.
// CHECK-LABEL: func.func @everything
// CHECK-NOT: rope.
// CHECK: return
// CHECK-NOT: rope.

func.func @everything(%q: tensor<1x8x4x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>,
                      %qp: tensor<4xi64>, %kp: tensor<8xi64>, %bp: tensor<1x8xi32>,
                      %m: tensor<4x8xi1>, %x: tensor<?x8x16xbf16>, %xp: tensor<8xi16>)
    -> (tensor<1x8x4x16xf32>, tensor<1x2x8x16xf32>, tensor<?x8x16xbf16>, tensor<8x8xf32>, tensor<8x8xf32>,
        tensor<1x2x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x4x16xf32>) {
  %r0 = rope.rotate %q, %qp rotary(#rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<1x8x4x16xf32>, tensor<4xi64>
  %r1 = rope.rotate %k, %bp rotary(#rope.spec<dims = 8, layout = interleaved, scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 4>>) : tensor<1x2x8x16xf32>, tensor<1x8xi32>
  %r2 = rope.rotate %x, %xp rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], long_factor = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], factor = 4.0, original_max_position_embeddings = 4>, inverse = true>) : tensor<?x8x16xbf16>, tensor<8xi16>
  %c, %s = rope.table %kp rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4>>) head_dim = 16 : tensor<8xi64>
  %a = rope.attention %q, %k, %v mask(%m : tensor<4x8xi1>) positions(%qp, %kp : tensor<4xi64>, tensor<8xi64>) rotary(#rope.spec<scaling = #rope.freq_factors<factors = [1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 8.0, 8.0]>>) causal : tensor<1x8x4x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %l = rope.linear_attention %k, %k, %v rotary(#rope.spec<scaling = #rope.linear<factor = 2.0>>) causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %e = rope.sinusoidal %bp : tensor<1x8xi32> -> tensor<1x8x16xf32>
  %d = rope.attention %q, %k, %v : tensor<1x8x4x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %r0, %r1, %r2, %c, %s, %l, %e, %d : tensor<1x8x4x16xf32>, tensor<1x2x8x16xf32>, tensor<?x8x16xbf16>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<1x2x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x4x16xf32>
}
