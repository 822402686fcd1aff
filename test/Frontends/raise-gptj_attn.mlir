// RUN: rope-opt %S/models/gptj_attn.mlir --rope-raise --canonicalize \
// RUN:   | FileCheck %s --implicit-check-not=math.cos --implicit-check-not=math.sin

// GPT-J attention (rotary_dim 8 of head dim 16, interleaved pairs) as
// torch-mlir exports it: sin/cos gathered by position id from the model's
// [64, 8] sin|cos cache, repeat_interleave'd, and rotate_every_two on the first
// 8 dims of Q and K, in [B, S, H, D]. Both become rope.rotate_with_tables with
// the interleaved layout, dims = 8, and the same two gathered tables.

// CHECK-LABEL: func.func @main(
// CHECK:         arith.constant dense_resource<{{.+}}> : tensor<64x8xf32>
// CHECK:         tensor.extract %{{.+}} : tensor<1x64x8xf32>
// CHECK:         rope.rotate_with_tables %{{.+}}, %[[COS:.+]], %[[SIN:.+]] layout<interleaved> dims = 8 : tensor<1x12x4x16xf32>, tensor<1x12x1x8xf32>
// CHECK:         rope.rotate_with_tables %{{.+}}, %[[COS]], %[[SIN]] layout<interleaved> dims = 8 : tensor<1x12x4x16xf32>, tensor<1x12x1x8xf32>
// CHECK-NOT:     rope.rotate
