// RUN: not rope-opt %s --rope-tile-attention="split-keys=4" 2>&1 | FileCheck %s

// No kv heads: sizing a decode step's split tiles by their bytes of key rows
// once divided by zero here (a crash). The tiling itself still cannot split
// an empty kv-head dim; what it reports is a located diagnostic, and `not`
// (without --crash) fails the test on a crash.
// CHECK: tile-attention-empty-heads.mlir:[[# @LINE + 3]]:10: error: offset 2 is out-of-bounds
func.func @empty_heads(%q: tensor<1x0x4x1x128xf32>, %k: tensor<1x0x256x128xf32>, %v: tensor<1x0x256x128xf32>,
    %acc: tensor<1x0x4x1x128xf32>, %m: tensor<1x0x4x1xf32>, %l: tensor<1x0x4x1xf32>) -> (tensor<1x0x4x1x128xf32>, tensor<1x0x4x1xf32>, tensor<1x0x4x1xf32>) {
  %r:3 = rope.online_attention %q, %k, %v scale = 0.25
      outs(%acc, %m, %l : tensor<1x0x4x1x128xf32>, tensor<1x0x4x1xf32>, tensor<1x0x4x1xf32>)
      : tensor<1x0x4x1x128xf32>, tensor<1x0x256x128xf32>, tensor<1x0x256x128xf32>
      -> tensor<1x0x4x1x128xf32>, tensor<1x0x4x1xf32>, tensor<1x0x4x1xf32>
  return %r#0, %r#1, %r#2 : tensor<1x0x4x1x128xf32>, tensor<1x0x4x1xf32>, tensor<1x0x4x1xf32>
}
