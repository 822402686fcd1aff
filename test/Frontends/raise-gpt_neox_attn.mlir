// RUN: rope-opt %S/models/gpt_neox_attn.mlir --rope-raise --canonicalize \
// RUN:   | FileCheck %s --implicit-check-not=math.cos --implicit-check-not=math.sin

// GPT-NeoX attention (rotary_pct 0.5 of head dim 16) as torch-mlir exports it:
// the first 8 dims of Q and K are rotated (half layout), the other 8 concatenated
// back. Both become rope.rotate of the whole head with dims = 8.

// CHECK-LABEL: func.func @main(
// CHECK:         rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<dims = 8>) seq_dim = 2 : tensor<1x4x12x16xf32>, tensor<12xi64>
// CHECK:         rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<dims = 8>) seq_dim = 2 : tensor<1x4x12x16xf32>, tensor<12xi64>
// CHECK-NOT:     rope.rotate
