// RUN: rope-opt %s --rope-decompose-attention="key-tile=64" --canonicalize -split-input-file | FileCheck %s
// RUN: rope-opt %s --rope-decompose-attention="key-tile=64 rows-rotating-keys-in-scores=0" --canonicalize -split-input-file | FileCheck %s --check-prefix=TILE

// A decode tile (GQA: 4 query rows per kv head, at most the default 8) over
// an un-rotated f16 cache: its scores rotate each pair of K inside the
// Q·Kᵀ reduction, reading K's pair view (member 0 and member 1 of pair t,
// both along t) and the key tables at (key, t); no rotated tile of K exists.
// Q was rotated once, before the key loop. The split-K tiles hold every kv
// head, so each key is visited once: its cos/sin rows are the table of the
// tile's own 64 positions, computed in the loop (rope.table's tiling), not
// sliced from a table of all 256 keys. The rotation only feeds the
// contracted products and is contracted too. With the option at 0 the key
// tile is rotated into a tile of its own (two generics, one per pair
// member) and multiplied as a plain contraction.
// CHECK-DAG:   #[[Q0:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, 0, d5)>
// CHECK-DAG:   #[[Q1:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, 1, d5)>
// CHECK-DAG:   #[[K0:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, 0, d5)>
// CHECK-DAG:   #[[K1:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, 1, d5)>
// CHECK-DAG:   #[[TABLE:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG:   #[[SCORES:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @decode_rotating_keys
// CHECK-SAME:    %[[KP:[^:]+]]: tensor<256xi64>) -> tensor<1x8x1x32xf16>
// CHECK-NOT:     rope.table %[[KP]]
// CHECK:         scf.forall
// CHECK-NOT:       rope.table
// CHECK:         scf.for %[[J:[^ ]+]] =
// CHECK:           tensor.extract_slice %{{.+}}[%[[J]]] [64] [1] : tensor<?xi64> to tensor<64xi64>
// CHECK:           %[[COS:.+]], %[[SIN:.+]] = rope.table %{{.+}} rotary(#rope.spec<base = 5.000000e+05>) head_dim = 32 : tensor<64xi64>
// CHECK:           %[[KPAIRS:.+]] = tensor.expand_shape %{{.+}} output_shape [1, 2, 64, 2, 16] : tensor<1x2x64x32xf16> into tensor<1x2x64x2x16xf16>
// CHECK:           linalg.generic {indexing_maps = [#[[Q0]], #[[Q1]], #[[K0]], #[[K1]], #[[TABLE]], #[[TABLE]], #[[TABLE]], #[[TABLE]], #[[SCORES]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:        ins(%{{.+}}, %{{.+}}, %[[KPAIRS]], %[[KPAIRS]], %[[COS]], %[[SIN]], %[[COS]], %[[SIN]] : tensor<1x2x4x1x2x16xf32>, tensor<1x2x4x1x2x16xf32>, tensor<1x2x64x2x16xf16>, tensor<1x2x64x2x16xf16>, tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>)
// CHECK-NEXT:      ^bb0(%[[QA:.+]]: f32, %[[QB:.+]]: f32, %[[KA:.+]]: f16, %[[KB:.+]]: f16, %[[C0:.+]]: f32, %[[S0:.+]]: f32, %[[C1:.+]]: f32, %[[S1:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-DAG:         %[[A:.+]] = arith.extf %[[KA]] : f16 to f32
// CHECK-DAG:         %[[B:.+]] = arith.extf %[[KB]] : f16 to f32
// CHECK:             %[[R0:.+]] = arith.subf {{.+}} fastmath<contract>
// CHECK:             %[[R1:.+]] = arith.addf {{.+}} fastmath<contract>
// CHECK:             %[[P0:.+]] = arith.mulf %[[QA]], %[[R0]] fastmath<reassoc,contract>
// CHECK:             %[[P1:.+]] = arith.mulf %[[QB]], %[[R1]] fastmath<reassoc,contract>
// CHECK:             %[[P:.+]] = arith.addf %[[P0]], %[[P1]] fastmath<reassoc,contract>
// CHECK:             arith.addf %[[ACC]], %[[P]] fastmath<reassoc,contract>
// CHECK-NOT:       tensor<1x2x64x32xf32>
// CHECK:         scf.forall.in_parallel

// TILE-LABEL:  func.func @decode_rotating_keys
// TILE:          scf.for
// TILE:            linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x64x16xf32>)
// TILE:            linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x64x16xf32>)
// TILE:            linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x2x4x1x32xf32>, tensor<1x2x64x32xf32>)
func.func @decode_rotating_keys(%q: tensor<1x8x1x32xf16>, %k: tensor<1x2x256x32xf16>, %v: tensor<1x2x256x32xf16>, %qp: tensor<1xi64>, %kp: tensor<256xi64>) -> tensor<1x8x1x32xf16> {
  %o = rope.attention %q, %k, %v positions(%qp, %kp : tensor<1xi64>, tensor<256xi64>) rotary(#rope.spec<base = 500000.0>) causal : tensor<1x8x1x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
  return %o : tensor<1x8x1x32xf16>
}

// -----

// Frequencies that depend on the largest position (dynamic NTK) need every
// key's position: the table does not tile and is sliced from the whole as
// before.
// CHECK-LABEL: func.func @decode_table_of_all_keys
// CHECK-SAME:    %[[KP:[^:]+]]: tensor<256xi64>) -> tensor<1x8x1x32xf16>
// CHECK:         rope.table %{{.+}} rotary(#rope.spec<{{.+}}#rope.dynamic{{.+}}>) head_dim = 32 : tensor<257xi64>
// CHECK:         scf.forall
// CHECK-NOT:       rope.table
// CHECK:         scf.forall.in_parallel
func.func @decode_table_of_all_keys(%q: tensor<1x8x1x32xf16>, %k: tensor<1x2x256x32xf16>, %v: tensor<1x2x256x32xf16>, %qp: tensor<1xi64>, %kp: tensor<256xi64>) -> tensor<1x8x1x32xf16> {
  %o = rope.attention %q, %k, %v positions(%qp, %kp : tensor<1xi64>, tensor<256xi64>) rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) causal : tensor<1x8x1x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
  return %o : tensor<1x8x1x32xf16>
}

// -----

// Not a decode tile: 3 query rows × 4 heads per kv head (12 rows) would
// rotate each key once per block of rows; K is rotated into a tile. The
// interleaved layout, whose pair members alternate, does the same at any
// row count.
// CHECK-LABEL: func.func @twelve_rows
// CHECK:         scf.for
// CHECK:           linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x64x16xf32>)
// CHECK:           linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x2x4x3x32xf32>, tensor<1x2x64x32xf32>)
func.func @twelve_rows(%q: tensor<1x8x3x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>, %qp: tensor<3xi64>, %kp: tensor<256xi64>) -> tensor<1x8x3x32xf32> {
  %o = rope.attention %q, %k, %v positions(%qp, %kp : tensor<3xi64>, tensor<256xi64>) rotary(#rope.spec<>) causal : tensor<1x8x3x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>
  return %o : tensor<1x8x3x32xf32>
}

// -----

// CHECK-LABEL: func.func @interleaved
// CHECK:         scf.for
// CHECK:           linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x2x4x1x32xf32>, tensor<1x2x64x32xf32>)
func.func @interleaved(%q: tensor<1x8x1x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>, %qp: tensor<1xi64>, %kp: tensor<256xi64>) -> tensor<1x8x1x32xf32> {
  %o = rope.attention %q, %k, %v positions(%qp, %kp : tensor<1xi64>, tensor<256xi64>) rotary(#rope.spec<layout = interleaved>) causal : tensor<1x8x1x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>
  return %o : tensor<1x8x1x32xf32>
}
