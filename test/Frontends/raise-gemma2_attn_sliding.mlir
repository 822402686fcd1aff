// RUN: rope-opt %S/models/gemma2_attn_sliding.mlir --rope-raise --canonicalize \
// RUN:   | FileCheck %s --implicit-check-not=math.cos --implicit-check-not=math.sin

// Gemma 2 attention (layer 0, sliding window 4; logit soft-capping) as torch-mlir exports it:
// both rotations become rope.rotate with the default spec (theta 1e4).

// CHECK-LABEL: func.func @main(
// CHECK:         rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) seq_dim = 2 : tensor<1x4x12x16xf32>, tensor<12xi64>
// CHECK:         rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<>) seq_dim = 2 : tensor<1x2x12x16xf32>, tensor<12xi64>
// CHECK-NOT:     rope.rotate
// The soft-capped, sliding-window attention is raised whole (the tanh goes into it).
// CHECK:         rope.attention %{{.+}}, %{{.+}}, %{{.+}} causal window = 4 softcap = 2.000000e+00 scale = 0.20412415266036987 : tensor<1x4x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
// CHECK-NOT:     math.tanh
