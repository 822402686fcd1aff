// RUN: rope-opt %s --transform-interpreter --canonicalize -split-input-file | FileCheck %s

// rope.online_attention implements TilingInterface, so a user's transform
// script tiles it with the upstream ops: tile_using_forall over (kv head,
// query rows), then tile_using_for over the keys (a reduction: the loop
// carries the state).
// CHECK-LABEL: func.func @transform_tiling
// CHECK: scf.forall (%[[KH:.+]], %[[QT:.+]]) in (2, 4) shared_outs(
// CHECK: %[[QI:.+]] = affine.apply #{{.+}}(%[[QT]])
// CHECK-DAG: tensor.extract_slice %{{.+}}[0, %[[KH]], 0, %[[QI]], 0] [1, 1, 2, 16, 16]
// CHECK-DAG: tensor.extract_slice %{{.+}}[%[[QI]]] [16] [1] : tensor<64xi64> to tensor<16xi64>
// CHECK-DAG: tensor.extract_slice %{{.+}}[0, %[[KH]], 0, %[[QI]], 0] [1, 1, 2, 16, 128] [1, 1, 1, 1, 1] : tensor<1x2x2x64x128xi1> to tensor<1x1x2x16x128xi1>
// CHECK: scf.for %[[KJ:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// CHECK-DAG: tensor.extract_slice %{{.+}}[0, 0, %[[KJ]], 0] [1, 1, 32, 16]
// CHECK-DAG: tensor.extract_slice %{{.+}}[%[[KJ]]] [32] [1] : tensor<128xi64> to tensor<32xi64>
// CHECK-DAG: tensor.extract_slice %{{.+}}[0, 0, 0, 0, %[[KJ]]] [1, 1, 2, 16, 32] [1, 1, 1, 1, 1] : tensor<1x1x2x16x128xi1> to tensor<1x1x2x16x32xi1>
// CHECK: rope.online_attention {{.+}} : tensor<1x1x2x16x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32> -> tensor<1x1x2x16x16xf32>, tensor<1x1x2x16xf32>, tensor<1x1x2x16xf32>
// CHECK: scf.forall.in_parallel
func.func @transform_tiling(%q: tensor<1x2x2x64x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>,
                            %mask: tensor<1x2x2x64x128xi1>, %p: tensor<64xi64>, %kp: tensor<128xi64>,
                            %acc: tensor<1x2x2x64x16xf32>, %m: tensor<1x2x2x64xf32>, %l: tensor<1x2x2x64xf32>)
    -> (tensor<1x2x2x64x16xf32>, tensor<1x2x2x64xf32>, tensor<1x2x2x64xf32>) {
  %r:3 = rope.online_attention %q, %k, %v mask(%mask : tensor<1x2x2x64x128xi1>) positions(%p, %kp : tensor<64xi64>, tensor<128xi64>) causal scale = 0.25
      outs(%acc, %m, %l : tensor<1x2x2x64x16xf32>, tensor<1x2x2x64xf32>, tensor<1x2x2x64xf32>)
      : tensor<1x2x2x64x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>
      -> tensor<1x2x2x64x16xf32>, tensor<1x2x2x64xf32>, tensor<1x2x2x64xf32>
  return %r#0, %r#1, %r#2 : tensor<1x2x2x64x16xf32>, tensor<1x2x2x64xf32>, tensor<1x2x2x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["rope.online_attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %forall = transform.structured.tile_using_forall %op tile_sizes [0, 1, 0, 16, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %inner, %loop = transform.structured.tile_using_for %tiled tile_sizes [0, 0, 0, 0, 32, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
