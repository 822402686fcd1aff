// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s

// rope.rotate_with_tables is the rotation of rope.rotate (one generic over
// the pair view of the head, member c of pair t at (.., c, t) for half and
// (.., t, c) for interleaved) reading the given tables: a table of one
// coefficient per element is read at the element produced (c·h + t, or
// 2t + c), one of one coefficient per pair at t; a static unit dim of a table
// is read at 0 (broadcast); other table dims follow the input dims they
// stand for.

// CHECK-DAG: #[[FIRST:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, d4)>
// CHECK-DAG: #[[SECOND:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 1, d4)>
// CHECK-DAG: #[[TAB:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (0, 0, d2, d3 * 32 + d4)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @hf_half
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x?x64xf32>, %[[C:[^:]+]]: tensor<1x1x?x64xf32>, %[[S:[^:]+]]: tensor<1x1x?x64xf32>)
// CHECK: %[[XP:.+]] = tensor.expand_shape %[[X]] {{\[\[0\], \[1\], \[2\], \[3, 4\]\]}} {{.*}} into tensor<1x4x?x2x32xf32>
// CHECK: linalg.generic {indexing_maps = [#[[FIRST]], #[[SECOND]], #[[TAB]], #[[TAB]], #[[OUT]]]
// CHECK-SAME: ins(%[[XP]], %[[XP]], %[[C]], %[[S]] :
// CHECK: linalg.index 3
// CHECK-NOT: rope.
func.func @hf_half(%x: tensor<1x4x?x64xf32>, %c: tensor<1x1x?x64xf32>, %s: tensor<1x1x?x64xf32>) -> tensor<1x4x?x64xf32> {
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<1x4x?x64xf32>, tensor<1x1x?x64xf32>
  return %0 : tensor<1x4x?x64xf32>
}

// -----

// Interleaved [B, S, r] tables along seq_dim 1, rotating dims [6, 14).
// CHECK-DAG: #[[TAB:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4 * 2 + d3)>
// CHECK-LABEL: func.func @interleaved_batch_rows
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x?x3x20xf32>, %[[C:[^:]+]]: tensor<2x?x8xf32>, %[[S:[^:]+]]: tensor<2x?x8xf32>)
// CHECK: %[[R:.+]] = tensor.extract_slice %[[X]][0, 0, 0, 6] [2, %{{.+}}, 3, 8] [1, 1, 1, 1]
// CHECK: %[[XP:.+]] = tensor.expand_shape %[[R]] {{.*}} into tensor<2x?x3x4x2xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[TAB]], #[[TAB]], #{{.+}}]
// CHECK-SAME: ins(%[[XP]], %[[XP]], %[[C]], %[[S]] :
// CHECK: tensor.insert_slice %{{.+}} into %[[X]][0, 0, 0, 6] [2, %{{.+}}, 3, 8] [1, 1, 1, 1]
func.func @interleaved_batch_rows(%x: tensor<2x?x3x20xf32>, %c: tensor<2x?x8xf32>, %s: tensor<2x?x8xf32>) -> tensor<2x?x3x20xf32> {
  %0 = rope.rotate_with_tables %x, %c, %s layout<interleaved> dims = 8 offset = 6 seq_dim = 1 : tensor<2x?x3x20xf32>, tensor<2x?x8xf32>
  return %0 : tensor<2x?x3x20xf32>
}

// -----

// One coefficient per pair ([S, r/2]) in f16, widened to f32 in the body.
// CHECK-DAG: #[[TAB:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d4)>
// CHECK-LABEL: func.func @pair_tables_f16
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[TAB]], #[[TAB]], #{{.+}}]
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: f16, %[[B:[^:]+]]: f16, %[[CC:[^:]+]]: f16, %[[SS:[^:]+]]: f16, %{{[^:]+}}: f16):
// CHECK-DAG: arith.extf %[[CC]] : f16 to f32
// CHECK-DAG: arith.extf %[[SS]] : f16 to f32
func.func @pair_tables_f16(%x: tensor<2x4x8x16xf16>, %c: tensor<8x8xf16>, %s: tensor<8x8xf16>) -> tensor<2x4x8x16xf16> {
  %0 = rope.rotate_with_tables %x, %c, %s : tensor<2x4x8x16xf16>, tensor<8x8xf16>
  return %0 : tensor<2x4x8x16xf16>
}
