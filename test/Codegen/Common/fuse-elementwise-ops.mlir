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
