// RUN: rope-opt %s --split-input-file --rope-reductions-innermost | FileCheck %s

// P·V with the key (reduction) dim before the head dim: the head dim moves
// before it, so each thread gets one output element and loops over keys.
// The indexing maps follow the new loop order; the body is unchanged.
// CHECK-DAG:   #[[P:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG:   #[[V:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG:   #[[O:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @p_times_v
// CHECK-SAME:    (%[[PA:.+]]: tensor<2x8x16xf32>, %[[VA:.+]]: tensor<2x16x4xf32>, %[[OA:.+]]: tensor<2x8x4xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:      indexing_maps = [#[[P]], #[[V]], #[[O]]]
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME:      ins(%[[PA]], %[[VA]] : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%[[OA]] : tensor<2x8x4xf32>)
// CHECK:           %[[M:.+]] = arith.mulf
// CHECK-NEXT:      %[[S:.+]] = arith.addf %{{.+}}, %[[M]]
// CHECK-NEXT:      linalg.yield %[[S]]
func.func @p_times_v(%p: tensor<2x8x16xf32>, %v: tensor<2x16x4xf32>, %o: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, q, k, d) -> (b, q, k)>,
                       affine_map<(b, q, k, d) -> (b, k, d)>,
                       affine_map<(b, q, k, d) -> (b, q, d)>],
      iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%o : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}

// -----

// Several reductions keep their relative order, after every parallel dim;
// on buffers too.
// CHECK-DAG:   #[[IN:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3, d1)>
// CHECK-DAG:   #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @two_reductions
// CHECK:         linalg.generic
// CHECK-SAME:      indexing_maps = [#[[IN]], #[[OUT]]]
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "reduction", "reduction"]
func.func @two_reductions(%x: memref<3x4x5x6xf32>, %o: memref<4x6xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(r0, i, r1, j) -> (r0, i, r1, j)>,
                       affine_map<(r0, i, r1, j) -> (i, j)>],
      iterator_types = ["reduction", "parallel", "reduction", "parallel"]}
      ins(%x : memref<3x4x5x6xf32>) outs(%o : memref<4x6xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Reductions already innermost: left alone.
// CHECK-DAG:   #[[X:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @already_innermost
// CHECK:         linalg.generic
// CHECK-SAME:      indexing_maps = [#[[X]], #[[ROW]]]
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
func.func @already_innermost(%x: tensor<8x16xf32>, %o: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%o : tensor<8xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
