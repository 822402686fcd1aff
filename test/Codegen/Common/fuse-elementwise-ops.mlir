// RUN: rope-opt %s --rope-fuse-elementwise-ops -split-input-file | FileCheck %s
// RUN: rope-opt %s --linalg-fuse-elementwise-ops -split-input-file | FileCheck %s --check-prefix=UPSTREAM

#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>
#vec = affine_map<(d0) -> (d0)>

// l' = c·l + s updated in place (its body reads its output l), then read
// broadcast over the columns of acc. Fused, the update of l would run once
// per column (upstream's fusion does it: the fused generic writes l through
// a row map inside the column loop, reading what it wrote); rope's fusion
// keeps the two generics.
// CHECK-LABEL: func.func @update_then_broadcast
//       CHECK:   %[[L:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4xf32>)
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %[[L]] : tensor<4x8xf32>, tensor<4xf32>)
// UPSTREAM-LABEL: func.func @update_then_broadcast
//       UPSTREAM:   %{{.+}}:2 = linalg.generic
func.func @update_then_broadcast(%l: tensor<4xf32>, %c: tensor<4xf32>, %s: tensor<4xf32>,
                                 %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %l1 = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%c, %s : tensor<4xf32>, tensor<4xf32>) outs(%l : tensor<4xf32>) {
  ^bb0(%ci: f32, %si: f32, %lo: f32):
    %m = arith.mulf %lo, %ci : f32
    %a = arith.addf %m, %si : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %o = linalg.generic {indexing_maps = [#all, #row, #all], iterator_types = ["parallel", "parallel"]}
      ins(%acc, %l1 : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %d = arith.divf %x, %y : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>
#vec = affine_map<(d0) -> (d0)>

// A producer that does not read its output fuses as upstream's would.
// CHECK-LABEL: func.func @pure_producer
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
//       CHECK:     arith.mulf
//       CHECK:     arith.divf
//   CHECK-NOT:   linalg.generic
func.func @pure_producer(%c: tensor<4xf32>, %s: tensor<4xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<4xf32>
  %l1 = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%c, %s : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%ci: f32, %si: f32, %lo: f32):
    %m = arith.mulf %ci, %si : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %o = linalg.generic {indexing_maps = [#all, #row, #all], iterator_types = ["parallel", "parallel"]}
      ins(%acc, %l1 : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %d = arith.divf %x, %y : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// A model's final norm (x · rsqrt(ms + eps), elementwise over [1, K]) read
// by its vocabulary projection, a contraction over K that reads x at (m, k)
// only: fused, the rsqrt would run once per output column (N times per
// element) and the contraction would have three inputs, which no register
// block takes. Upstream fuses; rope's fusion keeps the norm apart. A
// producer read at every loop of a reduction (a square summed) still fuses.
// CHECK-LABEL: func.func @norm_then_projection
//       CHECK:   %[[NORM:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]
//       CHECK:     math.rsqrt
//       CHECK:   linalg.generic {{.+}} ins(%[[NORM]], %{{.+}} : tensor<1x64xf32>, tensor<64x32xf32>)
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}} : tensor<1x64xf32>)
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
// UPSTREAM-LABEL: func.func @norm_then_projection
//       UPSTREAM:   linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]
//       UPSTREAM:     math.rsqrt
func.func @norm_then_projection(%x: tensor<1x64xf32>, %w: tensor<64x32xf32>) -> (tensor<1x32xf32>, tensor<1xf32>) {
  %e = tensor.empty() : tensor<1x64xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x64xf32>) outs(%e : tensor<1x64xf32>) {
  ^bb0(%xi: f32, %o: f32):
    %r = math.rsqrt %xi : f32
    %m = arith.mulf %xi, %r : f32
    linalg.yield %m : f32
  } -> tensor<1x64xf32>
  %zero = arith.constant 0.0 : f32
  %oe = tensor.empty() : tensor<1x32xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x32xf32>) -> tensor<1x32xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%n, %w : tensor<1x64xf32>, tensor<64x32xf32>) outs(%of : tensor<1x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x32xf32>
  // The square of x summed over K: read at (d0, d1), every loop: fused.
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x64xf32>) outs(%e : tensor<1x64xf32>) {
  ^bb0(%xi: f32, %o: f32):
    %m = arith.mulf %xi, %xi : f32
    linalg.yield %m : f32
  } -> tensor<1x64xf32>
  %se = tensor.empty() : tensor<1xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<1xf32>) -> tensor<1xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<1x64xf32>) outs(%sf : tensor<1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %p, %sum : tensor<1x32xf32>, tensor<1xf32>
}
